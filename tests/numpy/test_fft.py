"""omnistage.numpy.fft against numpy.fft (values, dtypes, s/axes/norm), derivatives against
finite differences for every transform type (JAX's complex convention), vmap against a
loop, the Numba build calling numpy.fft inside the compiled function (rocket-fft)."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from tests.helpers import check_staged

F = jnp.fft
RS = np.random.RandomState(0)
X = RS.randn(3, 4, 6)
Z = RS.randn(3, 4, 6) + 1j * RS.randn(3, 4, 6)

# name: (our call, NumPy's call, input)
CASES = {
    "fft": (lambda a: F.fft(a), lambda a: np.fft.fft(a), Z),
    "fft_n_axis": (lambda a: F.fft(a, n=5, axis=1), lambda a: np.fft.fft(a, n=5, axis=1), Z),
    "fft_crop": (lambda a: F.fft(a, n=3, axis=0), lambda a: np.fft.fft(a, n=3, axis=0), Z),
    "ifft_ortho": (lambda a: F.ifft(a, norm="ortho"), lambda a: np.fft.ifft(a, norm="ortho"), Z),
    "fft_real_in": (lambda a: F.fft(a, norm="forward"), lambda a: np.fft.fft(a, norm="forward"), X),
    "rfft": (lambda a: F.rfft(a), lambda a: np.fft.rfft(a), X),
    "rfft_odd": (lambda a: F.rfft(a, n=5, axis=0), lambda a: np.fft.rfft(a, n=5, axis=0), X),
    "irfft": (lambda a: F.irfft(a), lambda a: np.fft.irfft(a), Z),
    "irfft_odd": (lambda a: F.irfft(a, n=7, norm="ortho"), lambda a: np.fft.irfft(a, n=7, norm="ortho"), Z),
    "hfft": (lambda a: F.hfft(a, n=9), lambda a: np.fft.hfft(a, n=9), Z),
    "ihfft": (lambda a: F.ihfft(a), lambda a: np.fft.ihfft(a), X),
    "fft2": (lambda a: F.fft2(a), lambda a: np.fft.fft2(a), Z),
    "ifft2_s": (lambda a: F.ifft2(a, s=(5, 3), axes=(0, 2)), lambda a: np.fft.ifft2(a, s=(5, 3), axes=(0, 2)), Z),
    "rfft2": (lambda a: F.rfft2(a, axes=(2, 0)), lambda a: np.fft.rfft2(a, axes=(2, 0)), X),
    "irfft2": (lambda a: F.irfft2(a, s=(4, 7)), lambda a: np.fft.irfft2(a, s=(4, 7)), Z),
    "fftn": (lambda a: F.fftn(a), lambda a: np.fft.fftn(a), Z),
    "ifftn": (lambda a: F.ifftn(a, axes=(1,)), lambda a: np.fft.ifftn(a, axes=(1,)), Z),
    "rfftn": (lambda a: F.rfftn(a, s=(2, 5)), lambda a: np.fft.rfftn(a, s=(2, 5)), X),
    "irfftn": (lambda a: F.irfftn(a, norm="forward"), lambda a: np.fft.irfftn(a, norm="forward"), Z),
    "fftn_4d": (lambda a: F.fftn(a.reshape(3, 2, 2, 6)), lambda a: np.fft.fftn(a.reshape(3, 2, 2, 6)), Z),
    "rfftn_4d": (lambda a: F.rfftn(a.reshape(3, 2, 2, 6)), lambda a: np.fft.rfftn(a.reshape(3, 2, 2, 6)), X),
    "irfftn_4d": (lambda a: F.irfftn(a.reshape(3, 2, 2, 6)), lambda a: np.fft.irfftn(a.reshape(3, 2, 2, 6)), Z),
}


@pytest.mark.parametrize("name", CASES)
def test_transforms_match_numpy_in_64_bits(name, x64):
    ours, theirs, a = CASES[name]
    got = check_staged(ours, a, rtol=1e-10, atol=1e-10)
    want = theirs(a)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "rfftn", "hfft"])
def test_32_bit_inputs_give_32_bit_results(name):
    ours, theirs, a = CASES[name]
    a32 = a.astype(np.complex64 if np.iscomplexobj(a) else np.float32)
    got = ours(a32)
    want = theirs(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64))
    assert got.dtype == (np.complex64 if np.iscomplexobj(want) else np.float32)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def _weights(shape, k):
    return np.cos(np.arange(int(np.prod(shape))) * (1.3 + k)).reshape(shape)


def _loss(f):
    """A real scalar of f's output, so grad applies to every transform type."""
    def loss(a):
        y = f(a)
        if jnp.iscomplexobj(y):
            return jnp.sum(jnp.real(y) * _weights(y.shape, 0) + jnp.imag(y) * _weights(y.shape, 1))
        return jnp.sum(y * _weights(y.shape, 2))
    return loss


