"""The CUDA eig kernel under Numba's CUDA simulator: no host round trip; eigenvalues equal the
CPU backend's (LAPACK) as multisets (the kernel's order is its own); right eigenvectors
satisfy A v = w v, left ones u^H A = w u^H (JAX's definition), all of unit norm with their
largest component real and positive, and equal the CPU's up to a unit phase where the
eigenvalue is simple; NaN and inf give NaN, as on the CPU; dtypes and shapes as on the CPU."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen.cuda import eig_device, runtime
from omnistage.core.array import GpuArray
from omnistage.lax import linalg as lax_linalg

pytestmark = pytest.mark.skipif(not runtime.is_usable(), reason="neither a GPU nor Numba's CUDA simulator is usable")


def _run(f, *args, backend):
    out = omnistage.jit(f, backend=backend)(*args)
    return [np.asarray(o) for o in omnistage.tree_util.tree_leaves(out)]


def _source(f, *args):
    return omnistage.jit(f, backend="cuda").lower(*args).compile().as_text()


def _eig_fn(left, right):
    return lambda x: lax_linalg.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)


def _eig_both(a, left=True, right=True):
    """(cuda [w, vl?, vr?], cpu [w, vl?, vr?]) as host arrays, checked to agree in dtype and shape."""
    f = _eig_fn(left, right)
    got, want = _run(f, a, backend="cuda"), _run(f, a, backend="cpu")
    assert [(g.dtype, g.shape) for g in got] == [(w.dtype, w.shape) for w in want]
    return got, want


def _tol(dtype):
    return 5e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def _matrix(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _matches(got, want, tol):
    """Index into `got` of each value of `want` (the nearest not yet taken), all within tol."""
    taken = []
    for x in want:
        dist = np.abs(got - x)
        dist[taken] = np.inf
        taken.append(int(np.argmin(dist)))
        assert dist[taken[-1]] <= tol, (got, want)
    return taken


def _unit_columns_largest_real(v, tol):
    """Unit 2-norm columns whose first largest-magnitude component is real and positive."""
    np.testing.assert_allclose(np.linalg.norm(v.astype(np.complex128), axis=-2), 1.0, atol=tol)
    at = np.argmax(np.abs(v), axis=-2)
    big = np.take_along_axis(v, at[..., None, :], axis=-2)
    assert np.all(big.imag == 0) and np.all(big.real > 0)


def _same_up_to_phase(v, v_cpu, tol):
    """Columns of v equal v_cpu's times a unit phase (|<v, v_cpu>| = 1)."""
    inner = np.abs(np.sum(np.conj(v.astype(np.complex128)) * v_cpu, axis=-2))
    np.testing.assert_allclose(inner, 1.0, atol=tol)


def _check_eig(a, left=True, right=True, simple=True, tol=None):
    """The kernel's eig of a (..., n, n) against the CPU's and against its definitions; returns
    the kernel's [w, vl?, vr?]. `simple`: the eigenvalues are well separated, so that the
    vectors are unique up to phase and comparable with the CPU's."""
    got, want = _eig_both(a, left, right)
    tol = tol or _tol(a.dtype)
    n = a.shape[-1]
    w, w_cpu = got[0], want[0]
    vl, vl_cpu = (got[1], want[1]) if left else (None, None)
    vr, vr_cpu = (got[-1], want[-1]) if right else (None, None)
    nb = int(np.prod(a.shape[:-2], dtype=np.int64))
    a64 = a.astype(np.complex128).reshape((nb, n, n))
    for b in range(nb if n else 0):
        m = a64[b]
        if not np.all(np.isfinite(m)):
            assert all(np.isnan(g.reshape((nb,) + g.shape[a.ndim - 2:])[b]).all() for g in got)
            continue
        scale = float(np.abs(m).max()) or 1.0
        wb, wb_cpu = w.reshape(nb, n)[b], w_cpu.reshape(nb, n)[b]
        order = _matches(wb, wb_cpu, 10 * tol * scale)
        if right:
            v = vr.reshape(nb, n, n)[b].astype(np.complex128)
            np.testing.assert_allclose(m @ v, v * wb, atol=10 * n * tol * scale)
            _unit_columns_largest_real(v, 10 * tol)
            if simple:
                _same_up_to_phase(v[:, order], vr_cpu.reshape(nb, n, n)[b], 10 * tol)
        if left:
            u = vl.reshape(nb, n, n)[b].astype(np.complex128)
            np.testing.assert_allclose(np.conj(u.T) @ m, wb[:, None] * np.conj(u.T), atol=10 * n * tol * scale)
            _unit_columns_largest_real(u, 10 * tol)
            if simple:
                _same_up_to_phase(u[:, order], vl_cpu.reshape(nb, n, n)[b], 10 * tol)
    return got


