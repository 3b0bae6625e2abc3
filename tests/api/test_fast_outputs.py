"""fast_outputs: the generated builder of a cached call's output pytree gives what
`tree_unflatten` of `Array.from_numpy` gives (containers, namedtuples, registered nodes, None;
outputs of another dtype or shape go through from_numpy, which converts or complains)."""
import collections

import numpy as np
import pytest

import omnistage
from omnistage import fast_outputs
from omnistage.core import tree_util
from omnistage.core.array import Array
from omnistage.core.aval import ShapedArray

Point = collections.namedtuple("Point", "x y")


def _general(tree, avals, outs):
    return tree_util.tree_unflatten(tree, [Array.from_numpy(o, a) for o, a in zip(outs, avals)])


def _same(a, b):
    la, ta = tree_util.tree_flatten(a)
    lb, tb = tree_util.tree_flatten(b)
    assert ta == tb, (ta, tb)
    for x, y in zip(la, lb):
        assert type(x) is type(y) is Array
        assert x.aval == y.aval and x.weak_type == y.weak_type
        assert not x._value.flags.writeable
        np.testing.assert_array_equal(x._value, y._value)


@pytest.mark.parametrize("structure", [
    0, (0,), [0, (0, 0)], {"b": 0, "a": [0, None]}, Point(0, (0, 0)), (None, 0, ()),
    collections.OrderedDict([("z", 0), ("a", 0)]), {"opt": Point([0, 0], {"k": 0})},
])
def test_builder_matches_tree_unflatten(structure):
    leaves, tree = tree_util.tree_flatten(structure)
    avals = [ShapedArray((k + 1,), np.float32, weak_type=k % 2 == 1) for k in range(len(leaves))]
    outs = [np.arange(k + 1, dtype=np.float32) for k in range(len(leaves))]
    _same(fast_outputs.builder(tree, avals)(outs), _general(tree, avals, [o.copy() for o in outs]))


def test_other_dtypes_and_shapes_go_through_from_numpy():
    _, tree = tree_util.tree_flatten((0, 0))
    avals = [ShapedArray((3,), np.float32), ShapedArray((), np.int32)]
    build = fast_outputs.builder(tree, avals)
    got = build([np.arange(3.0), np.int64(4)])  # float64 and a NumPy scalar: converted
    assert got[0].dtype == np.float32 and got[1].dtype == np.int32 and got[1].shape == ()
    with pytest.raises(AssertionError, match="shape"):
        build([np.arange(4, dtype=np.float32), np.int32(1)])


def test_leaf_count_mismatch_is_an_internal_error():
    _, tree = tree_util.tree_flatten((0, 0))
    with pytest.raises(ValueError):
        fast_outputs.builder(tree, [ShapedArray((), np.float32)])
    with pytest.raises(ValueError):
        fast_outputs.builder(tree, [ShapedArray((), np.float32)] * 3)


def test_registered_node_outputs_of_a_jit():
    from omnistage.example_libraries import optimizers

    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    step = omnistage.jit(lambda i, s: opt_update(i, {"w": get_params(s)["w"] * 2}, s))
    s = opt_init({"w": np.ones(3, np.float32)})
    for i in range(3):
        s = step(i, s)
    want = opt_init({"w": np.ones(3, np.float32)})
    for i in range(3):
        want = opt_update(i, {"w": get_params(want)["w"] * 2}, want)
    _same(s, want)
