"""JAX's lax operations that omnistage composes from its primitives (lax/composites.py):
values against NumPy (and against JAX where installed), jit against eager, gradients against
finite differences or closed forms, vmap against a loop, errors."""
import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax

RNG = np.random.RandomState(0)


def ijit(f, **kw):
    return jax.jit(f, backend="interpreter", **kw)


def test_stack_unstack_tile_eager_jit_grad_and_vmap():
    y = RNG.randn(2, 3).astype(np.float32)
    np.testing.assert_array_equal(lax.stack([y, y + 1], axis=1), np.stack([y, y + 1], axis=1))
    np.testing.assert_array_equal(ijit(lambda a: lax.stack([a, 2 * a], axis=-1))(y), np.stack([y, 2 * y], axis=-1))
    parts = lax.unstack(y, axis=1)
    assert len(parts) == 3 and all(np.array_equal(p, y[:, i]) for i, p in enumerate(parts))
    np.testing.assert_array_equal(lax.tile(y, (2, 3)), np.tile(y, (2, 3)))
    np.testing.assert_array_equal(ijit(lambda a: lax.tile(a, (1, 2)))(y), np.tile(y, (1, 2)))
    np.testing.assert_allclose(jax.grad(lambda a: jnp.sum(lax.tile(a, (2, 3)) ** 2))(y), 12 * y, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda a: jnp.sum(lax.unstack(a, 0)[1]))(y), [[0, 0, 0], [1, 1, 1]])
    ys = RNG.randn(4, 2, 3).astype(np.float32)
    np.testing.assert_array_equal(jax.vmap(lambda a: lax.tile(a, (2, 1)))(ys),
                                  np.stack([np.tile(v, (2, 1)) for v in ys]))
    with pytest.raises(ValueError, match="one entry per dimension"):
        lax.tile(y, (2,))


def test_empty_broadcast_like_and_axis_size():
    e = lax.empty((2, 3), np.int32)
    assert e.shape == (2, 3) and e.dtype == np.int32
    np.testing.assert_array_equal(lax.broadcast_like(np.arange(3.0, dtype=np.float32), np.zeros((2, 3), np.float32)),
                                  np.broadcast_to(np.arange(3.0), (2, 3)))
    with pytest.raises(ValueError, match="cannot broadcast"):
        lax.broadcast_like(np.ones(2, np.float32), np.ones((2, 3), np.float32))
    got = jax.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(jnp.ones(5))
    np.testing.assert_array_equal(got, 5 * np.ones(5))
    sizes = jax.vmap(jax.vmap(lambda v: v + lax.axis_size(("i", "j")), axis_name="j"), axis_name="i")(jnp.zeros((2, 3)))
    np.testing.assert_array_equal(sizes, np.full((2, 3), 6.0))
    with pytest.raises(NameError):
        lax.axis_size("nope")


def _mulhi_reference(x, y):
    bits = np.dtype(x.dtype).itemsize * 8
    prod = x.astype(object) * y.astype(object)
    hi = np.array([(int(p) >> bits) & ((1 << bits) - 1) for p in prod], dtype=np.uint64)
    return hi.astype(np.dtype(x.dtype).str.replace("i", "u")).view(x.dtype)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.uint32])
def test_mulhi_and_clz_bits(dt):
    info = np.iinfo(dt)
    x = RNG.randint(info.min, info.max, size=40, dtype=np.int64).astype(dt)
    y = RNG.randint(info.min, info.max, size=40, dtype=np.int64).astype(dt)
    np.testing.assert_array_equal(lax.mulhi(x, y), _mulhi_reference(x, y))
    np.testing.assert_array_equal(ijit(lax.mulhi)(x, y), _mulhi_reference(x, y))
    bits = np.dtype(dt).itemsize * 8
    want = np.array([bits - int(v).bit_length() if v >= 0 else 0 for v in x.astype(np.int64)], dtype=dt)
    np.testing.assert_array_equal(lax.clz(x), want)
    assert lax.clz(np.array(0, dt)) == bits
    with pytest.raises(TypeError, match="same dtype"):
        lax.mulhi(np.int32(1), np.uint32(1))


