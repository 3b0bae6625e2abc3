"""Derivative rules of the indexing primitives (`omnistage.lax.indexing`): `dynamic_slice`,
`dynamic_update_slice`, `gather` and the scatter family. Integer operands (start indices,
index arrays) never get a cotangent.

Addressing conventions the rules must respect (see lax/indexing.py): `gather` clamps
out-of-bounds index rows into range, while the scatters drop them. So
- gather's transpose is `scatter_add` at the *clamped* indices (every row lands);
- a scatter's update cotangent is `gather` at the clamped indices, zeroed for the rows the
  scatter dropped.
`scatter` (set) keeps the last of duplicate rows: only the winning row's update gets a
cotangent (found by scattering the row numbers), and the overwritten operand entries get
zero. `scatter_mul` is exact with zeros and duplicates at every order (per update row: the
product of the other factors written to its position, by a segmented scan over the rows
sorted by position; JAX supports unique indices only). `scatter_min`/`scatter_max` split
the derivative evenly among the operand entry and the updates that attain the result, as
JAX does.

Also the gather helpers other rule modules use to permute tangents (`take_along_axis` and
its transpose `put_along_axis`).
Imports lax and the rule tables only.
"""
import numpy as np

from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import indexing as I
from ..lax import reductions as RD
from ..lax import shapes as S
from . import zeros as Z
from .rules import JVP, VJP, bind


def _c(x, value):
    return np.asarray(value, dtype=aval_of(x).dtype)[()]


def _shape(x):
    return tuple(aval_of(x).shape)


# --- index helpers ------------------------------------------------------------------------


def _bounds(operand, indices, axes):
    """The sizes of the addressed axes, broadcast to the shape of `indices`."""
    sizes = np.asarray([_shape(operand)[a] for a in axes], dtype=aval_of(indices).dtype)
    return S.broadcast_in_dim(sizes, _shape(indices), (len(_shape(indices)) - 1,))


def clamped(operand, indices, axes):
    """`indices` clamped into the addressed axes, as gather reads them."""
    dims = _bounds(operand, indices, axes)
    one = _c(indices, 1)
    return E.max(E.min(indices, E.sub(dims, one)), _c(indices, 0))


def _rows_in_bounds(operand, indices, axes):
    """Bool mask of shape indices.shape[:-1]: the index row is in bounds (a scatter keeps it)."""
    dims = _bounds(operand, indices, axes)
    ok = E.bitwise_and(E.ge(indices, _c(indices, 0)), E.lt(indices, dims))
    return RD.reduce_and(ok, (len(_shape(indices)) - 1,))


def _row_in_bounds(operand, indices, updates, axes):
    """`_rows_in_bounds` broadcast to the shape of `updates`."""
    rows = _rows_in_bounds(operand, indices, axes)
    return S.broadcast_in_dim(rows, _shape(updates), tuple(range(len(_shape(rows)))))


def _gather_rows(x, operand, indices, updates, axes):
    """`x` (operand-shaped) read at each update row's position; 0 for dropped rows."""
    got = I.gather(x, clamped(operand, indices, axes), axes)
    return E.select(_row_in_bounds(operand, indices, updates, axes), got, _c(got, 0))


def along_axis_indices(idx, axis):
    """Gather indices (shape idx.shape + (ndim,), addressing every axis in order) that pick
    position idx[i] along `axis` and i itself along the other axes."""
    shape = _shape(idx)
    ndim = len(shape)
    dt = aval_of(idx).dtype
    cols = [idx if d == axis else S.broadcasted_iota(dt, shape, d) for d in range(ndim)]
    return S.concatenate([S.reshape(c, shape + (1,)) for c in cols], ndim)


def take_along_axis(x, idx, axis):
    """Entry i of the result along `axis` is x at idx[i] (shape of `idx`); its transpose is
    `put_along_axis`."""
    return I.gather(x, along_axis_indices(idx, axis), tuple(range(len(_shape(idx)))))


def put_along_axis(ct, x, idx, axis):
    """The transpose of `take_along_axis(x, idx, axis)` applied to `ct`: zeros of x's
    shape with each ct entry added at the position it was taken from."""
    full = along_axis_indices(idx, axis)
    return I.scatter_add(Z.zeros(aval_of(x)), full, ct, tuple(range(len(_shape(idx)))))


# --- dynamic_slice / dynamic_update_slice -------------------------------------------------


def _dynamic_slice_jvp(primals, tangents, out, *, slice_sizes):
    return bind("dynamic_slice", tangents[0], *primals[1:], slice_sizes=slice_sizes)


def _dynamic_slice_vjp(ct, ins, out, *, slice_sizes):
    operand, *starts = ins
    return [lambda: bind("dynamic_update_slice", Z.zeros(aval_of(operand)), ct, *starts)] + [None] * len(starts)


def _dynamic_update_slice_jvp(primals, tangents, out):
    operand, update, *starts = primals
    t_op = Z.instantiate(tangents[0], aval_of(operand))
    t_up = Z.instantiate(tangents[1], aval_of(update))
    return bind("dynamic_update_slice", t_op, t_up, *starts)


