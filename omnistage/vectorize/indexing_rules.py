"""Batching rules of `gather`, the `scatter` family, `dynamic_slice` and
`dynamic_update_slice` (JAX's rules, for omnistage's simpler gather/scatter form: see
`omnistage.lax.indexing`).

- Only the operand batched: the batch axis is one more operand axis the indices do not
  address; `axes` shift around it.
- Indices batched: each example's index rows get the example's number as an extra leading
  coordinate (an iota), addressing the operand batched at axis 0 (broadcast if it was not).
- `dynamic_slice`/`dynamic_update_slice` with per-example starts become a gather/scatter
  of the window: starts are clamped first exactly as the primitives clamp them, so the
  index rows are always in bounds. An unbatched operand of `dynamic_slice` is gathered from
  as it is (JAX's rule too): broadcasting it to the batch first made a copy per example, and
  the program that copy's loop nest (control's vmapped `Q[t]` of a table: 7 loop nests of
  11x10x2x2 per iLQR step, C the compiler then compiled on every first call).
"""
import numpy as np

from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import shapes as S
from ..lax.indexing import SCATTER_PRIMITIVES
from .rules import BATCH, batch_at, batch_size, bind, move_axis, register, shifted


def _with_example_coordinate(indices, size):
    """Index rows (B, ..., k) prefixed by each row's example number: (B, ..., k + 1)."""
    aval = aval_of(indices)
    shape = aval.shape[:-1] + (1,)
    example = S.broadcasted_iota(aval.dtype, shape, 0)
    return S.concatenate([example, indices], aval.ndim - 1)


@register("gather")
def _gather(args, dims, *, axes):
    (x, idx), (dx, di) = args, dims
    if di is None:
        axes2 = tuple(shifted(a, dx) for a in axes)
        rest = [i for i in range(aval_of(x).ndim) if i not in axes2]
        out_d = aval_of(idx).ndim - 1 + rest.index(dx)
        return bind("gather", x, idx, axes=axes2), out_d
    if dx is None:
        if di == aval_of(idx).ndim - 1:  # keep the examples off the coordinate axis
            idx, di = move_axis(idx, di, 0), 0
        return bind("gather", x, idx, axes=axes), di
    size = batch_size(args, dims)
    x = move_axis(x, dx, 0)
    idx = _with_example_coordinate(move_axis(idx, di, 0), size)
    return bind("gather", x, idx, axes=(0,) + tuple(a + 1 for a in axes)), 0


def _scatter_rule(name):
    def rule(args, dims, *, axes):
        (x, idx, upd), (dx, di, du) = args, dims
        size = batch_size(args, dims)
        x = batch_at(x, dx, size, 0)
        if di is None:
            # the examples are the first operand axis the indices do not address
            upd = batch_at(upd, du, size, aval_of(idx).ndim - 1)
            return bind(name, x, idx, upd, axes=tuple(a + 1 for a in axes)), 0
        idx = _with_example_coordinate(move_axis(idx, di, 0), size)
        upd = batch_at(upd, du, size, 0)
        return bind(name, x, idx, upd, axes=(0,) + tuple(a + 1 for a in axes)), 0

    return rule


for _name in SCATTER_PRIMITIVES:
    BATCH[_name] = _scatter_rule(_name)


# --- dynamic_slice / dynamic_update_slice ------------------------------------------------------


def _clamped_start(s, d, dim, size, batch):
    """Start `s` (batched at `d` or not) as int32, clamped into [0, dim - size] as the
    primitive does, shaped (batch,) when batched."""
    s = E.convert_element_type(s, np.int32)
    s = E.clamp(np.int32(0), s, np.int32(max(dim - size, 0)))
    return s if d is None else move_axis(s, d, 0)


def _window_indices(starts, sizes, batch, example=True):
    """Index rows (batch, *sizes, 1 + len(sizes)): the example, then start + offset per axis
    (without the example's column, (batch, *sizes, len(sizes)), when not `example`)."""
    shape = (batch,) + tuple(sizes)
    cols = [S.broadcasted_iota(np.int32, shape, 0)] if example else []
    for j, s in enumerate(starts):
        offset = S.broadcasted_iota(np.int32, shape, j + 1)
        dims = (0,) if aval_of(s).ndim else ()
        cols.append(E.add(S.broadcast_in_dim(s, shape, dims), offset))
    cols = [S.broadcast_in_dim(c, shape + (1,), tuple(range(len(shape)))) for c in cols]
    return S.concatenate(cols, len(shape))


@register("dynamic_slice")
def _dynamic_slice(args, dims, *, slice_sizes):
    (x, *starts), (dx, *ds) = args, dims
    size = batch_size(args, dims)
    if all(d is None for d in ds):
        zero = np.zeros((), aval_of(starts[0]).dtype) if starts else np.int32(0)
        starts = starts[:dx] + [zero] + starts[dx:]
        sizes = tuple(slice_sizes[:dx]) + (size,) + tuple(slice_sizes[dx:])
        return bind("dynamic_slice", x, *starts, slice_sizes=sizes), dx
    # an unbatched operand is gathered from as it is (lead: its axes' offset in x, 0 or 1)
    lead = 0 if dx is None else 1
    x = x if dx is None else move_axis(x, dx, 0)
    shape = aval_of(x).shape[lead:]
    batched = [j for j, d in enumerate(ds) if d is not None]
    # first slice the axes whose starts every example shares (one dynamic_slice) ...
    pre_starts = [np.int32(0)] * lead + [np.int32(0) if j in batched else s for j, s in enumerate(starts)]
    pre_sizes = (size,) * lead + tuple(shape[j] if j in batched else z for j, z in enumerate(slice_sizes))
    if pre_sizes != aval_of(x).shape:
        pre_starts = [E.convert_element_type(s, np.int32) for s in pre_starts]
        x = bind("dynamic_slice", x, *pre_starts, slice_sizes=pre_sizes)
    # ... then gather each example's window along the others
    cstarts = [_clamped_start(starts[j], ds[j], shape[j], slice_sizes[j], size) for j in batched]
    idx = _window_indices(cstarts, [slice_sizes[j] for j in batched], size, example=bool(lead))
    out = bind("gather", x, idx, axes=(0,) * lead + tuple(j + lead for j in batched))
    # gather gives (batch, batched-start axes..., other axes...): back to the operand's order
    order = batched + [j for j in range(len(shape)) if j not in batched]
    perm = (0,) + tuple(1 + order.index(j) for j in range(len(shape)))
    return S.transpose(out, perm), 0


@register("dynamic_update_slice")
def _dynamic_update_slice(args, dims):
    (x, upd, *starts), (dx, du, *ds) = args, dims
    size = batch_size(args, dims)
    x = batch_at(x, dx, size, 0)
    upd = batch_at(upd, du, size, 0)
    if all(d is None for d in ds):
        zero = np.zeros((), aval_of(starts[0]).dtype) if starts else np.int32(0)
        return bind("dynamic_update_slice", x, upd, zero, *starts), 0
    shape = aval_of(x).shape[1:]
    usizes = aval_of(upd).shape[1:]
    cstarts = [_clamped_start(s, d, dim, z, size) for s, d, dim, z in zip(starts, ds, shape, usizes)]
    idx = _window_indices(cstarts, usizes, size)
    return bind("scatter", x, idx, upd, axes=tuple(range(len(shape) + 1))), 0