def test_reduce_precision_rounds_as_bfloat16_and_float16_and_passes_gradients():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([1.0, -2.5, 3.14159, 1e-30, -1e-40, 65504.0, 70000.0, np.inf, np.nan, -0.0, 1.00390625, 1.01171875],
                 np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(x, 8, 7), x.astype(ml_dtypes.bfloat16).astype(np.float32))
    f16 = lax.reduce_precision(x, 5, 10)
    want = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(f16, want)
    assert np.array_equal(np.signbit(f16), np.signbit(want))
    np.testing.assert_array_equal(ijit(lambda v: lax.reduce_precision(v, 5, 10))(x), want)
    assert float(jax.grad(lambda v: lax.reduce_precision(v, 8, 7) * 3.0)(1.2345)) == 3.0
    with pytest.raises(TypeError, match="floating-point"):
        lax.reduce_precision(np.int32(3), 8, 7)


def test_index_take_wraps_indices_like_jax():
    y = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    idx = [np.array([0, -1, 5]), np.array([1, 2, 0])]
    want = y[np.array([0, 1, 1])][:, :, [1, 2, 0]].diagonal(axis1=0, axis2=2).T
    np.testing.assert_array_equal(lax.index_take(y, idx, (0, 2)), want)
    np.testing.assert_array_equal(ijit(lambda a: lax.index_take(a, idx, (0, 2)))(y), want)


def test_approx_max_k_and_min_k_are_exact_with_gradients():
    z = RNG.randn(3, 7).astype(np.float32)
    vals, idx = lax.approx_max_k(z, 3)
    np.testing.assert_array_equal(idx, np.argsort(-z, axis=1, kind="stable")[:, :3])
    np.testing.assert_array_equal(vals, -np.sort(-z, axis=1)[:, :3])
    vals, idx = lax.approx_min_k(z, 2, reduction_dimension=0)
    np.testing.assert_array_equal(idx, np.argsort(z, axis=0, kind="stable")[:2])
    np.testing.assert_array_equal(vals, np.sort(z, axis=0)[:2])
    g = jax.grad(lambda a: jnp.sum(lax.approx_max_k(a, 2)[0]))(z)
    want = np.zeros_like(z)
    np.put_along_axis(want, np.argsort(-z, axis=1)[:, :2], 1.0, axis=1)
    np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(ijit(lambda a: lax.top_k(a, 3)[0])(z), -np.sort(-z, axis=1)[:, :3])
    batched = jax.vmap(lambda a: lax.approx_min_k(a, 2)[1])(z)
    np.testing.assert_array_equal(batched, np.stack([np.argsort(r, kind="stable")[:2] for r in z]))


def _patches_reference(img, fh, fw):
    """NCHW 'VALID' stride-1 patches, feature index c * fh * fw + i * fw + j (JAX's order)."""
    n, c, h, w = img.shape
    out = np.zeros((n, c * fh * fw, h - fh + 1, w - fw + 1), img.dtype)
    for ci in range(c):
        for i in range(fh):
            for j in range(fw):
                out[:, ci * fh * fw + i * fw + j] = img[:, ci, i:i + h - fh + 1, j:j + w - fw + 1]
    return out


def test_conv_general_dilated_patches_and_local_convolution():
    img = RNG.randn(2, 3, 5, 6).astype(np.float32)
    got = lax.conv_general_dilated_patches(img, (2, 3), (1, 1), "VALID")
    np.testing.assert_allclose(got, _patches_reference(img, 2, 3), rtol=1e-6)
    np.testing.assert_allclose(ijit(lambda a: lax.conv_general_dilated_patches(a, (2, 3), (1, 1), "VALID"))(img),
                               got, rtol=1e-6)
    rhs = RNG.randn(4, 5, 12, 7).astype(np.float32)  # HWIO: a filter per output position
    out = lax.conv_general_dilated_local(img, rhs, (1, 1), "VALID", (2, 2), dimension_numbers=("NCHW", "HWIO", "NCHW"))
    p = _patches_reference(img, 2, 2)
    np.testing.assert_allclose(out, np.einsum("nfhw,hwfo->nohw", p, rhs), rtol=1e-4, atol=1e-5)
    g = jax.grad(lambda a: jnp.sum(lax.conv_general_dilated_patches(a, (2, 2), (1, 1), "VALID") ** 2))(img)
    np.testing.assert_allclose(g, jax.grad(lambda a: jnp.sum(jnp.asarray(_patches_from(a)) ** 2))(img), rtol=1e-5)


