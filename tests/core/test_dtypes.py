"""JAX's type promotion (the published lattice table), canonicalization and the 64-bit switch.

The expected tables below are JAX's own answers (`jax.numpy.result_type` with
`return_weak_type_flag`) for every pair of bool, u8, u16, u32, i8, i16, i32, f16, f32, c64
and the weakly typed Python scalars; `*` marks a weakly typed result.
"""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import dtypes as om_dtypes

NAMES = ["bool", "uint8", "uint16", "uint32", "int8", "int16", "int32", "float16", "float32",
         "complex64", "i*", "f*", "c*"]

# Row and column order: NAMES. 64-bit mode off (JAX's default).
TABLE_X32 = """
bool      bool      uint8     uint16    uint32    int8      int16     int32     float16   float32   complex64 int32*      float32*    complex64*
uint8     uint8     uint8     uint16    uint32    int16     int16     int32     float16   float32   complex64 uint8       float32*    complex64*
uint16    uint16    uint16    uint16    uint32    int32     int32     int32     float16   float32   complex64 uint16      float32*    complex64*
uint32    uint32    uint32    uint32    uint32    int32     int32     int32     float16   float32   complex64 uint32      float32*    complex64*
int8      int8      int16     int32     int32     int8      int16     int32     float16   float32   complex64 int8        float32*    complex64*
int16     int16     int16     int32     int32     int16     int16     int32     float16   float32   complex64 int16       float32*    complex64*
int32     int32     int32     int32     int32     int32     int32     int32     float16   float32   complex64 int32       float32*    complex64*
float16   float16   float16   float16   float16   float16   float16   float16   float16   float32   complex64 float16     float16     complex64
float32   float32   float32   float32   float32   float32   float32   float32   float32   float32   complex64 float32     float32     complex64
complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64   complex64   complex64
i*        int32*    uint8     uint16    uint32    int8      int16     int32     float16   float32   complex64 int32*      float32*    complex64*
f*        float32*  float32*  float32*  float32*  float32*  float32*  float32*  float16   float32   complex64 float32*    float32*    complex64*
c*        complex64* complex64* complex64* complex64* complex64* complex64* complex64* complex64 complex64 complex64 complex64* complex64* complex64*
"""

# The same with 64-bit mode on: weak types default to 64 bits, u32 with a signed type gives i64.
TABLE_X64 = """
bool      bool      uint8     uint16    uint32    int8      int16     int32     float16   float32   complex64 int64*      float64*    complex128*
uint8     uint8     uint8     uint16    uint32    int16     int16     int32     float16   float32   complex64 uint8       float64*    complex128*
uint16    uint16    uint16    uint16    uint32    int32     int32     int32     float16   float32   complex64 uint16      float64*    complex128*
uint32    uint32    uint32    uint32    uint32    int64     int64     int64     float16   float32   complex64 uint32      float64*    complex128*
int8      int8      int16     int32     int64     int8      int16     int32     float16   float32   complex64 int8        float64*    complex128*
int16     int16     int16     int32     int64     int16     int16     int32     float16   float32   complex64 int16       float64*    complex128*
int32     int32     int32     int32     int64     int32     int32     int32     float16   float32   complex64 int32       float64*    complex128*
float16   float16   float16   float16   float16   float16   float16   float16   float16   float32   complex64 float16     float16     complex64
float32   float32   float32   float32   float32   float32   float32   float32   float32   float32   complex64 float32     float32     complex64
complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64   complex64   complex64
i*        int64*    uint8     uint16    uint32    int8      int16     int32     float16   float32   complex64 int64*      float64*    complex128*
f*        float64*  float64*  float64*  float64*  float64*  float64*  float64*  float16   float32   complex64 float64*    float64*    complex128*
c*        complex128* complex128* complex128* complex128* complex128* complex128* complex128* complex64 complex64 complex64 complex128* complex128* complex128*
"""


def _parse(table):
    out = {}
    for line in table.strip().splitlines():
        row, *cells = line.split()
        assert len(cells) == len(NAMES), row
        for col, cell in zip(NAMES, cells):
            out[row, col] = (np.dtype(cell.rstrip("*")), cell.endswith("*"))
    return out


