"""Batching rule of `debug_print` (omnistage.debug.print): as in JAX, each example prints on
its own. Every operand gets the batch axis in front (unbatched ones broadcast, so all share
it) and `batch_rank` counts the leading axes the print loops over; under nested vmaps the
outermost axis comes first and its examples are printed in row-major order."""
from .rules import all_batched_at, bind, register


@register("debug_print")
def _debug_print(args, dims, *, fmt, tree, batch_rank, **params):
    xs = all_batched_at(args, dims, 0)
    return bind("debug_print", *xs, fmt=fmt, tree=tree, batch_rank=batch_rank + 1, **params), None
