"""CUDA kernels for qr, eigh and svd: one GPU thread per matrix of the batch.

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`.

Each rule allocates float64 scratch buffers on the device (batch axis last, so that the
threads of a warp, one per matrix, touch adjacent addresses) and emits one kernel that copies
its matrix in (widened to float64), runs the per-matrix algorithm of `decomp_device` (`_dd`
in the generated module: Householder QR, cyclic Jacobi, one-sided Jacobi SVD) and rounds the
results out, as the CPU backend computes LAPACK's results in float64 and rounds them. There is
no host round trip. Batches of small matrices are the use case; a large single matrix runs on
one thread and would want cuSOLVER instead.

Complex operands still run on the host (`driver.emit_host_call`), as float16/bfloat16 ones do
(`emit.py` sends those there before any rule runs). Matrices with a zero dimension get the CPU
path's constant results (identities, nothing to decompose) without a kernel.
"""
import numpy as np

from ..emit_cpu import _loc_comment, _np_dtype

_IMPORT = "from omnistage.codegen.cuda import decomp_device as _dd"


# --- shared pieces -------------------------------------------------------------------------------


def _batch(shape, trailing):
    batch = tuple(shape[: len(shape) - trailing])
    return batch, int(np.prod(batch, dtype=np.int64))


def _eye(driver, out, aval, rows, cols, comment):
    """`out` := the rows x cols identity in every batch entry (a constant, made on the host)."""
    if not aval.size:
        return driver.alloc(out, aval, comment)
    eye = f"np.eye({rows}, {cols}, dtype={_np_dtype(aval.dtype)})"
    driver.line(f"{out} = _cu.to_device(np.broadcast_to({eye}, {tuple(aval.shape)!r})){comment}")


def _scratch(driver, base, shape, batch_size):
    """A float64 device buffer of `shape` per matrix, the batch index last (coalesced)."""
    name = driver.fresh(base)
    full = tuple(shape) + (batch_size,)
    driver.line(f"{name} = _cu.empty({full!r}, np.float64)  # float64 scratch, batch innermost")
    driver._extra(name, full, np.float64)
    return name


class _Kernel:
    """One thread per matrix: opens the grid-stride loop over the batch, binds each scratch
    buffer's slice of this matrix to a local, and writes the copies in and out."""

    def __init__(self, driver, e, batch, scratch):
        self.driver, self.e = driver, e
        self.bidx = [f"_b{k}" for k in range(len(batch))]
        self.name, self.kb = driver.grid_body(e.outs[0], batch, self.bidx)
        for local, buffer in scratch.items():
            self.kb._use(buffer)
            ndim = len(driver._extra_avals[buffer].shape) - 1
            self.kb.line(f"{local} = {buffer}[{', '.join([':'] * ndim + ['_f'])}]")

    def guarded(self, condition, then, otherwise):
        """The per-matrix phases `then` where `condition` holds (a finite matrix), else the
        NaN fill `otherwise`."""
        self.kb.line(f"if {condition}:")
        for text in then:
            self.kb.line(f"    {text}")
        self.kb.line("else:  # inf or NaN in the matrix: NaN results, as on the CPU")
        for text in otherwise:
            self.kb.line(f"    {text}")

    def loops(self, rows, cols, body):
        """`body(row, col)` (a line) for every element of a rows x cols matrix."""
        kb = self.kb
        kb.line(f"for _r in range({rows}):")
        kb.line(f"    for _c in range({cols}):")
        kb.indent += 2
        kb.line(body("_r", "_c"))
        kb.indent -= 2
        kb._memo = {}

    def copy_in(self, local, x, rows, cols, transposed=False):
        kb = self.kb
        self.loops(rows, cols, lambda r, c: f"{local}[{r}, {c}] = np.float64("
                   f"{kb.value(x, self.bidx + ([c, r] if transposed else [r, c]))})")

    def copy_out(self, out, expr, rows, cols):
        """out[batch, r, c] = expr(r, c), rounded to out's dtype."""
        cast = _np_dtype(self.driver.program.avals[out].dtype)
        self.loops(rows, cols, lambda r, c: f"{self.kb.target(out, self.bidx + [r, c])} = {cast}({expr(r, c)})")

    def copy_out_vector(self, out, local, size):
        cast = _np_dtype(self.driver.program.avals[out].dtype)
        self.kb.line(f"for _r in range({size}):")
        self.kb.line(f"    {self.kb.target(out, self.bidx + ['_r'])} = {cast}({local}[_r])")

    def finish(self, batch_size, note):
        driver, kb = self.driver, self.kb
        driver.finish_kernel(self.name, kb, self.e, list(self.e.outs))
        driver.module.require(_IMPORT)  # the kernel calls decomp_device's per-matrix routines
        driver.launch(self.name, f"_cu.grid({batch_size})", kb, f"  # one thread per matrix: {note}")


def _complex(driver, e):
    return any(driver.aval(a).dtype.kind == "c" for a in e.ins)


# --- the rules -------------------------------------------------------------------------------------


