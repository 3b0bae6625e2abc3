"""Programs for the CUDA decomp kernels, merged into `programs.PROGRAMS` (simulator tests and the
PTX check): (name, function, argument factory) entries, small shapes.

The CUDA kernels compare with the CPU backend element by element here, so these programs only
return what the decompositions determine: Q and R (LAPACK's sign conventions, which the QR
kernel follows, complex ones included), eigenvalues and singular values, and sign- (for
complex operands phase-) invariant uses of the vectors (reconstructions, projectors,
gradients of spectral losses, pinv, norm(ord=2), matrix_rank)."""
import numpy as np

import omnistage
import omnistage.numpy as jnp
from omnistage.lax import linalg as lax_linalg


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _sym32(*shape, seed=0):
    a = _f32(*shape, seed=seed)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(np.float32)


def _c64(*shape, seed=0):
    return (_f32(*shape, seed=seed) + 1j * _f32(*shape, seed=seed + 10)).astype(np.complex64)


def _herm64(*shape, seed=0):
    a = _c64(*shape, seed=seed)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(np.complex64)


def _h(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def qr_complete_and_reduced(tall, wide):
    q1, r1 = jnp.linalg.qr(tall, mode="complete")
    q2, r2 = jnp.linalg.qr(tall)
    q3, r3 = jnp.linalg.qr(wide, mode="complete")
    return q1, r1, q2, r2, q3, r3, q2 @ r2


def eigh_spectrum(a):
    w = jnp.linalg.eigvalsh(a)
    w2, v = jnp.linalg.eigh(a)  # NumPy order: eigenvalues first
    return w, (v * w2[..., None, :]) @ jnp.swapaxes(v, -1, -2)


def eigh_upper_triangle(a):
    v, w = lax_linalg.eigh(a, lower=False, symmetrize_input=False)
    return w, (v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2)


def svd_values_and_reconstruction(tall, wide):
    s1 = jnp.linalg.svd(tall, compute_uv=False)
    u, s, vh = jnp.linalg.svd(wide, full_matrices=False)
    uf, sf, vhf = jnp.linalg.svd(tall)
    return s1, (u * s[..., None, :]) @ vh, uf @ jnp.swapaxes(uf, -1, -2), sf, (uf[..., :, :3] * sf[..., None, :]) @ vhf


def spectral_uses(a):
    return jnp.linalg.norm(a, ord=2), jnp.linalg.pinv(a), jnp.linalg.matrix_rank(a), jnp.linalg.cond(a)


def spectral_grads(a, s):
    g_eig = omnistage.grad(lambda x: jnp.sum(jnp.linalg.eigvalsh(x) ** 2))(s)
    g_svd = omnistage.grad(lambda x: jnp.sum(jnp.linalg.svd(x, compute_uv=False)))(a)
    return g_eig, g_svd


def complex_qr(tall, wide):
    q1, r1 = jnp.linalg.qr(tall, mode="complete")
    q2, r2 = jnp.linalg.qr(wide)
    return q1, r1, q2, r2, q1 @ r1


def complex_eigh(a, b):
    """Eigenvalues (real, float32) and phase-invariant reconstructions, both triangles."""
    w, v = jnp.linalg.eigh(a)
    v2, w2 = lax_linalg.eigh(b, lower=False, symmetrize_input=False)
    return w, (v * w[..., None, :]) @ _h(v), w2, (v2 * w2[..., None, :]) @ _h(v2)


def complex_svd(tall, wide):
    s1 = jnp.linalg.svd(tall, compute_uv=False)
    u, s, vh = jnp.linalg.svd(wide, full_matrices=False)
    uf, sf, vhf = jnp.linalg.svd(tall)
    return s1, (u * s[..., None, :]) @ vh, uf @ _h(uf), sf, (uf[..., :, :3] * sf[..., None, :]) @ vhf


PROGRAMS = [
    ("qr_complete_and_reduced", qr_complete_and_reduced, lambda: (_f32(2, 5, 3), _f32(3, 4, seed=1))),
    ("eigh_spectrum", eigh_spectrum, lambda: (_sym32(3, 4, 4),)),
    ("eigh_upper_triangle", eigh_upper_triangle, lambda: (_f32(2, 3, 3, seed=2),)),
    ("svd_values_and_reconstruction", svd_values_and_reconstruction, lambda: (_f32(2, 5, 3), _f32(3, 5, seed=1))),
    ("spectral_uses", spectral_uses, lambda: (_f32(4, 3, seed=3),)),
    ("spectral_grads", spectral_grads, lambda: (_f32(4, 3, seed=4), _sym32(3, 3, seed=5))),
    ("complex_qr", complex_qr, lambda: (_c64(2, 5, 3), _c64(3, 4, seed=1))),
    ("complex_eigh", complex_eigh, lambda: (_herm64(3, 4, 4), _c64(2, 3, 3, seed=2))),
    ("complex_svd", complex_svd, lambda: (_c64(2, 5, 3), _c64(3, 5, seed=1))),
]
