"""`omnistage.Array`: immutability, repr, NumPy interop, operators, methods, pickling,
iteration, and the scalar-type constructors, compared with NumPy and JAX's documented output."""
import copy
import operator
import pickle

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp


def _assert_array(x, expected, dtype=None):
    assert isinstance(x, omnistage.Array), type(x)
    expected = np.asarray(expected)
    assert x.shape == expected.shape
    assert x.dtype == (np.dtype(dtype) if dtype is not None else expected.dtype)
    np.testing.assert_allclose(np.asarray(x), expected, rtol=1e-6)


# --- immutability -------------------------------------------------------------------------


def test_item_assignment_raises_type_error_naming_at_set():
    x = jnp.arange(10)
    with pytest.raises(TypeError, match=r"x\.at\[idx\]\.set\(y\)"):
        x[0] = 10
    with pytest.raises(TypeError, match="immutable"):
        x[1:3] = 0
    np.testing.assert_array_equal(np.asarray(x), np.arange(10))


def test_slice_assignment_raises_too():
    x = jnp.eye(2)
    with pytest.raises(TypeError, match=r"\.at\["):
        x[:, -1] = 3


def test_numpy_view_of_array_is_read_only():
    x = jnp.arange(3)
    view = np.asarray(x)
    with pytest.raises(ValueError):
        view[0] = 5
    assert x.tolist() == [0, 1, 2]


def test_array_does_not_alias_a_mutable_numpy_input():
    source = np.arange(3.0)
    x = jnp.asarray(source)
    source[0] = 100.0
    assert x.tolist() == [0.0, 1.0, 2.0]


def test_array_is_unhashable():
    with pytest.raises(TypeError, match="unhashable"):
        hash(jnp.arange(3))
    with pytest.raises(TypeError):
        {jnp.float32(1): 1}  # noqa: B018


# --- repr / str ------------------------------------------------------------------------------

REPRS = [
    (lambda: jnp.array([1.0, 2.0]), "Array([1., 2.], dtype=float32)"),
    (lambda: jnp.float32(1), "Array(1., dtype=float32)"),
    (lambda: jnp.add(1, 1.0), "Array(2., dtype=float32, weak_type=True)"),
    (lambda: jnp.array([True, False]), "Array([ True, False], dtype=bool)"),
    (lambda: jnp.array([1 + 2j]), "Array([1.+2.j], dtype=complex64)"),
    (lambda: jnp.arange(10.0), "Array([0., 1., 2., 3., 4., 5., 6., 7., 8., 9.], dtype=float32)"),
    (lambda: jnp.zeros((2, 3)), "Array([[0., 0., 0.],\n       [0., 0., 0.]], dtype=float32)"),
    (lambda: jnp.arange(12).reshape(3, 4),
     "Array([[ 0,  1,  2,  3],\n       [ 4,  5,  6,  7],\n       [ 8,  9, 10, 11]], dtype=int32)"),
]


@pytest.mark.parametrize("make,expected", REPRS, ids=[r for _, r in REPRS])
def test_repr_matches_jax(make, expected):
    assert repr(make()) == expected


def test_str_is_numpy_str():
    assert str(jnp.array([1.0, 2.0])) == "[1. 2.]"
    assert str(jnp.int32(3)) == "3"


def test_format_of_scalar_array():
    assert f"{jnp.float32(1.5):.3f}" == "1.500"
    assert "{:d}".format(jnp.int32(7)) == "7"


# --- NumPy interop -------------------------------------------------------------------------


def test_np_asarray_gives_ndarray_with_same_dtype_and_values():
    x = jnp.array([[1, 2], [3, 4]], dtype=jnp.int8)
    a = np.asarray(x)
    assert type(a) is np.ndarray
    assert a.dtype == np.int8
    np.testing.assert_array_equal(a, [[1, 2], [3, 4]])


def test_dunder_array_with_dtype_and_copy():
    x = jnp.array([1.0, 2.0])
    a = x.__array__(np.float64)
    assert a.dtype == np.float64
    b = np.array(x, copy=True)
    b[0] = 7.0  # a copy is writable and independent
    assert x.tolist() == [1.0, 2.0]


def test_numpy_functions_accept_arrays():
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(np.sum(np.asarray(x), axis=0), [3.0, 5.0, 7.0])
    np.testing.assert_allclose(np.sin(np.asarray(x)), np.sin(np.arange(6.0).reshape(2, 3)))


