"""Derivatives of the linear-algebra primitives and of every jnp.linalg function.

Each primitive rule is checked with `check_grads` (central differences for the JVP, the VJP as
the JVP's transpose, order 2) in float64 and complex128 on well-conditioned random matrices:
positive definite where the primitive needs it, distinct eigen/singular values where the
derivative needs them. Eigenvectors and singular vectors of complex matrices are only defined
up to a phase per column, so those are checked through phase-invariant functions (|v|^2,
V f(w) V^H), as JAX's own tests do. Gradients are also compared with JAX (the seeds' spectral
radius example as literal values) and jitted gradients (Numba) with eager ones.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.lax import linalg as L

from .check import check_grads

DTYPES = [np.float64, np.complex128]


def _rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _well_conditioned(shape, dtype, seed):
    """A random square matrix (batch) shifted away from singularity."""
    return _rand(shape, dtype, seed) + 3 * np.eye(shape[-1], dtype=dtype)


def _positive_definite(shape, dtype, seed):
    a = _rand(shape, dtype, seed)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(shape[-1], dtype=dtype)


def _abs2(x):
    return jnp.real(x * jnp.conj(x))


# --- triangular_solve ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False), (True, True), (False, True)])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_triangular_solve_derivatives_in_a_and_b(x64, dtype, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a = _well_conditioned((3, 3), dtype, 0)
    b = _rand((3, 2) if left_side else (2, 3), dtype, 1)

    def f(a, b):
        return L.triangular_solve(
            a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal,
        )

    check_grads(f, (a, b), order=2)


def test_triangular_solve_batched_is_linear_in_b(x64):
    a = _well_conditioned((2, 3, 3), np.float64, 2)
    b = _rand((2, 3, 4), np.float64, 3)
    f = lambda b: L.triangular_solve(a, b, left_side=True, lower=True)
    check_grads(f, (b,), order=2)
    ct = _rand((2, 3, 4), np.float64, 4)
    (g,) = jax.vjp(f, b)[1](ct)
    # the transpose of a solve is the solve with the transposed matrix
    np.testing.assert_allclose(g, np.linalg.solve(np.swapaxes(np.tril(a), -1, -2), ct), rtol=1e-12)


# --- cholesky ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky(x64, dtype):
    x = _positive_definite((2, 3, 3), dtype, 5)
    check_grads(L.cholesky, (x,), order=2)


# --- eigh ----------------------------------------------------------------------------------


def test_eigh_real_vectors_and_values(x64):
    x = _positive_definite((3, 3), np.float64, 6)
    check_grads(lambda x: L.eigh(x), (x,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_phase_invariant_functions(x64, dtype):
    x = _positive_definite((2, 3, 3), dtype, 7)

    def f(x):
        v, w = L.eigh(x)
        # V sin(W) V^H and |V|^2 do not depend on each column's arbitrary phase
        vf = v * lax.convert_element_type(jnp.sin(w), v.dtype)[..., None, :]
        return w, _abs2(v), vf @ jnp.conj(jnp.swapaxes(v, -1, -2))

    check_grads(f, (x,), order=2)


def test_eigh_of_a_non_symmetric_input_differentiates_its_hermitian_part(x64):
    x = _rand((3, 3), np.float64, 8)
    sym = (x + x.T) / 2
    g = jax.grad(lambda x: jnp.sum(L.eigh(x)[1][0] ** 2))(x)
    gs = jax.grad(lambda x: jnp.sum(L.eigh(x)[1][0] ** 2))(sym)
    np.testing.assert_allclose(g, gs, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g).T, rtol=1e-10)


# --- eig -----------------------------------------------------------------------------------
# LAPACK may flip the sign of a real matrix's complex eigenvector pair between nearby inputs
# (its normalisation is not continuous everywhere); the seeds below are away from such
# points, so central differences are meaningful.


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigvals(x64, dtype):
    x = _rand((2, 3, 3), dtype, 9)
    check_grads(lambda x: L.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0], (x,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left,right", [(True, True), (False, True), (True, False)])
def test_eig_eigenvectors_follow_lapack_normalisation(x64, dtype, left, right):
    x = _rand((3, 3), dtype, 2)
    f = lambda x: L.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    check_grads(f, (x,), order=2)


def test_eig_of_real_matrix_with_complex_pair(x64):
    x = _rand((3, 3), np.float64, 1)
    assert np.abs(np.linalg.eigvals(x).imag).max() > 0.1
    check_grads(lambda x: L.eig(x), (x,), order=2)


def test_eig_eigenvector_tangent_matches_jax(x64):
    jax_ref = pytest.importorskip("jax")
    jax_ref.config.update("jax_enable_x64", True)
    x, t = _rand((4, 4), np.float64, 11), _rand((4, 4), np.float64, 12)
    outs, ours = jax.jvp(lambda x: L.eig(x), (x,), (t,))
    refs, theirs = jax_ref.jvp(lambda x: jax_ref.lax.linalg.eig(x, enable_eigvec_derivs=True), (x,), (t,))
    np.testing.assert_allclose(np.asarray(ours[0]), np.asarray(theirs[0]), rtol=1e-8, atol=1e-10)
    for v, v_ref, dv, dv_ref in zip(outs[1:], refs[1:], ours[1:], theirs[1:]):
        # both normalise each column's largest entry to be real, but its sign may differ
        # (the left vectors' do); the tangent then differs by the same sign
        v, v_ref = np.asarray(v), np.asarray(v_ref)
        big = np.argmax(np.abs(v), axis=0), np.arange(4)
        sign = np.sign(np.real(v[big] / v_ref[big]))
        np.testing.assert_allclose(v, v_ref * sign, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(np.asarray(dv), np.asarray(dv_ref) * sign, rtol=1e-8, atol=1e-10)


# --- svd -----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_svd_real(x64, shape):
    x = _rand(shape, np.float64, 13)
    check_grads(lambda x: L.svd(x, full_matrices=False), (x,), order=2)


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 4), (3, 3)])
def test_svd_complex_phase_invariant(x64, shape):
    x = _rand(shape, np.complex128, 14)

    def f(x):
        u, s, vh = L.svd(x, full_matrices=False)
        us = u * lax.convert_element_type(jnp.sin(s), u.dtype)[..., None, :]
        return s, _abs2(u), _abs2(vh), us @ vh

    check_grads(f, (x,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_singular_values_only(x64, dtype, shape):
    x = _rand(shape, dtype, 15)
    check_grads(lambda x: L.svd(x, compute_uv=False), (x,), order=2)


def test_svd_full_matrices_square(x64):
    x = _rand((3, 3), np.float64, 16)
    check_grads(lambda x: L.svd(x, full_matrices=True), (x,), order=2)


def test_svd_full_matrices_of_non_square_matrix_is_not_differentiable_as_in_jax(x64):
    x = _rand((4, 3), np.float64, 17)
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        jax.jvp(lambda x: L.svd(x, full_matrices=True), (x,), (x,))


# --- qr ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 2)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_qr(x64, dtype, shape, full_matrices):
    x = _rand(shape, dtype, 18)
    check_grads(lambda x: L.qr(x, full_matrices=full_matrices), (x,), order=2)


# --- lu ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_lu_factors(x64, dtype, shape):
    x = _rand(shape, dtype, 19)
    check_grads(lambda x: L.lu(x)[0], (x,), order=2)


def test_lu_integer_outputs_have_no_tangent(x64):
    x = _rand((3, 3), np.float64, 20)
    _, (t_lu, t_piv, t_perm) = jax.jvp(L.lu, (x,), (x,))
    assert t_piv.dtype == jax.dtypes.float0 and t_perm.dtype == jax.dtypes.float0
    assert t_lu.shape == (3, 3)


def test_lu_pivots_to_permutation_in_a_differentiated_function(x64):
    x = _rand((3, 3), np.float64, 21)

    def f(x):
        lu, pivots, _ = L.lu(x)
        perm = L.lu_pivots_to_permutation(pivots, 3)
        return jnp.sum(lu * lax.convert_element_type(perm, x.dtype)[:, None])

    check_grads(f, (x,), order=1)


# x64 is the same for every example, so the function-scoped fixture is safe to share
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.sampled_from([(), (2,)]), m=st.integers(1, 4), n=st.integers(1, 4), which=st.sampled_from(["lu", "qr", "svdvals"]))
def test_decompositions_over_shapes(x64, batch, m, n, which):
    x = _rand(batch + (m, n), np.float64, m * 7 + n)
    f = {
        "lu": lambda x: L.lu(x)[0],
        "qr": lambda x: L.qr(x, full_matrices=False),
        "svdvals": lambda x: L.svd(x, compute_uv=False),
    }[which]
    check_grads(f, (x,), order=1)


# --- jnp.linalg ----------------------------------------------------------------------------

_SQUARE = {
    "inv": jnp.linalg.inv,
    "det": jnp.linalg.det,
    "slogdet": lambda a: tuple(jnp.linalg.slogdet(a)),
    "eigvals": jnp.linalg.eigvals,
    "eig": lambda a: tuple(jnp.linalg.eig(a)),
    "svd_square": lambda a: tuple(jnp.linalg.svd(a)) if a.dtype == np.float64 else jnp.linalg.svd(a).S,
    "matrix_power": lambda a: jnp.linalg.matrix_power(a, 3),
    "matrix_power_negative": lambda a: jnp.linalg.matrix_power(a, -2),
    "cond": jnp.linalg.cond,
    "tensorinv": lambda a: jnp.linalg.tensorinv(jnp.reshape(a, (3, 3)), ind=1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(_SQUARE))
def test_jnp_linalg_square_functions(x64, dtype, name):
    a = _well_conditioned((3, 3), dtype, 22)
    check_grads(_SQUARE[name], (a,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jnp_linalg_hermitian_functions(x64, dtype):
    a = _positive_definite((3, 3), dtype, 23)
    check_grads(jnp.linalg.cholesky, (a,), order=2)
    check_grads(lambda a: jnp.linalg.cholesky(a, upper=True), (a,), order=1)
    check_grads(lambda a: jnp.linalg.eigh(a).eigenvalues, (a,), order=2)
    check_grads(jnp.linalg.eigvalsh, (a,), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jnp_linalg_solve_in_both_arguments(x64, dtype):
    a = _well_conditioned((2, 3, 3), dtype, 24)
    check_grads(jnp.linalg.solve, (a, _rand((2, 3, 2), dtype, 25)), order=2)
    check_grads(jnp.linalg.solve, (a[0], _rand((3,), dtype, 26)), order=1)
    check_grads(lambda a, b: jnp.linalg.tensorsolve(a, b), (a[0], _rand((3,), dtype, 27)), order=1)


_RECTANGULAR = {
    "svd": lambda a: jnp.linalg.svd(a, full_matrices=False).S,
    "svdvals": jnp.linalg.svdvals,
    "qr": lambda a: tuple(jnp.linalg.qr(a)),
    "qr_complete": lambda a: tuple(jnp.linalg.qr(a, mode="complete")),
    "qr_r": lambda a: jnp.linalg.qr(a, mode="r"),
    "pinv": jnp.linalg.pinv,
    "norm_fro": jnp.linalg.norm,
    "norm_nuc": lambda a: jnp.linalg.norm(a, "nuc"),
    "norm_2": lambda a: jnp.linalg.norm(a, 2),
    "norm_-2": lambda a: jnp.linalg.norm(a, -2),
    "norm_1": lambda a: jnp.linalg.norm(a, 1),
    "norm_inf": lambda a: jnp.linalg.norm(a, np.inf),
    "norm_vector": lambda a: jnp.linalg.norm(a, 3, axis=0),
    "matrix_norm": lambda a: jnp.linalg.matrix_norm(a, ord=2),
    "vector_norm": lambda a: jnp.linalg.vector_norm(a),
    "cond_rect": jnp.linalg.cond,
    "multi_dot": lambda a: jnp.linalg.multi_dot([a, a.T, a]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(_RECTANGULAR))
def test_jnp_linalg_rectangular_functions(x64, dtype, name):
    a = _rand((4, 3), dtype, 28)
    check_grads(_RECTANGULAR[name], (a,), order=2 if name != "multi_dot" else 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jnp_linalg_lstsq(x64, dtype):
    a, b = _rand((4, 3), dtype, 29), _rand((4, 2), dtype, 30)
    check_grads(lambda a, b: jnp.linalg.lstsq(a, b)[0], (a, b), order=2)


# --- values: the seeds' example, JAX as the oracle, jit against eager -----------------------


def test_spectral_radius_gradient_from_the_seeds():
    a = np.array([[1.0, -1.0], [1.0, 1.0]], np.float32)
    g = jax.grad(lambda a: jnp.max(jnp.abs(jnp.linalg.eigvals(a))))(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [[0.3536, -0.3536], [0.3536, 0.3536]], atol=1e-4)


_ORACLE = {
    "det": (lambda np_, a: np_.linalg.det(a), "general"),
    "slogdet": (lambda np_, a: np_.linalg.slogdet(a)[1], "general"),
    "inv": (lambda np_, a: np_.sum(np_.sin(np_.linalg.inv(a))), "general"),
    "solve": (lambda np_, a: np_.sum(np_.cos(np_.linalg.solve(a, a[:, :2] * 2.0))), "general"),
    "cholesky": (lambda np_, a: np_.sum(np_.sin(np_.linalg.cholesky(a))), "spd"),
    "eigh": (lambda np_, a: np_.sum(np_.linalg.eigh(a)[0] ** 3) + np_.sum(np_.linalg.eigh(a)[1] ** 4), "spd"),
    "eigvals": (lambda np_, a: np_.sum(np_.abs(np_.linalg.eigvals(a)) ** 2), "general"),
    "svd": (lambda np_, a: np_.sum(np_.linalg.svd(a, full_matrices=False)[0] ** 4) + np_.sum(np_.linalg.svd(a)[1]), "general"),
    "qr": (lambda np_, a: np_.sum(np_.sin(np_.linalg.qr(a)[0])) + np_.sum(np_.linalg.qr(a)[1] ** 2), "general"),
    "pinv": (lambda np_, a: np_.sum(np_.linalg.pinv(a[:, :3]) ** 2), "general"),
    # phase-invariant functions of the vectors, so complex matrices compare too
    "eigh_moduli": (lambda np_, a: np_.sum(np_.abs(np_.linalg.eigh(a)[1]) ** 2 * np_.arange(4.0)), "spd"),
    "svd_moduli": (lambda np_, a: np_.sum(np_.abs(np_.linalg.svd(a)[0]) ** 2 * np_.arange(4.0)), "general"),
    "norm_2": (lambda np_, a: np_.linalg.norm(a, 2), "general"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(_ORACLE))
def test_gradients_equal_jax(x64, dtype, name):
    jax_ref = pytest.importorskip("jax")
    jax_ref.config.update("jax_enable_x64", True)
    f, kind = _ORACLE[name]
    if dtype == np.complex128 and name in ("eigh", "svd"):
        pytest.skip("the phases of complex eigen/singular vectors are arbitrary (LAPACK's choice)")
    a = _positive_definite((4, 4), dtype, 31) if kind == "spd" else _well_conditioned((4, 4), dtype, 32)

    def loss(np_):
        # grad needs a real output: the real part of complex ones (JAX's convention)
        return lambda a: np_.real(np_.sum(f(np_, a)))

    ours = jax.grad(loss(jnp))(a)
    theirs = jax_ref.grad(loss(jax_ref.numpy))(a)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-8, atol=1e-10)


def test_jitted_eigh_and_svd_gradient_equals_eager(x64):
    a = _positive_definite((2, 3, 3), np.float64, 33)

    def f(a):
        w, v = jnp.linalg.eigh(a)
        return jnp.sum(w ** 2) + jnp.sum(v[..., 0] ** 4) + jnp.sum(jnp.linalg.svdvals(a) ** 3)

    eager = jax.grad(f)(a)
    jitted = jax.jit(jax.grad(f))(a)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-12, atol=1e-12)


def test_jitted_gradient_through_lu_and_triangular_solves_equals_eager():
    # the spectral radius: eig's derivative solves with the eigenvectors (LU + two solves)
    a = np.array([[1.0, -1.0], [1.0, 1.0]], np.float32)
    f = jax.grad(lambda a: jnp.max(jnp.abs(jnp.linalg.eigvals(a))))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(a)), np.asarray(f(a)), rtol=1e-6)


def test_derivative_program_marks_adjoint_lines(x64):
    a = _well_conditioned((3, 3), np.float64, 34)
    text = str(jax.make_jaxpr(jax.grad(lambda a: jnp.linalg.slogdet(a)[1]))(a))
    assert "triangular_solve(" in text and "(vjp)" in text


@pytest.mark.parametrize("dtype,wide", [(np.float32, np.float64), (np.complex64, np.complex128)])
def test_single_precision_gradients_keep_their_dtype(dtype, wide):
    a = _well_conditioned((3, 3), wide, 35)

    def loss(a):
        s = jnp.linalg.svd(a, compute_uv=False)
        return jnp.real(jnp.sum(jnp.linalg.inv(a)) + jnp.linalg.slogdet(a)[1] + jnp.sum(s ** 2) + jnp.sum(jnp.linalg.qr(a)[1]))

    old = jax.config.read("jax_enable_x64")
    try:
        jax.config.update("jax_enable_x64", False)
        g32 = jax.grad(loss)(a.astype(dtype))
        jax.config.update("jax_enable_x64", True)
        g64 = jax.grad(loss)(a)
    finally:
        jax.config.update("jax_enable_x64", old)
    assert g32.dtype == dtype
    np.testing.assert_allclose(np.asarray(g32), np.asarray(g64), rtol=1e-4, atol=1e-4)
