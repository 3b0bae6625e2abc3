"""Collectives by axis name under vmap (psum, pmean, pmax, pmin, all_gather, axis_index),
nested names, and the unbound-name error outside vmap."""
import numpy as np
import pytest

import omnistage
from omnistage import lax
from tests.helpers import assert_same


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_pmean_normalizes_across_the_batch(rng):
    xs = rand(rng, 5, 3)
    f = omnistage.vmap(lambda x: x - lax.pmean(x, "i"), axis_name="i")
    assert_same(f(xs), xs - xs.mean(0), rtol=1e-5, atol=1e-6)
    assert_same(omnistage.jit(f)(xs), xs - xs.mean(0), rtol=1e-5, atol=1e-6)


def test_psum_pmax_pmin_reduce_over_examples(rng):
    xs = rand(rng, 5, 3)
    for fn, ref in ((lax.psum, xs.sum(0)), (lax.pmax, xs.max(0)), (lax.pmin, xs.min(0))):
        out = omnistage.vmap(lambda x: fn(x, "i"), axis_name="i")(xs)
        assert_same(out, np.broadcast_to(ref, xs.shape), rtol=1e-5)


def test_psum_of_an_unbatched_value_counts_examples(rng):
    out = omnistage.vmap(lambda x: lax.psum(1, "i"), axis_name="i")(rand(rng, 4))
    assert_same(out, np.full(4, 4, np.int32))


def test_axis_index_and_all_gather(rng):
    xs = rand(rng, 4, 2)
    idx = omnistage.vmap(lambda x: lax.axis_index("i"), axis_name="i")(xs)
    assert_same(idx, np.arange(4, dtype=np.int32))
    gathered = omnistage.vmap(lambda x: lax.all_gather(x, "i"), axis_name="i")(xs)
    assert_same(gathered, np.broadcast_to(xs, (4, 4, 2)))
    tiled = omnistage.vmap(lambda x: lax.all_gather(x, "i", axis=0, tiled=True), axis_name="i")(xs)
    assert_same(tiled, np.broadcast_to(xs.reshape(8), (4, 8)))


def test_nested_axis_names_reduce_their_own_axis():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    inner = omnistage.vmap(lambda v: lax.psum(v, "i"), axis_name="j")
    out = omnistage.vmap(inner, axis_name="i")(x)
    assert_same(out, np.broadcast_to(x.sum(0), (2, 3)))
    both = omnistage.vmap(omnistage.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(x)
    assert_same(both, np.full((2, 3), x.sum(), np.float32))
    idx = omnistage.vmap(omnistage.vmap(lambda v: lax.axis_index("i") * 10 + lax.axis_index("j"),
                                        axis_name="j"), axis_name="i")(x)
    assert_same(idx, np.array([[0, 1, 2], [10, 11, 12]], np.int32))


def test_collective_inside_a_batched_loop(rng):
    xs = rand(rng, 4, 3)

    def f(x):
        return lax.fori_loop(0, 2, lambda i, c: c - lax.pmean(c, "i"), x)

    out = omnistage.vmap(f, axis_name="i")(xs)
    assert_same(out, xs - xs.mean(0), rtol=1e-5, atol=1e-6)


def test_unbound_axis_name_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(np.float32(1.0), "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        omnistage.vmap(lambda x: lax.psum(x, "k"), axis_name="i")(np.ones(3, np.float32))
    with pytest.raises(NameError, match="unbound axis name: i"):
        omnistage.jit(lambda x: lax.axis_index("i"))(np.ones(3))
