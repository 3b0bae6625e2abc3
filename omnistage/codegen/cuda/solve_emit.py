"""CUDA kernels for triangular_solve, lu_pivots_to_permutation, cholesky and lu.

Each reproduces the CPU backend's kernel (`kernels.forward_substitution`,
`lu_pivots_to_permutation`, `cholesky`, `lu`) step for step, so results agree in value and
dtype (floats to rounding: both backends contract products and sums into fmas where their
compilers choose, except in lu, whose row updates are explicit fmas like the CPU's, since
there a rounding can change a pivot):

- triangular_solve: one thread per (batch entry, right-hand side); every flag combination is
  the CPU's "lower-triangular m, solve m x = rhs on the left" rewrite, done here in the index
  arithmetic instead of by relayout copies.
- lu_pivots_to_permutation, lu, cholesky: one thread per matrix. That suits the GPU's use
  case, many small matrices; a large single matrix would want cuSOLVER (getrf/potrf) instead.
- lu pivots like `kernels.lu`: the first largest |re| + |im| below the diagonal, a NaN beating
  every number; a zero pivot leaves its column unscaled.
- cholesky computes each factor in float64/complex128 (the CPU calls LAPACK in double
  precision, then rounds) from the lower triangle only; the float32/complex64 versions work in a
  scratch buffer and round once at the end. Like LAPACK (OpenBLAS's potf2), a pivot <= 0 fails
  the matrix, whose result is then NaN on and below the diagonal and zero above; a NaN pivot
  does not fail, it propagates.

Complex dtypes are supported (conjugation through `_cd.conj`).

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`."""
import math

import numpy as np

from ..emit_cpu import _loc_comment, dtype_expr

# the dtype the CPU backend's LAPACK-based cholesky computes in (NumPy's linalg widens)
_WIDE = {"float32": np.dtype("float64"), "complex64": np.dtype("complex128")}


def _at(array, batch, *idx):
    return f"{array}[{', '.join(list(batch) + [str(i) for i in idx])}]"


def _batch_kernel(driver, out, batch):
    """(kernel, body, batch index names) of a kernel with one thread per batch entry; the
    grid-stride loop's `_f` is the entry's flat index."""
    names = [f"_b{k}" for k in range(len(batch))]
    kernel, kb = driver.grid_body(out, batch, names)
    return kernel, kb, names


def _finish(driver, e, kernel, kb, outs, threads, what):
    for o in outs:
        kb._use(o)
    driver.finish_kernel(kernel, kb, e, list(outs))
    driver.launch(kernel, f"_cu.grid({threads})", kb, f"  # one thread per {what}")


# --- triangular_solve ----------------------------------------------------------------------------


def _transposed(at):
    return lambda i, j: at(j, i)


def _reversed_rows_and_columns(at, n):
    return lambda i, j: at(f"({n - 1} - {i})", f"({n - 1} - {j})")


def _reversed_rows(at, n):
    return lambda i, c: at(f"({n - 1} - {i})", c)


def _normal_form(p, n):
    """Where the normal form's m[i, j] lives in `a`, and its rhs[i, c] (and solution x[i, c])
    in `b` (and the output): index functions, composed as `_emit_triangular_solve` of
    `opaque_rules` rewrites the problem."""
    m = lambda i, j: (i, j)  # noqa: E731
    rhs = lambda i, c: (i, c)  # noqa: E731
    low = p["lower"]
    if p["transpose_a"]:
        m, low = _transposed(m), not low
    if not p["left_side"]:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        m, low, rhs = _transposed(m), not low, _transposed(rhs)
    if not low:  # reversing rows and columns turns upper-triangular into lower
        m, rhs = _reversed_rows_and_columns(m, n), _reversed_rows(rhs, n)
    return m, rhs


