"""jnp.fft on the CUDA backend: cuFFT through CuPy on a real GPU, the NumPy implementation on a
host copy under the simulator; the values are numpy.fft's either way, and the driver has both."""
import numpy as np

import omnistage as jax
import omnistage.numpy as jnp


def test_fft_programs_match_numpy_and_the_driver_calls_cufft():
    x = np.random.RandomState(0).randn(4, 8).astype(np.float32)

    def f(x):
        spectrum = jnp.fft.rfft2(x)
        return jnp.fft.irfft2(spectrum * 2.0, s=(4, 8)) + jnp.abs(jnp.fft.fft(x, axis=0)).sum()

    jitted = jax.jit(f, backend="cuda")
    want = 2 * x + np.abs(np.fft.fft(x, axis=0)).sum()
    np.testing.assert_allclose(np.asarray(jitted(x)), want, rtol=1e-5, atol=1e-3)
    text = jitted.lower(x).compile().as_text()
    assert "_cufft.transform(x, 'rfftn', (4, 8), (0, 1), np.complex64)" in text
    grad = jax.jit(jax.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2)), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2))(x)), rtol=1e-4, atol=1e-4)
