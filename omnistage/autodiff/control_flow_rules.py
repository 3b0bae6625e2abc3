"""Derivative rules of `cond`, `while_loop` and `scan`.

The rules are written with the user-level `lax.switch` / `lax.while_loop` / `lax.scan`, whose
body functions run the passes on the primal bodies (`forward.jvp_call`,
`rev.vjp_forward`/`vjp_backward`), so derivative bodies are staged like any user
function (and run as Python loops eagerly).

- Forward mode carries tangents through the same statement: a cond whose branches return
  (outputs, tangents); a loop whose carry is (carry, carry tangents). Once any tangent is
  nonzero, every differentiable output/carry gets one (zeros where needed).
- Reverse mode, cond: a second cond picks the branch's adjoint (which recomputes the
  branch's primal from the saved operands).
- Reverse mode, scan: the forward scan also stacks each iteration's input carry; the
  adjoint scan runs the other way over (saved carries, xs, output cotangents), recomputing
  one body step and back-propagating through it per iteration.
- Reverse mode, while_loop (beyond JAX, which refuses): the trip count n is only known at
  run time and every array has a static shape, so the tape has a static capacity K (up to
  64 carries, fewer for big carries: at most TAPE_BYTES in all). The forward rule runs the
  loop counting iterations, then replays it storing every s-th input carry, s = ceil(n / K);
  the adjoint loop walks j = n-1 .. 0, restarts from checkpoint j // s and recomputes at
  most s-1 steps before back-propagating through step j. For n <= K that is a full tape
  (3n body evaluations in all); longer loops cost O(n^2 / K) recomputation, never O(n) memory.
"""
import numpy as np

from ..core.array import aval_of
from ..lax import control_flow as CF
from ..lax import elementwise as E
from ..staging import replay
from . import forward
from . import reverse as rev
from . import zeros as Z
from .rules import FWD, JVP_JOINT, VJP


def _diff(avals):
    return [Z.is_differentiable(a) for a in avals]


def _instantiated(ts, avals, mask):
    return [Z.instantiate(t, a) for t, a, m in zip(ts, avals, mask) if m]


def _scatter(values, mask):
    it = iter(values)
    return [next(it) if m else None for m in mask]


# --- cond ---------------------------------------------------------------------------------


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    ts = tangents[1:]
    nz = [t is not None for t in ts]
    out_avals = branches[0].out_avals
    out_mask = _diff(out_avals)
    n_out = len(out_avals)

    def make(b):
        def branch(ops_, ts_):
            outs, touts = forward.jvp_call(b, ops_, _scatter(ts_, nz))
            return list(outs), _instantiated(touts, out_avals, out_mask)

        branch.__name__ = f"{b.name}_jvp"
        return branch

    res = CF.switch(_as_index(index), [make(b) for b in branches], list(ops), [t for t in ts if t is not None])
    outs, touts = res
    return list(outs), _scatter(touts, out_mask) if n_out else []


def _cond_vjp(cts, ins, outs, *, branches):
    index, *ops = ins
    op_avals = [aval_of(o) for o in ops]
    diff = _diff(op_avals)
    ct_nz = [c is not None for c in cts]
    cache = {}

    def make(b):
        def branch(ops_, cts_):
            with replay.without_effects():  # the forward pass printed already
                _, tape = rev.vjp_forward(b, ops_, diff)
            cin = rev.vjp_backward(tape, _scatter(cts_, ct_nz))
            return _instantiated(cin, op_avals, diff)

        branch.__name__ = f"{b.name}_vjp"
        return branch

    def compute():
        if "v" not in cache:
            got = CF.switch(_as_index(index), [make(b) for b in branches], list(ops), [c for c in cts if c is not None])
            cache["v"] = _scatter(got, diff)
        return cache["v"]

    return [None] + [(lambda i=i: compute()[i]) if d else None for i, d in enumerate(diff)]


def _as_index(index):
    """cond's index as switch wants it: an integer scalar (a bool predicate picks 0/1)."""
    if aval_of(index).dtype == np.bool_:
        return E.convert_element_type(index, np.int32)
    return index


JVP_JOINT["cond"] = _cond_jvp
VJP["cond"] = _cond_vjp


# --- while_loop ----------------------------------------------------------------------------


def _split_while(args, cond_nconsts, body_nconsts):
    cc = list(args[:cond_nconsts])
    bc = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    return cc, bc, carry


