"""lax indexing primitives: dynamic_slice / dynamic_update_slice clamping, gather clamping,
scatter dropping and accumulation, shape rules and their errors, staging."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.staging import interpret_checked
from tests.helpers import assert_same, check_staged


# --- reference implementations (plain loops, independent of the impls) -------------------


def ref_gather(operand, indices, axes):
    rest = [d for d in range(operand.ndim) if d not in axes]
    batch = indices.shape[:-1]
    out = np.zeros(batch + tuple(operand.shape[d] for d in rest), operand.dtype)
    for b in itertools.product(*map(range, batch)):
        for r in itertools.product(*[range(operand.shape[d]) for d in rest]):
            pos = [0] * operand.ndim
            for j, a in enumerate(axes):
                pos[a] = min(max(int(indices[b + (j,)]), 0), operand.shape[a] - 1)
            for d, v in zip(rest, r):
                pos[d] = v
            out[b + r] = operand[tuple(pos)]
    return out


_COMBINE = {
    "scatter": lambda old, new: new,
    "scatter_add": lambda old, new: old + new,
    "scatter_mul": lambda old, new: old * new,
    "scatter_min": min,
    "scatter_max": max,
}


def ref_scatter(name, operand, indices, updates, axes):
    out = operand.copy()
    rest = [d for d in range(operand.ndim) if d not in axes]
    batch = indices.shape[:-1]
    for b in itertools.product(*map(range, batch)):
        coords = [int(indices[b + (j,)]) for j in range(len(axes))]
        if any(not 0 <= c < operand.shape[a] for c, a in zip(coords, axes)):
            continue  # dropped
        for r in itertools.product(*[range(operand.shape[d]) for d in rest]):
            pos = [0] * operand.ndim
            for c, a in zip(coords, axes):
                pos[a] = c
            for d, v in zip(rest, r):
                pos[d] = v
            out[tuple(pos)] = _COMBINE[name](out[tuple(pos)], updates[b + r])
    return out


def ref_dynamic_slice(x, starts, sizes):
    lo = [min(max(s + (d if s < 0 else 0), 0), d - z) for s, d, z in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + z) for s, z in zip(lo, sizes))]


# --- dynamic_slice -----------------------------------------------------------------------


X = np.arange(20, dtype=np.float32).reshape(4, 5)


@pytest.mark.parametrize("starts", [(0, 0), (1, 2), (3, 4), (10, 10), (-1, -2), (-100, 2)])
def test_dynamic_slice_clamps_like_xla(starts):
    out = lax.dynamic_slice(X, starts, (2, 3))
    np.testing.assert_array_equal(out, ref_dynamic_slice(X, starts, (2, 3)))


def test_dynamic_slice_traced_starts_staged():
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2))
    for i, j in [(0, 0), (3, 4), (-1, 1), (7, -9)]:
        out = check_staged(f, jnp.asarray(X), jnp.int32(i), jnp.int32(j))
        np.testing.assert_array_equal(out, ref_dynamic_slice(X, (i, j), (2, 2)))


def test_dynamic_slice_accepts_index_array_and_mixed_int_dtypes():
    out = lax.dynamic_slice(X, jnp.array([1, 1]), (2, 2))
    np.testing.assert_array_equal(out, X[1:3, 1:3])
    out = lax.dynamic_slice(X, (np.uint8(1), np.int16(2)), (1, 3))
    np.testing.assert_array_equal(out, X[1:2, 2:5])


def test_dynamic_slice_keeps_dtype_and_weak_type():
    out = lax.dynamic_slice(jnp.asarray(X, dtype=jnp.int32), (0, 1), (1, 1))
    assert out.dtype == np.int32
    w = lax.dynamic_slice(lax.broadcast_in_dim(1.0, (3,), ()), (1,), (1,))
    assert w.weak_type


def test_dynamic_slice_in_dim_and_index_in_dim():
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(X, 1, 2, axis=1), X[:, 1:3])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(X, 2, axis=0, keepdims=False), X[2])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(X, -1, axis=1), X[:, 4:5])


@pytest.mark.parametrize(
    "starts, sizes, match",
    [((0,), (2, 2), "start indices"), ((0, 0), (5, 2), "slice_sizes"), ((0.5, 0), (1, 1), "integer")],
)
def test_dynamic_slice_shape_errors_name_shapes(starts, sizes, match):
    with pytest.raises(TypeError, match=match) as info:
        lax.dynamic_slice(X, [jnp.asarray(s) for s in starts], sizes)
    assert "(4, 5)" in str(info.value) or "f32[]" in str(info.value)


# --- dynamic_update_slice ----------------------------------------------------------------


@pytest.mark.parametrize("starts", [(0, 0), (2, 3), (3, 4), (-1, -1), (9, -9)])
def test_dynamic_update_slice_clamps_so_update_fits(starts):
    upd = -np.ones((2, 3), np.float32)
    out = lax.dynamic_update_slice(X, upd, starts)
    expect = X.copy()
    lo = [min(max(s + (d if s < 0 else 0), 0), d - z) for s, d, z in zip(starts, X.shape, upd.shape)]
    expect[lo[0]:lo[0] + 2, lo[1]:lo[1] + 3] = upd
    np.testing.assert_array_equal(out, expect)


def test_dynamic_update_slice_staged():
    f = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1))
    out = check_staged(f, jnp.asarray(X), jnp.zeros((2, 2)), jnp.int32(3))
    expect = X.copy()
    expect[2:4, 1:3] = 0
    np.testing.assert_array_equal(out, expect)


def test_dynamic_update_slice_in_dim_and_index_in_dim():
    out = lax.dynamic_update_index_in_dim(X, jnp.zeros(5), 1, 0)
    expect = X.copy()
    expect[1] = 0
    np.testing.assert_array_equal(out, expect)
    out = lax.dynamic_update_slice_in_dim(X, jnp.zeros((4, 2)), 4, 1)
    expect = X.copy()
    expect[:, 3:] = 0
    np.testing.assert_array_equal(out, expect)


def test_dynamic_update_slice_rejects_bad_update():
    with pytest.raises(TypeError, match=r"\(5, 5\).*\(4, 5\)"):
        lax.dynamic_update_slice(X, np.zeros((5, 5), np.float32), (0, 0))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.dynamic_update_slice(X, np.zeros((1, 1), np.int32), (0, 0))


# --- gather ------------------------------------------------------------------------------


def test_gather_rows_clamps_out_of_bounds():
    idx = np.array([[0], [3], [9], [-4]])
    out = lax.gather(X, idx)
    np.testing.assert_array_equal(out, X[[0, 3, 3, 0]])


def test_gather_axes_in_any_order():
    idx = np.array([[1, 0], [4, 3], [2, 2]])  # (col, row) pairs
    out = lax.gather(X, idx, axes=(1, 0))
    np.testing.assert_array_equal(out, X[[0, 3, 2], [1, 4, 2]])


def test_gather_batch_dims_then_remaining_dims():
    x = np.arange(60).reshape(3, 4, 5).astype(np.int32)
    idx = np.array([[[0], [2]], [[3], [1]]])  # batch (2, 2), addressing axis 1
    out = lax.gather(x, idx, axes=(1,))
    assert out.shape == (2, 2, 3, 5)
    np.testing.assert_array_equal(out, ref_gather(x, idx, (1,)))


def test_gather_with_no_addressed_axes_broadcasts():
    out = lax.gather(X, np.zeros((3, 0), np.int32), axes=())
    np.testing.assert_array_equal(out, np.broadcast_to(X, (3, 4, 5)))


def test_gather_from_empty_axis_gives_zeros():
    out = lax.gather(np.zeros((0, 3), np.float32), np.array([[0], [1]]))
    np.testing.assert_array_equal(out, np.zeros((2, 3), np.float32))


def test_gather_complex_and_bool():
    z = (X + 1j * X).astype(np.complex64)
    np.testing.assert_array_equal(lax.gather(z, np.array([[1]])), z[[1]])
    b = X > 7
    assert lax.gather(b, np.array([[2]])).dtype == np.bool_


def test_gather_staged_with_traced_indices():
    f = lambda x, i: lax.gather(x, i, axes=(1,))
    idx = jnp.array([[4], [0], [7]])
    out = check_staged(f, jnp.asarray(X), idx)
    np.testing.assert_array_equal(out, ref_gather(X, np.asarray(idx), (1,)))
    assert "gather(" in str(omnistage.make_jaxpr(f)(jnp.asarray(X), idx))


@pytest.mark.parametrize(
    "idx, axes, exc, match",
    [
        (np.zeros((2, 1), np.float32), (0,), TypeError, "integer"),
        (np.zeros((2, 2), np.int32), (0,), TypeError, "2 operand axes"),
        (np.zeros((2, 2), np.int32), (0, 0), ValueError, "distinct"),
        (np.zeros((2, 1), np.int32), (5,), ValueError, r"\(4, 5\)"),
        (np.zeros((), np.int32), (), TypeError, "batch"),
    ],
)
def test_gather_errors(idx, axes, exc, match):
    with pytest.raises(exc, match=match):
        lax.gather(X, idx, axes)


# --- scatter family ----------------------------------------------------------------------

SCATTERS = {
    "scatter": lax.scatter, "scatter_add": lax.scatter_add, "scatter_mul": lax.scatter_mul,
    "scatter_min": lax.scatter_min, "scatter_max": lax.scatter_max,
}


@pytest.mark.parametrize("name", list(SCATTERS))
def test_scatter_accumulates_repeats_and_drops_out_of_bounds(name):
    idx = np.array([[1], [1], [7], [-1], [3]])
    upd = np.arange(25, dtype=np.float32).reshape(5, 5) - 5
    out = SCATTERS[name](X, idx, upd)
    np.testing.assert_array_equal(out, ref_scatter(name, X, idx, upd, (0,)))


def test_scatter_add_matches_np_add_at():
    idx = np.array([[0, 1], [0, 1], [3, 4], [0, 1]])
    upd = np.ones(4, np.float32)
    out = lax.scatter_add(X, idx, upd)
    expect = X.copy()
    np.add.at(expect, (idx[:, 0], idx[:, 1]), upd)
    np.testing.assert_array_equal(out, expect)


def test_scatter_windows_and_axes_order():
    x = np.zeros((3, 4, 2), np.int32)
    idx = np.array([[3, 0], [1, 2]])  # (axis 1, axis 0)
    upd = np.array([[1, 2], [3, 4]], np.int32)  # batch (2,) + window axis 2
    out = lax.scatter(x, idx, upd, axes=(1, 0))
    np.testing.assert_array_equal(out, ref_scatter("scatter", x, idx, upd, (1, 0)))


def test_scatter_whole_operand_when_no_axes():
    out = lax.scatter_add(np.zeros(3, np.float32), np.zeros((2, 0), np.int32), np.ones((2, 3), np.float32), ())
    np.testing.assert_array_equal(out, [2, 2, 2])


def test_scatter_complex_and_bool():
    z = np.zeros(3, np.complex64)
    out = lax.scatter_add(z, np.array([[1], [1]]), np.array([1j, 2], np.complex64))
    np.testing.assert_array_equal(out, [0, 2 + 1j, 0])
    out = lax.scatter(np.zeros(3, bool), np.array([[2]]), np.array([True]))
    np.testing.assert_array_equal(out, [False, False, True])


def test_scatter_staged():
    f = lambda x, i, u: lax.scatter_add(x, i, u)
    i = jnp.array([[0], [0], [9]])
    u = jnp.ones((3, 5))
    out = check_staged(f, jnp.asarray(X), i, u)
    np.testing.assert_array_equal(out, ref_scatter("scatter_add", X, np.asarray(i), np.ones((3, 5), np.float32), (0,)))


def test_scatter_errors_name_shapes():
    with pytest.raises(TypeError, match=r"updates of shape \(2, 4\).*\(2, 5\)"):
        lax.scatter(X, np.zeros((2, 1), np.int32), np.zeros((2, 4), np.float32))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.scatter_add(X, np.zeros((2, 1), np.int32), np.zeros((2, 5), np.int32))
    with pytest.raises(TypeError, match="scatter_max does not accept dtype complex64"):
        lax.scatter_max(np.zeros(2, np.complex64), np.zeros((1, 1), np.int32), np.zeros(1, np.complex64))


def test_scatter_keeps_operand_aval():
    x = lax.broadcast_in_dim(1.0, (3,), ())
    out = lax.scatter(x, np.array([[0]]), lax.broadcast_in_dim(2.0, (1,), ()))
    assert out.weak_type and out.dtype == np.float32


# --- hypothesis: gather / scatter against the loop references ----------------------------


@st.composite
def gather_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    k = draw(st.integers(0, ndim))
    axes = tuple(draw(st.permutations(range(ndim)))[:k])
    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    idx = np.asarray(
        draw(st.lists(st.integers(-2, 6), min_size=int(np.prod(batch + (k,))), max_size=int(np.prod(batch + (k,))))),
        np.int32,
    ).reshape(batch + (k,))
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape), idx, axes


@settings(max_examples=50, deadline=None)
@given(gather_case())
def test_gather_matches_reference(case):
    x, idx, axes = case
    out = lax.gather(x, idx, axes)
    np.testing.assert_array_equal(out, ref_gather(x, idx, axes))


@settings(max_examples=50, deadline=None)
@given(gather_case(), st.sampled_from(list(SCATTERS)))
def test_scatter_matches_reference(case, name):
    x, idx, axes = case
    upd_shape = idx.shape[:-1] + tuple(x.shape[d] for d in range(x.ndim) if d not in axes)
    upd = (np.arange(int(np.prod(upd_shape)), dtype=np.float32).reshape(upd_shape) % 7) - 3
    out = SCATTERS[name](x, idx, upd, axes)
    np.testing.assert_array_equal(out, ref_scatter(name, x, idx, upd, axes))


def test_impls_agree_with_abstract_eval_under_checked_interpreter():
    def f(x, i, u):
        g = lax.gather(x, i, (1,))
        s = lax.scatter_mul(x, i, u, (1,))
        d = lax.dynamic_slice(x, (i[0, 0], 1), (2, 2))
        return g, s, lax.dynamic_update_slice(x, d, (0, i[1, 0]))

    args = (jnp.asarray(X), jnp.array([[1], [6]]), jnp.ones((2, 4)))
    program = omnistage.make_jaxpr(f)(*args)
    program.check()
    out = interpret_checked(program, *[np.asarray(a) for a in args])
    assert_same(f(*args), [np.asarray(o) for o in out])