EXPECTED_X32 = _parse(TABLE_X32)
EXPECTED_X64 = _parse(TABLE_X64)
PAIRS = [(a, b) for a in NAMES for b in NAMES]

# A value standing for each lattice node: Python scalars are the weak types.
_WEAK_VALUES = {"i*": 3, "f*": 2.5, "c*": 1 + 2j}


def _value(name):
    if name in _WEAK_VALUES:
        return _WEAK_VALUES[name]
    return jnp.zeros((2,), dtype=name)


def _id(pair):
    return f"{pair[0]}-{pair[1]}"


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_result_type_of_values_follows_jax_table(pair):
    a, b = pair
    dtype, weak = om_dtypes.result_type(_value(a), _value(b), return_weak_type_flag=True)
    assert (np.dtype(dtype), weak) == EXPECTED_X32[a, b]


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_result_type_of_values_follows_jax_table_x64(pair, x64):
    a, b = pair
    dtype, weak = om_dtypes.result_type(_value(a), _value(b), return_weak_type_flag=True)
    assert (np.dtype(dtype), weak) == EXPECTED_X64[a, b]


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_binary_jnp_op_result_dtype_follows_jax_table(pair):
    """The table is what `jnp` arithmetic actually produces, eagerly."""
    a, b = pair
    assert jnp.add(_value(a), _value(b)).dtype == EXPECTED_X32[a, b][0]


STRONG = [n for n in NAMES if "*" not in n]


@pytest.mark.parametrize("pair", [(a, b) for a in STRONG for b in STRONG], ids=_id)
def test_promote_types_of_strong_dtypes_follows_jax_table(pair):
    a, b = pair
    assert jnp.promote_types(a, b) == EXPECTED_X32[a, b][0]
    assert jnp.promote_types(np.dtype(a), getattr(jnp, b if b != "bool" else "bool_")) == EXPECTED_X32[a, b][0]


@pytest.mark.parametrize("pair", [(a, b) for a in STRONG for b in STRONG], ids=_id)
def test_promote_types_of_strong_dtypes_follows_jax_table_x64(pair, x64):
    a, b = pair
    assert jnp.promote_types(a, b) == EXPECTED_X64[a, b][0]


@pytest.mark.parametrize("a", NAMES)
def test_promotion_is_commutative(a):
    for b in NAMES:
        assert EXPECTED_X32[a, b] == EXPECTED_X32[b, a]
        assert om_dtypes.result_type(_value(a), _value(b)) == om_dtypes.result_type(_value(b), _value(a))


_PY_TYPES = {"i*": int, "f*": float, "c*": complex}


def test_bool_python_scalar_is_not_weak():
    dtype, weak = om_dtypes.result_type(True, return_weak_type_flag=True)
    assert dtype == np.dtype("bool") and weak is False
    assert jnp.result_type(True, jnp.zeros(2, "int8")) == np.dtype("int8")


def test_result_type_of_several_operands_is_the_lattice_join():
    assert jnp.result_type(jnp.zeros(1, "uint8"), jnp.zeros(1, "int8"), 1.0) == np.dtype("float32")
    assert jnp.result_type(jnp.zeros(1, "int16"), 2, jnp.zeros(1, "float16")) == np.dtype("float16")
    assert jnp.result_type(1, 2.0, 3j) == np.dtype("complex64")


def test_result_type_of_numpy_arrays_is_strong_and_canonical():
    assert jnp.result_type(np.zeros(2)) == np.dtype("float32")
    assert jnp.result_type(np.zeros(2, "int64"), np.int8(1)) == np.dtype("int32")
    assert jnp.result_type(np.float64(1.0), jnp.zeros(1, "float16")) == np.dtype("float32")


# --- bfloat16 ---------------------------------------------------------------------------

BF16_PAIRS = [
    ("bfloat16", "float16", "float32"),
    ("bfloat16", "float32", "float32"),
    ("bfloat16", "int32", "bfloat16"),
    ("bfloat16", "uint8", "bfloat16"),
    ("bfloat16", "bool", "bfloat16"),
    ("bfloat16", "complex64", "complex64"),
    ("bfloat16", "bfloat16", "bfloat16"),
]


