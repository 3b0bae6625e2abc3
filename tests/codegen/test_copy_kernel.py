"""Pure data movement (transposes, concatenations, slices, reversals, broadcasts, reshapes of
arrays) is emitted as calls of one runtime copy kernel (`kernels.strided_copy`, compiled once
per machine) on strided views, not as loop nests Numba compiles in every program: exact
results, no loops in the generated code, one kernel specialization per dtype and ranks."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen import index_maps
from omnistage.codegen import kernels as kn


def _compiled(fn, *args):
    jitted = omnistage.jit(fn, backend="cpu")
    return jitted(*args), jitted.lower(*args).compile().as_text()


def _image_grid(imagevecs, nrow=4, ncol=3, imshape=(5, 7)):
    images = iter(imagevecs.reshape((-1,) + imshape))
    return jnp.vstack([jnp.hstack([next(images).T for _ in range(ncol)][::-1]) for _ in range(nrow)]).T


def test_image_grid_is_copy_kernel_calls_without_loops():
    x = np.random.default_rng(0).random((12, 35)) > 0.5
    out, text = _compiled(_image_grid, x)
    images = iter(x.reshape((-1, 5, 7)))
    expected = np.vstack([np.hstack([next(images).T for _ in range(3)][::-1]) for _ in range(4)]).T
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert " in range(" not in text
    # one call per hstack (its 3 pieces all come from x), one for the vstack's 4 operands'
    # pieces (one each) and one for the final transpose
    assert text.count("_kn.strided_copy(") == 4 + 4 + 1


VIEW_CHAINS = {
    "transpose": lambda x: x.transpose(2, 0, 1),
    "reversed slice": lambda x: x[::-1, 1:, ::2],
    "broadcast": lambda x: jnp.broadcast_to(x[:, :1, :], (3, 4, 5)),
    "contiguous reshape": lambda x: x[1:].reshape(10, 4),
    "reshape of a transpose": lambda x: x.transpose(1, 0, 2).reshape(4, 15),  # div/mod: a loop nest
    "squeeze and expand": lambda x: x[:, 2][None, :, :, None],
}


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.complex64])
@pytest.mark.parametrize("name", VIEW_CHAINS)
def test_materialized_index_maps_copy_exactly(name, dtype):
    x = (np.arange(60).reshape(3, 4, 5) * 7 % 11).astype(dtype)
    fn = VIEW_CHAINS[name]
    out, text = _compiled(lambda x: (fn(x), jnp.concatenate([fn(x), fn(x)], 0)), x)
    expected = np.asarray(omnistage.jit(fn, backend="interpreter")(x))
    np.testing.assert_array_equal(np.asarray(out[0]), expected)
    np.testing.assert_array_equal(np.asarray(out[1]), np.concatenate([expected, expected], 0))
    assert "_kn.strided_copy(" in text


def test_reshape_views_compose_without_division():
    assert index_maps.VIEW_MAPS["reshape"]((3, (20, 5, 1)), (2, 4, 5), new_sizes=(8, 5)) == (3, (5, 1))
    transposed = index_maps.VIEW_MAPS["transpose"]((0, (20, 5, 1)), (3, 4, 5), permutation=(1, 0, 2))
    assert index_maps.VIEW_MAPS["reshape"](transposed, (4, 3, 5), new_sizes=(4, 15)) is None
    assert index_maps.VIEW_MAPS["rev"]((0, (5, 1)), (4, 5), dimensions=(0,)) == (15, (-5, 1))


def test_copy_kernel_compiles_once_for_many_copies_of_one_dtype():
    before = set(kn.strided_copy.signatures)
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    _compiled(lambda a: jnp.concatenate([a, a[::-1]], 1).transpose(2, 0, 1), a)
    _compiled(lambda a: (a[:, 1:].T, jnp.concatenate([a, a], 2)), a)
    new = set(kn.strided_copy.signatures) - before
    assert len(new) <= 2  # a read-only input and a fresh array as sources


def test_dot_general_operand_relayout_and_triangular_solve_flips():
    rng = np.random.default_rng(1)
    m = np.tril(rng.random((4, 4))) + 4 * np.eye(4)
    r = rng.random((3, 4))
    out, text = _compiled(lambda m, r: lax.linalg.triangular_solve(m.T, r, left_side=False, lower=False), m, r)
    np.testing.assert_allclose(np.asarray(out) @ m.T, r, rtol=1e-5)
    assert "_kn.strided_copy(" in text


@pytest.mark.parametrize("config", [((1, 2, 0), (0, 0, 2)), ((-1, 1, 1), (2, -3, 0)), ((0, 0, 3), (-2, 1, 1))])
def test_pad_interior_is_one_copy_exactly(config):
    x = np.arange(20, dtype=np.float32).reshape(4, 5) - 7
    fn = lambda x: lax.pad(x[:, ::-1], np.float32(-1), config)  # noqa: E731 - a view of x, padded
    out, text = _compiled(fn, x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(omnistage.jit(fn, backend="interpreter")(x)))
    assert "_kn.strided_copy(" in text and " in range(" not in text


def test_pad_of_index_maps_without_a_view_reads_them_fused():
    x = np.float32(2.5)
    fn = lambda x: lax.pad(jnp.broadcast_to(x, (2, 3)).T, np.float32(0), ((1, 1, 1), (0, 2, 0)))  # noqa: E731
    out, _ = _compiled(fn, x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(omnistage.jit(fn, backend="interpreter")(x)))
