"""Batching rules of `cond`, `while_loop` and `scan`.

Bodies are batched by this same pass (`batching.batch_program` stages the batched body into
a closure-free Program), so collectives and nested control flow inside them work.

- `cond` with an unbatched index stays one `cond` of batched branches (an output is batched
  in every branch if any branch batches it). With a batched index every branch runs on every
  example and `select_n` picks each example's result: omnistage programs have no effects, so
  evaluating the branch not taken is safe (its values are discarded; a NaN or an
  out-of-range index clamps there as anywhere else).
- `while_loop`: carries that the body makes batched are batched from the start (a fixpoint).
  With a batched condition the loop runs while any example is still running; each iteration
  computes every example's step and keeps the old carry of examples that are done.
- `scan`: scanned operands carry the examples on axis 1 (axis 0 is the one scanned), carries
  follow the same fixpoint as while_loop, and stacked outputs come out batched on axis 1.
"""
from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import reductions as lax_red
from ..lax import shapes as S
from ..staging import replay
from .batching import batch_call, batch_program, move_outputs, output_dims
from .rules import batch_at, bind, move_axis, register


def _batched_where(dims):
    return [0 if d is not None else None for d in dims]


# --- cond ----------------------------------------------------------------------------------------


@register("cond", needs_axis=True)
def _cond(args, dims, *, branches, batch_axis):
    (index, *ops), (di, *dops) = args, dims
    if di is None:
        per_branch = [output_dims(b, dops, batch_axis) for b in branches]
        force = [0 if any(d is not None for d in ds) else None for ds in zip(*per_branch)]
        programs = tuple(batch_program(b, dops, batch_axis, force)[0] for b in branches)
        outs = bind("cond", index, *ops, branches=programs)
        return list(outs), force
    size = batch_axis.size
    results = []
    for b in branches:
        outs, odims = batch_call(b, ops, dops, batch_axis)
        results.append([batch_at(o, d, size, 0) for o, d in zip(outs, odims)])
    which = move_axis(index, di, 0)
    if aval_of(which).dtype.kind != "b":  # cond clamps an integer index into range
        which = E.convert_element_type(which, "int32")
        which = E.clamp(E.convert_element_type(0, "int32"), which,
                        E.convert_element_type(len(branches) - 1, "int32"))
    selected = []
    for cases in zip(*results):
        shape = aval_of(cases[0]).shape
        selected.append(E.select_n(S.broadcast_in_dim(which, shape, (0,)), *cases))
    return selected, [0] * len(selected)


# --- loops: which carries are batched --------------------------------------------------------------


def _carry_fixpoint(body, const_dims, carry_dims, extra_dims, n_carry, batch_axis):
    """Batch dims of the carry (0 or None) such that the body keeps them: a carry the body
    makes batched is batched from the start."""
    batched = [d is not None for d in carry_dims]
    while True:
        cdims = [0 if b else None for b in batched]
        outs = output_dims(body, const_dims + cdims + extra_dims, batch_axis)[:n_carry]
        grown = [b or o is not None for b, o in zip(batched, outs)]
        if grown == batched:
            return cdims
        batched = grown


# --- while_loop -----------------------------------------------------------------------------------