# --- no host round trip --------------------------------------------------------------------------

_ROUND_TRIP_CASES = [
    ("eig", lambda x: lax_linalg.eig(x), (2, 3, 3)),
    ("eig, right vectors", lambda x: jnp.linalg.eig(x), (4, 4)),
    ("eigvals", lambda x: jnp.linalg.eigvals(x), (2, 2, 5, 5)),
    ("eig, left vectors", _eig_fn(True, False), (3, 3)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("name,f,shape", _ROUND_TRIP_CASES, ids=[c[0] for c in _ROUND_TRIP_CASES])
def test_no_host_round_trip(name, f, shape, dtype):
    text = _source(f, _matrix(shape, dtype))
    assert "runs on the host" not in text and "host_call" not in text
    # one kernel launch: copy in as float64 (real, imaginary) parts, decompose, round out
    assert "_ed.schur(" in text and text.count("one thread per matrix") == 1


def test_eig_copies_nothing_to_the_host(count_host_copies):
    x = omnistage.device_put(_matrix((2, 4, 4), np.float32, seed=1), "gpu")
    f = omnistage.jit(lambda v: (lax_linalg.eig(v), jnp.linalg.eigvals(v.astype(jnp.complex64))), backend="cuda")
    f(x)  # compiled before counting
    copies = count_host_copies()
    outs = omnistage.tree_util.tree_leaves(f(x))
    assert copies == [] and len(outs) == 4 and all(isinstance(o, GpuArray) for o in outs)


# --- values and vectors --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (6, 6), (2, 1, 2, 2)])
def test_eig_matches_the_cpu_backend(shape, dtype):
    _check_eig(_matrix(shape, dtype, seed=sum(shape)))


@pytest.mark.parametrize("left,right", [(False, False), (True, False), (False, True)])
def test_eig_flags(left, right):
    got = _check_eig(_matrix((2, 4, 4), np.complex64, seed=2), left, right)
    assert len(got) == 1 + left + right


def test_eig_float64_and_complex128(x64):
    for dtype in (np.float64, np.complex128):
        got = _check_eig(_matrix((3, 5, 5), dtype, seed=3))
        assert got[0].dtype == np.complex128


def test_real_matrices_have_conjugate_pairs():
    rotation = np.array([[0.0, -2.0], [2.0, 0.0]], np.float32)  # eigenvalues +-2i
    a = np.zeros((4, 4), np.float32)
    a[:2, :2], a[2:, 2:] = rotation, [[1.0, 3.0], [-3.0, 1.0]]  # and 1 +- 3i
    w = _check_eig(a)[0]
    _matches(w, np.array([2j, -2j, 1 + 3j, 1 - 3j]), 1e-5)
    w = _check_eig(_matrix((7, 7), np.float32, seed=5))[0]
    assert np.any(np.abs(w.imag) > 0.1)  # a random real matrix with complex eigenvalues
    _matches(w, np.conj(w), 1e-4)  # closed under conjugation


def test_repeated_eigenvalues():
    # diagonalizable with a double eigenvalue: vectors are a basis of its eigenspace, not unique
    q = np.linalg.qr(_matrix((4, 4), np.float64, seed=6))[0]
    a = (q @ np.diag([2.0, 2.0, -1.0, 0.5]) @ np.linalg.inv(q)).astype(np.float32)
    w, vl, vr = _check_eig(a, simple=False)
    _matches(w, np.array([2.0, 2.0, -1.0, 0.5]), 1e-4)
    assert abs(np.linalg.det(vr.astype(np.complex128))) > 0.1  # independent vectors for the double one
    w, _, vr = _check_eig(np.eye(3, dtype=np.float32) * 3, simple=False)
    np.testing.assert_array_equal(w, [3, 3, 3])
    np.testing.assert_array_equal(vr, np.eye(3))
    # defective: one eigenvector, right vectors nearly parallel (as LAPACK's are)
    w, vr = _check_eig(np.array([[1.0, 1.0], [0.0, 1.0]], np.float32), left=False, simple=False)
    np.testing.assert_array_equal(w, [1, 1])
    assert np.allclose(np.abs(vr[0]), 1, atol=1e-6)


def test_diagonal_and_triangular_matrices():
    d = np.diag(np.array([3.0, -1.0, 0.5, 2.0], np.float32))
    w, vl, vr = _check_eig(d)
    _matches(w, np.diag(d).astype(np.complex64), 0)  # exact: nothing to iterate
    order = np.argmax(np.abs(vr), axis=0)
    np.testing.assert_array_equal(vr, np.eye(4)[:, order])  # unit vectors, each with its value
    np.testing.assert_array_equal(w, np.diag(d)[order])
    for dtype in (np.float32, np.complex64):
        upper = np.triu(_matrix((5, 5), dtype, seed=7))
        w = _check_eig(upper)[0]
        _matches(w, np.diag(upper), 1e-6)
        _check_eig(np.ascontiguousarray(upper.T))


def test_one_by_one_and_empty_matrices():
    w, vl, vr = _check_eig(np.array([[[-2.5]], [[4.0]]], np.float32))
    np.testing.assert_array_equal(w, [[-2.5], [4.0]])
    assert np.all(vl == 1) and np.all(vr == 1)
    for shape in [(0, 0), (2, 0, 0), (0, 3, 3), (3, 0, 2, 2)]:
        for left, right in [(True, True), (False, False)]:
            got = _check_eig(np.zeros(shape, np.float32), left, right)
            assert all(g.size == 0 for g in got)


def test_nan_and_inf_give_nan():
    a = _matrix((3, 3, 3), np.float32, seed=8)
    a[0, 1, 2] = np.nan
    a[2, 0, 0] = np.inf
    got = _check_eig(a)
    for g in got:
        assert np.isnan(g[0]).all() and np.isnan(g[2]).all() and not np.isnan(g[1]).any()
    z = _matrix((2, 2), np.complex64, seed=9)
    z[1, 1] = complex(0, np.nan)
    assert all(np.isnan(g).all() for g in _check_eig(z))


@pytest.mark.skipif(not eig_device.SIMULATED, reason="patches a device routine, which needs the simulator")
def test_iteration_is_bounded_and_failure_gives_nan(monkeypatch):
    # unshifted QR iteration makes no progress on a cyclic permutation (it is its own Q): the
    # kernel gives up after its iteration bound and writes NaN, as the CPU path does where
    # LAPACK fails; a diagonal matrix in the same batch needs no iteration
    monkeypatch.setattr(eig_device, "_shift", lambda hr, hi, i, its: (0.0, 0.0))
    a = np.stack([np.roll(np.eye(4, dtype=np.float32), 1, axis=0), np.diag(np.arange(4.0, dtype=np.float32))])
    got = _run(lambda x: lax_linalg.eig(x), a, backend="cuda")
    assert all(np.isnan(g[0]).all() and not np.isnan(g[1]).any() for g in got)
    np.testing.assert_array_equal(got[0][1], [0, 1, 2, 3])  # a triangular matrix: its diagonal, in order


def test_scaled_matrices(x64):
    # the kernel scales by a power of two: tiny and huge matrices keep their accuracy (against
    # NumPy: the CPU backend's LAPACK binding loses digits at these scales)
    a = _matrix((4, 4), np.float64, seed=10)
    for factor in (1e-150, 1e150):
        w, vr = _run(_eig_fn(False, True), a * factor, backend="cuda")
        _matches(w / factor, np.linalg.eigvals(a), 1e-12)
        np.testing.assert_allclose(a @ vr, vr * (w / factor), atol=1e-12)


def test_badly_scaled_matrices_are_balanced(x64):
    # D a D^-1 with D spanning 2**+-30: without zgebal's balancing the small eigenvalues lose
    # most of their digits (relative error ~1e2 in this family); with it they match LAPACK's
    rng = np.random.default_rng(11)
    d = 2.0 ** rng.integers(-30, 30, (3, 6))
    a = d[:, :, None] * _matrix((3, 6, 6), np.float64, seed=11) / d[:, None, :]
    w, vl, vr = _check_eig(a)
    for b in range(3):
        want = np.linalg.eigvals(a[b])
        got = w[b][_matches(w[b], want, np.inf)]
        np.testing.assert_allclose(got, want, rtol=1e-11)


@settings(max_examples=12, deadline=None)
@given(batch=st.lists(st.integers(0, 2), max_size=2), n=st.integers(0, 5),
       complex_input=st.booleans(), flags=st.sampled_from([(True, True), (False, True), (False, False)]),
       seed=st.integers(0, 2**16))
def test_eig_matches_over_shapes(batch, n, complex_input, flags, seed):
    a = _matrix(tuple(batch) + (n, n), np.complex64 if complex_input else np.float32, seed)
    _check_eig(a, *flags)