def _patches_from(a):
    pieces = [a[:, c:c + 1, i:i + 4, j:j + 5] for c in range(3) for i in range(2) for j in range(2)]
    return jnp.concatenate(pieces, axis=1)


def test_dimension_number_types_and_logical_primitive_names():
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    assert dn.operand_batching_dims == () and dn._fields[0] == "offset_dims"
    assert lax.ScatterDimensionNumbers((1,), (0,), (0,)).inserted_window_dims == (0,)
    cdn = lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    out = lax.conv_general_dilated(np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 2, 2), np.float32), (1, 1),
                                   "VALID",
                                   dimension_numbers=cdn)
    np.testing.assert_array_equal(out, np.full((1, 1, 2, 2), 4.0))
    assert lax.GatherScatterMode.from_any("clip") is lax.GatherScatterMode.CLIP
    assert lax.GatherScatterMode.from_any(None) is lax.GatherScatterMode.FILL_OR_DROP
    with pytest.raises(ValueError):
        lax.GatherScatterMode.from_any("wrap")
    assert lax.and_p.name == "and_" and lax.or_p.name == "or_" and lax.not_p.name == "not_"


def test_against_jax_where_installed():
    jl = pytest.importorskip("jax.lax")
    x = RNG.randn(3, 5).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(x, 4, 3), jl.reduce_precision(x, 4, 3))
    r = RNG.randint(-2**31, 2**31 - 1, size=20).astype(np.int32)
    np.testing.assert_array_equal(lax.mulhi(r, r[::-1]), jl.mulhi(r, r[::-1]))
    np.testing.assert_array_equal(lax.clz(r), jl.clz(r))


# --- XLA's gather / scatter signatures and scatter_apply --------------------------------------


X3 = RNG.randn(5, 6, 7).astype(np.float32)
IDX = np.array([[2, 1], [4, 5], [-1, 3], [3, 9]])
WINDOW_DN = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0, 2))


def _window_reference(x, idx, fill=None):
    """x[i, :3, k:k+4] per index row (i, k), starts clamped (or the window filled) as XLA does."""
    out = []
    for i, k in idx:
        if fill is not None and not (0 <= i <= 4 and 0 <= k <= 3):
            out.append(np.full((3, 4), fill, x.dtype))
            continue
        i, k = min(max(i, 0), 4), min(max(k, 0), 3)
        out.append(x[i, :3, k:k + 4])
    return np.stack(out)


def test_gather_with_dimension_numbers_clamps_or_fills_windows():
    np.testing.assert_array_equal(lax.gather(X3, IDX, WINDOW_DN, (1, 3, 4)), _window_reference(X3, IDX))
    np.testing.assert_array_equal(lax.gather(X3, IDX, dimension_numbers=WINDOW_DN, slice_sizes=(1, 3, 4), mode="fill"),
                                  _window_reference(X3, IDX, fill=np.nan))
    moved = lax.GatherDimensionNumbers(offset_dims=(0, 2), collapsed_slice_dims=(1,), start_index_map=(2, 1))
    got = lax.gather(X3, IDX, moved, (2, 1, 3))
    want = np.stack([X3[:2, min(max(j, 0), 5), min(max(i, 0), 4):min(max(i, 0), 4) + 3] for i, j in IDX], axis=1)
    np.testing.assert_array_equal(got, want)
    f = ijit(lambda x: lax.gather(x, IDX, WINDOW_DN, (1, 3, 4)))
    np.testing.assert_array_equal(f(X3), _window_reference(X3, IDX))
    g = jax.grad(lambda x: jnp.sum(lax.gather(x, IDX, WINDOW_DN, (1, 3, 4))))(X3)
    want_g = np.zeros_like(X3)
    for i, k in IDX:
        i, k = min(max(i, 0), 4), min(max(k, 0), 3)
        want_g[i, :3, k:k + 4] += 1
    np.testing.assert_array_equal(g, want_g)
    batched = jax.vmap(lambda x: lax.gather(x, IDX, WINDOW_DN, (1, 3, 4)))(np.stack([X3, 2 * X3]))
    np.testing.assert_array_equal(batched, np.stack([_window_reference(X3, IDX), _window_reference(2 * X3, IDX)]))