def _emit_triangular_solve(driver, e):
    a, b = e.ins
    out = e.outs[0]
    p = e.params
    aa, oa = driver.aval(a), driver.program.avals[out]
    driver.alloc(out, oa, _loc_comment(e.stmt))
    if oa.size == 0:
        return
    n, batch = aa.shape[-1], tuple(aa.shape[:-2])
    cols = oa.shape[-1] if p["left_side"] else oa.shape[-2]
    T = dtype_expr(oa.dtype)
    m_at, rhs_at = _normal_form(p, n)
    bidx = [f"_b{k}" for k in range(len(batch))]
    kernel, kb = driver.grid_body(out, batch + (cols,), bidx + ["_c"])
    conj = p["conjugate_a"] and oa.dtype.kind == "c"

    def m(i, j):
        v = kb.value(a, bidx + list(m_at(i, j)))
        return f"_cd.conj({v})" if conj else v

    x = lambda i: _at(out, bidx, *rhs_at(i, "_c"))  # noqa: E731
    # kernels.forward_substitution's order: the dot product from zero, then subtracted
    kb.line(f"for _i in range({n}):")
    kb.line(f"    _dot = {T}(0)")
    kb.line("    for _j in range(_i):")
    kb.line(f"        _dot = _dot + {m('_i', '_j')} * {x('_j')}")
    kb.line(f"    _acc = {kb.value(b, bidx + list(rhs_at('_i', '_c')))} - _dot")
    kb.line(f"    {x('_i')} = _acc" + ("" if p["unit_diagonal"] else f" / {m('_i', '_i')}"))
    _finish(driver, e, kernel, kb, [out], math.prod(batch) * cols, "right-hand side")


# --- lu_pivots_to_permutation -------------------------------------------------------------------------


def _emit_lu_pivots_to_permutation(driver, e):
    (pivots,) = e.ins
    out = e.outs[0]
    size = int(e.params["permutation_size"])
    pa, oa = driver.aval(pivots), driver.program.avals[out]
    driver.alloc(out, oa, _loc_comment(e.stmt))
    if oa.size == 0:
        return
    batch = tuple(pa.shape[:-1])
    kernel, kb, bidx = _batch_kernel(driver, out, batch)
    perm = lambda i: _at(out, bidx, i)  # noqa: E731
    kb.line(f"for _i in range({size}):")
    kb.line(f"    {perm('_i')} = np.int32(_i)")
    kb.line(f"for _i in range({pa.shape[-1]}):")
    kb.line(f"    _p = np.int64({kb.value(pivots, bidx + ['_i'])})")
    kb.line(f"    if 0 <= _p < {size}:  # a pivot out of range swaps nothing (kernels.lu_pivots_to_permutation)")
    kb.line(f"        _t = {perm('_i')}")
    kb.line(f"        {perm('_i')} = {perm('_p')}")
    kb.line(f"        {perm('_p')} = _t")
    _finish(driver, e, kernel, kb, [out], math.prod(batch), "permutation")


# --- lu ----------------------------------------------------------------------------------------------------


def _magnitude(v, dtype):
    # LAPACK's i?amax: |re| + |im| for complex (kernels._pivot_magnitude)
    return f"(abs({v}.real) + abs({v}.imag))" if dtype.kind == "c" else f"abs({v})"


def _minus_product(c, a, b, dtype):
    """c - a * b as the CPU backend computes it: one fused multiply-add (its kernels are
    compiled with FMA contraction). Rounded twice, a rank-deficient matrix's trailing zeros
    could become tiny numbers or back, and change the pivots (complex: no fma, two roundings)."""
    if dtype.kind == "c":
        return f"{c} - {a} * {b}"
    return f"_cd.fma_{dtype.name}(-{a}, {b}, {c})"


def _emit_lu(driver, e):
    (x,) = e.ins
    lu, pivots, perm = e.outs
    xa = driver.aval(x)
    for o in e.outs:
        driver.alloc(o, driver.program.avals[o], _loc_comment(e.stmt))
    batch, (m, n) = tuple(xa.shape[:-2]), xa.shape[-2:]
    if math.prod(batch) == 0:
        return
    T = dtype_expr(xa.dtype)
    kernel, kb, bidx = _batch_kernel(driver, lu, batch)
    a = lambda i, j: _at(lu, bidx, i, j)  # noqa: E731
    P = lambda i: _at(perm, bidx, i)  # noqa: E731
    lines = [
        "# the factorization runs in place in the output",
        f"for _i in range({m}):",
        f"    {P('_i')} = np.int32(_i)",
        f"    for _c in range({n}):",
        f"        {a('_i', '_c')} = {kb.value(x, bidx + ['_i', '_c'])}",
        f"for _j in range({min(m, n)}):",
        "    _p = _j",
        f"    _best = {_magnitude(a('_j', '_j'), xa.dtype)}",
        f"    for _i in range(_j + 1, {m}):",
        f"        _mag = {_magnitude(a('_i', '_j'), xa.dtype)}",
        "        if _mag > _best or (_mag != _mag and _best == _best):  # the first largest; NaN wins",
        "            _p = _i",
        "            _best = _mag",
        f"    {_at(pivots, bidx, '_j')} = np.int32(_p)",
        "    if _p != _j:",
        f"        for _c in range({n}):",
        f"            _t = {a('_j', '_c')}",
        f"            {a('_j', '_c')} = {a('_p', '_c')}",
        f"            {a('_p', '_c')} = _t",
        f"        _s = {P('_j')}",
        f"        {P('_j')} = {P('_p')}",
        f"        {P('_p')} = _s",
        f"    _piv = {a('_j', '_j')}",
        f"    if _piv != {T}(0):  # getrf leaves a zero column unscaled",
        f"        for _i in range(_j + 1, {m}):",
        f"            {a('_i', '_j')} = {a('_i', '_j')} / _piv",
        f"    for _i in range(_j + 1, {m}):",
        f"        _l = {a('_i', '_j')}",
        f"        for _c in range(_j + 1, {n}):",
        f"            {a('_i', '_c')} = {_minus_product(a('_i', '_c'), '_l', a('_j', '_c'), xa.dtype)}",
    ]
    for line in lines:
        kb.line(line)
    _finish(driver, e, kernel, kb, [lu, pivots, perm], math.prod(batch), "matrix")


