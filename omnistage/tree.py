"""`omnistage.tree`: JAX's short pytree names (`jax.tree.map`, `jax.tree.leaves`, ...) over
`omnistage.tree_util` (core/tree_util.py), with JAX's signatures. Imports core only.
"""
import builtins
import functools

from .core import tree_util as tu

_NO_INIT = object()


def map(f, tree, *rest, is_leaf=None):  # noqa: A001 - jax.tree.map's name
    """`f` applied leaf by leaf to `tree` and the trees in `rest` (which have its structure)."""
    return tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def leaves(tree, is_leaf=None):
    return tu.tree_leaves(tree, is_leaf)


def structure(tree, is_leaf=None):
    return tu.tree_structure(tree, is_leaf)


def flatten(tree, is_leaf=None):
    return tu.tree_flatten(tree, is_leaf)


def unflatten(treedef, leaves):  # noqa: F811 - the parameter shadows the function, as JAX's
    return tu.tree_unflatten(treedef, leaves)


def reduce(function, tree, initializer=_NO_INIT, is_leaf=None):
    """functools.reduce of `function` over the leaves (from `initializer` when given)."""
    flat = tu.tree_leaves(tree, is_leaf)
    if initializer is _NO_INIT:
        return functools.reduce(function, flat)
    return functools.reduce(function, flat, initializer)


def reduce_associative(operation, tree, *, identity=_NO_INIT, is_leaf=None):
    """Reduce the leaves with an associative `operation` (pairwise, as a balanced tree);
    `identity` is the result for a tree without leaves."""
    flat = tu.tree_leaves(tree, is_leaf)
    if not flat:
        if identity is _NO_INIT:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    while len(flat) > 1:
        paired = [operation(a, b) for a, b in zip(flat[::2], flat[1::2])]
        flat = paired + ([flat[-1]] if len(flat) % 2 else [])
    return flat[0]


def all(tree, *, is_leaf=None):  # noqa: A001 - jax.tree.all's name
    """Whether every leaf is truthy."""
    return builtins.all(tu.tree_leaves(tree, is_leaf))


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    return tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def flatten_with_path(tree, is_leaf=None):
    return tu.tree_flatten_with_path(tree, is_leaf)


def leaves_with_path(tree, is_leaf=None):
    return tu.tree_flatten_with_path(tree, is_leaf)[0]


def map_with_path(f, tree, *rest, is_leaf=None):
    """`f(path, leaf, *leaves of rest)` leaf by leaf (a path is a tuple of keys)."""
    pairs, treedef = tu.tree_flatten_with_path(tree, is_leaf)
    others = [tu.flatten_up_to(treedef, r) for r in rest]
    return tu.tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """`prefix_tree` with each of its leaves repeated over the subtree of `full_tree` it stands for."""
    prefix_def = tu.tree_structure(prefix_tree, is_leaf)
    subtrees = tu.flatten_up_to(prefix_def, full_tree)
    filled = [tu.tree_map(lambda _, v=v: v, sub) for v, sub in zip(tu.tree_leaves(prefix_tree, is_leaf), subtrees)]
    return tu.tree_unflatten(prefix_def, filled)


__all__ = [
    "map", "leaves", "structure", "flatten", "unflatten", "reduce", "reduce_associative", "all",
    "transpose", "flatten_with_path", "leaves_with_path", "map_with_path", "broadcast",
]