def test_numpy_operand_on_the_left_gives_an_array():
    x = jnp.array([1.0, 2.0])
    for out in (np.float32(2) * x, np.ones(2) + x, np.ones(2, np.float32) - x):
        assert isinstance(out, omnistage.Array)
    assert (np.ones(2) + x).dtype == np.dtype("float32")  # numpy float64 canonicalizes


def test_array_namespace_is_jnp():
    assert jnp.ones(2).__array_namespace__() is jnp


def test_python_scalar_conversions():
    assert float(jnp.float32(1.5)) == 1.5
    assert int(jnp.int32(3)) == 3
    assert bool(jnp.array(True)) is True
    assert complex(jnp.complex64(1 + 2j)) == 1 + 2j
    assert [10, 20, 30][jnp.int32(1)] == 20  # __index__


def test_index_of_float_array_is_a_type_error():
    with pytest.raises(TypeError):
        [1, 2][jnp.float32(1)]


# --- operators ------------------------------------------------------------------------------

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
B = np.array([[2.0, 1.0, -3.0], [1.5, 2.0, 2.0]], np.float32)
IA = np.array([[3, -7, 12], [5, 6, -1]], np.int32)
IB = np.array([[2, 3, 5], [4, 1, 7]], np.int32)

ARITH = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "pow": operator.pow,
}
INT_ARITH = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
    "mod": operator.mod,
}
COMPARE = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
}
BITWISE = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}


@pytest.mark.parametrize("name", sorted(ARITH))
def test_float_arithmetic_operators(name):
    op = ARITH[name]
    a = np.abs(A) if name == "pow" else A
    _assert_array(op(jnp.asarray(a), jnp.asarray(B)), op(a, B), "float32")


@pytest.mark.parametrize("name", sorted(ARITH))
def test_reflected_float_arithmetic_with_python_scalar(name):
    op = ARITH[name]
    x = jnp.asarray(np.abs(A) + 1)
    out = op(2.0, x)
    _assert_array(out, op(np.float32(2.0), np.abs(A) + 1), "float32")
    assert out.weak_type is False


@pytest.mark.parametrize("name", ["add", "sub", "mul"])
def test_int_arithmetic_operators(name):
    op = INT_ARITH[name]
    _assert_array(op(jnp.asarray(IA), jnp.asarray(IB)), op(IA, IB), "int32")
    _assert_array(op(3, jnp.asarray(IB)), op(np.int32(3), IB), "int32")


def test_int_true_divide_gives_float32():
    _assert_array(jnp.asarray(IA) / jnp.asarray(IB), IA / IB, "float32")


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparison_operators(name):
    op = COMPARE[name]
    _assert_array(op(jnp.asarray(A), jnp.asarray(B)), op(A, B), "bool")
    _assert_array(op(jnp.asarray(A), 1.5), op(A, 1.5), "bool")
    _assert_array(op(1.5, jnp.asarray(A)), op(1.5, A), "bool")


@pytest.mark.parametrize("name", sorted(BITWISE))
def test_bitwise_operators(name):
    op = BITWISE[name]
    _assert_array(op(jnp.asarray(IA), jnp.asarray(IB)), op(IA, IB), "int32")
    _assert_array(op(6, jnp.asarray(IB)), op(np.int32(6), IB), "int32")
    ba, bb = IA > 0, IB > 2
    _assert_array(op(jnp.asarray(ba), jnp.asarray(bb)), op(ba, bb), "bool")


def test_unary_operators():
    x = jnp.asarray(A)
    _assert_array(-x, -A, "float32")
    _assert_array(+x, A, "float32")
    _assert_array(abs(x), np.abs(A), "float32")
    _assert_array(~jnp.asarray(IA), ~IA, "int32")
    _assert_array(~jnp.asarray(IA > 0), ~(IA > 0), "bool")


def test_matmul_operator():
    x = jnp.asarray(A)
    _assert_array(x @ jnp.asarray(B.T), A @ B.T, "float32")
    _assert_array(np.asarray(B.T, np.float32) @ x, B.T @ A, "float32")
    v = jnp.array([1.0, 2.0])
    assert (v @ v).shape == () and float(v @ v) == 5.0


def test_complex_arithmetic():
    z = np.array([1 + 2j, -3 + 0.5j], np.complex64)
    x = jnp.asarray(z)
    _assert_array(x * x, z * z, "complex64")
    _assert_array(x / (1 + 1j), z / np.complex64(1 + 1j), "complex64")
    _assert_array(abs(x), np.abs(z), "float32")
    _assert_array(x.real, z.real, "float32")
    _assert_array(x.imag, z.imag, "float32")
    _assert_array(x.conj(), z.conj(), "complex64")


