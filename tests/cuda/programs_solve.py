"""Programs for the CUDA solve kernels, merged into `programs.PROGRAMS` (simulator tests and the
PTX check): (name, function, argument factory) entries, small shapes."""
import itertools

import numpy as np

import omnistage
import omnistage.lax as lax
import omnistage.numpy as jnp

# (left_side, lower, transpose_a, conjugate_a, unit_diagonal): all 32, of which the real
# programs take the 16 with conjugate_a False (it changes nothing for real matrices)
FLAGS = list(itertools.product((True, False), repeat=5))


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _c64(*shape, seed=0):
    return (_f32(*shape, seed=seed) + 1j * _f32(*shape, seed=seed + 10)).astype(np.complex64)


def well_conditioned(*shape, seed=0, dtype=np.float32):
    """Random matrices with a heavy diagonal (triangular solves stay tame)."""
    a = np.random.default_rng(seed).standard_normal(shape) + 4 * np.eye(shape[-1])
    return a.astype(dtype)


def triangular_solve_flags(a, b_left, b_right):
    """Every flag combination with conjugate_a False, batched (a: (2, 3, 3))."""
    return [lax.linalg.triangular_solve(a, b_left if left else b_right, left_side=left, lower=lower,
                                        transpose_a=trans, conjugate_a=conj, unit_diagonal=unit)
            for left, lower, trans, conj, unit in FLAGS if not conj]


def triangular_solve_complex(a, b):
    """conjugate_a (with and without transpose_a) on complex64, left side, both triangles."""
    return [lax.linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=trans, conjugate_a=True)
            for lower in (True, False) for trans in (True, False)]


def linalg_solve(a, b):
    return jnp.linalg.solve(a, b)


def cholesky(a):
    return jnp.linalg.cholesky(a @ jnp.swapaxes(a, -1, -2) + 0.5 * jnp.eye(a.shape[-1]))


def cholesky_raw(a):
    """The primitive on its operand as given: only the lower triangle is read."""
    return lax.linalg.cholesky(a, symmetrize_input=False)


def cholesky_complex(a):
    return jnp.linalg.cholesky(a @ jnp.conj(jnp.swapaxes(a, -1, -2)) + 0.5 * jnp.eye(a.shape[-1]))


def lu(a, tall, wide):
    return lax.linalg.lu(a), lax.linalg.lu(tall), lax.linalg.lu(wide)


def lu_pivots(p):
    return lax.linalg.lu_pivots_to_permutation(p, 5)


def _cholesky_loss(a):
    c = jnp.linalg.cholesky(a @ a.T + jnp.eye(a.shape[0]))
    return jnp.sum(c * c) + jnp.sum(jnp.tanh(c))


def _solve_loss(a, b):
    return jnp.sum(jnp.linalg.solve(a, b) ** 2)


# the transposed programs: triangular solves with transpose_a and conjugate_a, on the right
grad_cholesky = omnistage.grad(_cholesky_loss)
grad_solve = omnistage.grad(_solve_loss, argnums=(0, 1))


def not_positive_definite():
    """Positive definite, indefinite, a zero pivot, a NaN below the diagonal (it propagates)
    and a garbage upper triangle (never read)."""
    return np.array([
        [[4, 2, 0], [2, 5, 1], [0, 1, 3]],
        [[4, 2, 0], [2, -1, 0], [0, 0, 1]],
        [[1, 1, 0], [1, 1, 0], [0, 0, 1]],
        [[1, 0, 0], [np.nan, 1, 0], [0, 0, 1]],
        [[4, 99, -7], [2, 5, np.nan], [0, 1, 3]],
    ], np.float32)


def singular_and_ties():
    """Exact ties (the first largest |x| wins), a zero column, a singular matrix, NaNs."""
    return np.array([
        [[1, 2, 3], [-1, 0, 1], [1, 4, 2]],
        [[0, 2, 3], [0, 4, 1], [0, 1, 2]],
        [[1, 2, 3], [2, 4, 6], [3, 6, 9]],
        [[1, np.nan, 3], [np.nan, 4, 1], [2, 1, 2]],
        [[2, 1, 1], [-2, 1, 1], [2, 3, -1]],
    ], np.float32)


PROGRAMS = [
    ("triangular_solve_flags", triangular_solve_flags,
     lambda: (well_conditioned(2, 3, 3), _f32(2, 3, 2, seed=1), _f32(2, 4, 3, seed=2))),
    ("triangular_solve_complex", triangular_solve_complex,
     lambda: (well_conditioned(2, 3, 3).astype(np.complex64) + 0.5j * _f32(2, 3, 3, seed=3), _c64(2, 3, 2, seed=1))),
    ("linalg_solve", linalg_solve, lambda: (well_conditioned(2, 3, 3), _f32(2, 3, 2, seed=1))),
    ("cholesky", cholesky, lambda: (_f32(2, 4, 4),)),
    ("cholesky_not_pd", cholesky_raw, lambda: (not_positive_definite(),)),
    ("cholesky_complex", cholesky_complex, lambda: (_c64(2, 3, 3),)),
    ("lu", lu, lambda: (_f32(2, 3, 3), _f32(4, 3, seed=1), _f32(2, 2, 4, seed=2))),
    ("lu_singular_ties", lambda a: lax.linalg.lu(a), lambda: (singular_and_ties(),)),
    ("lu_complex", lambda a: lax.linalg.lu(a), lambda: (_c64(2, 3, 3),)),
    ("lu_pivots_to_permutation", lu_pivots, lambda: (np.array([[[2, 2, 4], [0, 1, 3]], [[4, 3, 4], [1, 0, 2]]], np.int32),)),
    ("grad_cholesky", grad_cholesky, lambda: (_f32(3, 3),)),
    ("grad_solve", grad_solve, lambda: (well_conditioned(3, 3), _f32(3, 2, seed=1))),
]
