"""`omnistage.flatten_util.ravel_pytree`, as `jax.flatten_util`: a pytree of arrays as one flat
1-D array (leaves raveled in pytree order, converted to their promoted dtype) and the function
that rebuilds the pytree (original shapes and dtypes) from such an array. Works on traced
values too: under jit, grad and vmap it stages concatenations, slices and reshapes.
"""
import numpy as np

from .core import dtypes
from .core import tree_util
from .core.errors import add_location
from .core.source_info import describe_here


def _jnp():
    from . import numpy as jnp  # noqa: PLC0415

    return jnp


def ravel_pytree(pytree):
    """(flat 1-D array of every leaf, `unravel(flat) -> pytree`)."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, lambda arr: tree_util.tree_unflatten(treedef, unravel_list(arr))


def _ravel_list(leaves):
    jnp = _jnp()
    if not leaves:
        return jnp.zeros((0,), np.float32), lambda _: []
    arrays = [jnp.asarray(x) for x in leaves]
    from_dtypes = tuple(a.dtype for a in arrays)
    to_dtype = dtypes.canonicalize_dtype(np.dtype(jnp.result_type(*arrays)))
    shapes = tuple(a.shape for a in arrays)
    ends = tuple(int(v) for v in np.cumsum([a.size for a in arrays]))
    same = all(dt == to_dtype for dt in from_dtypes)
    flat = jnp.concatenate([a.ravel() if same else a.astype(to_dtype).ravel() for a in arrays])

    def unravel(arr):
        arr = jnp.asarray(arr)
        if arr.shape != (ends[-1],):
            raise add_location(ValueError(
                f"The unravel function expected an array of shape {(ends[-1],)}, got shape {arr.shape}."),
                describe_here())
        if not same and arr.dtype != to_dtype:
            raise add_location(TypeError(
                f"unravel function given array of dtype {arr.dtype} but expected dtype {to_dtype}"), describe_here())
        starts = (0,) + ends[:-1]
        chunks = [arr[s:e].reshape(shape) for s, e, shape in zip(starts, ends, shapes)]
        return chunks if same else [_cast(c, dt) for c, dt in zip(chunks, from_dtypes)]

    return flat, unravel


def _cast(x, dtype):
    """`x` as `dtype`; complex to real keeps the real part (as JAX's convert does, silently)."""
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = _jnp().real(x)
    return x.astype(dtype)


__all__ = ["ravel_pytree"]
