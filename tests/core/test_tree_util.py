"""Pytrees (`omnistage.tree_util`): containers, None, namedtuples, registered classes,
tree_map over several trees, structure equality and hashing, and mismatch errors."""
import collections

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import tree_util

Point = collections.namedtuple("Point", ["x", "y"])


class Pair:
    """Registered with register_pytree_node (children a, b; no aux data)."""

    def __init__(self, a, b):
        self.a, self.b = a, b


tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, c: Pair(*c))


@tree_util.register_pytree_node_class
class Scaled:
    """Registered with the class decorator; `scale` is static aux data."""

    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def tree_flatten(self):
        return (self.value,), self.scale

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)


# --- flatten / unflatten ------------------------------------------------------------------


FLATTEN_CASES = [
    ("leaf", 1, [1]),
    ("list", [1, 2, 3], [1, 2, 3]),
    ("tuple", (1, (2, 3)), [1, 2, 3]),
    ("dict sorted by key", {"b": 2, "a": 1, "c": 3}, [1, 2, 3]),
    ("nested", {"w": [1, (2,)], "b": {"z": 3}}, [3, 1, 2]),
    ("None is an empty node", [1, None, 2], [1, 2]),
    ("only None", None, []),
    ("empty containers", ([], {}, ()), []),
    ("namedtuple", Point(1, 2), [1, 2]),
    ("registered", Pair(1, [2, 3]), [1, 2, 3]),
    ("registered class", Scaled(5, 2.0), [5]),
]


@pytest.mark.parametrize("name,tree,leaves", FLATTEN_CASES, ids=[c[0] for c in FLATTEN_CASES])
def test_tree_flatten_leaves(name, tree, leaves):
    flat, treedef = tree_util.tree_flatten(tree)
    assert flat == leaves
    assert tree_util.tree_leaves(tree) == leaves
    assert treedef.num_leaves == len(leaves)


def _same_tree(a, b):
    if isinstance(a, Pair):
        return isinstance(b, Pair) and _same_tree(a.a, b.a) and _same_tree(a.b, b.b)
    if isinstance(a, Scaled):
        return isinstance(b, Scaled) and a.scale == b.scale and _same_tree(a.value, b.value)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("name,tree,leaves", FLATTEN_CASES, ids=[c[0] for c in FLATTEN_CASES])
def test_unflatten_inverts_flatten(name, tree, leaves):
    flat, treedef = tree_util.tree_flatten(tree)
    rebuilt = tree_util.tree_unflatten(treedef, flat)
    assert _same_tree(rebuilt, tree)


def test_unflatten_keeps_namedtuple_type():
    out = tree_util.tree_unflatten(tree_util.tree_structure(Point(0, 0)), [5, 6])
    assert type(out) is Point and out.x == 5 and out.y == 6


def test_arrays_are_leaves():
    x = jnp.ones(3)
    leaves = tree_util.tree_leaves({"a": x, "b": [np.zeros(2), 1.0]})
    assert leaves[0] is x and isinstance(leaves[1], np.ndarray) and leaves[2] == 1.0


def test_is_leaf_stops_descent():
    tree = {"a": (1, 2), "b": [3]}
    leaves = tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3]


def test_unflatten_with_wrong_leaf_count_raises():
    treedef = tree_util.tree_structure([1, 2])
    with pytest.raises(ValueError):
        tree_util.tree_unflatten(treedef, [1])
    with pytest.raises(ValueError):
        tree_util.tree_unflatten(treedef, [1, 2, 3])


def test_registering_a_type_twice_is_an_error():
    class Once:
        pass

    tree_util.register_pytree_node(Once, lambda o: ((), None), lambda aux, c: Once())
    with pytest.raises(ValueError):
        tree_util.register_pytree_node(Once, lambda o: ((), None), lambda aux, c: Once())


# --- tree_map ------------------------------------------------------------------------------


def test_tree_map_single_tree():
    tree = {"a": [1, 2], "b": (3, None), "c": Point(4, 5)}
    out = tree_util.tree_map(lambda x: x * 10, tree)
    assert out == {"a": [10, 20], "b": (30, None), "c": Point(40, 50)}
    assert type(out["c"]) is Point


def test_tree_map_several_trees():
    a = {"x": 1, "y": [2, 3]}
    b = {"x": 10, "y": [20, 30]}
    c = {"x": 100, "y": [200, 300]}
    assert tree_util.tree_map(lambda p, q, r: p + q + r, a, b, c) == {"x": 111, "y": [222, 333]}


def test_tree_map_over_registered_classes():
    out = tree_util.tree_map(lambda v: v + 1, [Pair(1, 2), Scaled(3, "s")])
    assert isinstance(out[0], Pair) and (out[0].a, out[0].b) == (2, 3)
    assert isinstance(out[1], Scaled) and out[1].value == 4 and out[1].scale == "s"