def _dynamic_update_slice_vjp(ct, ins, out):
    operand, update, *starts = ins
    return [
        lambda: bind("dynamic_update_slice", ct, Z.zeros(aval_of(update)), *starts),
        lambda: bind("dynamic_slice", ct, *starts, slice_sizes=_shape(update)),
    ] + [None] * len(starts)


JVP["dynamic_slice"], VJP["dynamic_slice"] = _dynamic_slice_jvp, _dynamic_slice_vjp
JVP["dynamic_update_slice"], VJP["dynamic_update_slice"] = _dynamic_update_slice_jvp, _dynamic_update_slice_vjp


# --- gather -------------------------------------------------------------------------------


def _gather_jvp(primals, tangents, out, *, axes):
    return I.gather(tangents[0], primals[1], axes)


def _gather_vjp(ct, ins, out, *, axes):
    operand, indices = ins
    return [
        lambda: I.scatter_add(Z.zeros(aval_of(operand)), clamped(operand, indices, axes), ct, axes),
        None,
    ]


JVP["gather"], VJP["gather"] = _gather_jvp, _gather_vjp


# --- scatter_add: linear in operand and updates -------------------------------------------


def _linear_scatter_jvp(scatter):
    """scatter / scatter_add are linear in (operand, updates) jointly: the tangent is the
    same scatter of the tangents at the same indices."""

    def jvp(primals, tangents, out, *, axes):
        operand, indices, updates = primals
        t_op = Z.instantiate(tangents[0], aval_of(operand))
        t_up = Z.instantiate(tangents[2], aval_of(updates))
        return scatter(t_op, indices, t_up, axes)

    return jvp


_scatter_add_jvp = _linear_scatter_jvp(I.scatter_add)


def _scatter_add_vjp(ct, ins, out, *, axes):
    operand, indices, updates = ins
    return [ct, None, lambda: _gather_rows(ct, operand, indices, updates, axes)]


JVP["scatter_add"], VJP["scatter_add"] = _scatter_add_jvp, _scatter_add_vjp


# --- scatter (set): the last duplicate wins -----------------------------------------------


def _winners(operand, indices, updates, axes):
    """Bool mask of `updates`' shape: this row's update is the one left in the result
    (in bounds, and not overwritten by a later duplicate)."""
    up_shape = _shape(updates)
    n_batch = len(_shape(indices)) - 1
    rows = int(np.prod(up_shape[:n_batch], dtype=np.int64))
    row_ids = S.reshape(S.iota(np.int32, rows), up_shape[:n_batch])
    row_ids = S.broadcast_in_dim(row_ids, up_shape, tuple(range(n_batch)))
    owners = S.broadcast_in_dim(np.int32(-1), _shape(operand), ())
    owners = I.scatter(owners, indices, row_ids, axes)
    back = I.gather(owners, clamped(operand, indices, axes), axes)
    return E.bitwise_and(E.eq(back, row_ids), _row_in_bounds(operand, indices, updates, axes))


_scatter_jvp = _linear_scatter_jvp(I.scatter)


def _scatter_vjp(ct, ins, out, *, axes):
    operand, indices, updates = ins

    def updates_ct():
        got = I.gather(ct, clamped(operand, indices, axes), axes)
        return E.select(_winners(operand, indices, updates, axes), got, _c(got, 0))

    return [lambda: I.scatter(ct, indices, Z.zeros(aval_of(updates)), axes), None, updates_ct]


JVP["scatter"], VJP["scatter"] = _scatter_jvp, _scatter_vjp


# --- scatter_mul --------------------------------------------------------------------------


def _shift_rows(v, s, fill):
    """`v` moved `s` rows down along axis 0 (up when s < 0), `fill` shifted in."""
    config = ((s, -s, 0),) + ((0, 0, 0),) * (len(_shape(v)) - 1)
    return S.pad(v, fill, config)


def _segment_bounds(keys):
    """For sorted `keys` (1-d): the first and last position of each entry's run of equal keys."""
    n = _shape(keys)[0]
    pos = S.iota(np.int32, n)
    none = _c(keys, -1)
    first = E.ne(keys, _shift_rows(keys, 1, none))
    last = E.ne(keys, _shift_rows(keys, -1, none))
    start = bind("cummax", E.select(first, pos, np.int32(0)), axis=0, reverse=False)
    stop = bind("cummin", E.select(last, pos, np.int32(n - 1)), axis=0, reverse=True)
    return pos, start, stop


def _segment_exclusive_products(values, pos, start, stop, step):
    """Products of the other entries of each run (runs given by start/stop per row; `step`
    +1 for those before, -1 for those after): a segmented Hillis-Steele scan, polynomial in
    `values` (no division), so exact with zeros at every order."""
    one = _c(values, 1)

    def same_run(d):
        """Rows whose neighbour `d` rows away is in the same run, as a mask of values' shape."""
        moved = E.sub(pos, np.int32(d))
        mask = E.ge(moved, start) if d > 0 else E.le(moved, stop)
        return S.broadcast_in_dim(mask, _shape(values), (0,))

    acc, s = values, 1
    while s < _shape(values)[0]:
        acc = E.mul(acc, E.select(same_run(s * step), _shift_rows(acc, s * step, one), one))
        s *= 2
    return E.select(same_run(step), _shift_rows(acc, step, one), one)