@register("while_loop", needs_axis=True)
def _while_loop(args, dims, *, cond_fun, body_fun, cond_nconsts, body_nconsts, batch_axis):
    m, n = cond_nconsts, body_nconsts
    cc, bc, init = list(args[:m]), list(args[m:m + n]), list(args[m + n:])
    ccd, bcd, initd = list(dims[:m]), list(dims[m:m + n]), list(dims[m + n:])
    size = batch_axis.size
    cdims = _carry_fixpoint(body_fun, bcd, initd, [], len(init), batch_axis)
    (pred_dim,) = output_dims(cond_fun, ccd + cdims, batch_axis)
    if pred_dim is not None:
        cdims = [0] * len(init)
    carry = [x if t is None else batch_at(x, d, size, t) for x, d, t in zip(init, initd, cdims)]
    if pred_dim is None:
        cprog, _ = batch_program(cond_fun, ccd + cdims, batch_axis, [None])
        bprog, _ = batch_program(body_fun, bcd + cdims, batch_axis, cdims)
        outs = bind("while_loop", *cc, *bc, *carry, cond_fun=cprog, body_fun=bprog,
                    cond_nconsts=m, body_nconsts=n)
        return list(outs), cdims
    cprog, bprog = _masked_loop_bodies(cond_fun, body_fun, cc, bc, carry, ccd, bcd, batch_axis)
    outs = bind("while_loop", *cc, *cc, *bc, *carry, cond_fun=cprog, body_fun=bprog,
                cond_nconsts=m, body_nconsts=m + n)
    return list(outs), cdims


def _masked_loop_bodies(cond_fun, body_fun, cc, bc, carry, ccd, bcd, batch_axis):
    """(cond, body) Programs of a loop with a per-example condition: run while any example
    runs; finished examples keep their carry."""
    m, n = len(cc), len(bc)
    cdims = [0] * len(carry)
    avals = [aval_of(x) for x in cc + bc + carry]
    size = batch_axis.size

    def running(consts, carry_):
        (pred,), (pd,) = batch_call(cond_fun, list(consts) + list(carry_), ccd + cdims, batch_axis)
        return batch_at(pred, pd, size, 0)

    def cond(*xs):
        return [lax_red.reduce_or(running(xs[:m], xs[m:]), (0,))]

    def body(*xs):
        consts_c, consts_b, carry_ = xs[:m], xs[m:m + n], xs[m + n:]
        pred = running(consts_c, carry_)
        outs, odims = batch_call(body_fun, list(consts_b) + list(carry_), bcd + cdims, batch_axis)
        outs = move_outputs(outs, odims, cdims, size)
        return [_keep_finished(pred, new, old) for new, old in zip(outs, carry_)]

    c_avals = avals[:m] + avals[m + n:]
    cprog = replay.stage_program(cond, c_avals, cond_fun.in_names, f"{cond_fun.name}_vmap")
    bprog = replay.stage_program(body, avals, cond_fun.in_names[:m] + body_fun.in_names, f"{body_fun.name}_vmap")
    return cprog, bprog


def _keep_finished(pred, new, old):
    shape = aval_of(new).shape
    return E.select_n(S.broadcast_in_dim(pred, shape, (0,)), old, new)


# --- scan -------------------------------------------------------------------------------------------


@register("scan", needs_axis=True)
def _scan(args, dims, *, body, num_consts, num_carry, length, reverse, unroll, batch_axis):
    m, n = num_consts, num_carry
    consts, init, xs = list(args[:m]), list(args[m:m + n]), list(args[m + n:])
    kd, initd, xd = list(dims[:m]), list(dims[m:m + n]), list(dims[m + n:])
    size = batch_axis.size
    # the examples ride on axis 1 of the scanned operands, so each slice has them on axis 0
    xs = [x if d is None else move_axis(x, d, 1) for x, d in zip(xs, xd)]
    slice_dims = _batched_where(xd)
    cdims = _carry_fixpoint(body, kd, initd, slice_dims, n, batch_axis)
    y_dims = output_dims(body, kd + cdims + slice_dims, batch_axis)[n:]
    force = cdims + _batched_where(y_dims)
    program, _ = batch_program(body, kd + cdims + slice_dims, batch_axis, force)
    carry = [x if t is None else batch_at(x, d, size, t) for x, d, t in zip(init, initd, cdims)]
    outs = bind("scan", *consts, *carry, *xs, body=program, num_consts=m, num_carry=n,
                length=length, reverse=reverse, unroll=unroll)
    return list(outs), cdims + [None if d is None else 1 for d in y_dims]