def test_tree_map_with_arrays():
    params = {"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}
    grads = {"w": jnp.full((2, 2), 0.5), "b": jnp.ones(2)}
    new = tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(np.asarray(new["w"]), np.full((2, 2), 0.95), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(new["b"]), np.full(2, -0.1), rtol=1e-6)


def test_tree_map_conj_like_the_seed():
    """The seed conjugates a tree of complex gradients with tree_map(jnp.conj, ...)."""
    grads = {"w": jnp.array([1 + 2j, 3 - 1j]), "b": [jnp.array(2j)]}
    out = tree_util.tree_map(jnp.conj, grads)
    np.testing.assert_allclose(np.asarray(out["w"]), [1 - 2j, 3 + 1j])
    np.testing.assert_allclose(np.asarray(out["b"][0]), -2j)


def test_tree_map_is_leaf():
    out = tree_util.tree_map(lambda t: sum(t), [(1, 2), (3, 4)], is_leaf=lambda x: isinstance(x, tuple))
    assert out == [3, 7]


MISMATCHES = [
    ("different dict keys", {"a": 1}, {"b": 1}),
    ("different list lengths", [1, 2], [1, 2, 3]),
    ("list vs tuple", [1, 2], (1, 2)),
    ("list vs leaf", [1, 2], 3),
    ("dict vs list", {"a": 1}, [1]),
]


def test_tree_map_second_tree_may_extend_first_at_leaves():
    """JAX: each of `rest` must have the first tree's structure or have it as a prefix."""
    out = tree_util.tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    assert out == [(1, (3, 4)), (2, {"k": 5})]


# --- structures ----------------------------------------------------------------------------


def test_structure_equality_and_hash():
    s1 = tree_util.tree_structure({"a": [1, 2], "b": None})
    s2 = tree_util.tree_structure({"b": None, "a": [jnp.ones(3), "leaf"]})
    assert s1 == s2 and hash(s1) == hash(s2)
    assert {s1: "cached"}[s2] == "cached"


@pytest.mark.parametrize("a,b", [
    ([1, 2], (1, 2)),
    ([1, 2], [1, 2, 3]),
    ({"a": 1}, {"b": 1}),
    ((1, None), (1, 2)),
    (Point(1, 2), (1, 2)),
    (Scaled(1, 2.0), Scaled(1, 3.0)),
    (Pair(1, 2), Pair(1, (2, 3))),
])
def test_different_structures_are_unequal(a, b):
    assert tree_util.tree_structure(a) != tree_util.tree_structure(b)


def test_structure_of_registered_class_includes_aux_data():
    s1 = tree_util.tree_structure(Scaled(jnp.ones(2), 2.0))
    s2 = tree_util.tree_structure(Scaled(jnp.zeros(5), 2.0))
    assert s1 == s2 and hash(s1) == hash(s2)


def test_treedef_unflatten_method_and_num_leaves():
    treedef = tree_util.tree_structure({"a": (1, 2), "b": 3})
    assert treedef.num_leaves == 3
    assert treedef.unflatten([7, 8, 9]) == {"a": (7, 8), "b": 9}


def test_tree_reduce_and_tree_all():
    assert tree_util.tree_reduce(lambda a, b: a + b, {"a": 1, "b": [2, 3]}) == 6
    assert tree_util.tree_reduce(lambda a, b: a + b, [1, 2], 10) == 13
    assert tree_util.tree_all([True, (True, True)])
    assert not tree_util.tree_all([True, (False,)])


def test_tree_flatten_with_path():
    pairs, _ = tree_util.tree_flatten_with_path({"a": [10, 20], "b": Point(1, 2)})
    paths = [p for p, _ in pairs]
    assert [v for _, v in pairs] == [10, 20, 1, 2]
    assert len(paths[0]) == 2 and len(paths[3]) == 2


def test_tree_transpose():
    outer = tree_util.tree_structure([0, 0])
    inner = tree_util.tree_structure((0, 0, 0))
    out = tree_util.tree_transpose(outer, inner, [(1, 2, 3), (4, 5, 6)])
    assert out == ([1, 4], [2, 5], [3, 6])


# --- pytrees through transformations ----------------------------------------------------------


def test_jit_flattens_and_unflattens_registered_classes():
    @omnistage.jit
    def f(s, p):
        return Scaled(s.value * s.scale, s.scale), Pair(p.a + 1, p.b * 2)

    out_s, out_p = f(Scaled(jnp.ones(2), 3.0), Pair(jnp.ones(2), jnp.arange(2.0)))
    assert isinstance(out_s, Scaled) and out_s.scale == 3.0
    np.testing.assert_allclose(np.asarray(out_s.value), [3.0, 3.0])
    assert isinstance(out_p, Pair)
    np.testing.assert_allclose(np.asarray(out_p.b), [0.0, 2.0])


def test_jit_namedtuple_and_none_outputs():
    f = omnistage.jit(lambda p: (Point(p.y, p.x), None))
    out, nothing = f(Point(jnp.ones(1), jnp.zeros(1)))
    assert type(out) is Point and nothing is None
    assert out.x.tolist() == [0.0] and out.y.tolist() == [1.0]


@pytest.mark.parametrize("name,a,b", MISMATCHES, ids=[m[0] for m in MISMATCHES])
def test_tree_map_structure_mismatch_raises_value_error(name, a, b):
    with pytest.raises(ValueError):
        tree_util.tree_map(lambda x, y: x, a, b)
