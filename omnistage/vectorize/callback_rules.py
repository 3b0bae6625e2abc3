"""Batching rule of `pure_callback` (omnistage.pure_callback), by its `vmap_method`, as JAX's:

- "sequential" / "sequential_unrolled": a derived host callback (`core.host_callbacks`) calls
  the function once per example, batched operands carrying the examples on axis 0;
- "expand_dims": one call, batched operands with the batch on axis 0 and unbatched ones given a
  leading axis of size 1 ("legacy_vectorized": unbatched ones as they are);
- "broadcast_all": one call, every operand broadcast to the batch on axis 0;
- None: an error, as in JAX (the function's behaviour on a batch is unknown).
Results carry the batch on axis 0.
"""
from ..core import host_callbacks
from ..core.array import aval_of
from ..core.errors import add_location
from ..core.source_info import describe_here
from ..lax import shapes as S
from .rules import batch_at, batch_size, bind, move_axis, register


def _with_unit_axis(x):
    aval = aval_of(x)
    return S.reshape(x, (1,) + aval.shape)


@register("pure_callback")
def _pure_callback(args, dims, *, callback, result_avals, vmap_method):
    if vmap_method is None:
        raise add_location(NotImplementedError(
            f"vmap of pure_callback ({callback.split('|')[0]}) needs a vmap_method: one of 'sequential', "
            f"'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized' (JAX's rule); "
            f"pass it to pure_callback"), describe_here())
    size = batch_size(args, dims)
    batched = tuple(d is not None for d in dims)
    if vmap_method in ("sequential", "sequential_unrolled"):
        xs = [x if d is None else move_axis(x, d, 0) for x, d in zip(args, dims)]
        mask = "".join("b" if b else "u" for b in batched)
        callback = host_callbacks.derive(
            callback, f"sequential{size}{mask}", lambda fn: host_callbacks.sequential(fn, batched, size))
    elif vmap_method == "broadcast_all":
        xs = [batch_at(x, d, size) for x, d in zip(args, dims)]
    elif vmap_method == "expand_dims":
        xs = [_with_unit_axis(x) if d is None else move_axis(x, d, 0) for x, d in zip(args, dims)]
    else:  # legacy_vectorized: unbatched operands as they are
        xs = [x if d is None else move_axis(x, d, 0) for x, d in zip(args, dims)]
    avals = tuple(((size,) + tuple(shape), dtype) for shape, dtype in result_avals)
    outs = bind("pure_callback", *xs, callback=callback, result_avals=avals, vmap_method=vmap_method)
    return list(outs), [0] * len(outs)