def _while_jvp(primals, tangents, *, cond_fun, body_fun, cond_nconsts, body_nconsts):
    cc, bc, init = _split_while(primals, cond_nconsts, body_nconsts)
    _, bc_t, init_t = _split_while(tangents, cond_nconsts, body_nconsts)
    carry_avals = [aval_of(x) for x in init]
    mask = _diff(carry_avals)
    bc_nz = [t is not None for t in bc_t]
    bc_tv = [t for t in bc_t if t is not None]

    cond = _loop_cond(cond_fun, cc)

    def body(state):
        carry, carry_t = state
        outs, touts = forward.jvp_call(body_fun, bc + list(carry), _scatter(bc_tv, bc_nz) + _scatter(carry_t, mask))
        return list(outs), _instantiated(touts, carry_avals, mask)

    carry, carry_t = CF.while_loop(cond, body, (list(init), _instantiated(init_t, carry_avals, mask)))
    return list(carry), _scatter(carry_t, mask)


def _loop_cond(cond_fun, cc):
    """The condition of a loop whose state is (carry, extra): the primal cond on the carry."""

    def cond(state):
        carry, _ = state
        (pred,), _ = replay.evaluate(cond_fun, cc + list(carry))
        return pred

    return cond


TAPE_CAPACITY = 64
TAPE_BYTES = 64 << 20


