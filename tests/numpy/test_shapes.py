"""jnp shape manipulation vs NumPy (values and dtypes; eager, jit, printed program, checked
interpreter), error messages for bad axes and shapes, and random reshape/transpose/concatenate."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from tests.helpers import check_staged, TEST_BACKEND

DTYPES = ["float32", "int32", "bool", "complex64"]


def _data(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-9, 9, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _same(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


# (jnp/np function name, input shape, keyword args): one-array shape ops
ONE_ARRAY_CASES = [
    ("reshape", (2, 3), dict(shape=(3, 2))),
    ("reshape", (2, 3), dict(shape=(-1,))),
    ("reshape", (2, 3, 4), dict(shape=(4, -1), order="F")),
    ("reshape", (), dict(shape=(1, 1))),
    ("reshape", (0, 3), dict(shape=(3, 0))),
    ("ravel", (2, 3), {}),
    ("ravel", (2, 3), dict(order="F")),
    ("transpose", (2, 3, 4), {}),
    ("transpose", (2, 3, 4), dict(axes=(1, -1, 0))),
    ("swapaxes", (2, 3, 4), dict(axis1=0, axis2=-1)),
    ("moveaxis", (2, 3, 4), dict(source=0, destination=-1)),
    ("moveaxis", (2, 3, 4, 5), dict(source=(0, 1), destination=(-1, 0))),
    ("expand_dims", (2, 3), dict(axis=1)),
    ("expand_dims", (2, 3), dict(axis=(0, -1))),
    ("expand_dims", (), dict(axis=0)),
    ("squeeze", (1, 3, 1), {}),
    ("squeeze", (1, 3, 1), dict(axis=-1)),
    ("broadcast_to", (3, 1), dict(shape=(2, 3, 4))),
    ("broadcast_to", (), dict(shape=(2,))),
    ("tile", (2, 3), dict(reps=(2, 1, 2))),
    ("tile", (3,), dict(reps=2)),
    ("tile", (), dict(reps=(2, 2))),
    ("repeat", (2, 3), dict(repeats=2)),
    ("repeat", (2, 3), dict(repeats=2, axis=1)),
    ("repeat", (2, 3), dict(repeats=[1, 0, 3], axis=1)),
    ("repeat", (4,), dict(repeats=[2, 2, 0, 1])),
    ("flip", (2, 3, 4), {}),
    ("flip", (2, 3, 4), dict(axis=(0, 2))),
    ("fliplr", (2, 3), {}),
    ("flipud", (2, 3), {}),
    ("roll", (2, 5), dict(shift=2)),
    ("roll", (2, 5), dict(shift=-7, axis=1)),
    ("roll", (2, 5), dict(shift=(1, 2), axis=(0, 1))),
    ("roll", (0,), dict(shift=3)),
    ("rot90", (2, 3), {}),
    ("rot90", (2, 3, 4), dict(k=-1, axes=(2, 0))),
    ("rot90", (2, 3), dict(k=2)),
    ("rot90", (2, 3), dict(k=3)),
    ("atleast_1d", (), {}),
    ("atleast_2d", (3,), {}),
    ("atleast_3d", (3,), {}),
    ("atleast_3d", (2, 3), {}),
    ("diag", (4,), dict(k=1)),
    ("diag", (3,), dict(k=-2)),
    ("diag", (3, 4), {}),
    ("diag", (3, 4), dict(k=2)),
    ("diagonal", (3, 4), dict(offset=-1)),
    ("diagonal", (2, 3, 4), dict(offset=1, axis1=1, axis2=2)),
    ("diagonal", (2, 3, 4), dict(axis1=2, axis2=0)),
    ("diagonal", (3, 4), dict(offset=9)),
    ("diagflat", (2, 2), dict(k=1)),
    ("tril", (3, 4), {}),
    ("tril", (2, 3, 4), dict(k=-1)),
    ("triu", (3, 4), dict(k=1)),
    ("trace", (3, 4), {}),
    ("trace", (2, 3, 4), dict(offset=1, axis1=1, axis2=2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,shape,kw", ONE_ARRAY_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(ONE_ARRAY_CASES)])
def test_shape_op_matches_numpy(name, shape, kw, dtype):
    x = _data(shape, dtype)
    got = check_staged(lambda x: getattr(jnp, name)(x, **kw), x)
    want = getattr(np, name)(x, **kw)
    if name == "trace":  # JAX's sum dtype rules; a sum's rounding may differ from NumPy's by an ulp
        want = np.asarray(want).astype({"b": np.int32, "i": np.int32}.get(x.dtype.kind, x.dtype))
        if want.dtype.kind in "fc":
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
            return
    _same(got, want)


JOIN_CASES = [
    ("concatenate", [(2, 3), (4, 3)], dict(axis=0)),
    ("concatenate", [(2, 3), (2, 1)], dict(axis=-1)),
    ("concatenate", [(2, 3), (3,)], dict(axis=None)),
    ("concatenate", [(0, 3), (2, 3)], {}),
    ("stack", [(2, 3), (2, 3), (2, 3)], dict(axis=1)),
    ("stack", [(), ()], {}),
    ("stack", [(2,), (2,)], dict(axis=-1)),
    ("hstack", [(3,), (2,)], {}),
    ("hstack", [(2, 3), (2, 1)], {}),
    ("vstack", [(3,), (3,)], {}),
    ("vstack", [(2, 3), (1, 3)], {}),
    ("dstack", [(3,), (3,)], {}),
    ("dstack", [(2, 3), (2, 3)], {}),
    ("column_stack", [(3,), (3, 2)], {}),
]


@pytest.mark.parametrize("name,shapes,kw", JOIN_CASES)
def test_join_matches_numpy(name, shapes, kw):
    xs = [_data(s, "float32", i) for i, s in enumerate(shapes)]
    got = check_staged(lambda *xs: getattr(jnp, name)(list(xs), **kw), *xs)
    _same(got, getattr(np, name)(xs, **kw))


def test_concatenate_promotes_dtypes_as_jax():
    a, b = np.arange(3, dtype=np.int8), np.ones(2, np.float32)
    got = check_staged(lambda a, b: jnp.concatenate([a, b]), a, b)
    assert got.dtype == np.float32
    got = check_staged(lambda a: jnp.concatenate([a, a], dtype=jnp.int32), a)
    assert got.dtype == np.int32
    assert jnp.stack([np.int8(1), np.uint8(2)]).dtype == np.int16


SPLIT_CASES = [
    ("split", (6, 2), dict(indices_or_sections=3)),
    ("split", (6, 2), dict(indices_or_sections=[1, 4], axis=0)),
    ("split", (2, 6), dict(indices_or_sections=[-2, 9], axis=1)),
    ("array_split", (7,), dict(indices_or_sections=3)),
    ("array_split", (2, 5), dict(indices_or_sections=4, axis=-1)),
    ("hsplit", (2, 4), dict(indices_or_sections=2)),
    ("hsplit", (4,), dict(indices_or_sections=2)),
    ("vsplit", (4, 2), dict(indices_or_sections=[3])),
    ("dsplit", (1, 2, 4), dict(indices_or_sections=2)),
]


@pytest.mark.parametrize("name,shape,kw", SPLIT_CASES)
def test_split_matches_numpy(name, shape, kw):
    x = _data(shape, "int32")
    got = check_staged(lambda x: getattr(jnp, name)(x, **kw), x)
    want = getattr(np, name)(x, **kw)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


PAD_MODES = ["constant", "edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "median", "linear_ramp", "empty"]


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("shape,pad_width", [((5,), 2), ((5,), (0, 12)), ((3, 4), ((2, 3), (0, 1))), ((3, 4), 7), ((1, 2), ((3, 0), (4, 5)))])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_pad_matches_numpy(mode, shape, pad_width, dtype):
    x = _data(shape, dtype, 5)
    if mode == "linear_ramp" and dtype == "int32":
        x = np.arange(np.prod(shape), dtype=dtype).reshape(shape) * 12  # ramps without rounding ties
    got = check_staged(lambda x: jnp.pad(x, pad_width, mode), x, rtol=1e-5)
    want = np.pad(x, pad_width, mode)
    if mode == "empty":
        want = np.pad(x, pad_width)  # jnp fills "empty" padding with zeros
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,kw", [
    ("constant", dict(constant_values=((1, 2), (3, 4)))),
    ("constant", dict(constant_values=7.5)),
    ("reflect", dict(reflect_type="odd")),
    ("symmetric", dict(reflect_type="odd")),
    ("mean", dict(stat_length=2)),
    ("maximum", dict(stat_length=((1, 2), (3, 1)))),
    ("linear_ramp", dict(end_values=((-4, 4), (8, 0)))),
])
def test_pad_mode_options_match_numpy(mode, kw):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) ** 1.5
    got = check_staged(lambda x: jnp.pad(x, ((2, 5), (3, 1)), mode, **kw), x, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got), np.pad(x, ((2, 5), (3, 1)), mode, **kw), rtol=1e-5, atol=1e-5)


def test_pad_constant_value_may_be_traced():
    x = np.ones((2, 2), np.float32)
    got = check_staged(lambda x, c: jnp.pad(x, 1, constant_values=c), x, np.float32(3))
    np.testing.assert_array_equal(got, np.pad(x, 1, constant_values=3))


def test_repeat_with_traced_repeats_needs_total_repeat_length():
    x = np.array([[1.0, -0.0], [np.inf, np.nan]], np.float32)
    r = np.array([2, 1], np.int32)
    got = check_staged(lambda x, r: jnp.repeat(x, r, axis=0, total_repeat_length=3), x, r)
    _same(got, np.repeat(x, r, axis=0))
    got = check_staged(lambda x, r: jnp.repeat(x, r, axis=1, total_repeat_length=5), x, r)
    _same(got, np.concatenate([np.repeat(x, r, axis=1), x[:, -1:], x[:, -1:]], axis=1))
    with pytest.raises(omnistage.errors.ConcretizationTypeError, match="total_repeat_length"):
        omnistage.jit(lambda x, r: jnp.repeat(x, r))(x, r)
    got = check_staged(lambda x: jnp.repeat(x, [1, 3], axis=1, total_repeat_length=3), x)
    _same(got, np.repeat(x, [1, 3], axis=1)[:, :3])


def test_roll_with_traced_shift():
    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    for shift in (0, 3, -7, 12):
        got = check_staged(lambda x, s: jnp.roll(x, s, axis=1), x, np.int32(shift))
        _same(got, np.roll(x, shift, axis=1))


def test_broadcast_arrays_and_shapes():
    a, b = _data((3, 1)), _data((4,), "int32")
    ga, gb = check_staged(lambda a, b: jnp.broadcast_arrays(a, b), a, b)
    wa, wb = np.broadcast_arrays(a, b)
    _same(ga, wa)
    _same(gb, wb)
    assert jnp.broadcast_shapes((3, 1), (4,), ()) == (3, 4)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_matches_numpy(indexing, sparse):
    xs = [np.arange(n, dtype=np.float32) for n in (2, 3, 4)]
    got = check_staged(lambda *xs: jnp.meshgrid(*xs, indexing=indexing, sparse=sparse), *xs)
    for g, w in zip(got, np.meshgrid(*xs, indexing=indexing, sparse=sparse)):
        _same(g, w)


def test_indices_and_ix():
    _same(check_staged(lambda: jnp.indices((2, 3))), np.indices((2, 3)).astype(np.int32))
    for g, w in zip(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        _same(g, w.astype(np.int32))
    a, b = np.array([0, 2], np.int32), np.array([1, 3, 4], np.int32)
    for g, w in zip(check_staged(lambda a, b: jnp.ix_(a, b), a, b), np.ix_(a, b)):
        _same(g, w)


# --- errors -------------------------------------------------------------------------------


def test_bad_reshape_names_both_shapes():
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(2, 3\) \(size 6\) into shape \(4,\)"):
        jnp.reshape(np.zeros((2, 3)), (4,))
    with pytest.raises(ValueError, match="only specify one unknown dimension"):
        jnp.reshape(np.zeros((2, 3)), (-1, -1))


def test_bad_axes_raise_axis_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.concatenate([x, x], axis=2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.expand_dims(x, 3)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.expand_dims(x, (0, 0))
    with pytest.raises(ValueError, match="don't match array"):
        jnp.transpose(x, (0,))
    with pytest.raises(ValueError, match="size not equal to one"):
        jnp.squeeze(x, 0)
    with pytest.raises(ValueError, match="rot90: axes must be different"):
        jnp.rot90(x, axes=(0, -2))


def test_bad_joins_and_splits_name_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\), \(2, 4\)"):
        jnp.concatenate([np.zeros((2, 3)), np.zeros((2, 4))])
    with pytest.raises(ValueError, match="Zero-dimensional"):
        jnp.concatenate([np.float32(1), np.float32(2)])
    with pytest.raises(ValueError, match="same shape"):
        jnp.stack([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="equal division"):
        jnp.split(np.zeros(5), 2)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.broadcast_to(np.zeros(3), (4,))
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(np.zeros(3), -1)
    with pytest.raises(ValueError, match="can't extend empty axis"):
        jnp.pad(np.zeros((0,)), 1, "edge")
    with pytest.raises(ValueError, match="Unimplemented padding mode"):
        jnp.pad(np.zeros(3), 1, "bogus")


def test_traced_shapes_raise_concretization_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(omnistage.errors.ConcretizationTypeError, match="static"):
        omnistage.jit(lambda x, n: jnp.reshape(x, (n, -1)))(x, np.int32(3))
    with pytest.raises(omnistage.errors.ConcretizationTypeError, match="pad_width"):
        omnistage.jit(lambda x, n: jnp.pad(x, n))(x, np.int32(1))


# --- random shapes ------------------------------------------------------------------------

_shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@settings(max_examples=50, deadline=None)
@given(_shapes, st.randoms(use_true_random=False))
def test_reshape_and_transpose_over_random_shapes(shape, rnd):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    new_shape = list(shape[::-1])
    if new_shape and rnd.random() < 0.5 and x.size:
        new_shape[rnd.randrange(len(new_shape))] = -1
    order = rnd.choice("CF")
    got = omnistage.jit(lambda x: jnp.reshape(jnp.transpose(x, perm), new_shape, order=order), backend=TEST_BACKEND)(x)
    _same(got, np.reshape(np.transpose(x, perm), new_shape, order=order))


@settings(max_examples=50, deadline=None)
@given(_shapes.filter(len), st.integers(0, 3), st.integers(1, 3), st.data())
def test_concatenate_over_random_shapes(shape, axis_seed, count, data):
    ax = axis_seed % len(shape)
    xs = []
    for i in range(count):
        s = list(shape)
        s[ax] = data.draw(st.integers(0, 3))
        xs.append(_data(tuple(s), data.draw(st.sampled_from(["float32", "int32", "bool"])), i))
    axis = ax - len(shape) if data.draw(st.booleans()) else ax
    got = omnistage.jit(lambda *xs: jnp.concatenate(xs, axis=axis), backend=TEST_BACKEND)(*xs)
    want = np.concatenate([np.asarray(x) for x in xs], axis=axis)
    # JAX promotion, not NumPy's: int32 with float32 is float32
    assert got.dtype == jnp.result_type(*[x.dtype for x in xs]) and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want.astype(got.dtype))