@pytest.mark.parametrize("name", ["fft", "fft_n_axis", "ifft_ortho", "fft_real_in", "rfft", "rfft_odd", "irfft",
                                  "irfft_odd", "hfft", "ihfft", "irfft2", "rfftn_4d", "irfftn_4d"])
def test_gradients_match_finite_differences(name, x64):
    ours, _, a = CASES[name]
    loss = _loss(ours)
    g = np.asarray(jax.grad(loss)(a))
    eps = 1e-6
    rs = np.random.RandomState(1)
    for _ in range(4):
        i = tuple(rs.randint(d) for d in a.shape)
        e = np.zeros(a.shape)
        e[i] = eps
        d_re = (float(loss(a + e)) - float(loss(a - e))) / (2 * eps)
        np.testing.assert_allclose(g[i].real, d_re, rtol=1e-6, atol=1e-7)
        if np.iscomplexobj(a):
            # JAX's convention for a real function of complex input: grad = df/dx - i df/dy
            d_im = (float(loss(a + 1j * e)) - float(loss(a - 1j * e))) / (2 * eps)
            np.testing.assert_allclose(-g[i].imag, d_im, rtol=1e-6, atol=1e-7)


def test_jvp_is_the_transform_of_the_tangent(x64):
    t = RS.randn(3, 4, 6)
    _, tangent = jax.jvp(lambda a: F.rfft2(a), (X,), (t,))
    np.testing.assert_allclose(np.asarray(tangent), np.fft.rfft2(t), rtol=1e-12, atol=1e-12)


def test_vmap_matches_a_loop():
    xs = RS.randn(5, 4, 6).astype(np.float32)
    for f in (lambda x: F.rfft2(x), lambda x: F.fft(x, axis=0), lambda x: F.irfft(F.rfft(x), n=6)):
        batched = jax.vmap(f, in_axes=1, out_axes=2)(xs)
        want = np.stack([np.asarray(f(xs[:, i])) for i in range(4)], axis=2)
        np.testing.assert_allclose(np.asarray(batched), want, rtol=1e-5, atol=1e-5)


def test_numba_build_calls_numpy_fft_inside_the_compiled_function():
    x = RS.randn(4, 8).astype(np.float32)

    def f(x):
        return F.irfft(F.rfft(x) * 2.0, n=8) + jnp.abs(F.fft2(x)).sum()

    jitted = jax.jit(f, backend="cpu")
    np.testing.assert_allclose(np.asarray(jitted(x)), np.asarray(f(x)), rtol=1e-5, atol=1e-4)
    text = jitted.lower(x).compile().as_text()
    assert "interpreted by NumPy" not in text
    assert "np.fft.rfftn(" in text and "np.fft.irfftn(" in text and "np.fft.fftn(" in text
    power = lambda x: jnp.sum(jnp.abs(F.rfft(x)) ** 2)  # noqa: E731
    g = jax.jit(jax.grad(power), backend="cpu")(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(power)(x)), rtol=1e-4, atol=1e-4)


def test_frequencies_and_shifts_match_numpy():
    np.testing.assert_allclose(np.asarray(F.fftfreq(7, 0.5)), np.fft.fftfreq(7, 0.5), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(F.fftfreq(8)), np.fft.fftfreq(8), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(F.rfftfreq(9, 0.1)), np.fft.rfftfreq(9, 0.1), rtol=1e-6)
    assert F.fftfreq(4).dtype == np.float32
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(F.fftshift(a)), np.fft.fftshift(a))
    np.testing.assert_array_equal(np.asarray(F.ifftshift(a, axes=1)), np.fft.ifftshift(a, axes=1))
    np.testing.assert_array_equal(np.asarray(F.fftshift(a, axes=(0,))), np.fft.fftshift(a, axes=(0,)))


def test_argument_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="repeated axes"):
        F.fftn(Z, axes=(0, 0))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        F.fft2(Z, axes=(0, 1, 2))
    with pytest.raises(ValueError, match="multiple axes"):
        F.fft(Z, axis=(0, 1))
    with pytest.raises(ValueError, match="Invalid norm"):
        F.fft(Z, norm="sideways")
    with pytest.raises(ValueError, match="real valued"):
        lax.fft(Z, "rfft", (6,))


def test_lax_fft_accepts_jax_s_spellings():
    a = Z.astype(np.complex64)
    for t in ("fft", "FFT", lax.FftType.FFT, 0):
        np.testing.assert_allclose(np.asarray(lax.fft(a, t, (6,))), np.fft.fft(a), rtol=1e-5, atol=1e-5)
    assert lax.fft(a, "fft", ()) is not None
