"""The CUDA kernel for eig (general square matrices, real or complex): one GPU thread per
matrix of the batch.

`KERNELS` maps the primitive to its rule `rule(driver, e)` (a `HostDriver` and the
statement); `emit.py` merges it into `OPAQUE_KERNELS`.

Like `decomp_emit`'s rules for qr/eigh/svd, the rule allocates float64 scratch buffers
(batch axis last) and emits one kernel that copies its matrix in as real and imaginary parts
in float64, runs the phases of `eig_device` (`_ed` in the generated module: balancing,
Hessenberg reduction, complex QR iteration to Schur form, eigenvectors by substitution) and
rounds the complex results out, as the CPU backend runs LAPACK in float64 and rounds. Matrices
of size zero get their empty outputs without a kernel. A matrix holding inf or NaN, or one whose
iteration did not converge, gets NaN results, as on the CPU. The eigenvalues' order is the
kernel's own, not LAPACK's (JAX documents none); vectors follow their eigenvalues.
"""
import numpy as np

from ..emit_cpu import _loc_comment, _np_dtype

_IMPORT = "from omnistage.codegen.cuda import eig_device as _ed"


def _scratch(driver, name, shape, batch_size):
    """A float64 device buffer of `shape` per matrix, the batch index last (coalesced)."""
    name = driver.fresh(name)
    full = tuple(shape) + (batch_size,)
    driver.line(f"{name} = _cu.empty({full!r}, np.float64)  # float64 scratch, batch innermost")
    driver._extra(name, full, np.float64)
    return name


class _Kernel:
    """One thread per matrix: the grid-stride loop over the batch, each scratch buffer's slice
    of this matrix bound to a local, complex copies in and out as (real, imaginary) pairs."""

    def __init__(self, driver, e, batch, scratch):
        self.driver, self.e = driver, e
        self.bidx = [f"_b{k}" for k in range(len(batch))]
        self.name, self.kb = driver.grid_body(e.outs[0], batch, self.bidx)
        for local, buffer in scratch.items():
            self.kb._use(buffer)
            ndim = len(driver._extra_avals[buffer].shape) - 1
            self.kb.line(f"{local} = {buffer}[{', '.join([':'] * ndim + ['_f'])}]")

    def line(self, text):
        self.kb.line(text)

    def block(self, head, body):
        self.kb.line(head)
        for text in body:
            self.kb.line(f"    {text}")

    def loops(self, n, body):
        """`body(row, col)` (a line) for every element of an n x n matrix."""
        kb = self.kb
        kb.line(f"for _r in range({n}):")
        kb.line(f"    for _c in range({n}):")
        kb.indent += 2
        kb.line(body("_r", "_c"))
        kb.indent -= 2
        kb._memo = {}

    def copy_in(self, re, im, x, n):
        """re + i im := x, widened to float64 (im := 0 for a real x)."""
        value = lambda r, c: self.kb.value(x, self.bidx + [r, c])  # noqa: E731
        if self.driver.aval(x).dtype.kind != "c":
            self.loops(n, lambda r, c: f"{re}[{r}, {c}] = np.float64({value(r, c)})")
            self.loops(n, lambda r, c: f"{im}[{r}, {c}] = np.float64(0.0)")
            return
        self.loops(n, lambda r, c: f"{re}[{r}, {c}] = np.float64({value(r, c)}.real)")
        self.loops(n, lambda r, c: f"{im}[{r}, {c}] = np.float64({value(r, c)}.imag)")

    def copy_out(self, out, re, im, n):
        """out[batch] := re + i im, rounded to out's complex dtype."""
        cast = _np_dtype(self.driver.program.avals[out].dtype)
        self.loops(n, lambda r, c: f"{self.kb.target(out, self.bidx + [r, c])} = "
                   f"{cast}(complex({re}[{r}, {c}], {im}[{r}, {c}]))")

    def copy_out_vector(self, out, re, im, n):
        cast = _np_dtype(self.driver.program.avals[out].dtype)
        self.kb.line(f"for _r in range({n}):")
        self.kb.line(f"    {self.kb.target(out, self.bidx + ['_r'])} = {cast}(complex({re}[_r], {im}[_r]))")

    def finish(self, batch_size, note):
        driver, kb = self.driver, self.kb
        driver.finish_kernel(self.name, kb, self.e, list(self.e.outs))
        driver.module.require(_IMPORT)  # the kernel calls eig_device's per-matrix phases
        driver.launch(self.name, f"_cu.grid({batch_size})", kb, f"  # one thread per matrix: {note}")


