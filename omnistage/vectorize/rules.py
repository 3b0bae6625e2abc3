"""The batching rule tables and the helpers rules are written with.

    BATCH[name](args, dims, **params) -> (out, out_dim)

`args` are the operands of one statement, already batched: `dims[i]` is the axis of
`args[i]` that carries the examples, or None where the operand is the same for every
example (at least one is not None when a rule is called). `out_dim` says where the result
carries them (None: unbatched). Primitives with multiple results take and return lists
(`out` and `out_dim` both). Params are the primitive's params as bound (body references
replaced by sub-Programs for control flow); rules registered with `needs_axis=True` (those
that batch bodies) also get `batch_axis`, the pass's `BatchAxis`.

    COLLECTIVE[name](args, dims, batch_axis, **params) -> (out, out_dim)

rewrites a collective (`psum`, `axis_index`, ...) over the pass's own axis name; the pass
applies it even when no operand is batched (see `collective_rules`).

Rules are plain Python over `omnistage.lax` (they bind primitives directly where a param
changes, through the lax wrappers for moving axes); the pass stages whatever they bind at
the user's line, marked `(vmap)`. Rules move a batch dimension only when the primitive
needs it somewhere else; unbatched operands are broadcast only where lax needs equal shapes.
Register a rule module by adding an import line to `omnistage/vectorize/all_rules.py`.
"""
from ..core import primitive as core_primitive
from ..core.array import aval_of
from ..lax import shapes as S

BATCH = {}
COLLECTIVE = {}
NEEDS_AXIS = set()  # rules given `batch_axis`: bodies they batch rewrite collectives too


def prim(name):
    return core_primitive.registry[name]


def bind(name, *args, **params):
    return core_primitive.registry[name].bind(*args, **params)


def register(*names, needs_axis=False):
    """Decorator: the rule for every primitive in `names`."""
    def wrap(fn):
        for n in names:
            BATCH[n] = fn
            if needs_axis:
                NEEDS_AXIS.add(n)
        return fn

    return wrap


# --- batch dimensions --------------------------------------------------------------------


def batch_size(args, dims):
    """The number of examples: the size of the first batched operand's batch axis."""
    for x, d in zip(args, dims):
        if d is not None:
            return aval_of(x).shape[d]
    raise ValueError("batching rule called without a batched operand")


def shifted(axis, d):
    """The batched array's index of per-example axis `axis` when the batch axis is `d`."""
    return axis if d is None or axis < d else axis + 1


def per_example_index(axis, d):
    """Inverse of `shifted`: the per-example index of batched axis `axis` (!= d)."""
    return axis if d is None or axis < d else axis - 1


def move_axis(x, src, dst):
    """`x` with axis `src` moved to position `dst` (no statement when src == dst)."""
    if src == dst:
        return x
    nd = aval_of(x).ndim
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return S.transpose(x, tuple(perm))


def broadcast_batched(x, size, dst):
    """An unbatched `x` repeated `size` times along a new axis at `dst`."""
    aval = aval_of(x)
    shape = aval.shape[:dst] + (size,) + aval.shape[dst:]
    dims = tuple(i for i in range(len(shape)) if i != dst)
    return S.broadcast_in_dim(x, shape, dims)


def batch_at(x, d, size, dst=0):
    """`x` (batched at `d`, or unbatched: d None) with its batch axis at `dst`."""
    if d is None:
        return broadcast_batched(x, size, dst)
    return move_axis(x, d, dst)


def all_batched_at(args, dims, dst=0):
    """Every operand with its batch axis at `dst` (unbatched ones broadcast)."""
    size = batch_size(args, dims)
    return [batch_at(x, d, size, dst) for x, d in zip(args, dims)]


def batched_aval(aval, d, size):
    """The aval of a per-example `aval` batched at `d` (None: unchanged)."""
    if d is None:
        return aval
    return aval.update(shape=aval.shape[:d] + (size,) + aval.shape[d:])


def unbatched_aval(aval, d):
    if d is None:
        return aval
    return aval.update(shape=aval.shape[:d] + aval.shape[d + 1:])


def missing_rule(e):
    return NotImplementedError(
        f"vmap has no batching rule for the primitive {e.prim!r} (statement: "
        f"{e.outs} = {e.prim}(...)); add one to omnistage/vectorize"
    )
