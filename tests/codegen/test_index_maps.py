"""codegen/index_maps.py: the operand index each output element of a fused reshape reads,
checked against NumPy's C-order reshape for many shapes, and free of division where a
reshape leaves an axis alone."""
import itertools
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from omnistage.codegen import index_maps


def _factorizations(n, max_dims=4):
    """A few ways to write n as an ordered product (with some size-1 dimensions)."""
    out = {(n,)}
    for a in range(2, n):
        if n % a == 0:
            for rest in _factorizations(n // a, max_dims - 1) if max_dims > 1 else ():
                out.add((a, *rest))
    return out


def _check(in_shape, new_sizes):
    names = [f"i{k}" for k in range(len(new_sizes))]
    exprs = index_maps.reshape(names, in_shape, new_sizes=new_sizes)
    source = np.arange(math.prod(in_shape)).reshape(in_shape)
    want = source.reshape(new_sizes)
    for idx in itertools.product(*[range(d) for d in new_sizes]):
        env = dict(zip(names, idx))
        at = tuple(eval(e, {}, env) for e in exprs)  # noqa: S307 - our own index text
        assert source[at] == want[idx], (in_shape, new_sizes, exprs, idx)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([6, 8, 12, 24, 36, 30]), st.data())
def test_reshape_index_map_reads_what_numpy_reshape_reads(n, data):
    shapes = sorted(_factorizations(n))
    a = data.draw(st.sampled_from(shapes))
    b = data.draw(st.sampled_from(shapes))
    lead = data.draw(st.sampled_from([(), (1,), (3,), (2, 1)]))
    ones = data.draw(st.sampled_from([(), (1,)]))
    _check(lead + a, lead + ones + b)


def test_an_axis_the_reshape_leaves_alone_costs_no_division():
    # the VAE's image grid: (100, 784) read as (100, 28, 28)
    exprs = index_maps.reshape(["a", "b", "c"], (100, 784), new_sizes=(100, 28, 28))
    assert exprs == ["(a)", "(b * 28 + c)"]
    exprs = index_maps.reshape(["a", "b"], (100, 28, 28), new_sizes=(100, 784))
    assert exprs[0] == "(a)" and "//" in exprs[1] and "a" not in exprs[1] + exprs[2]


def test_merged_and_split_groups_side_by_side():
    _check((4, 6, 5), (24, 5))
    _check((24, 5), (2, 2, 6, 5))
    _check((2, 3, 4), (6, 4))
    _check((6, 4), (3, 2, 2, 2))


def _read_view(base, view, shape):
    offset, strides = view
    item = base.itemsize
    return np.lib.stride_tricks.as_strided(base[offset:], shape, [s * item for s in strides])


def test_a_reshape_of_a_transposed_view_stays_a_view_group_by_group():
    base = np.arange(2 * 3 * 20)
    src = base.reshape(2, 3, 20).transpose(2, 0, 1)  # (20, 2, 3), not C-ordered
    view = index_maps.VIEW_MAPS["transpose"]((0, index_maps.c_strides((2, 3, 20))), (2, 3, 20), permutation=(2, 0, 1))
    for new in [(4, 5, 6), (20, 6), (4, 5, 2, 3), (20, 1, 2, 3)]:
        got = index_maps.VIEW_MAPS["reshape"](view, (20, 2, 3), new_sizes=new)
        assert got is not None, new
        np.testing.assert_array_equal(_read_view(base, got, new), src.reshape(new))
    # merging the transposed axes 20 and 2 needs div/mod: no view
    assert index_maps.VIEW_MAPS["reshape"](view, (20, 2, 3), new_sizes=(40, 3)) is None