def _emit_eig(driver, e):
    """Eigenvalues, then the left and right eigenvectors the parameters ask for."""
    (x,) = e.ins
    left, right = e.params["compute_left_eigenvectors"], e.params["compute_right_eigenvectors"]
    avals = [driver.program.avals[o] for o in e.outs]
    for k, (out, aval) in enumerate(zip(e.outs, avals)):
        driver.alloc(out, aval, _loc_comment(e.stmt) if k == 0 else "")
    w_out = e.outs[0]
    vl_out = e.outs[1] if left else None
    vr_out = e.outs[-1] if right else None
    n = avals[0].shape[-1]
    batch = tuple(avals[0].shape[:-1])
    size = int(np.prod(batch, dtype=np.int64))
    if n == 0 or size == 0:  # nothing to decompose: the outputs are empty
        return
    vectors = bool(left or right)
    square, vector, unused = (n, n), (n,), (1, 1)
    work = {name: _scratch(driver, f"{w_out}{name}", shape, size) for name, shape in [
        ("_hr", square), ("_hi", square), ("_wr", vector), ("_wi", vector), ("_xr", vector), ("_xi", vector),
        ("_d", vector),
        ("_qr", square if vectors else unused), ("_qi", square if vectors else unused),
        ("_lr", square if left else unused), ("_li", square if left else unused)]}
    k = _Kernel(driver, e, batch, work)
    k.copy_in("_hr", "_hi", x, n)
    solve = ["_e = _ed.scale_to_unit(_hr, _hi)", "_ed.balance(_hr, _hi, _d)",
             f"_ed.hessenberg(_hr, _hi, _qr, _qi, _xr, _xi, {vectors})",
             f"_ok = _ed.schur(_hr, _hi, _qr, _qi, {vectors})  # False: no convergence, NaN results"]
    results = ["_ed.eigenvalues(_hr, _hi, _wr, _wi, _e)"]
    nan_fill = ["_ed.fill_nan_vector(_wr)", "_ed.fill_nan_vector(_wi)"]
    if left:  # before the right vectors, which overwrite Q
        results += ["_ed.left_vectors(_hr, _hi, _qr, _qi, _lr, _li, _xr, _xi)", "_ed.unbalance(_lr, _li, _d, True)",
                    "_ed.normalize(_lr, _li)"]
        nan_fill += ["_ed.fill_nan(_lr)", "_ed.fill_nan(_li)"]
    if right:
        results += ["_ed.right_vectors(_hr, _hi, _qr, _qi, _xr, _xi)", "_ed.unbalance(_qr, _qi, _d, False)",
                    "_ed.normalize(_qr, _qi)"]
        nan_fill += ["_ed.fill_nan(_qr)", "_ed.fill_nan(_qi)"]
    k.line("_e = 0")
    k.line("_ok = _ed.finite(_hr, _hi)  # inf or NaN in the matrix: NaN results, as on the CPU")
    k.block("if _ok:", solve)
    k.block("if _ok:", results)
    k.block("else:", nan_fill)
    k.copy_out_vector(w_out, "_wr", "_wi", n)
    if left:
        k.copy_out(vl_out, "_lr", "_li", n)
    if right:
        k.copy_out(vr_out, "_qr", "_qi", n)
    k.finish(size, "complex Hessenberg QR iteration in float64")


KERNELS = {"eig": _emit_eig}
