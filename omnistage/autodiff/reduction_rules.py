"""Derivative rules of the non-linear reductions and the cumulative (scan) primitives:
`reduce_max`/`reduce_min`, `reduce_prod`, `cumsum`, `cumprod`, `cummax`, `cummin`,
`cumlogsumexp`. (`reduce_sum` is linear: structural_rules.py. `argmax`/`argmin` have
integer outputs: no rule is needed, the passes skip them.)

Conventions, as JAX:
- `reduce_max`/`reduce_min` split the derivative evenly among tied extremes.
- `reduce_prod` is exact with zeros in the operand: the derivative at a position is the
  product of all the *other* entries, computed as exclusive prefix times exclusive suffix
  products (no division).
- The cumulative primitives other than `cumsum` are differentiated through a Hillis-Steele
  scan (levels s = 1, 2, 4, ...; a_{l+1} = combine(a_l, shift(a_l, s))). Its tangent obeys
  the linear recurrence b_{l+1} = P_l * b_l + Q_l * shift(b_l, s), whose transpose is
  c_l = P_l * c_{l+1} + unshift(Q_l * c_{l+1}, s). This is exact with zeros (cumprod),
  overflow-free (cumlogsumexp: P, Q are softmax weights) and splits ties evenly at each
  combine (cummax/cummin). Costs O(n log n) elementwise work along the axis.

Every rule is written over lax primitives that themselves have rules, so derivatives nest.
Imports lax and the rule tables only.
"""
import numpy as np

from ..core.array import aval_of
from ..lax import cumulative as C
from ..lax import elementwise as E
from ..lax import reductions as RD
from ..lax import shapes as S
from .rules import JVP, VJP, bind, def_linear


def _c(x, value):
    """`value` as a typed scalar of `x`'s dtype (generated code never promotes literals)."""
    return np.asarray(value, dtype=aval_of(x).dtype)[()]


