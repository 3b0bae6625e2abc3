"""`vmap` with JAX's signature and semantics.

`vmap(f)(xs)` stages `f` on one example's avals (the mapped axes removed; Python control
flow on traced values converted, as `jit` does), then replays the Program on the whole
batch with the batching pass (`omnistage.vectorize`) in the current context: inside
`jit`/`make_jaxpr`/`grad` the batched statements are staged there (printed with
`# file:line (vmap)`); outside, they run eagerly on NumPy.

Axis specifications follow JAX: `in_axes` is an int, None, or a (nested) tuple/list/dict
prefix of the positional arguments; keyword arguments are always mapped over axis 0;
`out_axes` is a prefix of the output pytree. Negative axes count from the end of the
batched value. `axis_name` binds the name for the collectives in `omnistage.lax`
(`psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `axis_index`).
"""
import collections
import functools
import inspect

import numpy as np

from .api import leaf_aval
from .api_grad import stage_function
from .core import tree_util
from .core.array import Array
from .core.tracer import Tracer
from .lax import parallel
from .lax._rules import to_operand
from .staging.convert import convert
from .vectorize import BatchAxis, batch_call
from .vectorize.rules import batch_at


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """`fun` mapped over an axis of its arguments: `vmap(f)(xs)` equals
    `stack([f(x) for x in xs])`, computed as one batched program.

    `spmd_axis_name` is accepted for JAX compatibility; with one device it changes nothing."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # a prefix of the positional-args tuple (JAX accepts lists)
    _check_axes_spec(in_axes, "in_axes", top=True)
    _check_axes_spec(out_axes, "out_axes")

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        _check_in_axes_length(in_axes, args)
        leaves, in_tree = tree_util.tree_flatten((tuple(args), kwargs))
        axes = _flat_in_axes(in_axes, args, kwargs, len(leaves))
        axes = [None if a is None else _canonical_in_axis(a, x) for a, x in zip(axes, leaves)]
        size = _mapped_axis_size(fun, in_tree, leaves, axes, axis_size)
        with parallel.extend_axis_env(axis_name, size):
            staged, outs, out_dims = _stage_and_batch(fun, in_tree, leaves, axes, BatchAxis(size, axis_name))
        targets = _flat_out_axes(out_axes, staged.out_tree, staged.n_out)
        flat = [_place_output(o, d, t, size, axis_name) for o, d, t in zip(outs, out_dims, targets)]
        return tree_util.tree_unflatten(staged.out_tree, flat)

    return vmap_f


def _stage_and_batch(fun, in_tree, leaves, axes, axis):
    """Stage `fun` on one example, then batch the Program: (staged, outputs, output dims).

    Only mapped leaves become inputs of the staged program; unmapped ones reach `fun` as they
    are (a Python int stays an int for a static argument, as in JAX); values `fun` closes
    over are captured inputs, unbatched."""
    placeholders = [None if a is None else _example_struct(x, a) for x, a in zip(leaves, axes)]
    ex_args, ex_kwargs = tree_util.tree_unflatten(in_tree, placeholders)
    mapped = [(to_operand(x), a) for x, a in zip(leaves, axes) if a is not None]
    s = stage_function(_with_unmapped(fun, in_tree, leaves, axes), ex_args, ex_kwargs, "vmap")
    values = [x for x, _ in mapped] + s.args[len(mapped):]
    dims = [a for _, a in mapped] + [None] * (len(s.args) - len(mapped))
    outs, out_dims = batch_call(s.program, values, dims, axis)
    return s, outs, out_dims


def _with_unmapped(fun, in_tree, leaves, axes):
    """`fun` taking only the mapped leaves (the unmapped ones are None in its arguments'
    pytrees) and calling the user's function, control flow converted, with all of them."""
    target = convert(fun)

    @functools.wraps(fun)
    def staged(*args, **kwargs):
        mapped = iter(tree_util.tree_leaves((args, kwargs)))
        full = [next(mapped) if a is not None else x for x, a in zip(leaves, axes)]
        full_args, full_kwargs = tree_util.tree_unflatten(in_tree, full)
        return target(*full_args, **full_kwargs)

    # it calls the converted function: staging converts it no further (convert() of this new
    # function object each call was a lookup, a file-path check and a weak-dict entry)
    staged.__omnistage_converted__ = True
    return staged


# --- axis specifications ------------------------------------------------------------------------


def _is_axis_leaf(x):
    return x is None or isinstance(x, int)


def _check_in_axes_length(in_axes, args):
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
            f"len(args)={len(args)}"
        )


def _check_axes_spec(spec, what, top=False):
    if top and not (spec is None or type(spec) in (int, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {spec}."
        )
    if spec is None or type(spec) is int:
        return  # the common spec (0): nothing to walk
    leaves = tree_util.tree_leaves(spec, is_leaf=lambda x: x is None)
    if not all(x is None or type(x) is int for x in leaves):
        raise TypeError(
            f"vmap {what} must be an int, None, or (nested) container with those types as "
            f"leaves, but got {spec}."
        )


def _broadcast_prefix(prefix, tree, what):
    """One axis per leaf of `tree`: `prefix` (a tree prefix of it) replicated down."""
    prefix_leaves, prefix_tree = tree_util.tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = tree_util.flatten_up_to(prefix_tree, tree)
    except ValueError:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value, got "
            f"specification {prefix} for value tree {tree_util.tree_structure(tree)}."
        ) from None
    axes = []
    for axis, sub in zip(prefix_leaves, subtrees):
        axes.extend([axis] * len(tree_util.tree_leaves(sub)))
    return axes


