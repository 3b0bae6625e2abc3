"""jnp indexing against NumPy: `x[idx]` for every index form (eager, jit, printed program),
`.at[idx]` updates (repeated indices, broadcasting, dtypes, modes), take / take_along_axis,
the nonzero family, compress / extract / choose, and the errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import errors
from tests.helpers import check_staged, TEST_BACKEND

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
MASK = A % 7 < 3



def _ids(idx):
    text = repr(idx).replace("\n", "").replace(" ", "")
    return text if len(text) < 40 else text[:37] + "..."


# index expressions NumPy accepts on a (3, 4, 5) array
INDICES = [
    0, -1, (1, 2), (1, 2, 3), (-3, -4, -5), slice(None), slice(1, None), slice(None, None, 2),
    slice(None, None, -1), (slice(None), slice(3, 0, -2)), (Ellipsis, 1), (1, Ellipsis),
    (None,), (None, 0, None), (slice(None), None, 1), (Ellipsis, None), (0, Ellipsis, None),
    np.array([0, 2]), [2, 0, 2], (np.array([[0], [2]]), np.array([1, 3])),
    (slice(None), [0, 3]), (Ellipsis, [4, 0, 4]), ([0, 1], slice(None), [1, 2]),
    (slice(None), [1], [2, 3]), (0, slice(None), [1, 2]), ([0, 2], None, [1, 3]),
    (slice(None), [0], None, [1]), ([1], Ellipsis, [2]), (1, [0, 1], [2, 3]),
    MASK, MASK[:, :, 0], (1, MASK[0]), (MASK[:, :, 0], slice(None, 2)), (Ellipsis, MASK[0, 0]),
    True, False, (slice(None), True, [0], [1]), (0, True), np.array([], np.int32), [],
    (np.array([[1, -1], [0, 2]]), slice(1, 3), 4), np.int64(2), (np.array(1), slice(None)),
    (slice(-100, 100), slice(2, 2)), (slice(None), slice(None, None, 3), [[0], [1]]),
]


@pytest.mark.parametrize("idx", INDICES, ids=_ids)
def test_getitem_matches_numpy(idx):
    out = jnp.asarray(A)[idx]
    expect = A[idx]
    assert out.shape == expect.shape
    assert out.dtype == expect.dtype
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("idx", INDICES, ids=_ids)
def test_getitem_staged_matches_numpy(idx):
    out = check_staged(lambda x: x[idx], jnp.asarray(A))
    np.testing.assert_array_equal(out, A[idx])


@pytest.mark.parametrize("i", [0, 2, -1, -3])
def test_traced_scalar_index_uses_dynamic_slice(i):
    f = lambda x, i: x[i, 1:3]
    out = check_staged(f, jnp.asarray(A), jnp.int32(i))
    np.testing.assert_array_equal(out, A[i, 1:3])
    assert "dynamic_slice(" in str(omnistage.make_jaxpr(f)(jnp.asarray(A), jnp.int32(i)))


@pytest.mark.parametrize("i, clamped", [(3, 2), (100, 2), (-4, 0), (-100, 0)])
def test_traced_scalar_index_out_of_bounds_clamps(i, clamped):
    out = omnistage.jit(lambda x, i: x[i])(jnp.asarray(A), jnp.int32(i))
    np.testing.assert_array_equal(out, A[clamped])


def test_traced_index_arrays_gather_with_wrap_and_clamp():
    idx = np.array([[0, -1], [7, -9]])
    f = lambda x, i, j: x[i, :, j]
    out = check_staged(f, jnp.asarray(A), jnp.asarray(idx), jnp.array([1, 4]))
    np.testing.assert_array_equal(out, A[np.clip(np.where(idx < 0, idx + 3, idx), 0, 2), :, [1, 4]])


def test_traced_scalars_with_index_arrays_are_advanced():
    f = lambda x, i, j: x[i, :, j]
    out = check_staged(f, jnp.asarray(A), jnp.int32(1), jnp.array([0, 3]))
    np.testing.assert_array_equal(out, A[1, :, [0, 3]])
    assert out.shape == (2, 4)


def test_concrete_array_mask_and_index_under_jit():
    mask, idx = jnp.asarray(MASK), jnp.array([2, 0])
    out = omnistage.jit(lambda x: x[mask] + x[idx].sum())(jnp.asarray(A))
    np.testing.assert_allclose(out, A[MASK] + A[[2, 0]].sum())


def test_traced_boolean_mask_raises_non_concrete_error():
    with pytest.raises(errors.NonConcreteBooleanIndexError) as info:
        omnistage.jit(lambda x, m: x[m])(jnp.asarray(A), jnp.asarray(MASK))
    assert "jnp.where" in str(info.value) and "size=" in str(info.value)
    assert isinstance(info.value, IndexError)


@pytest.mark.parametrize(
    "idx, exc, match",
    [
        ((0, 0, 0, 0), IndexError, "Too many indices"),
        ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
        (1.5, IndexError, "only integers"),
        (np.array([1.0]), TypeError, "integer or boolean type"),
        (MASK[:2], IndexError, "boolean index did not match"),
        (([0, 1], [0, 1, 2]), IndexError, "could not be broadcast"),
        ("a", IndexError, "only integers"),
        (slice(None, None, 0), ValueError, "step cannot be zero"),
    ],
)
def test_index_errors_like_numpy(idx, exc, match):
    with pytest.raises(exc, match=match):
        jnp.asarray(A)[idx]


@pytest.mark.parametrize("jitted", [False, True])
def test_static_ints_out_of_bounds_clamp_on_reads_and_drop_from_updates_as_jax(jitted):
    # JAX's own examples/control.py reads Q[T + 1] of an array of T + 1 rows
    x = np.arange(10.0, dtype=np.float32)
    run = omnistage.jit if jitted else (lambda f: f)
    assert float(run(lambda a: a[11])(jnp.asarray(x))) == 9.0
    assert float(run(lambda a: a[-11])(jnp.asarray(x))) == 0.0
    np.testing.assert_array_equal(run(lambda a: a.at[11].set(5.0))(jnp.asarray(x)), x)
    np.testing.assert_array_equal(run(lambda a: a.at[-11].add(5.0))(jnp.asarray(x)), x)
    np.testing.assert_array_equal(run(lambda a: a.at[9].add(5.0))(jnp.asarray(x)), x + np.eye(10, dtype=np.float32)[9] * 5)
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(run(lambda a: a[5, 1:3])(jnp.asarray(m)), m[2, 1:3])
    np.testing.assert_array_equal(run(lambda a: a[0, -5])(jnp.asarray(m)), m[0, 0])


@pytest.mark.parametrize("index", [
    lambda a: a[0], lambda a: a.at[0].get(mode="clip"), lambda a: a.at[0].get(mode="fill", fill_value=5.0),
    lambda a: a.at[0].set(1.0), lambda a: a.at[0].add(1.0, mode="drop"),
])
@pytest.mark.parametrize("jitted", [False, True])
def test_a_static_int_into_an_empty_axis_raises_as_jax(index, jitted):
    # nothing to clamp into: an element would be made up (JAX raises in every mode)
    run = omnistage.jit(index) if jitted else index
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        run(jnp.zeros(0))
    np.testing.assert_array_equal(jnp.zeros((3, 0))[5], np.zeros(0))  # an empty row of a clamped axis is fine


def test_traced_slice_bound_raises_index_error_naming_dynamic_slice():
    with pytest.raises(IndexError, match="dynamic_slice"):
        omnistage.jit(lambda x, i: x[i:i + 2])(jnp.asarray(A), 1)


def test_item_assignment_names_at():
    with pytest.raises(TypeError, match=r"\.at"):
        x = jnp.asarray(A)
        x[0] = 1


def test_getitem_complex_and_int_dtypes():
    z = (A + 1j * A).astype(np.complex64)
    np.testing.assert_array_equal(jnp.asarray(z)[[0, 2], ::-2], z[[0, 2], ::-2])
    n = A.astype(np.int32)
    out = check_staged(lambda x: x[MASK], jnp.asarray(n))
    assert out.dtype == np.int32


# --- .at[] -------------------------------------------------------------------------------

UPDATE_INDICES = [
    0, (1, 2), (slice(None), 1), (Ellipsis, slice(1, 4)), (slice(None, None, -1), 0),
    (slice(None), slice(None, None, 2)), (slice(3, 0, -2),), (None, 1), [0, 0, 2],
    (np.array([[0, 1], [1, 1]]), slice(None), [4, 4]), (slice(None), [1], None, [2]),
    MASK, (1, MASK[0]), True, (0, True, 1), ([2, 2], [3, 3], [4, 4]), (Ellipsis, [0, 0, 0]),
    (slice(1, None), [3, 3], slice(None, None, -2)),
]

_NP_AT = {
    "add": np.add.at, "multiply": np.multiply.at, "min": np.minimum.at, "max": np.maximum.at,
}


def np_update(x, idx, v, kind):
    """NumPy reference: unbuffered ufunc.at for accumulating kinds, assignment for set."""
    out = x.copy()
    if kind == "set":
        out[idx] = v
    elif kind in _NP_AT:
        _NP_AT[kind](out, idx, np.broadcast_to(v, x[idx].shape))
    elif kind == "divide":
        f = np.ones_like(x)
        np.multiply.at(f, idx, np.broadcast_to(v, x[idx].shape))
        out = x / f
    elif kind == "power":
        f = np.ones_like(x)
        np.multiply.at(f, idx, np.broadcast_to(v, x[idx].shape))
        out = x ** f
    return out


def _values_for(idx):
    shape = A[idx].shape
    return (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 5) - 2


@pytest.mark.parametrize("kind", ["set", "add", "multiply", "min", "max", "divide"])
@pytest.mark.parametrize("idx", UPDATE_INDICES, ids=_ids)
def test_at_update_matches_numpy(idx, kind):
    v = _values_for(idx)
    if kind == "divide":
        v = np.where(v == 0, 4, v)
    out = getattr(jnp.asarray(A).at[idx], kind)(jnp.asarray(v))
    np.testing.assert_allclose(out, np_update(A, idx, v, kind), rtol=1e-6)
    assert out.dtype == np.float32


@pytest.mark.parametrize("idx", UPDATE_INDICES[::3], ids=_ids)
def test_at_update_staged(idx):
    v = _values_for(idx)
    out = check_staged(lambda x, v: x.at[idx].add(v), jnp.asarray(A), jnp.asarray(v))
    np.testing.assert_allclose(out, np_update(A, idx, v, "add"))


def test_at_power_matches_numpy():
    x = np.linspace(0.5, 2.0, 6, dtype=np.float32)
    out = jnp.asarray(x).at[[1, 1, 3]].power(2.0)
    np.testing.assert_allclose(out, np_update(x, [1, 1, 3], np.float32(2.0), "power"), rtol=1e-6)


def test_at_repeated_indices_accumulate_for_add():
    out = jnp.zeros(4).at[jnp.array([1, 1, 1, 3])].add(1.0)
    np.testing.assert_array_equal(out, [0, 3, 0, 1])


def test_at_values_broadcast_to_indexed_shape():
    out = jnp.zeros((3, 4)).at[:, 1:3].set(jnp.array([7.0, 8.0]))
    expect = np.zeros((3, 4), np.float32)
    expect[:, 1:3] = [7, 8]
    np.testing.assert_array_equal(out, expect)
    with pytest.raises(ValueError, match=r"shape mismatch: value array of shape \(3,\).*\(3, 2\)"):
        jnp.zeros((3, 4)).at[:, 1:3].set(jnp.ones(3))


def test_at_keeps_dtype_and_weak_type_of_x():
    x = jnp.arange(5)  # int32
    out = x.at[1].set(2.7)
    assert out.dtype == np.int32 and out.tolist() == [0, 2, 2, 3, 4]
    out = x.at[jnp.array([0, 0])].add(1.5)  # promoted, accumulated, cast back (as JAX)
    assert out.dtype == np.int32 and out.tolist() == [3, 1, 2, 3, 4]
    w = omnistage.lax.broadcast_in_dim(1.0, (3,), ())  # weakly typed float32
    assert w.at[0].set(jnp.float32(5)).weak_type


def test_at_divide_of_integer_array_gives_float_as_jax():
    out = jnp.arange(4).at[1].divide(2)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [0, 0.5, 2, 3])


def test_at_traced_out_of_bounds_updates_are_dropped():
    f = lambda x, i: x.at[i].set(-1.0)
    np.testing.assert_array_equal(check_staged(f, jnp.zeros(3), jnp.array([0, 3, 9])), [-1, 0, 0])
    np.testing.assert_array_equal(check_staged(f, jnp.zeros(3), jnp.int32(5)), [0, 0, 0])
    np.testing.assert_array_equal(check_staged(f, jnp.zeros(3), jnp.int32(-1)), [0, 0, -1])
    np.testing.assert_array_equal(check_staged(f, jnp.zeros(3), jnp.int32(-4)), [0, 0, 0])


def test_at_modes_clip_and_drop():
    x = jnp.zeros(3)
    np.testing.assert_array_equal(x.at[jnp.array([5, -7])].set(1.0, mode="clip"), [1, 0, 1])
    np.testing.assert_array_equal(x.at[5].add(1.0, mode="drop"), [0, 0, 0])
    np.testing.assert_array_equal(x.at[5].add(1.0), [0, 0, 0])  # mode None drops, as JAX
    with pytest.raises(ValueError, match="Invalid mode"):
        x.at[0].set(1.0, mode="bogus")


def test_at_get_modes():
    x = jnp.asarray(A[0, 0])  # [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(x.at[jnp.array([1, 9, -1])].get(), [1, 4, 4])
    out = x.at[jnp.array([1, 9, -1, -6])].get(mode="fill", fill_value=-5.0)
    np.testing.assert_array_equal(out, [1, -5, 4, -5])
    assert np.isnan(np.asarray(x.at[7].get(mode="fill"))).all()
    np.testing.assert_array_equal(x.at[7].get(mode="clip"), 4)


def test_at_with_traced_scalar_and_slices_staged():
    f = lambda x, i, v: x.at[i, 1:, ::2].multiply(v)
    v = jnp.full((3, 3), 2.0)
    out = check_staged(f, jnp.asarray(A), jnp.int32(-1), v)
    np.testing.assert_array_equal(out, np_update(A, (-1, slice(1, None), slice(None, None, 2)), np.asarray(v), "multiply"))
    assert "scatter_mul(" in str(omnistage.make_jaxpr(f)(jnp.asarray(A), jnp.int32(1), v))


def test_at_static_box_uses_dynamic_update_slice():
    text = str(omnistage.make_jaxpr(lambda x: x.at[1, ::-1, 2:4].add(1.0))(jnp.asarray(A)))
    assert "dynamic_update_slice(" in text and "scatter" not in text


def test_at_complex_and_bool():
    z = jnp.zeros(3, jnp.complex64).at[jnp.array([1, 1])].add(1 + 2j)
    np.testing.assert_array_equal(z, [0, 2 + 4j, 0])
    b = jnp.zeros(3, bool).at[2].set(True)
    np.testing.assert_array_equal(b, [False, False, True])


# --- take / take_along_axis --------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_matches_numpy_modes(axis, mode):
    idx = np.array([[0, 7], [-1, -8]])
    out = check_staged(lambda x, i: jnp.take(x, i, axis=axis, mode=mode), jnp.asarray(A), jnp.asarray(idx))
    np.testing.assert_array_equal(out, np.take(A, idx, axis=axis, mode=mode))


@pytest.mark.parametrize("i", [-1, 1, 9])
def test_take_traced_scalar_index_clip_does_not_wrap_negative(i):
    out = check_staged(lambda x, i: jnp.take(x, i, axis=1, mode="clip"), jnp.asarray(A), jnp.int32(i))
    np.testing.assert_array_equal(out, np.take(A, i, axis=1, mode="clip"))


def test_take_default_fill_mode():
    out = jnp.take(jnp.asarray(A), jnp.array([1, -1, 5, -6]), axis=2)
    expect = np.take(A, [1, -1, 0, 0], axis=2)
    expect[..., 2:] = np.nan
    np.testing.assert_array_equal(out, expect)
    out = jnp.take(jnp.arange(3), jnp.array([3]), fill_value=-7)
    np.testing.assert_array_equal(out, [-7])
    assert jnp.take(jnp.arange(3), jnp.array([3])).tolist() == [np.iinfo(np.int32).min]


def test_take_scalar_index_and_errors():
    np.testing.assert_array_equal(jnp.take(jnp.asarray(A), 2, axis=1), np.take(A, 2, axis=1))
    with pytest.raises(IndexError, match="empty axis"):
        jnp.take(jnp.zeros((0, 2)), jnp.array([0]), axis=0)
    with pytest.raises(TypeError, match="integer"):
        jnp.take(jnp.asarray(A), jnp.array([0.5]))
    with pytest.raises(NotImplementedError):
        jnp.take(jnp.asarray(A), jnp.array([0]), mode="raise")


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_along_axis_matches_numpy(axis):
    rng = np.random.default_rng(0)
    if axis is None:
        idx = rng.integers(0, A.size, size=7)
    else:
        shape = list(A.shape)
        shape[axis] = 3
        idx = rng.integers(0, A.shape[axis], size=shape)
    out = check_staged(lambda x, i: jnp.take_along_axis(x, i, axis=axis), jnp.asarray(A), jnp.asarray(idx))
    np.testing.assert_array_equal(out, np.take_along_axis(A, idx, axis=axis))


def test_take_along_axis_broadcasts_and_argsort_use():
    x = np.array([[5, 3, 4], [2, 7, 6]], np.float32)
    idx = np.argsort(x, axis=1)
    np.testing.assert_array_equal(jnp.take_along_axis(jnp.asarray(x), jnp.asarray(idx), axis=1), np.sort(x, axis=1))
    col = np.array([[0], [2]])
    np.testing.assert_array_equal(jnp.take_along_axis(jnp.asarray(x), jnp.asarray(col), 1), np.take_along_axis(x, col, 1))
    with pytest.raises(ValueError, match="same number of dimensions"):
        jnp.take_along_axis(jnp.asarray(x), jnp.array([0]), axis=1)


# --- nonzero family ----------------------------------------------------------------------


def test_nonzero_eager_matches_numpy():
    out = jnp.nonzero(jnp.asarray(A % 4 == 1))
    for o, e in zip(out, np.nonzero(A % 4 == 1)):
        np.testing.assert_array_equal(o, e)
        assert o.dtype == np.int32
    for o, e in zip(jnp.where(jnp.asarray(MASK)), np.where(MASK)):
        np.testing.assert_array_equal(o, e)


@pytest.mark.parametrize("size", [0, 3, 30, 70])
def test_nonzero_with_size_pads_or_truncates(size):
    out = check_staged(lambda x: jnp.nonzero(x, size=size, fill_value=-1), jnp.asarray(MASK))
    expect = np.nonzero(MASK)
    for o, e in zip(out, expect):
        padded = np.concatenate([e, -np.ones(max(0, size - e.size), e.dtype)])[:size]
        np.testing.assert_array_equal(o, padded)


def test_nonzero_size_with_per_dim_fill_and_where_form():
    out = omnistage.jit(lambda x: jnp.where(x > 2.5, size=3, fill_value=(7, 9)))(jnp.array([[1.0, 3.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(out[0], [0, 7, 7])
    np.testing.assert_array_equal(out[1], [1, 9, 9])


def test_nonzero_under_jit_without_size_raises_concretization_error():
    with pytest.raises(errors.ConcretizationTypeError, match="size="):
        omnistage.jit(jnp.nonzero)(jnp.asarray(MASK))
    with pytest.raises(ValueError, match="0d"):
        jnp.nonzero(jnp.asarray(1.0))


def test_argwhere_and_flatnonzero():
    np.testing.assert_array_equal(jnp.argwhere(jnp.asarray(MASK)), np.argwhere(MASK))
    assert jnp.argwhere(jnp.asarray(1.0)).shape == np.argwhere(np.array(1.0)).shape
    np.testing.assert_array_equal(jnp.flatnonzero(jnp.asarray(MASK)), np.flatnonzero(MASK))
    out = check_staged(lambda x: jnp.argwhere(x, size=4), jnp.asarray(MASK))
    np.testing.assert_array_equal(out, np.argwhere(MASK)[:4])
    out = check_staged(lambda x: jnp.flatnonzero(x, size=4), jnp.asarray(MASK))
    np.testing.assert_array_equal(out, np.flatnonzero(MASK)[:4])


@pytest.mark.parametrize("cond", [[True, False, True, True], [False, True], [True, False, False, False, False]])
def test_compress_matches_numpy(cond):
    out = jnp.compress(np.array(cond), jnp.asarray(A), axis=1)
    np.testing.assert_array_equal(out, np.compress(cond, A, axis=1))


def test_compress_with_size_under_jit_and_extract():
    f = lambda c, x: jnp.compress(c, x, axis=2, size=3, fill_value=-1.0)
    out = check_staged(f, jnp.array([False, True, False, False, True]), jnp.asarray(A))
    expect = np.concatenate([A[:, :, [1, 4]], -np.ones((3, 4, 1), np.float32)], axis=2)
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(jnp.extract(np.asarray(MASK), jnp.asarray(A)), np.extract(MASK, A))
    with pytest.raises(errors.ConcretizationTypeError):
        omnistage.jit(lambda c, x: jnp.compress(c, x))(jnp.array([True]), jnp.ones(2))


@pytest.mark.parametrize("mode", ["raise", "clip", "wrap"])
def test_choose_matches_numpy(mode):
    which = np.array([[0, 1, 2], [2, 1, 0]]) if mode == "raise" else np.array([[0, 4, 2], [-1, 1, 0]])
    choices = [np.arange(3), np.arange(3) * 10.0, np.full((2, 1), 100)]
    out = jnp.choose(jnp.asarray(which), [jnp.asarray(c) for c in choices], mode=mode)
    np.testing.assert_array_equal(out, np.choose(which, choices, mode=mode))
    assert out.dtype == np.float32


# --- hypothesis: random index tuples vs NumPy --------------------------------------------


@st.composite
def index_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    idx, dim = [], 0
    while dim < ndim and draw(st.booleans()):
        n = shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "array", "none", "mask"]))
        if kind == "int":
            idx.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            idx.append(slice(draw(st.none() | st.integers(-5, 5)), draw(st.none() | st.integers(-5, 5)),
                             draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))))
        elif kind == "array":
            size = draw(st.integers(0, 3))
            idx.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size)), np.intp))
        elif kind == "mask":
            idx.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        else:
            idx.append(None)
            continue
        dim += 1
    if draw(st.booleans()):
        # at the end, so every drawn index still addresses the dimension it was drawn for
        idx.append(Ellipsis)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return x, tuple(idx)


def _numpy_or_none(fn):
    try:
        return fn()
    except IndexError:  # e.g. index arrays that do not broadcast: both must refuse
        return None


@settings(max_examples=50, deadline=None)
@given(index_case())
def test_random_getitem_matches_numpy(case):
    x, idx = case
    expect = _numpy_or_none(lambda: x[idx])
    if expect is None:
        with pytest.raises(IndexError):
            jnp.asarray(x)[idx]
        return
    out = omnistage.jit(lambda x: x[idx], backend=TEST_BACKEND)(jnp.asarray(x))
    assert out.shape == expect.shape
    np.testing.assert_array_equal(out, expect)


@settings(max_examples=50, deadline=None)
@given(index_case(), st.sampled_from(["set", "add", "max"]))
def test_random_at_update_matches_numpy(case, kind):
    x, idx = case
    shape = _numpy_or_none(lambda: x[idx].shape)
    if shape is None:
        return
    v = (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 3) + 100
    out = omnistage.jit(lambda x, v: getattr(x.at[idx], kind)(v), backend=TEST_BACKEND)(jnp.asarray(x), jnp.asarray(v))
    expect = np_update(x, idx, v, kind)
    if kind == "set":
        # duplicates: any one of the writes may win, so compare positions written once
        counts = np.zeros(x.shape, int)
        np.add.at(counts, idx, 1)
        np.testing.assert_array_equal(np.asarray(out)[counts <= 1], expect[counts <= 1])
    else:
        np.testing.assert_array_equal(out, expect)


@settings(max_examples=50, deadline=None)
@given(index_case())
def test_random_getitem_with_traced_index_arrays_matches_numpy(case):
    x, idx = case
    expect = _numpy_or_none(lambda: x[idx])
    if expect is None:
        return
    traced = [p for p, i in enumerate(idx) if isinstance(i, np.ndarray) and i.dtype != bool]

    def f(x, *arrays):
        full = list(idx)
        for p, a in zip(traced, arrays):
            full[p] = a
        return x[tuple(full)]

    out = omnistage.jit(f, backend=TEST_BACKEND)(jnp.asarray(x), *[jnp.asarray(idx[p]) for p in traced])
    assert out.shape == expect.shape
    np.testing.assert_array_equal(out, expect)
