"""The CUDA qr, eigh and svd kernels under Numba's CUDA simulator, real and complex: no host
round trip, results of the CPU backend (LAPACK in float64/complex128, rounded) to tolerance.
QR's signs and phases are LAPACK's and compared directly; eigenvectors and singular vector
pairs are compared up to sign, for complex operands up to a unit complex phase (the only
freedom where the values are distinct; u_k and v_k share theirs), plus reconstruction and
orthogonality."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen.cuda import runtime
from omnistage.core.array import GpuArray
from omnistage.lax import linalg as lax_linalg

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


def _run(f, *args, backend):
    out = omnistage.jit(f, backend=backend)(*args)
    return [np.asarray(o) for o in omnistage.tree_util.tree_leaves(out)]


def _both(f, *args):
    """(cuda results, cpu results) as host arrays, with equal dtypes and shapes."""
    got, want = _run(f, *args, backend="cuda"), _run(f, *args, backend="cpu")
    assert [(g.dtype, g.shape) for g in got] == [(w.dtype, w.shape) for w in want]
    return got, want


def _source(f, *args):
    return omnistage.jit(f, backend="cuda").lower(*args).compile().as_text()


def _tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def _close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(got, want, rtol=_tol(dtype), atol=_tol(dtype) * scale, equal_nan=True)


def _h(x):
    """The conjugate transpose of the last two axes."""
    return np.conj(np.swapaxes(x, -1, -2))


def _columns_up_to_phase(got, want, dtype, axis=-1):
    """Columns (axis=-1) or conjugated rows (axis=-2) of got equal want's, each times a unit
    number (a sign for real ones): |<want_k, got_k>| = 1; returns <want_k, got_k>."""
    if axis == -2:
        got, want = _h(got), _h(want)
    dots = np.sum(np.conj(want).astype(np.complex128) * got, axis=-2, keepdims=True)
    np.testing.assert_allclose(np.abs(dots), 1.0, atol=10 * _tol(dtype))
    phase = dots / np.abs(dots)
    _close(got, (want * (phase if np.dtype(dtype).kind == "c" else phase.real)).astype(got.dtype), dtype)
    return dots[..., 0, :]


def _orthonormal_columns(q, dtype):
    k = q.shape[-1]
    gram = _h(q).astype(np.complex128) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(k), gram.shape), atol=10 * _tol(dtype))


def _matrix(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _symmetric(shape, dtype=np.float32, seed=0):
    """Symmetric, or Hermitian for a complex dtype."""
    a = _matrix(shape, np.complex128 if np.dtype(dtype).kind == "c" else np.float64, seed)
    return ((a + _h(a)) / 2).astype(dtype)


# --- no host round trip, real or complex ------------------------------------------------------

_ROUND_TRIP_CASES = [
    ("qr", lambda x: jnp.linalg.qr(x, mode="complete"), (4, 3)),
    ("qr", lambda x: jnp.linalg.qr(x), (2, 3, 5)),
    ("eigh", lambda x: jnp.linalg.eigh(x), (2, 3, 3)),
    ("svd", lambda x: jnp.linalg.svd(x), (3, 5)),
    ("svd", lambda x: jnp.linalg.svd(x, compute_uv=False), (5, 3)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("prim,f,shape", _ROUND_TRIP_CASES)
def test_no_host_round_trip(prim, f, shape, dtype):
    text = _source(f, _matrix(shape, dtype))
    assert "runs on the host" not in text and "host_call" not in text
    # one kernel launch per decomposition: copy in, decompose, round out; complex operands
    # call the complex routines on complex128 scratch
    routines, scratch = ("_dz.", "np.complex128") if dtype == np.complex64 else ("_dd.", "np.float64")
    assert routines in text and text.count("one thread per matrix") == 1
    assert f"{scratch})  # " in text and ("_dd." not in text if dtype == np.complex64 else "_dz." not in text)


def test_complex_decompositions_copy_nothing_to_the_host(count_host_copies):
    x = omnistage.device_put(_matrix((2, 4, 3), np.complex64, seed=16), "gpu")
    f = omnistage.jit(lambda v: (jnp.linalg.qr(v), jnp.linalg.svd(v), jnp.linalg.svd(v, compute_uv=False),
                                 jnp.linalg.eigh(v[..., :3, :])), backend="cuda")
    f(x)  # compiled before counting
    copies = count_host_copies()
    outs = omnistage.tree_util.tree_leaves(f(x))
    assert copies == [] and len(outs) == 8 and all(isinstance(o, GpuArray) for o in outs)


# --- qr ---------------------------------------------------------------------------------------


def _check_qr(a, mode):
    got, want = _both(lambda x: jnp.linalg.qr(x, mode=mode), a)
    scale = max(1.0, float(np.abs(a).max())) if a.size else 1.0
    for g, w in zip(got, want):
        _close(g, w, a.dtype, scale)  # LAPACK's signs: compared directly
    q, r = got
    if a.size:
        _orthonormal_columns(q, a.dtype)
        np.testing.assert_allclose(q.astype(np.complex128) @ r, a, atol=10 * _tol(a.dtype) * scale)
        assert np.all(np.tril(r, -1) == 0)
        assert np.all(np.diagonal(r, axis1=-2, axis2=-1).imag == 0)  # zlarfg's beta is real
    return q, r


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 6, 2), (1, 1), (1, 4), (4, 1)])
@pytest.mark.parametrize("mode", ["complete", "reduced"])
def test_qr_matches_the_cpu_backend(shape, mode):
    _check_qr(_matrix(shape, seed=sum(shape)), mode)


def test_qr_float64(x64):
    for shape in [(6, 4), (4, 6), (3, 3, 3)]:
        _check_qr(_matrix(shape, np.float64, seed=1), "complete")


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4, 2), (1, 1), (1, 4), (4, 1)])
@pytest.mark.parametrize("mode", ["complete", "reduced"])
def test_complex_qr_matches_the_cpu_backend(shape, mode):
    """zgeqrf/zungqr's conventions: Q and R themselves equal the CPU's, not up to phases."""
    _check_qr(_matrix(shape, np.complex64, seed=sum(shape)), mode)


def test_complex_qr_complex128_and_columns_already_reduced(x64):
    for shape in [(6, 4), (4, 6), (2, 3, 3)]:
        _check_qr(_matrix(shape, np.complex128, seed=1), "complete")
    # zlarfg: a complex diagonal entry over zeros is still reflected (to make R's diagonal
    # real); a real one over zeros is left alone (tau = 0), a negative one stays negative
    a = np.array([[1 + 2j, 3, 1j], [0, -2, 1 - 1j], [0, 0, 4j]], np.complex128)
    q, r = _check_qr(a, "complete")
    np.testing.assert_allclose(np.abs(np.diagonal(r)), [np.sqrt(5), 2, 4], rtol=1e-14)
    assert r[1, 1] == -2
    _check_qr(np.zeros((3, 2), np.complex128), "reduced")


def test_qr_rank_deficient_and_zero_columns():
    a = _matrix((5, 4), seed=3)
    a[:, 1] = 0
    a[:, 3] = 0
    q, r = _check_qr(a, "complete")
    assert r[1, 1] == 0 and r[3, 3] == 0  # dlarfg's tau = 0: nothing reflected
    _check_qr(np.zeros((3, 2), np.float32), "complete")


def test_qr_of_empty_and_nan_matrices():
    for dtype in (np.float32, np.complex64):
        for shape in [(0, 3), (3, 0), (0, 3, 3), (2, 0, 0)]:
            for mode in ("complete", "reduced"):
                _check_qr(np.zeros(shape, dtype), mode)
    for dtype, bad in ((np.float32, np.nan), (np.complex64, complex(1, np.inf))):
        a = _matrix((2, 3, 3), dtype)
        a[1, 0, 2] = bad
        got, want = _both(lambda x: jnp.linalg.qr(x), a)
        for g, w in zip(got, want):
            assert np.isnan(g[1]).all() and not np.isnan(g[0]).any()
            _close(g, w, a.dtype)


# --- eigh -------------------------------------------------------------------------------------


def _check_eigh(a, lower=True, symmetrize=True, distinct=True):
    f = lambda x: lax_linalg.eigh(x, lower=lower, symmetrize_input=symmetrize)  # noqa: E731
    (v, w), (v_cpu, w_cpu) = _both(f, a)
    scale = max(1.0, float(np.abs(a).max()))
    _close(w, w_cpu, a.dtype, scale)
    assert np.all(np.diff(w, axis=-1) >= 0)  # ascending
    assert w.dtype == np.zeros(0, a.dtype).real.dtype  # real eigenvalues, float32 for complex64
    _orthonormal_columns(v, a.dtype)
    recon = (v.astype(np.complex128) * w[..., None, :]) @ _h(v)
    np.testing.assert_allclose(recon, (v_cpu.astype(np.complex128) * w_cpu[..., None, :]) @ _h(v_cpu),
                               atol=20 * _tol(a.dtype) * scale)
    if distinct:
        _columns_up_to_phase(v, v_cpu, a.dtype)
    return v, w


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 4, 4)])
def test_eigh_matches_the_cpu_backend(shape):
    _check_eigh(_symmetric(shape, seed=shape[-1]))


def test_eigh_float64(x64):
    _check_eigh(_symmetric((2, 6, 6), np.float64, seed=4))


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 4, 4)])
def test_hermitian_eigh_matches_the_cpu_backend(shape):
    a = _symmetric(shape, np.complex64, seed=shape[-1])
    v, w = _check_eigh(a)
    np.testing.assert_allclose((v.astype(np.complex128) * w[..., None, :]) @ _h(v), a, atol=1e-4)


def test_hermitian_eigh_complex128(x64):
    _check_eigh(_symmetric((2, 6, 6), np.complex128, seed=4))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_reads_the_triangle_lower_names(lower, dtype):
    # not Hermitian, a complex diagonal: the other triangle and the diagonal's imaginary part
    # must be ignored (zheevd reads the real part of the diagonal only)
    a = _matrix((2, 4, 4), dtype, seed=5)
    v, w = _check_eigh(a, lower=lower, symmetrize=False)
    tri = np.tril(a, -1) if lower else np.triu(a, 1)
    sym = tri + _h(tri) + np.eye(4) * np.diagonal(a, axis1=-2, axis2=-1).real[..., None, :]
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sym), rtol=1e-5, atol=1e-5)


def test_eigh_repeated_eigenvalues_and_the_identity():
    q = np.linalg.qr(_matrix((4, 4), np.float64, seed=6))[0]
    a = (q * np.array([1.0, 1.0, 1.0, 3.0])) @ q.T
    _check_eigh(a.astype(np.float32), distinct=False)
    v, w = _check_eigh(np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(v, np.eye(3))
    np.testing.assert_array_equal(w, np.ones(3))
    v, w = _check_eigh(np.zeros((3, 3), np.float32), distinct=False)
    np.testing.assert_array_equal(w, np.zeros(3))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigh_eigenvectors_have_their_largest_component_positive(dtype):
    v, _ = _check_eigh(_symmetric((3, 5, 5), dtype, seed=7))
    cols = np.swapaxes(v, -1, -2).reshape(-1, 5)
    largest = cols[np.arange(len(cols)), np.argmax(np.abs(cols), axis=1)]
    assert np.all(largest.real > 0) and np.all(largest.imag == 0)  # real and positive


def test_hermitian_eigh_repeated_eigenvalues():
    q = np.linalg.qr(_matrix((4, 4), np.complex128, seed=6))[0]
    a = (q * np.array([-1.0, 2.0, 2.0, 2.0])) @ _h(q)
    _check_eigh(a.astype(np.complex64), distinct=False)
    v, w = _check_eigh(np.eye(3, dtype=np.complex64))
    np.testing.assert_array_equal(v, np.eye(3))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigh_of_nan_and_empty_matrices(dtype):
    a = _symmetric((3, 3, 3), dtype, seed=8)
    a[0, 1, 1] = np.nan
    # the upper triangle, which lower=True does not read (for complex its imaginary part
    # only): NaN all the same
    a[2, 0, 2] = complex(1, np.inf) if dtype == np.complex64 else np.inf
    (v, w), (v_cpu, w_cpu) = _both(lambda x: lax_linalg.eigh(x, symmetrize_input=False), a)
    for g, c in ((v, v_cpu), (w, w_cpu)):
        assert np.isnan(g[0]).all() and np.isnan(g[2]).all() and not np.isnan(g[1]).any()
        assert np.array_equal(np.isnan(g), np.isnan(c))
    for shape in [(0, 0), (0, 3, 3)]:
        got, want = _both(lambda x: jnp.linalg.eigh(x), np.zeros(shape, dtype))
        assert all(g.size == 0 for g in got)


# --- svd ------------------------------------------------------------------------------------


def _check_svd(a, full_matrices=True, distinct=True):
    f = lambda x: jnp.linalg.svd(x, full_matrices=full_matrices)  # noqa: E731
    (u, s, vh), (u_cpu, s_cpu, vh_cpu) = _both(f, a)
    scale = max(1.0, float(np.abs(a).max())) if a.size else 1.0
    _close(s, s_cpu, a.dtype, scale)
    assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)
    if not a.size:
        _close(u, u_cpu, a.dtype)
        _close(vh, vh_cpu, a.dtype)
        return u, s, vh
    assert s.dtype == np.zeros(0, a.dtype).real.dtype
    _orthonormal_columns(u, a.dtype)
    _orthonormal_columns(_h(vh), a.dtype)
    k = s.shape[-1]
    recon = (u[..., :, :k].astype(np.complex128) * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(recon, a, atol=20 * _tol(a.dtype) * scale)
    if distinct:
        u_phase = _columns_up_to_phase(u[..., :, :k], u_cpu[..., :, :k], a.dtype)
        v_phase = _columns_up_to_phase(vh[..., :k, :], vh_cpu[..., :k, :], a.dtype, axis=-2)
        np.testing.assert_allclose(u_phase, v_phase, atol=10 * _tol(a.dtype))  # one phase per pair
    return u, s, vh


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4, 2), (1, 3), (3, 1)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_matches_the_cpu_backend(shape, full_matrices):
    _check_svd(_matrix(shape, seed=sum(shape)), full_matrices)


def test_svd_float64(x64):
    for shape in [(6, 4), (4, 6)]:
        _check_svd(_matrix(shape, np.float64, seed=2))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4, 2), (1, 3), (3, 1)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_complex_svd_matches_the_cpu_backend(shape, full_matrices):
    _check_svd(_matrix(shape, np.complex64, seed=sum(shape)), full_matrices)


def test_complex_svd_complex128(x64):
    for shape in [(6, 4), (4, 6), (2, 3, 3)]:
        _check_svd(_matrix(shape, np.complex128, seed=2))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_singular_values_alone(shape, dtype):
    a = _matrix((2,) + shape, dtype, seed=9)
    (s,), (s_cpu,) = _both(lambda x: jnp.linalg.svd(x, compute_uv=False), a)
    _close(s, s_cpu, a.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(5, 4), (4, 5)])
def test_svd_rank_deficient_completes_orthonormal_bases(shape, dtype):
    wide = np.complex128 if dtype == np.complex64 else np.float64
    a = _matrix(shape[:1] + (2,), wide, seed=10) @ _matrix((2,) + shape[1:], wide, seed=11)
    u, s, vh = _check_svd(a.astype(dtype), distinct=False)
    assert s[2:].max() < 1e-5 * s[0]
    u, s, vh = _check_svd(np.zeros(shape, dtype), distinct=False)
    np.testing.assert_array_equal(u, np.eye(shape[0]))  # LAPACK's identities
    np.testing.assert_array_equal(vh, np.eye(shape[1]))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_svd_of_nan_and_empty_matrices(dtype):
    for shape in [(2, 4, 3), (2, 3, 4)]:
        a = _matrix(shape, dtype, seed=12)
        a[1, 2, 0] = complex(0, np.nan) if dtype == np.complex64 else np.nan
        got, want = _both(lambda x: jnp.linalg.svd(x), a)
        for g, w in zip(got, want):
            assert np.isnan(g[1]).all() and not np.isnan(g[0]).any()
            assert np.array_equal(np.isnan(g), np.isnan(w))
    for shape in [(0, 3), (3, 0), (0, 2, 2)]:
        for full in (True, False):
            _check_svd(np.zeros(shape, dtype), full)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e-310])
def test_huge_tiny_and_subnormal_entries(x64, scale, dtype):
    """No overflow or underflow in squares (Jacobi scales by a power of two; QR rescales a
    tiny Householder beta as dlarfg/zlarfg do)."""
    a = _matrix((4, 3), dtype, seed=15) * scale
    sym = _symmetric((3, 3), dtype, seed=15) * scale
    for f, x in [(lambda x: jnp.linalg.qr(x, mode="complete"), a),
                 (lambda x: jnp.linalg.svd(x, compute_uv=False), a), (jnp.linalg.eigvalsh, sym)]:
        got, want = _both(f, x)
        for g, w in zip(got, want):
            assert np.isfinite(g).all()
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10 * np.abs(w).max())


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_a_batch_larger_than_the_grid_uses_the_grid_stride_loop(dtype):
    a = _symmetric((40, 3, 3), dtype, seed=13)  # the simulator's grid holds 32 threads
    _check_eigh(a)
    got, want = _both(lambda x: jnp.linalg.svd(x, compute_uv=False), a)
    _close(got[0], want[0], a.dtype, 3.0)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_results_are_deterministic(dtype):
    a = _matrix((3, 4, 4), dtype, seed=14)
    f = lambda x: (jnp.linalg.svd(x), jnp.linalg.eigh(x + jnp.swapaxes(x, -1, -2)), jnp.linalg.qr(x))  # noqa: E731
    first, second = _run(f, a, backend="cuda"), _run(f, a, backend="cuda")
    assert all(x.tobytes() == y.tobytes() for x, y in zip(first, second))


# --- random small shapes ---------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(batch=st.sampled_from([(), (2,)]), m=st.integers(1, 4), n=st.integers(1, 4),
       seed=st.integers(0, 2 ** 16), zero_column=st.booleans())
def test_random_small_matrices_agree_with_numpy(batch, m, n, seed, zero_column):
    """Against NumPy's LAPACK in float64 (what the CPU backend runs): no CPU compile per shape."""
    a = _matrix(batch + (m, n), seed=seed)
    if zero_column:
        a[..., seed % n] = 0
    wide = a.astype(np.float64)
    q, r = _run(lambda x: jnp.linalg.qr(x, mode="complete"), a, backend="cuda")
    q64, r64 = np.linalg.qr(wide, mode="complete")
    _close(q, q64, a.dtype, 3.0)
    _close(r, r64, a.dtype, 3.0)
    u, s, vh = _run(lambda x: jnp.linalg.svd(x, full_matrices=False), a, backend="cuda")
    _close(s, np.linalg.svd(wide, compute_uv=False), a.dtype, 3.0)
    np.testing.assert_allclose((u.astype(np.float64) * s[..., None, :]) @ vh, wide, atol=1e-4)
    sym = _symmetric(batch + (m, m), seed=seed)
    v, w = _run(lambda x: lax_linalg.eigh(x, symmetrize_input=False), sym, backend="cuda")
    _close(w, np.linalg.eigvalsh(sym.astype(np.float64)), a.dtype, 3.0)
    _orthonormal_columns(v, a.dtype)
    np.testing.assert_allclose((v.astype(np.float64) * w[..., None, :]) @ np.swapaxes(v, -1, -2), sym, atol=1e-4)