def test_operator_with_unsupported_type_defers():
    with pytest.raises(TypeError):
        jnp.ones(2) + "a"  # noqa: B018
    with pytest.raises(TypeError):
        object() * jnp.ones(2)  # noqa: B018


# --- methods and attributes -----------------------------------------------------------------

M = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)

METHODS = [
    ("sum", lambda x: x.sum(), lambda a: a.sum()),
    ("sum_axis", lambda x: x.sum(axis=0), lambda a: a.sum(axis=0)),
    ("sum_keepdims", lambda x: x.sum(1, keepdims=True), lambda a: a.sum(1, keepdims=True)),
    ("prod", lambda x: x.prod(), lambda a: a.prod()),
    ("mean", lambda x: x.mean(), lambda a: a.mean()),
    ("mean_axis", lambda x: x.mean(0), lambda a: a.mean(0)),
    ("std", lambda x: x.std(), lambda a: a.std()),
    ("std_axis", lambda x: x.std(axis=1), lambda a: a.std(axis=1)),
    ("var", lambda x: x.var(), lambda a: a.var()),
    ("argmax", lambda x: x.argmax(), lambda a: a.argmax()),
    ("argmin_axis", lambda x: x.argmin(axis=1), lambda a: a.argmin(axis=1)),
    ("reshape_args", lambda x: x.reshape(3, 2), lambda a: a.reshape(3, 2)),
    ("reshape_tuple", lambda x: x.reshape((6,)), lambda a: a.reshape((6,))),
    ("reshape_minus1", lambda x: x.reshape(-1, 2), lambda a: a.reshape(-1, 2)),
    ("T", lambda x: x.T, lambda a: a.T),
    ("transpose", lambda x: x.transpose(), lambda a: a.transpose()),
    ("transpose_axes", lambda x: x.transpose(1, 0), lambda a: a.transpose(1, 0)),
    ("ravel", lambda x: x.ravel(), lambda a: a.ravel()),
    ("flatten", lambda x: x.flatten(), lambda a: a.flatten()),
    ("astype_int", lambda x: x.astype(jnp.int32), lambda a: a.astype(np.int32)),
    ("astype_bool", lambda x: x.astype(bool), lambda a: a.astype(bool)),
    ("squeeze", lambda x: x.reshape(1, 6).squeeze(), lambda a: a.reshape(1, 6).squeeze()),
    ("swapaxes", lambda x: x.swapaxes(0, 1), lambda a: a.swapaxes(0, 1)),
    ("getitem", lambda x: x[1], lambda a: a[1]),
    ("getitem_slice", lambda x: x[:, 1:], lambda a: a[:, 1:]),
    ("getitem_neg", lambda x: x[-1, ::-1], lambda a: a[-1, ::-1]),
    ("all", lambda x: (x > 0).all(), lambda a: (a > 0).all()),
    ("any", lambda x: (x > 5).any(axis=0), lambda a: (a > 5).any(axis=0)),
    ("dot", lambda x: x.dot(x.T), lambda a: a.dot(a.T)),
]


@pytest.mark.parametrize("name,method,reference", METHODS, ids=[m[0] for m in METHODS])
def test_method_matches_numpy(name, method, reference):
    _check_method(method, reference)


def _check_method(method, reference):
    expected = np.asarray(reference(M))
    out = method(jnp.asarray(M))
    dtype = expected.dtype
    if dtype == np.float64:
        dtype = np.dtype("float32")
    if dtype == np.int64:  # argmax/argmin: default int
        dtype = np.dtype("int32")
    _assert_array(out, expected, dtype)


def test_astype_float64_without_x64_is_float32():
    assert jnp.asarray(M).astype(np.float64).dtype == np.dtype("float32")
    assert jnp.asarray(M).astype(float).dtype == np.dtype("float32")


def test_item_and_tolist():
    x = jnp.asarray(M)
    assert x.item(0) == 1.0
    assert jnp.float32(2.5).item() == 2.5
    assert isinstance(jnp.int32(3).item(), int)
    assert x.tolist() == M.tolist()
    assert jnp.arange(3).tolist() == [0, 1, 2]


def test_attributes():
    x = jnp.asarray(M)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
    assert x.nbytes == 24 and x.itemsize == 4
    assert x.weak_type is False
    assert x.device == omnistage.devices()[0]


def test_block_until_ready_returns_self():
    x = jnp.ones(3)
    assert x.block_until_ready() is x
    y = jnp.ones(2)
    tree = {"a": x, "b": [y]}
    out = omnistage.block_until_ready(tree)
    assert out["a"] is x and out["b"][0] is y


# --- iteration, len, pickling, copying -------------------------------------------------------


