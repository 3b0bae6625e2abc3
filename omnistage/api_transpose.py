"""`linear_transpose`, with JAX's API: the transpose of a linear function, as a function.

For `fun` linear in its arguments, the transpose maps an output cotangent to the input
cotangents. It is computed by reverse mode at zero (a linear function's VJP is its transpose,
wherever it is taken): each call stages `fun` and its VJP on zeros of the primals' shapes,
and what does not reach the cotangents is dead code that clean-up drops under jit. As in JAX,
linearity is the caller's promise (JAX rejects a non-linear primitive while transposing; here a
non-linear `fun` gets the transpose of its linearization at zero, e.g. `sin` acts like identity).
"""
import numpy as np

from .api_grad import vjp
from .core import dtypes
from .core import tree_util
from .core.aval import ShapedArray
from .core.errors import add_location
from .core.source_info import describe_here
from .lax.control_flow import stage_body


def _shape_dtype(x):
    return tuple(np.shape(x)), dtypes.canonicalize_dtype(np.dtype(getattr(x, "dtype", None) or np.result_type(x)))


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun`, whose arguments have the shapes and dtypes of
    `primals` (arrays or ShapeDtypeStructs): `transposed(out_cotangent)` -> a tuple with one
    cotangent per primal."""
    leaves, in_tree = tree_util.tree_flatten(primals)
    in_specs = [_shape_dtype(x) for x in leaves]
    # staged on avals (not eval_shape): `fun` may close over values traced by an enclosing transformation
    staged = stage_body(lambda *xs: fun(*tree_util.tree_unflatten(in_tree, list(xs))),
                        tuple(ShapedArray(shape, dt) for shape, dt in in_specs), "linear_transpose")
    out_tree = staged.out_tree
    out_specs = [(tuple(a.shape), np.dtype(a.dtype)) for a in staged.out_avals]
    for _, dt in in_specs + out_specs:
        if not dtypes.is_inexact(dt):
            raise add_location(TypeError(
                f"linear_transpose only supports [float or complex] -> [float or complex] functions, "
                f"but {getattr(fun, '__name__', fun)} has a {dt.name} input or output"), describe_here())

    def transposed(out_cotangent):
        ct_leaves, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise add_location(TypeError(
                f"cotangent tree does not match function output: got {ct_tree}, expected {out_tree}"), describe_here())
        for c, (shape, dt) in zip(ct_leaves, out_specs):
            if tuple(np.shape(c)) != shape or _shape_dtype(c)[1] != dt:
                raise add_location(TypeError(
                    f"cotangent type does not match function output: got {_shape_dtype(c)[1].name}{list(np.shape(c))}, "
                    f"expected {dt.name}{list(shape)}"), describe_here())
        from . import numpy as jnp

        zeros = tree_util.tree_unflatten(in_tree, [jnp.zeros(shape, dt) for shape, dt in in_specs])
        _, pullback = vjp(fun, *zeros)
        return tuple(pullback(out_cotangent))

    return transposed


__all__ = ["linear_transpose"]