@settings(max_examples=6, deadline=None)
@given(batch=st.sampled_from([(), (2,)]), m=st.integers(1, 4), n=st.integers(1, 4),
       seed=st.integers(0, 2 ** 16), zero_column=st.booleans())
def test_random_small_complex_matrices_agree_with_numpy(batch, m, n, seed, zero_column):
    """Complex64 against NumPy's LAPACK in complex128: Q and R directly (zgeqrf's phases), the
    values, and the vectors up to a phase per column (per singular pair)."""
    a = _matrix(batch + (m, n), np.complex64, seed=seed)
    if zero_column:
        a[..., seed % n] = 0
    wide = a.astype(np.complex128)
    q, r = _run(lambda x: jnp.linalg.qr(x, mode="complete"), a, backend="cuda")
    q128, r128 = np.linalg.qr(wide, mode="complete")
    _close(q, q128, a.dtype, 3.0)
    _close(r, r128, a.dtype, 3.0)
    u, s, vh = _run(lambda x: jnp.linalg.svd(x, full_matrices=False), a, backend="cuda")
    u128, s128, vh128 = np.linalg.svd(wide, full_matrices=False)
    _close(s, s128, a.dtype, 3.0)
    np.testing.assert_allclose((u.astype(np.complex128) * s[..., None, :]) @ vh, wide, atol=1e-4)
    distinct = np.all(np.abs(np.diff(s128, axis=-1)) > 1e-3) and np.all(s128 > 1e-3)
    if distinct:  # a zero column makes a zero singular value: its vectors are not determined
        u_phase = _columns_up_to_phase(u, u128, a.dtype)
        v_phase = _columns_up_to_phase(vh, vh128, a.dtype, axis=-2)
        np.testing.assert_allclose(u_phase, v_phase, atol=1e-3)
    herm = _symmetric(batch + (m, m), np.complex64, seed=seed)
    v, w = _run(lambda x: lax_linalg.eigh(x, symmetrize_input=False), herm, backend="cuda")
    w128, v128 = np.linalg.eigh(herm.astype(np.complex128))
    _close(w, w128, a.dtype, 3.0)
    _orthonormal_columns(v, a.dtype)
    np.testing.assert_allclose((v.astype(np.complex128) * w[..., None, :]) @ _h(v), herm, atol=1e-4)
    if np.all(np.diff(w128, axis=-1) > 1e-3):
        _columns_up_to_phase(v, v128, a.dtype)
