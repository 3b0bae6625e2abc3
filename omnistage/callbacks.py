"""`omnistage.pure_callback`: call a host Python function from traced and compiled code, as
`jax.pure_callback` does.

The call stages one `pure_callback` statement: its operands are the argument leaves, its
parameters the callback's key (`core.host_callbacks`: a string, so printed programs stay
runnable Python), the result shapes and dtypes, and `vmap_method`:

    y, = pure_callback(x, callback='host_sin#0', result_avals=(((3,), 'float32'),), vmap_method=None)

Each run of the program calls the function with NumPy arrays: eager calls and the interpreter
through the primitive's implementation, compiled CPU code from a `numba.objmode` block
(codegen/callback_lowering.py). The function must be pure: a program may call it fewer times
than written (unused results are dropped, identical calls merged) or more (under vmap with
`vmap_method="sequential"`, once per example). Results are converted to the declared dtypes;
a result of another shape raises. As in JAX there is no derivative (use `custom_jvp` /
`custom_vjp` around it), and vmap needs a `vmap_method`: "sequential" (one call per example),
"expand_dims" (one call, unbatched arguments get a leading axis of size 1), "broadcast_all"
(one call, every argument broadcast to the batch) or "legacy_vectorized" (one call, unbatched
arguments as they are).
"""
import numpy as np

from .core import host_callbacks
from .core import tree_util
from .core.aval import ShapedArray
from .core.errors import add_location
from .core.source_info import describe_here
from .core.primitive import CALLS_PYTHON, Primitive
from .core import dtypes
from .lax._rules import to_operand

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized")


def _result_spec(result_shape_dtypes):
    """(leaves' ((shape), dtype name) pairs, tree) of the declared results."""
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    spec = []
    for leaf in leaves:
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise add_location(TypeError(
                f"pure_callback: result_shape_dtypes must be a pytree of objects with .shape and .dtype "
                f"(jax.ShapeDtypeStruct, arrays), got {leaf!r}"), describe_here())
        spec.append((tuple(int(d) for d in shape), dtypes.canonicalize_dtype(np.dtype(dtype)).name))
    return tuple(spec), tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """`callback(*args, **kwargs)` run on the host with NumPy arrays, returning arrays of the
    shapes and dtypes in `result_shape_dtypes` (a pytree of ShapeDtypeStructs); callable inside
    jit, vmap (see `vmap_method`) and on concrete values. `sharding` is accepted."""
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise add_location(ValueError(
            f"pure_callback: vmap_method must be one of {VMAP_METHODS} or None, got {vmap_method!r}"), describe_here())
    if not callable(callback):
        raise add_location(TypeError(f"pure_callback: callback must be callable, got {callback!r}"), describe_here())
    spec, out_tree = _result_spec(result_shape_dtypes)
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    operands = [to_operand(x) for x in leaves]

    def flat(*values):
        a, k = tree_util.tree_unflatten(in_tree, list(values))
        return tree_util.tree_leaves(callback(*a, **k))

    key = host_callbacks.register(callback, flat, (in_tree, out_tree, spec))
    outs = pure_callback_p.bind(*operands, callback=key, result_avals=spec, vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


def _abstract_eval(*avals, callback, result_avals, vmap_method):
    return [ShapedArray(shape, np.dtype(dtype)) for shape, dtype in result_avals]


def impl(*values, callback, result_avals, vmap_method):
    """Call the host function; its results checked against and converted to `result_avals`."""
    got = host_callbacks.lookup(callback)(*[np.asarray(v) for v in values])
    if got is None and all(0 in shape for shape, _ in result_avals):
        got = [np.zeros(shape, dtype) for shape, dtype in result_avals]  # no examples to call it on
    got = list(got)
    if len(got) != len(result_avals):
        raise TypeError(
            f"pure_callback: the callback {callback.split('|')[0]} returned {len(got)} arrays, but "
            f"result_shape_dtypes declares {len(result_avals)}")
    outs = []
    for value, (shape, dtype) in zip(got, result_avals):
        value = np.asarray(value)
        if value.shape != tuple(shape):
            raise ValueError(
                f"pure_callback: the callback {callback.split('|')[0]} returned an array of shape "
                f"{value.shape}, but result_shape_dtypes declares {tuple(shape)}")
        outs.append(value.astype(dtype, copy=False))
    return outs


pure_callback_p = Primitive("pure_callback", _abstract_eval, impl, multiple_results=True)
CALLS_PYTHON.add("pure_callback")

__all__ = ["pure_callback"]