def test_scatter_family_with_dimension_numbers_drops_or_clips_windows():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0, 2))
    upd = RNG.randn(4, 3, 4).astype(np.float32)
    want = np.zeros((5, 6, 7), np.float32)
    for (i, k), u in zip(IDX, upd):
        if 0 <= i <= 4 and 0 <= k <= 3:  # default: out-of-bounds windows dropped whole
            want[i, :3, k:k + 4] += u
    np.testing.assert_allclose(lax.scatter_add(np.zeros((5, 6, 7), np.float32), IDX, upd, dn), want, rtol=1e-6)
    clipped = np.zeros((5, 6, 7), np.float32)
    for (i, k), u in zip(IDX, upd):
        i, k = min(max(i, 0), 4), min(max(k, 0), 3)
        clipped[i, :3, k:k + 4] += u
    np.testing.assert_allclose(lax.scatter_add(np.zeros((5, 6, 7), np.float32), IDX, upd, dn, mode="clip"), clipped,
                               rtol=1e-6)
    g = jax.grad(lambda u: jnp.sum(lax.scatter_add(jnp.zeros((5, 6, 7)), IDX, u, dn) * X3))(upd)
    np.testing.assert_allclose(g, np.stack([X3[i, :3, k:k + 4] if 0 <= i <= 4 and 0 <= k <= 3 else np.zeros((3, 4))
                                            for i, k in IDX]), rtol=1e-6)
    maxed = lax.scatter_max(np.zeros((5, 6, 7), np.float32), IDX, upd, dimension_numbers=dn)
    assert maxed.shape == (5, 6, 7) and float(maxed[2, 0, 1]) == max(0.0, float(upd[0, 0, 0]))


def test_scatter_apply_applies_the_function_once_per_address():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    got = lax.scatter_apply(np.ones(5, np.float32), np.array([[1], [1], [3]]), lambda v: v * 3, dn, update_shape=(3,))
    np.testing.assert_array_equal(got, [1, 9, 1, 3, 1])
    f = ijit(lambda x: lax.scatter_apply(x, np.array([[0], [4]]), jnp.sin, dn, update_shape=(2,)))
    v = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(f(v), [np.sin(0.0), 1, 2, 3, np.sin(4.0)], rtol=1e-6)


# --- clamp, as JAX's -----------------------------------------------------------------------


def test_clamp_values_errors_and_jax_derivative_at_the_ties():
    x = np.array([-2.0, 0.5, 3.0, np.nan, 0.0, 1.0, -0.0], np.float32)
    np.testing.assert_array_equal(lax.clamp(np.float32(0), x, np.float32(1)), np.minimum(np.maximum(x, 0), 1))
    np.testing.assert_array_equal(lax.clamp(np.float32(1), x[:3], np.float32(0)), [0, 0, 0])  # min > max: max
    np.testing.assert_array_equal(ijit(lambda v: lax.clamp(0.0, v, 1.0))(x), np.minimum(np.maximum(x, 0), 1))
    np.testing.assert_array_equal(lax.clamp(np.int32(0), np.arange(-2, 5, dtype=np.int32), np.int32(3)),
                                  [0, 0, 0, 1, 2, 3, 3])
    with pytest.raises(TypeError, match="lax.clamp requires arguments to have the same dtypes"):
        lax.clamp(0.0, np.arange(3), 1.0)
    with pytest.raises(TypeError, match=r"min.shape == operand.shape or min.shape == \(\)"):
        lax.clamp(np.zeros(2, np.float32), x, np.float32(1))
    # JAX's rule: d/dx where min < x < max, d/dmin where x < min, d/dmax where x > max, 0 at the ties
    want = {0.5: (0, 1, 0), 1.0: (0, 0, 0), 0.0: (0, 0, 0), -1.0: (1, 0, 0), 2.0: (0, 0, 1)}
    for v, grads in want.items():
        got = jax.grad(lambda lo, x, hi: lax.clamp(lo, x, hi), argnums=(0, 1, 2))(0.0, v, 1.0)
        assert tuple(float(g) for g in got) == grads, (v, got)
    batched = jax.vmap(lambda lo, v: lax.clamp(lo, v, 1.0))(jnp.array([0.0, 0.5]), jnp.array([0.2, 0.2]))
    np.testing.assert_array_equal(batched, np.array([0.2, 0.5], np.float32))
