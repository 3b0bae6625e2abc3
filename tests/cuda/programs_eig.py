"""Programs for the CUDA eig kernel, merged into `programs.PROGRAMS` (simulator tests and the PTX
check): (name, function, argument factory) entries, small shapes.

The simulator tests compare with the CPU backend element by element, but the kernel's
eigenvalue order is not LAPACK's and eigenvectors are determined only up to a unit phase, so
these programs return order- and phase-free quantities: sorted real and imaginary parts
(separately: each is a multiset), sums, products and the spectral radius of the eigenvalues,
and reconstructions of the matrix from its eigenvectors (V diag(w) V^-1, and the spectral
projectors v u^H / (u^H v) of right and left vectors weighted by w). The matrices have well
separated eigenvalues and well-conditioned eigenvectors, so that float32 rounding of either
backend's vectors stays within the tests' tolerance."""
import numpy as np

import omnistage.numpy as jnp
from omnistage.lax import linalg as lax_linalg


def _near_diagonal(*batch, n=4, complex_input=False, seed=0):
    """diag(1..n) with a rotation block (eigenvalues 1 +- 2i) plus a small random part."""
    rng = np.random.default_rng(seed)
    a = np.diag(np.arange(1.0, n + 1)) + 0.2 * rng.standard_normal(batch + (n, n))
    a[..., :2, :2] += [[0.0, -2.0], [2.0, -1.0]]
    if complex_input:
        a = a + 0.2j * rng.standard_normal(a.shape)
    return a.astype(np.complex64 if complex_input else np.float32)


def _spectrum(w):
    return jnp.sort(w.real, axis=-1), jnp.sort(w.imag, axis=-1), w.sum(axis=-1), jnp.max(jnp.abs(w), axis=-1)


def eigvals_spectrum(a):
    return _spectrum(jnp.linalg.eigvals(a))


def eig_reconstructions(a):
    w, vl, vr = lax_linalg.eig(a)
    left_h = jnp.conj(jnp.swapaxes(vl, -1, -2))
    scale = jnp.sum(jnp.conj(vl) * vr, axis=-2)  # u_j^H v_j: the projectors' normalization
    from_projectors = (vr * (w / scale)[..., None, :]) @ left_h
    from_right = (vr * w[..., None, :]) @ jnp.linalg.inv(vr)
    return _spectrum(w) + (from_projectors, from_right)


def eig_right_vectors(a):
    w, v = jnp.linalg.eig(a)
    return jnp.sort(w.real, axis=-1), (v * w[..., None, :]) @ jnp.linalg.inv(v)


PROGRAMS = [
    ("eigvals_spectrum", eigvals_spectrum, lambda: (_near_diagonal(2, seed=1),)),
    ("eig_reconstructions", eig_reconstructions, lambda: (_near_diagonal(seed=2),)),
    ("eig_reconstructions_complex", eig_reconstructions, lambda: (_near_diagonal(2, complex_input=True, seed=3),)),
    ("eig_right_vectors", eig_right_vectors, lambda: (_near_diagonal(3, n=3, seed=4),)),
]