# --- cholesky ------------------------------------------------------------------------------------------


def _emit_cholesky(driver, e):
    (x,) = e.ins
    out = e.outs[0]
    oa = driver.program.avals[out]
    driver.alloc(out, oa, _loc_comment(e.stmt))
    if oa.size == 0:
        return
    batch, n = tuple(oa.shape[:-2]), oa.shape[-1]
    B = math.prod(batch)
    T = dtype_expr(oa.dtype)
    wide = _WIDE.get(oa.dtype.name, oa.dtype)
    W, R = dtype_expr(wide), "np.float64"
    cplx = wide.kind == "c"
    kernel, kb, bidx = _batch_kernel(driver, out, batch)
    if wide == oa.dtype:
        L = lambda i, j: _at(out, bidx, i, j)  # noqa: E731
    else:  # float64 work in a scratch buffer, one (n, n) matrix per thread, at its flat batch index
        work = driver.fresh(f"{out}_wide")
        driver.line(f"{work} = _cu.empty({(B, n, n)!r}, {W})  # the factors before rounding")
        driver._extra(work, (B, n, n), wide)
        kb._use(work)
        L = lambda i, j: f"{work}[_f, {i}, {j}]"  # noqa: E731
    a = lambda i, j: f"{W}({kb.value(x, bidx + [i, j])})"  # noqa: E731
    sq = (lambda v: f"({v}.real * {v}.real + {v}.imag * {v}.imag)") if cplx else (lambda v: f"{v} * {v}")  # noqa: E731
    conj = (lambda v: f"_cd.conj({v})") if cplx else (lambda v: v)  # noqa: E731
    diag = f"{a('_j', '_j')}.real" if cplx else a("_j", "_j")
    lines = [
        "_ok = True",
        f"for _j in range({n}):",
        f"    _d = {R}(0)",
        "    for _k in range(_j):",
        f"        _d = _d + {sq(L('_j', '_k'))}",
        f"    _s = {diag} - _d",
        f"    if _s <= {R}(0):  # not positive definite (a NaN pivot goes on, as in LAPACK)",
        "        _ok = False",
        "        break",
        "    _r = _cd.sqrt(_s)",
        f"    {L('_j', '_j')} = {W}(_r)",
        f"    _inv = {R}(1) / _r  # LAPACK scales the column by the reciprocal",
        f"    for _i in range(_j + 1, {n}):",
        f"        _e = {W}(0)",
        "        for _k in range(_j):",
        f"            _e = _e + {L('_i', '_k')} * {conj(L('_j', '_k'))}",
        f"        {L('_i', '_j')} = ({a('_i', '_j')} - _e) * _inv",
        f"for _i in range({n}):",
        f"    for _j in range({n}):",
        "        if _j > _i:",
        f"            {_at(out, bidx, '_i', '_j')} = {T}(0)",
        "        elif not _ok:",
        f"            {_at(out, bidx, '_i', '_j')} = {T}(np.nan)",
    ]
    if wide != oa.dtype:
        lines += ["        else:", f"            {_at(out, bidx, '_i', '_j')} = {T}({L('_i', '_j')})"]
    for line in lines:
        kb.line(line)
    _finish(driver, e, kernel, kb, [out], B, "matrix")


KERNELS = {
    "triangular_solve": _emit_triangular_solve,
    "lu_pivots_to_permutation": _emit_lu_pivots_to_permutation,
    "lu": _emit_lu,
    "cholesky": _emit_cholesky,
}