@pytest.mark.parametrize("a,b,expected", BF16_PAIRS)
def test_bfloat16_promotion(a, b, expected):
    dt = lambda n: om_dtypes.bfloat16 if n == "bfloat16" else n  # noqa: E731
    assert np.dtype(jnp.promote_types(dt(a), dt(b))) == np.dtype(dt(expected))


def test_bfloat16_with_python_float_stays_bfloat16():
    x = jnp.ones(3, dtype=jnp.bfloat16)
    y = x * 2.0
    assert y.dtype == jnp.bfloat16
    assert y.dtype == om_dtypes.bfloat16
    assert y.weak_type is False


# --- canonicalization and the 64-bit switch ---------------------------------------------------

CANON_X32 = {
    "float64": "float32", "int64": "int32", "uint64": "uint32", "complex128": "complex64",
    "float32": "float32", "int8": "int8", "uint16": "uint16", "bool": "bool", "float16": "float16",
}


@pytest.mark.parametrize("dtype,expected", sorted(CANON_X32.items()))
def test_canonicalize_dtype_narrows_64_bit_types_by_default(dtype, expected):
    assert om_dtypes.canonicalize_dtype(dtype) == np.dtype(expected)


@pytest.mark.parametrize("dtype", sorted(CANON_X32))
def test_canonicalize_dtype_is_identity_with_x64(dtype, x64):
    assert om_dtypes.canonicalize_dtype(dtype) == np.dtype(dtype)


def test_canonicalize_dtype_accepts_python_types():
    assert om_dtypes.canonicalize_dtype(float) == np.dtype("float32")
    assert om_dtypes.canonicalize_dtype(int) == np.dtype("int32")
    assert om_dtypes.canonicalize_dtype(complex) == np.dtype("complex64")
    assert om_dtypes.canonicalize_dtype(bool) == np.dtype("bool")


def test_default_creation_dtypes_are_32_bit():
    assert jnp.array(1.0).dtype == np.dtype("float32")
    assert jnp.array(1).dtype == np.dtype("int32")
    assert jnp.array(1j).dtype == np.dtype("complex64")
    assert jnp.array(np.arange(3, dtype=np.int64)).dtype == np.dtype("int32")
    assert jnp.array(np.ones(3)).dtype == np.dtype("float32")
    assert jnp.zeros(3).dtype == np.dtype("float32")
    assert jnp.arange(3).dtype == np.dtype("int32")
    assert jnp.arange(3.0).dtype == np.dtype("float32")
    assert jnp.asarray([1, 2]).dtype == np.dtype("int32")


def test_x64_creation_dtypes_are_64_bit(x64):
    assert jnp.array(1.0).dtype == np.dtype("float64")
    assert jnp.array(1).dtype == np.dtype("int64")
    assert jnp.array(1j).dtype == np.dtype("complex128")
    assert jnp.zeros(3).dtype == np.dtype("float64")
    assert jnp.arange(3).dtype == np.dtype("int64")
    assert jnp.array(np.ones(3)).dtype == np.dtype("float64")


def test_requesting_a_64_bit_dtype_without_x64_gives_32_bit():
    assert jnp.zeros(3, dtype=jnp.float64).dtype == np.dtype("float32")
    assert jnp.array([1, 2], dtype="int64").dtype == np.dtype("int32")
    assert jnp.ones(2).astype(np.float64).dtype == np.dtype("float32")


def test_python_scalar_arguments_are_weakly_typed():
    x = jnp.ones(3, dtype=jnp.float16)
    assert (x + 1.0).dtype == np.dtype("float16")
    assert (jnp.ones(3, dtype=jnp.int8) + 1).dtype == np.dtype("int8")
    assert (jnp.ones(3, dtype=jnp.int8) + 1.5).dtype == np.dtype("float32")
    assert jnp.add(1, 1.0).weak_type is True
    assert jnp.add(1, 1.0).dtype == np.dtype("float32")