def _tape_capacity(carry_avals):
    per_step = sum(int(np.prod(a.shape)) * a.dtype.itemsize for a in carry_avals) or 1
    return int(max(1, min(TAPE_CAPACITY, TAPE_BYTES // per_step)))


def _while_fwd(ins, *, cond_fun, body_fun, cond_nconsts, body_nconsts):
    """The loop with its trip count, then a replay that stores every s-th input carry on a
    tape of static capacity (the residuals the adjoint needs)."""
    from ..lax import indexing as I

    cc, bc, init = _split_while(ins, cond_nconsts, body_nconsts)
    carry_avals = [aval_of(x) for x in init]
    capacity = _tape_capacity(carry_avals)

    cond = _loop_cond(cond_fun, cc)

    def body(state):
        carry, n = state
        outs, _ = replay.evaluate(body_fun, bc + list(carry))
        return list(outs), E.add(n, np.int32(1))

    carry, n = CF.while_loop(cond, body, (list(init), np.int32(0)))
    stride = E.max(np.int32(1), E.div(E.add(n, np.int32(capacity - 1)), np.int32(capacity)))

    def record(i, state):
        c, tapes = state
        slot = E.div(i, stride)
        keep = E.eq(E.rem(i, stride), np.int32(0))
        tapes = [E.select_n(keep, t, I.dynamic_update_index_in_dim(t, x, slot, 0)) for t, x in zip(tapes, c)]
        with replay.without_effects():  # the loop above printed already
            outs, _ = replay.evaluate(body_fun, bc + list(c))
        return list(outs), tapes

    empty = [Z.zeros(a.update(shape=(capacity,) + tuple(a.shape), weak_type=False)) for a in carry_avals]
    _, tapes = CF.fori_loop(np.int32(0), n, record, (list(init), empty))
    return list(carry), (n, stride, tapes)


def _while_vjp(cts, ins, outs, res, *, cond_fun, body_fun, cond_nconsts, body_nconsts):
    from ..lax import indexing as I

    n, stride, tapes = res
    cc, bc, init = _split_while(ins, cond_nconsts, body_nconsts)
    carry_avals = [aval_of(x) for x in init]
    bc_avals = [aval_of(x) for x in bc]
    c_mask, b_mask = _diff(carry_avals), _diff(bc_avals)
    active = b_mask + c_mask

    def advance(_, carry):
        with replay.without_effects():  # recomputation: the forward pass printed already
            return list(replay.evaluate(body_fun, bc + list(carry))[0])

    def step(j, state):
        ct_c, ct_b = state
        slot = E.div(j, stride)
        start = [I.dynamic_index_in_dim(t, slot, 0, keepdims=False) for t in tapes]
        carry_j = CF.fori_loop(E.mul(slot, stride), j, advance, start)  # < stride steps
        with replay.without_effects():
            _, tape = rev.vjp_forward(body_fun, bc + list(carry_j), active)
        cin = rev.vjp_backward(tape, _scatter(ct_c, c_mask))
        ct_b_j, ct_c_j = cin[: len(bc)], cin[len(bc):]
        new_b = [E.add(a, g) for a, g in zip(ct_b, _instantiated(ct_b_j, bc_avals, b_mask))]
        return _instantiated(ct_c_j, carry_avals, c_mask), new_b

    def backwards(i, state):
        return step(E.sub(E.sub(n, np.int32(1)), i), state)

    ct0 = _instantiated(cts, carry_avals, c_mask)
    b0 = [Z.zeros(a) for a, m in zip(bc_avals, b_mask) if m]
    ct_c, ct_b = CF.fori_loop(np.int32(0), n, backwards, (ct0, b0))
    return [None] * len(cc) + _scatter(ct_b, b_mask) + _scatter(ct_c, c_mask)


JVP_JOINT["while_loop"] = _while_jvp
FWD["while_loop"] = _while_fwd
VJP["while_loop"] = _while_vjp


# --- scan ------------------------------------------------------------------------------------


def _split_scan(args, num_consts, num_carry):
    return list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]), list(args[num_consts + num_carry:])


def _scan_jvp(primals, tangents, *, body, num_consts, num_carry, length, reverse, unroll):
    consts, init, xs = _split_scan(primals, num_consts, num_carry)
    k_t, init_t, xs_t = _split_scan(tangents, num_consts, num_carry)
    carry_avals = [aval_of(x) for x in init]
    y_avals = body.out_avals[num_carry:]
    c_mask, y_mask = _diff(carry_avals), _diff(y_avals)
    k_nz = [t is not None for t in k_t]
    x_nz = [t is not None for t in xs_t]
    k_tv = [t for t in k_t if t is not None]

    def step(state, x):
        carry, carry_t = state
        x_, x_t = x
        outs, touts = forward.jvp_call(
            body, consts + list(carry) + list(x_), _scatter(k_tv, k_nz) + _scatter(carry_t, c_mask) + _scatter(x_t, x_nz)
        )
        c_out, y_out = outs[:num_carry], outs[num_carry:]
        return (list(c_out), _instantiated(touts[:num_carry], carry_avals, c_mask)), (list(y_out), _instantiated(touts[num_carry:], y_avals, y_mask))

    (carry, carry_t), (ys, ys_t) = CF.scan(
        step, (list(init), _instantiated(init_t, carry_avals, c_mask)),
        (list(xs), [t for t in xs_t if t is not None]), length=length, reverse=reverse, unroll=unroll,
    )
    return list(carry) + list(ys), _scatter(carry_t, c_mask) + _scatter(ys_t, y_mask)


def _scan_fwd(ins, *, body, num_consts, num_carry, length, reverse, unroll):
    """The scan plus every iteration's input carry, stacked (the adjoint's residuals)."""
    consts, init, xs = _split_scan(ins, num_consts, num_carry)

    def step(carry, x):
        outs, _ = replay.evaluate(body, consts + list(carry) + list(x))
        return list(outs[:num_carry]), (list(outs[num_carry:]), list(carry))

    carry, (ys, saved) = CF.scan(step, list(init), list(xs), length=length, reverse=reverse, unroll=unroll)
    return list(carry) + list(ys), saved


def _scan_vjp(cts, ins, outs, saved, *, body, num_consts, num_carry, length, reverse, unroll):
    consts, init, xs = _split_scan(ins, num_consts, num_carry)
    k_avals = [aval_of(x) for x in consts]
    c_avals = [aval_of(x) for x in init]
    x_avals = [aval_of(x).update(shape=aval_of(x).shape[1:]) for x in xs]
    k_mask, c_mask, x_mask = _diff(k_avals), _diff(c_avals), _diff(x_avals)
    ct_c0, ct_ys = cts[:num_carry], cts[num_carry:]
    y_nz = [c is not None for c in ct_ys]
    active = k_mask + c_mask + x_mask

    def step(state, x):
        ct_c, ct_k = state
        carry_i, x_i, ct_y = x
        with replay.without_effects():  # recomputation: the forward scan printed already
            _, tape = rev.vjp_forward(body, consts + list(carry_i) + list(x_i), active)
        cin = rev.vjp_backward(tape, _scatter(ct_c, c_mask) + _scatter(ct_y, y_nz))
        g_k, g_c, g_x = _split_scan(cin, num_consts, num_carry)
        new_k = [E.add(a, g) for a, g in zip(ct_k, _instantiated(g_k, k_avals, k_mask))]
        return (_instantiated(g_c, c_avals, c_mask), new_k), _instantiated(g_x, x_avals, x_mask)

    init_state = (_instantiated(ct_c0, c_avals, c_mask), [Z.zeros(a) for a, m in zip(k_avals, k_mask) if m])
    (ct_c, ct_k), ct_xs = CF.scan(
        step, init_state, (list(saved), list(xs), [c for c in ct_ys if c is not None]),
        length=length, reverse=not reverse, unroll=unroll,
    )
    return _scatter(ct_k, k_mask) + _scatter(ct_c, c_mask) + _scatter(ct_xs, x_mask)


JVP_JOINT["scan"] = _scan_jvp
FWD["scan"] = _scan_fwd
VJP["scan"] = _scan_vjp

