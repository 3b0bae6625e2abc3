"""CUDA kernels for qr, eigh and svd: one GPU thread per matrix of the batch.

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`.

Each rule allocates float64 (complex128 for complex operands) scratch buffers on the device
(batch axis last, so that the threads of a warp, one per matrix, touch adjacent addresses) and
emits one kernel that copies its matrix in (widened), runs the per-matrix algorithm of
`decomp_device` (`_dd` in the generated module: Householder QR, cyclic Jacobi, one-sided Jacobi
SVD) or of its complex twin `decomp_complex_device` (`_dz`, the same phases by the same names)
and rounds the results out, as the CPU backend computes LAPACK's results in float64/complex128
and rounds them. There is no host round trip. Batches of small matrices are the use case; a
large single matrix runs on one thread and would want cuSOLVER instead.

float16/bfloat16 operands arrive as float32 (`narrow_floats` widens the program first).
Matrices with a zero dimension get the CPU path's constant results (identities, nothing to
decompose) without a kernel.
"""
import numpy as np

from ..emit_cpu import _loc_comment, dtype_expr

# the per-matrix routines a kernel calls, by whether its operand is complex: (alias in the
# generated module, its import, the scratch dtype)
_ROUTINES = {
    False: ("_dd", "from omnistage.codegen.cuda import decomp_device as _dd", np.float64),
    True: ("_dz", "from omnistage.codegen.cuda import decomp_complex_device as _dz", np.complex128),
}


# --- shared pieces -------------------------------------------------------------------------------


def _batch(shape, trailing):
    batch = tuple(shape[: len(shape) - trailing])
    return batch, int(np.prod(batch, dtype=np.int64))


def _eye(driver, out, aval, rows, cols, comment):
    """`out` := the rows x cols identity in every batch entry (a constant, made on the host)."""
    if not aval.size:
        return driver.alloc(out, aval, comment)
    eye = f"np.eye({rows}, {cols}, dtype={dtype_expr(aval.dtype)})"
    driver.line(f"{out} = _cu.to_device(np.broadcast_to({eye}, {tuple(aval.shape)!r})){comment}")


def scratch(driver, base, shape, batch_size, dtype=np.float64):
    """A float64 (or complex128) device buffer of `shape` per matrix, the batch index last
    (coalesced)."""
    name = driver.fresh(base)
    full = tuple(shape) + (batch_size,)
    kind = np.dtype(dtype).name
    driver.line(f"{name} = _cu.empty({full!r}, {dtype_expr(dtype)})  # {kind} scratch, batch innermost")
    driver._extra(name, full, dtype)
    return name


def _scratch_set(driver, base, shapes, batch_size):
    """{local: buffer} for `shapes` ({local: (shape, dtype)}), named after output `base`."""
    return {local: scratch(driver, f"{base}{local}", shape, batch_size, dtype)
            for local, (shape, dtype) in shapes.items()}


class PerMatrixKernel:
    """One thread per matrix (also eig_emit's base): opens the grid-stride loop over the batch,
    binds each scratch buffer's slice of this matrix to a local, and launches the kernel."""

    def __init__(self, driver, e, batch, scratch):
        self.driver, self.e = driver, e
        self.bidx = [f"_b{k}" for k in range(len(batch))]
        self.name, self.kb = driver.grid_body(e.outs[0], batch, self.bidx)
        for local, buffer in scratch.items():
            self.kb._use(buffer)
            ndim = len(driver._extra_avals[buffer].shape) - 1
            self.kb.line(f"{local} = {buffer}[{', '.join([':'] * ndim + ['_f'])}]")

    def loops(self, rows, cols, body):
        """`body(row, col)` (a line) for every element of a rows x cols matrix."""
        kb = self.kb
        kb.line(f"for _r in range({rows}):")
        kb.line(f"    for _c in range({cols}):")
        kb.indent += 2
        kb.line(body("_r", "_c"))
        kb.indent -= 2
        kb._memo = {}

    def launch(self, batch_size, import_line, note):
        """Finish the kernel, ask the module for `import_line` (the per-matrix routines it
        calls) and launch one thread per matrix."""
        driver, kb = self.driver, self.kb
        driver.finish_kernel(self.name, kb, self.e, list(self.e.outs))
        driver.module.require(import_line)
        driver.launch(self.name, f"_cu.grid({batch_size})", kb, f"  # one thread per matrix: {note}")