def _emit_qr(driver, e):
    """Householder QR; R and the first columns of Q (all m of them for full_matrices)."""
    if _complex(driver, e):
        return driver.emit_host_call(e)
    (x,) = e.ins
    q_out, r_out = e.outs
    qa, ra = (driver.program.avals[o] for o in e.outs)
    comment = _loc_comment(e.stmt)
    *_, m, n = driver.aval(x).shape
    batch, size = _batch(driver.aval(x).shape, 2)
    cols = qa.shape[-1]
    if min(m, n) == 0 or size == 0:  # nothing to factor: Q is the identity, R is empty
        _eye(driver, q_out, qa, m, cols, comment)
        return driver.alloc(r_out, ra)
    driver.alloc(q_out, qa, comment)
    driver.alloc(r_out, ra)
    work = {"_a": _scratch(driver, f"{q_out}_a", (m, n), size),
            "_tau": _scratch(driver, f"{q_out}_tau", (min(m, n),), size),
            "_q": _scratch(driver, f"{q_out}_q", (m, cols), size)}
    k = _Kernel(driver, e, batch, work)
    k.copy_in("_a", x, m, n)
    k.guarded(f"_dd.finite(_a, {m}, {n})", ["_dd.qr_factor(_a, _tau)", "_dd.qr_form_q(_a, _tau, _q)"],
              ["_dd.fill_nan(_a)", "_dd.fill_nan(_q)"])
    k.copy_out(q_out, lambda r, c: f"_q[{r}, {c}]", m, cols)
    k.copy_out(r_out, lambda r, c: f"_a[{r}, {c}]", cols, n)
    k.finish(size, "Householder QR in float64")


def _emit_eigh(driver, e):
    """Cyclic Jacobi on the triangle `lower` names; eigenvalues ascending."""
    if _complex(driver, e):
        return driver.emit_host_call(e)
    (x,) = e.ins
    v_out, w_out = e.outs
    va, wa = (driver.program.avals[o] for o in e.outs)
    comment = _loc_comment(e.stmt)
    n = va.shape[-1]
    batch, size = _batch(va.shape, 2)
    driver.alloc(v_out, va, comment)
    driver.alloc(w_out, wa)
    if n == 0 or size == 0:
        return
    work = {"_a": _scratch(driver, f"{v_out}_a", (n, n), size),
            "_v": _scratch(driver, f"{v_out}_v", (n, n), size),
            "_w": _scratch(driver, f"{v_out}_w", (n,), size)}
    k = _Kernel(driver, e, batch, work)
    k.copy_in("_a", x, n, n)
    # the CPU path checks the whole matrix, the triangle it does not read included
    k.guarded(f"_dd.finite(_a, {n}, {n})",
              [f"_dd.symmetrize(_a, {bool(e.params['lower'])})", f"_e = _dd.scale_to_unit(_a, {n}, {n})",
               "_dd.eigh_jacobi(_a, _v)", "_dd.eigh_sorted(_a, _v, _w, _e)"],
              ["_dd.fill_nan(_v)", "_dd.fill_nan_vector(_w)"])
    k.copy_out(v_out, lambda r, c: f"_v[{r}, {c}]", n, n)
    k.copy_out_vector(w_out, "_w", n)
    k.finish(size, "cyclic Jacobi in float64")


def _emit_svd(driver, e):
    """One-sided Jacobi on the matrix, or on its transpose when it is wide (then the roles of
    the left and right singular vectors swap)."""
    if _complex(driver, e):
        return driver.emit_host_call(e)
    (x,) = e.ins
    xa = driver.aval(x)
    full, vectors = e.params["full_matrices"], e.params["compute_uv"]
    comment = _loc_comment(e.stmt)
    *_, m, n = xa.shape
    batch, size = _batch(xa.shape, 2)
    avals = [driver.program.avals[o] for o in e.outs]
    if vectors:
        u_out, s_out, vh_out = e.outs
        ua, sa, vha = avals
    else:
        (s_out,), (sa,) = e.outs, avals
    if min(m, n) == 0 or size == 0:  # no singular values: identities for the vectors
        if vectors:
            _eye(driver, u_out, ua, m, ua.shape[-1], comment)
            _eye(driver, vh_out, vha, vha.shape[-2], n, "")
        return driver.alloc(s_out, sa, "" if vectors else comment)
    for out, aval in zip(e.outs, avals):
        driver.alloc(out, aval, comment if out == e.outs[0] else "")
    wide = m < n
    p, q = (n, m) if wide else (m, n)
    ucols = p if (full and vectors) else q  # columns of the tall problem's left vectors
    work = {"_w": _scratch(driver, f"{s_out}_w", (p, ucols), size),
            "_s": _scratch(driver, f"{s_out}_s", (q,), size),
            "_v": _scratch(driver, f"{s_out}_v", (q, q) if vectors else (1, 1), size)}
    k = _Kernel(driver, e, batch, work)
    k.copy_in("_w", x, p, q, transposed=wide)
    solve = [f"_e = _dd.scale_to_unit(_w, {p}, {q})", f"_dd.svd_jacobi(_w, _v, {q}, {bool(vectors)})",
             f"_k = _dd.svd_sorted(_w, _s, _v, {bool(vectors)}, _e)"]
    if vectors:
        solve.append("_dd.complete_columns(_w, _k)  # left vectors of zero singular values, full U")
    k.guarded(f"_dd.finite(_w, {p}, {q})", solve,
              ["_dd.fill_nan_vector(_s)"] + (["_dd.fill_nan(_w)", "_dd.fill_nan(_v)"] if vectors else []))
    k.copy_out_vector(s_out, "_s", q)
    if vectors:
        # tall: a = W diag(s) V^T; wide: a^T = W diag(s) V^T, so a = V diag(s) W^T
        left, right = ("_v", "_w") if wide else ("_w", "_v")
        k.copy_out(u_out, lambda r, c: f"{left}[{r}, {c}]", m, ua.shape[-1])
        k.copy_out(vh_out, lambda r, c: f"{right}[{c}, {r}]", vha.shape[-2], n)
    k.finish(size, "one-sided Jacobi SVD in float64")


KERNELS = {"qr": _emit_qr, "eigh": _emit_eigh, "svd": _emit_svd}
