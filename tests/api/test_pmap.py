"""pmap on one device: jit(vmap) with JAX's device-count check and collectives by name."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp


def test_pmap_with_collectives_and_axes():
    f = jax.pmap(lambda x: jax.lax.pmean(x * 2, "batch"), axis_name="batch")
    np.testing.assert_allclose(f(jnp.ones((1, 3))), 2 * np.ones((1, 3)))
    g = jax.pmap(lambda s, x: x * s, in_axes=(None, 0))
    np.testing.assert_allclose(g(3.0, jnp.ones((1, 2))), 3 * np.ones((1, 2)))
    h = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i", out_axes=None)
    np.testing.assert_allclose(h(jnp.arange(3.0).reshape(1, 3)), [0.0, 1.0, 2.0])


def test_pmap_static_broadcasted_argnums():
    f = jax.pmap(lambda n, x: x * n, static_broadcasted_argnums=0)
    np.testing.assert_allclose(f(4, jnp.ones((1, 2))), 4 * np.ones((1, 2)))


def test_pmap_rejects_more_slices_than_devices():
    n = jax.local_device_count("cpu")  # pmap maps over the default backend's devices: the CPU's
    f = jax.pmap(lambda x: x + 1)
    with pytest.raises(ValueError, match=f"requires {n + 1} logical devices, but only {n}") as info:
        f(jnp.ones((n + 1, 3)))
    message = str(info.value)  # names omnistage's devices and what to do, not XLA's
    assert "XLA" not in message and f"local_device_count('cpu') = {n}" in message and "vmap" in message
    np.testing.assert_allclose(f(jnp.ones((n, 3))), 2 * np.ones((n, 3)))


def test_pmap_of_grad_with_pmean_matches_full_batch_grad():
    def loss(w, x):
        return ((x @ w) ** 2).mean()

    w = jnp.array([0.5, -1.0])
    x = jnp.arange(8.0).reshape(4, 2)

    def step(w, xb):
        return jax.lax.pmean(jax.grad(loss)(w, xb), "b")

    g = jax.pmap(step, axis_name="b", in_axes=(None, 0), out_axes=None)(w, x.reshape(1, 4, 2))
    np.testing.assert_allclose(g, jax.grad(loss)(w, x), rtol=1e-6)
