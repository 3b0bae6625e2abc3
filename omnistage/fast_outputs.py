"""The output pytree of a cached jit call, built by a function generated once per compiled
entry (`builder(out_tree, out_avals)`), on the hot path beside fast_args.

The general way, an `Array.from_numpy` per output and then `tree_unflatten` walking the
PyTreeDef, took ~3 us of a 13 us cached call of kernel_lsq's `update` (two outputs in an
optimizer's state). The generated function wraps each output the way `from_numpy` does when the
executable's output already has the aval's dtype and shape (the usual case: a native library
allocates its outputs so) and calls `from_numpy` itself otherwise, then builds the containers as
one expression: tuples, lists and None literally, namedtuples by their class, registered nodes
(dicts, an optimizer's state) by their registered unflatten, with the aux data the PyTreeDef
holds, exactly as `tree_unflatten` does.
"""
import numpy as np

from .core.array import Array
from .core import tree_util


def builder(out_tree, out_avals):
    """A function taking the executable's flat outputs (in the tree's leaf order) and returning
    the output pytree of Arrays."""
    env = {"nd": np.ndarray, "new": Array.__new__, "A": Array, "slow": Array.from_numpy}
    lines = ["def build(o):"]
    for i, aval in enumerate(out_avals):
        env[f"av{i}"], env[f"d{i}"], env[f"s{i}"] = aval, aval.dtype, tuple(aval.shape)
        lines += [f"    v = o[{i}]",
                  f"    if type(v) is nd and v.dtype is d{i} and v.shape == s{i}:",
                  f"        x{i} = new(A); v.setflags(write=False)",
                  f"        x{i}._value, x{i}.weak_type, x{i}._aval = v, {bool(aval.weak_type)}, av{i}",
                  "    else:",
                  f"        x{i} = slow(v, av{i})"]
    leaves = iter(range(len(out_avals)))
    lines.append(f"    return {_expression(out_tree, leaves, env)}")
    if next(leaves, None) is not None:
        raise ValueError(f"internal: {len(out_avals)} outputs for a tree of {out_tree.num_leaves} leaves")
    exec(compile("\n".join(lines), "<omnistage output builder>", "exec"), env)  # noqa: S102 - our own text
    return env["build"]


def _expression(td, leaves, env):
    if td.node_type is None:
        try:
            return f"x{next(leaves)}"
        except StopIteration:
            raise ValueError("internal: fewer outputs than the output tree's leaves") from None
    children = [_expression(c, leaves, env) for c in td.children]
    if td.node_type is tuple:
        return f"({''.join(c + ', ' for c in children)})"
    if td.node_type is list:
        return f"[{', '.join(children)}]"
    if td.node_type is type(None):
        return "None"
    k = len(env)
    unflatten = tree_util.registered_unflatten(td.node_type)
    if unflatten is None:  # a namedtuple class (as tree_unflatten builds it)
        env[f"T{k}"] = td.node_type
        return f"T{k}({', '.join(children)})"
    env[f"U{k}"], env[f"X{k}"] = unflatten, td.aux
    return f"U{k}(X{k}, [{', '.join(children)}])"