def _kept(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def _unreduce(v, x, axes):
    """A reduced value `v` broadcast back to the shape of `x`."""
    x_aval = aval_of(x)
    return S.broadcast_in_dim(v, tuple(x_aval.shape), _kept(x_aval.ndim, axes))


def _as_dtype_of(mask, x):
    return E.convert_element_type(mask, aval_of(x).dtype)


# --- reduce_max / reduce_min --------------------------------------------------------------


def _extreme_weights(x, out, axes):
    """1/k at each of the k positions of `x` equal to its reduced extreme `out`, else 0."""
    mask = _as_dtype_of(E.eq(x, _unreduce(out, x, axes)), x)
    counts = RD.reduce_sum(mask, axes)
    return E.div(mask, _unreduce(counts, x, axes))


def _extreme_jvp(primals, tangents, out, *, axes):
    (x,), (t,) = primals, tangents
    return RD.reduce_sum(E.mul(t, _extreme_weights(x, out, axes)), axes)


def _extreme_vjp(ct, ins, out, *, axes):
    (x,) = ins
    return [lambda: E.mul(_unreduce(ct, x, axes), _extreme_weights(x, out, axes))]


for _name in ("reduce_max", "reduce_min"):
    JVP[_name], VJP[_name] = _extreme_jvp, _extreme_vjp


# --- reduce_prod --------------------------------------------------------------------------


def _exclusive(x, axis, reverse):
    """Products of the entries strictly before each position along `axis` (after, when
    `reverse`): a cumprod shifted one place, with 1 shifted in."""
    return _shift(C.cumprod(x, axis, reverse), 1, axis, reverse, _c(x, 1))


def _prod_of_others(x, axes):
    """d reduce_prod(x, axes) / dx: at each position the product of the other entries of
    its reduced group. Reduced axes are flattened into one leading axis first."""
    x_aval = aval_of(x)
    shape, ndim = tuple(x_aval.shape), x_aval.ndim
    perm = tuple(axes) + _kept(ndim, axes)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    moved = S.reshape(S.transpose(x, perm), (n,) + tuple(shape[i] for i in perm[len(axes):]))
    others = E.mul(_exclusive(moved, 0, False), _exclusive(moved, 0, True))
    others = S.reshape(others, tuple(shape[i] for i in perm))
    return S.transpose(others, tuple(int(i) for i in np.argsort(perm)))


def _prod_jvp(primals, tangents, out, *, axes):
    (x,), (t,) = primals, tangents
    return RD.reduce_sum(E.mul(t, _prod_of_others(x, axes)), axes)


def _prod_vjp(ct, ins, out, *, axes):
    (x,) = ins
    return [lambda: E.mul(_unreduce(ct, x, axes), _prod_of_others(x, axes))]


JVP["reduce_prod"], VJP["reduce_prod"] = _prod_jvp, _prod_vjp


# --- cumulative: cumsum is linear ---------------------------------------------------------

def_linear("cumsum", lambda ct, x, *, axis, reverse: bind("cumsum", ct, axis=axis, reverse=not reverse))


# --- cumulative: the scan recurrence ------------------------------------------------------


def _shift(v, s, axis, reverse, fill):
    """`v` moved `s` places along `axis` in scan order (towards higher indices; lower when
    `reverse`), the vacated places filled with `fill`; negative `s` moves back."""
    ndim = aval_of(v).ndim
    config = [(0, 0, 0)] * ndim
    config[axis] = (-s, s, 0) if reverse else (s, -s, 0)
    return S.pad(v, fill, tuple(config))


def _cumprod_step(a, before):
    return E.mul(a, before), before, a


def _logaddexp(a, b):
    """log(exp(a) + exp(b)) without overflow (one of them may be -inf)."""
    hi = E.max(a, b)
    lo = E.min(a, b)
    return E.add(hi, E.log1p(E.exp(E.sub(lo, hi))))


def _cumlogsumexp_step(a, before):
    out = _logaddexp(a, before)
    return out, E.exp(E.sub(a, out)), E.exp(E.sub(before, out))


def _balanced(pick, a, b):
    """JAX's tie rule for max/min: 1 where `pick(a, b)`, 1/2 where equal, else 0."""
    one, half, zero = _c(a, 1), _c(a, 0.5), _c(a, 0)
    return E.select_n(pick(a, b), E.select_n(E.eq(a, b), zero, half), one)


def _extreme_step(combine, pick):
    def step(a, before):
        return combine(a, before), _balanced(pick, a, before), _balanced(pick, before, a)

    return step


# name: one combine step (a, the partial result s places before) -> (a', P, Q), where
# P = d a' / d a and Q = d a' / d before
_SCANS = {
    "cumprod": _cumprod_step,
    "cumlogsumexp": _cumlogsumexp_step,
    "cummax": _extreme_step(E.max, E.gt),
    "cummin": _extreme_step(E.min, E.lt),
}


def _along(v, start, stop, axis):
    shape = aval_of(v).shape
    starts, limits = [0] * len(shape), list(shape)
    starts[axis], limits[axis] = start, stop
    return S.slice(v, starts, limits)


def _scan_coefficients(name, x, axis, reverse):
    """[(s, P_l, Q_l)] for each level of the scan of `x` along `axis`. At level s only the
    positions with a partial result s places before them combine; the first s keep their
    value (P = 1, Q = 0), so no fill value has to be neutral for the combine."""
    step = _SCANS[name]
    n = aval_of(x).shape[axis]
    ndim = aval_of(x).ndim
    levels, a, s = [], x, 1
    while s < n:
        if reverse:
            current, previous, kept = _along(a, 0, n - s, axis), _along(a, s, n, axis), _along(a, n - s, n, axis)
        else:
            current, previous, kept = _along(a, s, n, axis), _along(a, 0, n - s, axis), _along(a, 0, s, axis)
        combined, p, q = step(current, previous)
        a = S.concatenate([combined, kept] if reverse else [kept, combined], axis)
        config = [(0, 0, 0)] * ndim
        config[axis] = (0, s, 0) if reverse else (s, 0, 0)
        levels.append((s, S.pad(p, _c(x, 1), tuple(config)), S.pad(q, _c(x, 0), tuple(config))))
        s *= 2
    return levels


def _scan_jvp(name):
    def jvp(primals, tangents, out, *, axis, reverse):
        (x,), (t,) = primals, tangents
        zero = _c(t, 0)
        for s, p, q in _scan_coefficients(name, x, axis, reverse):
            t = E.add(E.mul(p, t), E.mul(q, _shift(t, s, axis, reverse, zero)))
        return t

    return jvp


def _scan_vjp(name):
    def transpose(ct, x, axis, reverse):
        zero = _c(ct, 0)
        for s, p, q in reversed(_scan_coefficients(name, x, axis, reverse)):
            ct = E.add(E.mul(p, ct), _shift(E.mul(q, ct), -s, axis, reverse, zero))
        return ct

    def vjp(ct, ins, out, *, axis, reverse):
        return [lambda: transpose(ct, ins[0], axis, reverse)]

    return vjp


for _name in _SCANS:
    JVP[_name], VJP[_name] = _scan_jvp(_name), _scan_vjp(_name)

