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

from ..emit_cpu import _loc_comment, dtype_expr
from .decomp_emit import PerMatrixKernel, scratch

_IMPORT = "from omnistage.codegen.cuda import eig_device as _ed"


class _Kernel(PerMatrixKernel):
    """eig's kernel: complex copies in and out as (real, imaginary) float64 pairs."""

    def line(self, text):
        self.kb.line(text)

    def block(self, head, body):
        self.kb.line(head)
        for text in body:
            self.kb.line(f"    {text}")

    def copy_in(self, re, im, x, n):
        """re + i im := x, widened to float64 (im := 0 for a real x)."""
        value = lambda r, c: self.kb.value(x, self.bidx + [r, c])  # noqa: E731
        if self.driver.aval(x).dtype.kind != "c":
            self.loops(n, n, lambda r, c: f"{re}[{r}, {c}] = np.float64({value(r, c)})")
            self.loops(n, n, lambda r, c: f"{im}[{r}, {c}] = np.float64(0.0)")
            return
        self.loops(n, n, lambda r, c: f"{re}[{r}, {c}] = np.float64({value(r, c)}.real)")
        self.loops(n, n, lambda r, c: f"{im}[{r}, {c}] = np.float64({value(r, c)}.imag)")

    def copy_out(self, out, re, im, n):
        """out[batch] := re + i im, rounded to out's complex dtype."""
        cast = dtype_expr(self.driver.program.avals[out].dtype)
        self.loops(n, n, lambda r, c: f"{self.kb.target(out, self.bidx + [r, c])} = "
                   f"{cast}(complex({re}[{r}, {c}], {im}[{r}, {c}]))")

    def copy_out_vector(self, out, re, im, n):
        cast = dtype_expr(self.driver.program.avals[out].dtype)
        self.kb.line(f"for _r in range({n}):")
        self.kb.line(f"    {self.kb.target(out, self.bidx + ['_r'])} = {cast}(complex({re}[_r], {im}[_r]))")

    def finish(self, batch_size, note):
        self.launch(batch_size, _IMPORT, note)  # the kernel calls eig_device's per-matrix phases


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
    work = {name: scratch(driver, f"{w_out}{name}", shape, size) for name, shape in [
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