def _flat_in_axes(in_axes, args, kwargs, n_leaves=None):
    """The axis of each leaf of (args, kwargs) (`n_leaves` of them, if known)."""
    if in_axes is None or type(in_axes) is int:  # one axis for every positional leaf (eager vmap: each call)
        n_kwargs = len(tree_util.tree_leaves(kwargs)) if kwargs else 0
        n_args = len(tree_util.tree_leaves(args)) if n_leaves is None else n_leaves - n_kwargs
        return [in_axes] * n_args + [0] * n_kwargs
    spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    arg_axes = _broadcast_prefix(spec, tuple(args), "in_axes")
    return arg_axes + [0] * len(tree_util.tree_leaves(kwargs))


def _flat_out_axes(out_axes, out_tree, n_out):
    if out_axes is None or type(out_axes) is int:
        return [out_axes] * n_out
    placeholder = tree_util.tree_unflatten(out_tree, [0] * n_out)
    return _broadcast_prefix(out_axes, placeholder, "out_axes")


def _shape(x):
    return tuple(leaf_aval(x).shape)


def _canonical_in_axis(axis, x):
    nd = len(_shape(x))
    if not -nd <= axis < nd:
        min_rank = axis + 1 if axis >= 0 else -axis
        raise ValueError(
            f"vmap was requested to map its argument along axis {axis}, which implies that its "
            f"rank should be at least {min_rank}, but is only {nd} (its shape is {_shape(x)})"
        )
    return axis % nd


def _example_struct(x, axis):
    """A stand-in for one example of a leaf mapped along `axis`: an Array of the right
    aval over a single zero (no copy; only its aval is used for staging)."""
    aval = leaf_aval(x)
    aval = aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])
    # (np.ndarray over one zero with zero strides: what np.broadcast_to makes, without its
    # Python-level iterator, each eager vmap call)
    one = np.zeros(1, aval.dtype)
    return Array.from_numpy(np.ndarray(aval.shape, aval.dtype, buffer=one, strides=(0,) * len(aval.shape)), aval)


# --- the batch size and its errors ---------------------------------------------------------------


def _mapped_axis_size(fun, in_tree, leaves, axes, axis_size):
    sizes = [_shape(x)[a] if a is not None else None for x, a in zip(leaves, axes)]
    distinct = {s for s in sizes if s is not None}
    if axis_size is not None:
        distinct.add(int(axis_size))
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        if not leaves:
            args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
            raise ValueError(
                "vmap wrapped function must be passed at least one argument containing an array, "
                f"got empty *args={args} and **kwargs={kwargs}"
            )
        raise ValueError("vmap must have at least one non-None value in in_axes")
    raise ValueError(_inconsistent_sizes_message(fun, in_tree, leaves, axes, sizes, axis_size))


def _inconsistent_sizes_message(fun, in_tree, leaves, axes, sizes, axis_size):
    paths = _argument_paths(fun, in_tree, leaves)
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * the axis_size argument is {axis_size};")
    for rank, (size, count) in enumerate(counts):
        i = sizes.index(size)
        where = f"axis {axes[i]} of {paths[i]}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {where};")
        elif rank == 0:
            lines.append(f"  * most axes ({count} of them) had size {size}, e.g. {where};")
        else:
            lines.append(f"  * some axes ({count} of them) had size {size}, e.g. {where};")
    return "\n".join(lines)[:-1]


def _type_str(x):
    try:
        return leaf_aval(x).str_short()
    except TypeError:
        return "unknown"


def _argument_paths(fun, in_tree, leaves):
    """`argument x[0] of type float32[3]` for each leaf (JAX's wording)."""
    args, kwargs = tree_util.tree_unflatten(in_tree, list(range(len(leaves))))
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs).arguments.items()
        prefix = "argument "
    except (TypeError, ValueError):
        bound = [("args", args), ("kwargs", kwargs)]
        prefix = ""
    paths = [None] * len(leaves)
    for name, value in bound:
        for path, i in tree_util.tree_flatten_with_path(value)[0]:
            paths[i] = f"{prefix}{name}{tree_util.keystr(path)} of type {_type_str(leaves[i])}"
    return paths


# --- outputs --------------------------------------------------------------------------------------


def _place_output(x, d, target, size, axis_name):
    """Output `x` (batched at `d` or not) with the examples on axis `target`."""
    if target is None:
        if d is not None:
            named = "" if axis_name is None else f" (axis_name={axis_name})"
            raise ValueError(f"vmap has mapped output{named} but out_axes is None")
        return _as_array(x)
    nd = np.ndim(x) if not isinstance(x, (Array, Tracer)) else x.ndim
    nd += d is None
    if not -nd <= target < nd:
        raise ValueError(f"axis {target} is out of bounds for array of dimension {nd}")
    return batch_at(to_operand(x), d, size, target % nd)


def _as_array(x):
    return x if isinstance(x, (Array, Tracer)) else to_operand(x)


__all__ = ["vmap"]