def test_len_and_iteration():
    x = jnp.asarray(M)
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2
    for row, ref in zip(rows, M):
        _assert_array(row, ref, "float32")
    assert [int(v) for v in jnp.arange(4)] == [0, 1, 2, 3]


def test_len_and_iteration_of_scalar_raise_type_error():
    s = jnp.float32(1)
    with pytest.raises(TypeError):
        len(s)
    with pytest.raises(TypeError):
        iter(s)


def test_unpacking():
    a, b = jnp.array([1, 2])
    assert int(a) == 1 and int(b) == 2


@pytest.mark.parametrize("make", [
    lambda: jnp.asarray(M), lambda: jnp.add(1, 1.0), lambda: jnp.array([1 + 1j]),
    lambda: jnp.arange(5), lambda: jnp.array([True]),
])
def test_pickle_round_trip_keeps_values_dtype_and_weak_type(make):
    x = make()
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, omnistage.Array)
    assert y.dtype == x.dtype and y.shape == x.shape and y.weak_type == x.weak_type
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_copy_and_deepcopy():
    x = jnp.asarray(M)
    for y in (copy.copy(x), copy.deepcopy(x), x.copy()):
        np.testing.assert_array_equal(np.asarray(y), M)
        assert y.dtype == x.dtype


def test_isinstance_of_array():
    assert isinstance(jnp.ones(2), omnistage.Array)
    assert isinstance(jnp.ones(2), jnp.ndarray)
    assert not isinstance(np.ones(2), omnistage.Array)


# --- scalar types ----------------------------------------------------------------------------


def test_jnp_float32_of_python_int_is_a_float32_scalar_array():
    x = jnp.float32(1)
    assert isinstance(x, omnistage.Array)
    assert x.shape == () and x.dtype == jnp.float32 and x.dtype == np.float32
    assert repr(x) == "Array(1., dtype=float32)"


def test_jnp_scalar_type_of_sequence_makes_a_vector():
    x = jnp.int32([1, 2, 3])
    assert x.shape == (3,) and x.dtype == np.int32


def test_dtype_comparisons():
    x = jnp.ones(3)
    assert x.dtype == jnp.float32
    assert x.dtype == "float32"
    assert x.dtype != jnp.int32
    assert jnp.arange(3).dtype == jnp.int32


def test_bfloat16_arrays():
    bf16 = omnistage.dtypes.bfloat16
    x = jnp.array([1.0, 2.5], dtype=bf16)
    assert x.dtype == bf16 and x.dtype == jnp.bfloat16
    assert x.dtype != jnp.float32
    assert (x + x).dtype == bf16
    assert np.asarray(x + x).astype(np.float32).tolist() == [2.0, 5.0]


@pytest.mark.parametrize("name", ["floordiv", "mod"])
def test_int_floordiv_and_mod_follow_python_sign_rules(name):
    op = INT_ARITH[name]
    _assert_array(op(jnp.asarray(IA), jnp.asarray(IB)), op(IA, IB), "int32")
    _assert_array(op(7, jnp.asarray(IB)), op(np.int32(7), IB), "int32")


def test_float_floordiv_and_mod():
    _assert_array(jnp.asarray(A) // jnp.asarray(B), A // B, "float32")
    _assert_array(jnp.asarray(A) % jnp.asarray(B), A % B, "float32")


def test_shift_operators():
    x = jnp.asarray(IB)
    _assert_array(x << 2, IB << 2, "int32")
    _assert_array(x >> 1, IB >> 1, "int32")
    _assert_array(1 << x, np.int32(1) << IB, "int32")


MAX_MIN_METHODS = [
    ("max", lambda x: x.max(), lambda a: a.max()),
    ("max_axis", lambda x: x.max(axis=1), lambda a: a.max(axis=1)),
    ("min", lambda x: x.min(0), lambda a: a.min(0)),
    ("min_keepdims", lambda x: x.min(1, keepdims=True), lambda a: a.min(1, keepdims=True)),
]


@pytest.mark.parametrize("name,method,reference", MAX_MIN_METHODS, ids=[m[0] for m in MAX_MIN_METHODS])
def test_max_min_methods_match_numpy(name, method, reference):
    _check_method(method, reference)


def test_jnp_array_of_python_scalar_is_weakly_typed():
    """JAX: `jnp.array(1.0)` and `jnp.asarray(1)` keep the Python scalar's weak type."""
    assert repr(jnp.array(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    assert jnp.asarray(1).weak_type is True
    assert jnp.array(1.0, dtype=jnp.float32).weak_type is False
    assert jnp.array(True).weak_type is False
