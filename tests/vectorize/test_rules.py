"""Batching rules, family by family: vmap(f) equals the loop over examples for each
primitive with the batch axis in different places and operands batched or not."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.core import primitive as core_primitive
from omnistage.vectorize import BATCH
from tests.vectorize.check import check_vmap


def rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def test_every_registered_primitive_has_a_batching_rule():
    missing = sorted(set(core_primitive.registry) - set(BATCH))
    assert missing == []


# --- elementwise -------------------------------------------------------------------------------


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 1), (0, 1), (None, 0), (1, None), (-1, 0)])
def test_binary_elementwise_any_axes(rng, in_axes):
    shapes = {0: (3, 4), 1: (4, 3), -1: (4, 3), None: (4,)}
    x = rand(rng, *shapes[in_axes[0]])
    y = rand(rng, *shapes[in_axes[1]])
    check_vmap(lambda a, b: lax.add(lax.mul(a, b), lax.sin(a)), x, y, in_axes=in_axes)


def test_aligned_elementwise_needs_no_transpose(rng):
    x, y = rand(rng, 4, 3), rand(rng, 4, 3)
    program = omnistage.make_jaxpr(omnistage.vmap(lambda a, b: a * b + a, in_axes=1, out_axes=1))(x, y)
    assert "transpose" not in str(program)


def test_batched_scalar_meets_unbatched_vector(rng):
    s, v = rand(rng, 5), rand(rng, 3)
    check_vmap(lambda a, b: a * b, s, v, in_axes=(0, None))
    check_vmap(lambda a, b: lax.select(a > 0, b, -b), s, v, in_axes=(0, None))


def test_select_n_with_batched_predicate_and_complex_cases(rng):
    p = rng.standard_normal((4, 3)) > 0
    x = (rand(rng, 4, 3) + 1j * rand(rng, 4, 3)).astype(np.complex64)
    check_vmap(lambda q, a: lax.select(q, a, jnp.conj(a)), p, x)


def test_conversions_and_integer_ops(rng):
    x = rand(rng, 4, 3) * 10
    check_vmap(lambda a: lax.convert_element_type(a, np.int32) >> 1, x)
    check_vmap(lambda a: lax.bitcast_convert_type(a, np.int32), x, in_axes=1)
    check_vmap(lambda a: lax.bitcast_convert_type(a, np.uint16), x, in_axes=1)
    check_vmap(lambda a: lax.integer_pow(a, 3), x)


# --- reductions, cumulative ops, sort -----------------------------------------------------------


@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_reductions_shift_axes_around_the_batch_axis(rng, in_axis, axis):
    x = rand(rng, 3, 4, 5)
    for f in (jnp.sum, jnp.max, jnp.min, jnp.prod, jnp.argmax, jnp.argmin):
        check_vmap(lambda a: f(a, axis=axis), x, in_axes=in_axis, printed=False)
    check_vmap(lambda a: jnp.any(a > 0, axis=axis), x, in_axes=in_axis, printed=False)


@pytest.mark.parametrize("in_axis", [0, 1])
def test_cumulative_ops(rng, in_axis):
    x = rand(rng, 3, 4)
    for f in (jnp.cumsum, jnp.cumprod, lax.cummax, lax.cummin, lax.cumlogsumexp):
        check_vmap(lambda a: f(a, axis=0), x, in_axes=in_axis, printed=False)
    check_vmap(lambda a: lax.cumsum(a, axis=0, reverse=True), x, in_axes=in_axis)


def test_sort_of_several_operands_batched_and_not(rng):
    k, v = rand(rng, 3, 5), rand(rng, 5)
    check_vmap(lambda a, b: lax.sort((a, b), num_keys=1), k, v, in_axes=(0, None))
    check_vmap(lambda a: jnp.sort(a), k, in_axes=1)
    check_vmap(lambda a: jnp.argsort(a), k)


# --- shape primitives ----------------------------------------------------------------------------


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_shape_primitives(rng, in_axis):
    cases = [
        lambda a: jnp.reshape(a, (-1,)),
        lambda a: jnp.transpose(a),
        lambda a: jnp.broadcast_to(a[:, None, :], (3, 5, 4)),
        lambda a: jnp.expand_dims(a, 1)[:, 0],
        lambda a: a[1:, ::2],
        lambda a: jnp.flip(a, 0),
        lambda a: jnp.concatenate([a, 2 * a], axis=1),
        lambda a: jnp.pad(a, ((1, 2), (0, 1))),
        lambda a: lax.pad(a, np.float32(-1), ((1, 0, 1), (0, -1, 0))),
        lambda a: jnp.squeeze(a[:1], 0),
    ]
    per_example = rand(rng, 3, 4)
    for f in cases:
        xs = np.stack([per_example + i for i in range(2)], axis=in_axis)
        check_vmap(f, xs, in_axes=in_axis, printed=False)


def test_concatenate_of_batched_and_unbatched(rng):
    x, y = rand(rng, 2, 3), rand(rng, 4)
    check_vmap(lambda a, b: jnp.concatenate([a, b]), x, y, in_axes=(0, None))


def test_pad_with_a_per_example_padding_value(rng):
    x, v = rand(rng, 3, 4), rand(rng, 3)
    check_vmap(lambda a, c: lax.pad(a, c, ((1, 2, 1),)), x, v)
    check_vmap(lambda a, c: lax.pad(a, c, ((1, 2, 0),)), x[0], v, in_axes=(None, 0))


def test_iota_and_constants_inside_vmap(rng):
    x = rand(rng, 3, 4)
    check_vmap(lambda a: a + jnp.arange(4.0), x)
    check_vmap(lambda a: jnp.ones(2), x)


# --- dot_general ----------------------------------------------------------------------------------


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (2, 1), (1, 2), (None, 2)])
def test_matmul_batched_any_way(rng, in_axes):
    m, k, n, b = 3, 4, 2, 5
    lhs = np.moveaxis(rand(rng, b, m, k), 0, in_axes[0]) if in_axes[0] is not None else rand(rng, m, k)
    rhs = np.moveaxis(rand(rng, b, k, n), 0, in_axes[1]) if in_axes[1] is not None else rand(rng, k, n)
    check_vmap(lambda a, c: a @ c, lhs, rhs, in_axes=in_axes)


def test_batched_matmul_is_one_dot_general_with_a_batch_dimension(rng):
    a, c = rand(rng, 5, 3, 4), rand(rng, 5, 4, 2)
    text = str(omnistage.make_jaxpr(omnistage.vmap(jnp.matmul))(a, c))
    assert "dot_general" in text and "((0,), (0,))" in text and "transpose" not in text


def test_einsum_with_existing_batch_dimensions(rng):
    a, c = rand(rng, 5, 2, 3, 4), rand(rng, 2, 4, 3)
    check_vmap(lambda x, y: jnp.einsum("bij,bjk->bik", x, y), a, c, in_axes=(0, None))
    check_vmap(lambda x, y: jnp.einsum("bij,bjk->bik", x, y), a, np.stack([c] * 5, 3), in_axes=(0, 3))


# --- indexing -------------------------------------------------------------------------------------


def test_gather_with_batched_operand_indices_or_both(rng):
    x = rand(rng, 4, 6, 3)
    idx = rng.integers(-6, 6, size=(4, 2)).astype(np.int32)
    check_vmap(lambda a, i: a[i], x, idx)
    check_vmap(lambda a, i: a[i], x[0], idx, in_axes=(None, 0))
    check_vmap(lambda a, i: a[i], x, idx[0], in_axes=(0, None))
    check_vmap(lambda a, i: a[i], np.moveaxis(x, 0, 1), idx, in_axes=(1, 0))
    check_vmap(lambda a, i: a[:, i], np.moveaxis(x, 0, 2), idx % 3, in_axes=(2, 0))
    check_vmap(lambda a, i: jnp.take_along_axis(a, i, axis=0), x[:, :, 0], idx)


@pytest.mark.parametrize("op", ["set", "add", "multiply", "min", "max"])
def test_scatter_family(rng, op):
    x, u = rand(rng, 4, 6), rand(rng, 4, 3)
    idx = np.array([[0, 2, 2], [5, 1, 0], [3, 3, 3], [1, 4, 2]], np.int32)

    def f(a, i, v):
        return getattr(a.at[i], op)(v)

    check_vmap(f, x, idx, u)
    check_vmap(f, x, idx[0], u, in_axes=(0, None, 0))
    check_vmap(f, x[0], idx, u[0], in_axes=(None, 0, None))
    check_vmap(f, x[0], idx[0], u, in_axes=(None, None, 0))
    check_vmap(f, x.T, idx[0], u[0], in_axes=(1, None, None))


def test_dynamic_slice_with_batched_and_shared_starts(rng):
    x = rand(rng, 4, 6, 5)
    i = np.array([0, 3, 5, -1], np.int32)
    j = np.array([1, 4, 2, 0], np.int32)
    check_vmap(lambda a, s, t: lax.dynamic_slice(a, (s, t), (2, 3)), x, i, j)
    check_vmap(lambda a, s, t: lax.dynamic_slice(a, (s, t), (2, 3)), x, i[1], j, in_axes=(0, None, 0))
    check_vmap(lambda a, s, t: lax.dynamic_slice(a, (s, t), (2, 3)), x[0], i, j[0], in_axes=(None, 0, None))
    check_vmap(lambda a, s, t: lax.dynamic_slice(a, (s, t), (2, 3)), x, i[0], j[0], in_axes=(2, None, None))
    check_vmap(lambda a, s: lax.dynamic_index_in_dim(a, s, keepdims=False), x, i)


def test_dynamic_slice_of_an_unbatched_operand_gathers_from_it_without_a_copy_per_example(rng):
    x = rand(rng, 6, 5, 2)
    i = np.array([0, 3, 5, -1], np.int32)
    j = np.array([1, 4, 2, 0], np.int32)
    f = lambda a, s, t: lax.dynamic_slice(a, (s, t, 0), (2, 3, 2))  # noqa: E731
    check_vmap(f, x, i, j, in_axes=(None, 0, 0))
    check_vmap(f, x, i, j[0], in_axes=(None, 0, None))
    check_vmap(lambda a, s: a[s], x, i, in_axes=(None, 0))  # a table read at a batched step
    program = omnistage.make_jaxpr(omnistage.vmap(f, in_axes=(None, 0, 0)))(x, i, j)
    assert "gather(a, " in str(program) and "shape=(4, 6, 5, 2)" not in str(program)


def test_dynamic_update_slice_with_batched_and_shared_starts(rng):
    x, u = rand(rng, 4, 6, 5), rand(rng, 4, 2, 3)
    i = np.array([0, 3, 5, -1], np.int32)
    j = np.array([1, 4, 2, 0], np.int32)
    f = lambda a, v, s, t: lax.dynamic_update_slice(a, v, (s, t))  # noqa: E731
    check_vmap(f, x, u, i, j)
    check_vmap(f, x, u[0], i[0], j[0], in_axes=(0, None, None, None))
    check_vmap(f, x[0], u, i, j[0], in_axes=(None, 0, 0, None))
    check_vmap(f, x[0], u[0], i, j, in_axes=(None, None, 0, 0))


# --- linear algebra and convolution --------------------------------------------------------------


def _spd(rng, b, n):
    a = rand(rng, b, n, n)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def test_linalg_primitives_batch_over_leading_axes(rng):
    m = _spd(rng, 4, 3)
    check_vmap(jnp.linalg.cholesky, m, rtol=1e-4, atol=1e-5)
    check_vmap(jnp.linalg.inv, np.moveaxis(m, 0, 2), in_axes=2, rtol=1e-4, atol=1e-5)
    check_vmap(jnp.linalg.det, m, rtol=1e-4, atol=1e-5)
    check_vmap(lambda a: jnp.linalg.eigh(a)[0], m, rtol=1e-4, atol=1e-5)
    check_vmap(lambda a: jnp.linalg.svd(a, compute_uv=False), m, rtol=1e-4, atol=1e-5)
    check_vmap(lambda a: jnp.abs(jnp.linalg.qr(a)[1]), m, rtol=1e-4, atol=1e-5)
    check_vmap(lambda a: lax.lu(a)[2], m)


def test_solve_with_shared_matrix_and_batched_right_hand_sides(rng):
    a, b = _spd(rng, 1, 3)[0], rand(rng, 5, 3)
    check_vmap(jnp.linalg.solve, a, b, in_axes=(None, 0), rtol=1e-4, atol=1e-5)
    l = np.linalg.cholesky(a).astype(np.float32)
    check_vmap(lambda m, v: lax.triangular_solve(m, v[:, None], left_side=True, lower=True), l, b,
               in_axes=(None, 0), rtol=1e-4, atol=1e-5)


def test_spectral_radius_batch(rng):
    def spectral_radius(mat):
        return jnp.max(jnp.abs(jnp.linalg.eigvals(mat)))

    batch = rand(rng, 16, 3, 3)
    check_vmap(spectral_radius, batch, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 0)])
@pytest.mark.parametrize("groups", [(1, 1), (2, 1), (1, 2)])
def test_conv_general_dilated(rng, in_axes, groups):
    fgc, bgc = groups
    b = 3
    lhs_shape, rhs_shape = (2 * bgc, 2 * fgc, 7), (2 * fgc * bgc, 2, 3)
    lhs = rand(rng, b, *lhs_shape) if in_axes[0] is not None else rand(rng, *lhs_shape)
    if in_axes[0] == 1:
        lhs = np.moveaxis(lhs, 0, 1)
    rhs = rand(rng, b, *rhs_shape) if in_axes[1] is not None else rand(rng, *rhs_shape)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1,), "SAME", rhs_dilation=(2,),
                                        feature_group_count=fgc, batch_group_count=bgc)

    check_vmap(f, lhs, rhs, in_axes=in_axes, rtol=1e-4, atol=1e-5, printed=False)