def test_config_update_enable_x64_switches_and_restores():
    old = omnistage.config.read("jax_enable_x64")
    try:
        omnistage.config.update("jax_enable_x64", True)
        assert omnistage.config.jax_enable_x64
        assert jnp.array(1.0).dtype == np.dtype("float64")
        omnistage.config.update("jax_enable_x64", False)
        assert not omnistage.config.jax_enable_x64
        assert jnp.array(1.0).dtype == np.dtype("float32")
    finally:
        omnistage.config.update("jax_enable_x64", old)


def test_config_enable_x64_alias():
    old = omnistage.config.read("jax_enable_x64")
    try:
        omnistage.config.update("enable_x64", True)
        assert omnistage.config.read("jax_enable_x64")
        assert omnistage.config.read("enable_x64")
        assert jnp.zeros(2).dtype == np.dtype("float64")
    finally:
        omnistage.config.update("jax_enable_x64", old)
    assert jnp.zeros(2).dtype == np.dtype("float32")


def test_unknown_config_option_is_an_error_naming_it():
    with pytest.raises(AttributeError, match="jax_no_such_flag"):
        omnistage.config.update("jax_no_such_flag", True)


def test_jit_retraces_after_x64_switch():
    f = omnistage.jit(lambda x: x * 2)
    assert f(1.0).dtype == np.dtype("float32")
    old = omnistage.config.read("jax_enable_x64")
    try:
        omnistage.config.update("jax_enable_x64", True)
        assert f(1.0).dtype == np.dtype("float64")
    finally:
        omnistage.config.update("jax_enable_x64", old)
    assert f(1.0).dtype == np.dtype("float32")


# --- scalar types and dtype comparisons -------------------------------------------------------


def test_scalar_type_call_makes_a_strong_array():
    x = jnp.float32(1)
    assert isinstance(x, omnistage.Array)
    assert x.dtype == np.dtype("float32") and x.shape == () and x.weak_type is False
    assert jnp.int32(3.0).dtype == np.dtype("int32")
    assert jnp.bool_(1).dtype == np.dtype("bool")
    assert jnp.complex64(1).dtype == np.dtype("complex64")


@pytest.mark.parametrize("name", ["float32", "int32", "bool_", "uint8", "complex64", "float16", "int8"])
def test_dtype_compares_equal_to_jnp_scalar_type(name):
    scalar_type = getattr(jnp, name)
    x = jnp.zeros(2, dtype=scalar_type)
    assert x.dtype == scalar_type
    assert scalar_type == x.dtype
    assert x.dtype == np.dtype(getattr(np, name))
    assert jnp.dtype(scalar_type) == x.dtype


def test_bfloat16_dtype_comparisons():
    x = jnp.ones(2, dtype=omnistage.dtypes.bfloat16)
    assert x.dtype == omnistage.dtypes.bfloat16
    assert x.dtype == jnp.bfloat16
    assert x.dtype != jnp.float16
    assert x.dtype != jnp.float32
    assert jnp.ones(2).dtype != omnistage.dtypes.bfloat16
    assert jnp.dtype(jnp.bfloat16).itemsize == 2


def test_issubdtype():
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.issubdtype(jnp.int8, jnp.integer)
    assert not jnp.issubdtype(jnp.int8, jnp.floating)
    assert jnp.issubdtype(jnp.complex64, jnp.inexact)


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_binary_jnp_op_result_weak_type_follows_jax_table(pair):
    """JAX converts every operand with the result's weak flag: `uint8_array + 2.5` is a
    weakly typed float32 array."""
    a, b = pair
    assert jnp.add(_value(a), _value(b)).weak_type == EXPECTED_X32[a, b][1]


@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_result_type_treats_python_scalar_types_as_weak(pair):
    """JAX: `jnp.result_type(int, jnp.int8)` is int8 — the Python types are weak, like values."""
    a, b = (_PY_TYPES.get(n, n) for n in pair)
    assert jnp.result_type(a, b) == EXPECTED_X32[pair][0]


def test_jnp_scalar_types_compare_equal_to_numpy_types():
    assert jnp.float32 == np.float32
    assert jnp.int32 != np.float32
    assert jnp.float32 != jnp.float16
    assert jnp.dtype("float32") == jnp.float32
