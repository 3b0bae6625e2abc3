"""lax.ppermute on one process: under vmap (eager and jitted), nested vmaps, pmap, its JVP and
transpose (the inverse permutation), and the errors of a bad permutation, against a Python
reference of JAX's semantics: out[dest] = x[source] per pair, zeros where nothing arrives."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax

PERMS = {
    "ring": [(i, (i + 1) % 4) for i in range(4)],
    "swap pairs": [(0, 1), (1, 0), (2, 3), (3, 2)],
    "partial": [(0, 2), (3, 0)],
    "identity": [(i, i) for i in range(4)],
    "nothing": [],
}


def reference(x, perm):
    out = np.zeros_like(x)
    for source, dest in perm:
        out[dest] = x[source]
    return out


def data(dtype, shape=(4, 3, 2)):
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    return (rng.normal(size=shape) * 10).astype(dtype)


@pytest.mark.parametrize("name", PERMS)
def test_vmap_ppermute_moves_examples(name):
    x = data(np.float32)
    got = jax.vmap(lambda v: lax.ppermute(v, "i", PERMS[name]), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(got), reference(x, PERMS[name]))


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64", "bool"])
def test_jit_vmap_ppermute_for_each_dtype(dtype):
    x = data(dtype)
    f = jax.jit(jax.vmap(lambda v: (lax.ppermute(v, "i", PERMS["ring"]), lax.ppermute(v, "i", PERMS["partial"])),
                         axis_name="i"))
    ring, partial = f(x)
    np.testing.assert_array_equal(np.asarray(ring), reference(x, PERMS["ring"]))
    np.testing.assert_array_equal(np.asarray(partial), reference(x, PERMS["partial"]))


def test_an_unmapped_operand_is_permuted_as_copies():
    x = data(np.float32)
    got = jax.vmap(lambda v, c: lax.ppermute(c, "i", PERMS["partial"]) + v, axis_name="i", in_axes=(0, None))(x, x[0])
    np.testing.assert_array_equal(np.asarray(got), x + reference(np.broadcast_to(x[0], x.shape), PERMS["partial"]))


def test_ppermute_over_the_outer_of_two_vmaps():
    x = data(np.float32, (4, 2, 3))  # outer axis 'i' of 4, inner 'j' of 2
    inner = jax.vmap(lambda r: lax.ppermute(r, "i", PERMS["ring"]) + lax.ppermute(r, "j", [(0, 1)]), axis_name="j")
    got = jax.jit(jax.vmap(inner, axis_name="i"))(x)
    want = reference(x, PERMS["ring"]) + np.stack([reference(row, [(0, 1)]) for row in x])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_pytree_operand():
    x = data(np.float32)
    got = jax.vmap(lambda v: lax.ppermute({"a": v, "b": (v * 2,)}, "i", PERMS["swap pairs"]), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(got["a"]), reference(x, PERMS["swap pairs"]))
    np.testing.assert_array_equal(np.asarray(got["b"][0]), reference(2 * x, PERMS["swap pairs"]))


def test_pmap_on_one_device():
    x = data(np.float32, (1, 3))
    np.testing.assert_array_equal(np.asarray(jax.pmap(lambda v: lax.ppermute(v, "i", [(0, 0)]), axis_name="i")(x)), x)
    np.testing.assert_array_equal(np.asarray(jax.pmap(lambda v: lax.ppermute(v, "i", []), axis_name="i")(x)), 0 * x)


@pytest.mark.parametrize("name", ["ring", "partial"])
def test_grad_sends_cotangents_back_along_the_inverse_permutation(name):
    x = data(np.float32)
    weights = np.arange(1.0, 5.0, dtype=np.float32)[:, None, None] * data(np.float32)

    def loss(x):
        return jnp.sum(jax.vmap(lambda v: lax.ppermute(v, "i", PERMS[name]), axis_name="i")(x) * weights)

    # the map is linear, its matrix a permutation with zero rows: the gradient is weights
    # moved by the inverse permutation
    inverse = [(d, s) for s, d in PERMS[name]]
    want = reference(weights, inverse)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(x)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(x)), want, rtol=1e-6)


def test_jvp_is_the_permuted_tangent():
    x, t = data(np.float32), data(np.float32, (4, 3, 2)) + 1
    f = jax.vmap(lambda v: lax.ppermute(jnp.sin(v), "i", PERMS["ring"]), axis_name="i")
    primal, tangent = jax.jvp(f, (x,), (t,))
    np.testing.assert_allclose(np.asarray(tangent), reference(np.cos(x) * t, PERMS["ring"]), rtol=1e-5, atol=1e-6)


def test_grad_inside_vmap_of_a_ppermute():
    x = data(np.float32)
    f = jax.vmap(jax.grad(lambda v: jnp.sum(lax.ppermute(v, "i", PERMS["ring"]) * v)), axis_name="i")
    # as JAX: the cotangent of the permuted factor travels back to its source example, so
    # example k gets its received value plus the value of the example it sent to
    inverse = [(d, s) for s, d in PERMS["ring"]]
    np.testing.assert_allclose(np.asarray(f(x)), reference(x, PERMS["ring"]) + reference(x, inverse), rtol=1e-6)


@pytest.mark.parametrize("perm, match", [
    ([(0, 1), (0, 2)], "sources and destinations must be unique"),
    ([(0, 1), (2, 1)], "sources and destinations must be unique"),
    ([(0, 4)], r"must be in \[0, 4\)"),
    ([(0,)], "pairs"),
])
def test_bad_permutations_are_errors(perm, match):
    with pytest.raises((ValueError, TypeError), match=match):
        jax.vmap(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(data(np.float32))


def test_unbound_axis_name_is_an_error():
    with pytest.raises(NameError, match="unbound axis name: j"):
        jax.vmap(lambda v: lax.ppermute(v, "j", [(0, 1)]), axis_name="i")(data(np.float32))


def test_agrees_with_jax():
    jax_ = pytest.importorskip("jax")
    x = data(np.float32)
    for name in ("ring", "swap pairs", "identity"):  # JAX's vmap takes full permutations only
        perm = PERMS[name]
        want = jax_.vmap(lambda v: jax_.lax.ppermute(v, "i", perm), axis_name="i")(x)
        got = jax.vmap(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(x)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
