"""Batching rule of `debug_print` (omnistage.debug.print): as in JAX, each example prints on
its own. The operands' leading `batch_rank` axes are the examples the print loops over (in
row-major order); this vmap's axis joins them last, after the axes of the vmaps applied
before it (inner ones), and unbatched operands are broadcast so that all share it. So nested
vmaps print in JAX's order, whose batching rule unrolls the innermost vmap outermost."""
from .rules import all_batched_at, bind, register


@register("debug_print")
def _debug_print(args, dims, *, fmt, tree, batch_rank, **params):
    xs = all_batched_at(args, dims, batch_rank)
    return bind("debug_print", *xs, fmt=fmt, tree=tree, batch_rank=batch_rank + 1, **params), None