class _Kernel(PerMatrixKernel):
    """The qr/eigh/svd kernel: the routine table's import and scratch dtype, guarded phases,
    copies in and out."""

    def __init__(self, driver, e, batch, scratch, routines):
        super().__init__(driver, e, batch, scratch)
        _, self._import, self.work = routines

    def guarded(self, condition, then, otherwise):
        """The per-matrix phases `then` where `condition` holds (a finite matrix), else the
        NaN fill `otherwise`."""
        self.kb.line(f"if {condition}:")
        for text in then:
            self.kb.line(f"    {text}")
        self.kb.line("else:  # inf or NaN in the matrix: NaN results, as on the CPU")
        for text in otherwise:
            self.kb.line(f"    {text}")

    def copy_in(self, local, x, rows, cols, transposed=False):
        """local := x, widened to the scratch dtype; transposed: its (conjugate) transpose."""
        kb, cast = self.kb, dtype_expr(self.work)
        conj = ".conjugate()" if transposed and np.dtype(self.work).kind == "c" else ""
        self.loops(rows, cols, lambda r, c: f"{local}[{r}, {c}] = {cast}("
                   f"{kb.value(x, self.bidx + ([c, r] if transposed else [r, c]))}){conj}")

    def copy_out(self, out, expr, rows, cols):
        """out[batch, r, c] = expr(r, c), rounded to out's dtype."""
        cast = dtype_expr(self.driver.program.avals[out].dtype)
        self.loops(rows, cols, lambda r, c: f"{self.kb.target(out, self.bidx + [r, c])} = {cast}({expr(r, c)})")

    def copy_out_vector(self, out, local, size):
        cast = dtype_expr(self.driver.program.avals[out].dtype)
        self.kb.line(f"for _r in range({size}):")
        self.kb.line(f"    {self.kb.target(out, self.bidx + ['_r'])} = {cast}({local}[_r])")

    def finish(self, batch_size, note):
        self.launch(batch_size, self._import, f"{note} in {np.dtype(self.work).name}")


def _routines(driver, e):
    return _ROUTINES[any(driver.aval(a).dtype.kind == "c" for a in e.ins)]


# --- the rules -------------------------------------------------------------------------------------


def _emit_qr(driver, e):
    """Householder QR; R and the first columns of Q (all m of them for full_matrices)."""
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
    routines = _routines(driver, e)
    dd, _, work = routines
    scratch = {"_a": ((m, n), work), "_tau": ((min(m, n),), work), "_q": ((m, cols), work)}
    k = _Kernel(driver, e, batch, _scratch_set(driver, q_out, scratch, size), routines)
    k.copy_in("_a", x, m, n)
    k.guarded(f"{dd}.finite(_a, {m}, {n})", [f"{dd}.qr_factor(_a, _tau)", f"{dd}.qr_form_q(_a, _tau, _q)"],
              [f"{dd}.fill_nan(_a)", f"{dd}.fill_nan(_q)"])
    k.copy_out(q_out, lambda r, c: f"_q[{r}, {c}]", m, cols)
    k.copy_out(r_out, lambda r, c: f"_a[{r}, {c}]", cols, n)
    k.finish(size, "Householder QR")


def _emit_eigh(driver, e):
    """Cyclic Jacobi on the triangle `lower` names; eigenvalues (real) ascending."""
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
    routines = _routines(driver, e)
    dd, _, work = routines
    scratch = {"_a": ((n, n), work), "_v": ((n, n), work), "_w": ((n,), np.float64)}
    k = _Kernel(driver, e, batch, _scratch_set(driver, v_out, scratch, size), routines)
    k.copy_in("_a", x, n, n)
    # the CPU path checks the whole matrix, the triangle it does not read included
    k.guarded(f"{dd}.finite(_a, {n}, {n})",
              [f"{dd}.symmetrize(_a, {bool(e.params['lower'])})", f"_e = {dd}.scale_to_unit(_a, {n}, {n})",
               f"{dd}.eigh_jacobi(_a, _v)", f"{dd}.eigh_sorted(_a, _v, _w, _e)"],
              [f"{dd}.fill_nan(_v)", f"{dd}.fill_nan_vector(_w)"])
    k.copy_out(v_out, lambda r, c: f"_v[{r}, {c}]", n, n)
    k.copy_out_vector(w_out, "_w", n)
    k.finish(size, "cyclic Jacobi")


def _emit_svd(driver, e):
    """One-sided Jacobi on the matrix, or on its (conjugate) transpose when it is wide (then
    the roles of the left and right singular vectors swap)."""
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
    routines = _routines(driver, e)
    dd, _, work = routines
    scratch = {"_w": ((p, ucols), work), "_s": ((q,), np.float64), "_v": ((q, q) if vectors else (1, 1), work)}
    k = _Kernel(driver, e, batch, _scratch_set(driver, s_out, scratch, size), routines)
    k.copy_in("_w", x, p, q, transposed=wide)
    solve = [f"_e = {dd}.scale_to_unit(_w, {p}, {q})", f"{dd}.svd_jacobi(_w, _v, {q}, {bool(vectors)})",
             f"_k = {dd}.svd_sorted(_w, _s, _v, {bool(vectors)}, _e)"]
    if vectors:
        solve.append(f"{dd}.complete_columns(_w, _k)  # left vectors of zero singular values, full U")
    k.guarded(f"{dd}.finite(_w, {p}, {q})", solve,
              [f"{dd}.fill_nan_vector(_s)"] + ([f"{dd}.fill_nan(_w)", f"{dd}.fill_nan(_v)"] if vectors else []))
    k.copy_out_vector(s_out, "_s", q)
    if vectors:
        # tall: a = W diag(s) V^H; wide: a^H = W diag(s) V^H, so a = V diag(s) W^H
        left, right = ("_v", "_w") if wide else ("_w", "_v")
        conj = ".conjugate()" if np.dtype(work).kind == "c" else ""
        k.copy_out(u_out, lambda r, c: f"{left}[{r}, {c}]", m, ua.shape[-1])
        k.copy_out(vh_out, lambda r, c: f"{right}[{c}, {r}]{conj}", vha.shape[-2], n)
    k.finish(size, "one-sided Jacobi SVD")


KERNELS = {"qr": _emit_qr, "eigh": _emit_eigh, "svd": _emit_svd}