def _scatter_mul_partial(operand, indices, updates, axes):
    """d out[p] / d updates[r] for the row r writing position p: the operand entry times
    the other factors written to p. Rows are sorted by position so that duplicates form
    runs; each row's factor is the product of the run before it times the run after it."""
    up_shape, idx_shape = _shape(updates), _shape(indices)
    n_rows = int(np.prod(idx_shape[:-1], dtype=np.int64))
    if n_rows == 0:
        return Z.zeros(aval_of(updates))
    rows = S.reshape(indices, (n_rows, idx_shape[-1]))
    flat = S.reshape(updates, (n_rows,) + up_shape[len(idx_shape) - 1:])
    dims = [_shape(operand)[a] for a in axes]
    strides = np.asarray([int(np.prod(dims[j + 1:], dtype=np.int64)) for j in range(len(dims))], aval_of(indices).dtype)
    keys = RD.reduce_sum(E.mul(rows, S.broadcast_in_dim(strides, _shape(rows), (1,))), (1,))
    row_ids = S.iota(aval_of(indices).dtype, n_rows)
    total = _c(indices, int(np.prod(dims, dtype=np.int64)))
    # dropped rows write nowhere: give each a key of its own
    in_bounds = S.reshape(_rows_in_bounds(operand, indices, axes), (n_rows,))
    keys = E.select(in_bounds, keys, E.add(row_ids, total))
    sorted_keys, perm = bind("sort", keys, row_ids, dimension=0, is_stable=True, num_keys=1)
    perm = S.reshape(perm, (n_rows, 1))
    pos, start, stop = _segment_bounds(sorted_keys)
    ys = I.gather(flat, perm, (0,))
    others = E.mul(
        _segment_exclusive_products(ys, pos, start, stop, 1),
        _segment_exclusive_products(ys, pos, start, stop, -1),
    )
    others = S.reshape(I.scatter_add(Z.zeros(aval_of(flat)), perm, others, (0,)), up_shape)
    return E.mul(others, I.gather(operand, clamped(operand, indices, axes), axes))


def _scatter_mul_jvp(primals, tangents, out, *, axes):
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    terms = []
    if t_op is not None:
        terms.append(I.scatter_mul(t_op, indices, updates, axes))
    if t_up is not None:
        contrib = E.mul(t_up, _scatter_mul_partial(operand, indices, updates, axes))
        terms.append(I.scatter_add(Z.zeros(aval_of(operand)), indices, contrib, axes))
    return Z.add_all(terms)


def _scatter_mul_vjp(ct, ins, out, *, axes):
    operand, indices, updates = ins

    def updates_ct():
        got = _gather_rows(ct, operand, indices, updates, axes)
        return E.mul(got, _scatter_mul_partial(operand, indices, updates, axes))

    return [lambda: I.scatter_mul(ct, indices, updates, axes), None, updates_ct]


JVP["scatter_mul"], VJP["scatter_mul"] = _scatter_mul_jvp, _scatter_mul_vjp


# --- scatter_min / scatter_max --------------------------------------------------------------


def _extreme_weights(operand, indices, updates, out, axes):
    """(operand weight, updates weight): 1/k for each of the k contenders (the operand
    entry and the in-bounds update rows) equal to the result at their position."""
    dt = aval_of(operand).dtype
    at = clamped(operand, indices, axes)
    won = E.bitwise_and(E.eq(updates, I.gather(out, at, axes)), _row_in_bounds(operand, indices, updates, axes))
    won = E.convert_element_type(won, dt)
    kept = E.convert_element_type(E.eq(operand, out), dt)
    count = E.add(kept, I.scatter_add(Z.zeros(aval_of(operand)), indices, won, axes))
    return E.div(kept, count), E.mul(won, E.div(_c(count, 1), I.gather(count, at, axes)))


def _scatter_extreme_jvp(primals, tangents, out, *, axes):
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    w_op, w_up = _extreme_weights(operand, indices, updates, out, axes)
    terms = []
    if t_op is not None:
        terms.append(E.mul(t_op, w_op))
    if t_up is not None:
        terms.append(I.scatter_add(Z.zeros(aval_of(operand)), indices, E.mul(t_up, w_up), axes))
    return Z.add_all(terms)


def _scatter_extreme_vjp(ct, ins, out, *, axes):
    operand, indices, updates = ins

    weights = []  # computed once, by whichever cotangent is asked for first

    def weight(i):
        if not weights:
            weights.extend(_extreme_weights(operand, indices, updates, out, axes))
        return weights[i]

    return [
        lambda: E.mul(ct, weight(0)),
        None,
        lambda: E.mul(I.gather(ct, clamped(operand, indices, axes), axes), weight(1)),
    ]


for _name in ("scatter_min", "scatter_max"):
    JVP[_name], VJP[_name] = _scatter_extreme_jvp, _scatter_extreme_vjp
