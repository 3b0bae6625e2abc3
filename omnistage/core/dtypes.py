"""Dtypes and JAX's type-promotion lattice with weakly typed Python scalars.

Owns: canonicalization (64-bit off by default), the promotion lattice, `result_type`,
`bfloat16` (from ml_dtypes when installed, imported when first needed), and the default dtypes.
"""
import functools

import numpy as np

from .config import config

def _missing_bfloat16():
    class bfloat16:  # noqa: N801 - mirrors numpy scalar type naming
        """Placeholder: install ml_dtypes for a working bfloat16."""

        dtype = None

        def __new__(cls, *args, **kwargs):
            raise TypeError("bfloat16 needs the ml_dtypes package: pip install ml_dtypes")

    return bfloat16


@functools.lru_cache(maxsize=None)
def bfloat16_type():
    """ml_dtypes' bfloat16 scalar type (JAX's), importing ml_dtypes on first need; a placeholder
    that raises when used where ml_dtypes is not installed.

    Why not at import: ml_dtypes 0.7's import registers its ufunc loops one by one against
    NumPy's list (quadratic), 1.3 s of every process that imports omnistage, bfloat16 or not.
    A bfloat16 value can only exist once something has imported ml_dtypes, so a dtype named
    'bfloat16' is recognised by its name without it; the type itself (jnp.bfloat16,
    dtypes.bfloat16) and the string 'bfloat16' load it."""
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - depends on the environment
        return _missing_bfloat16()
    return np.dtype(ml_dtypes.bfloat16).type


def bfloat16_dtype():
    """np.dtype of bfloat16 (None without ml_dtypes); imports ml_dtypes on first need."""
    t = bfloat16_type()
    return None if getattr(t, "dtype", 1) is None else np.dtype(t)


def __getattr__(name):  # `dtypes.bfloat16` is resolved when first asked for (bfloat16_type)
    if name == "bfloat16":
        return bfloat16_type()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def as_dtype(dtype):
    """np.dtype(dtype), where the name 'bfloat16' also works before ml_dtypes is imported."""
    try:
        return np.dtype(dtype)
    except TypeError:
        found = bfloat16_dtype() if dtype == "bfloat16" else None
        if found is None:
            raise
        return found


def is_bfloat16(dtype):
    """Whether np.dtype `dtype` is ml_dtypes' bfloat16 (without importing ml_dtypes)."""
    return dtype.name == "bfloat16" and dtype.kind == "V"


bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128

_TO_32 = {
    np.dtype("int64"): np.dtype("int32"),
    np.dtype("uint64"): np.dtype("uint32"),
    np.dtype("float64"): np.dtype("float32"),
    np.dtype("complex128"): np.dtype("complex64"),
}


# The dtype of tangents/cotangents of integer and boolean values (JAX's float0): no data.
float0 = np.dtype([("float0", np.void, 0)])


def canonicalize_dtype(dtype):
    """The dtype an array of `dtype` gets: 64-bit types narrow to 32-bit unless x64 is on."""
    dt = as_dtype(dtype)
    if not config.x64_enabled:
        return _TO_32.get(dt, dt)
    return dt


def default_int_dtype():
    return np.dtype("int64") if config.x64_enabled else np.dtype("int32")


def default_uint_dtype():
    return np.dtype("uint64") if config.x64_enabled else np.dtype("uint32")


def default_float_dtype():
    return np.dtype("float64") if config.x64_enabled else np.dtype("float32")


def default_complex_dtype():
    return np.dtype("complex128") if config.x64_enabled else np.dtype("complex64")


# JAX's promotion lattice. 'i*', 'f*', 'c*' are the weak (Python scalar) types.
_B, _I, _F, _C = "i*", "f*", "c*", None
_LATTICE = {
    "bool": ["i*"],
    "i*": ["uint8", "int8"],
    "uint8": ["uint16", "int16"],
    "uint16": ["uint32", "int32"],
    "uint32": ["uint64", "int64"],
    "uint64": ["f*"],
    "int8": ["int16"],
    "int16": ["int32"],
    "int32": ["int64"],
    "int64": ["f*"],
    "f*": ["bfloat16", "float16", "c*"],
    "bfloat16": ["float32"],
    "float16": ["float32"],
    "float32": ["float64", "complex64"],
    "float64": ["complex128"],
    "c*": ["complex64"],
    "complex64": ["complex128"],
    "complex128": [],
}


def _upper_sets():
    ups = {}

    def up(n):
        if n not in ups:
            s = {n}
            for m in _LATTICE[n]:
                s |= up(m)
            ups[n] = frozenset(s)
        return ups[n]

    for n in _LATTICE:
        up(n)
    return ups


_UP = _upper_sets()
_WEAK_KIND = {"b": "i*", "i": "i*", "u": "i*", "f": "f*", "c": "c*"}


@functools.lru_cache(maxsize=1024)
def _node(dtype, weak):
    dt = as_dtype(dtype)
    if weak and dt.kind in "iufc":
        return _WEAK_KIND[dt.kind]
    if is_bfloat16(dt):
        return "bfloat16"
    return dt.name


@functools.lru_cache(maxsize=4096)
def _join(nodes):
    common = frozenset.intersection(*(_UP[n] for n in nodes))
    # The least upper bound is the element of `common` below every other one in it.
    for c in common:
        if all(d in _UP[c] for d in common):
            return c
    raise TypeError(f"no common type for {nodes}")  # pragma: no cover - lattice is complete


_WEAK_DEFAULT = {"i*": default_int_dtype, "f*": default_float_dtype, "c*": default_complex_dtype}


def _node_dtype(node):
    if node in _WEAK_DEFAULT:
        return _WEAK_DEFAULT[node]()
    if node == "bfloat16":
        return bfloat16_dtype()
    return np.dtype(node)


def promote(*dtype_weak_pairs):
    """JAX promotion over (dtype, weak_type) pairs; returns (canonical dtype, weak_type)."""
    return _promote_cached(dtype_weak_pairs, config.x64_enabled)


@functools.lru_cache(maxsize=4096)
def _promote_cached(pairs, x64):
    nodes = tuple(sorted({_node(d, w) for d, w in pairs}))
    joined = _join(nodes)
    return canonicalize_dtype(_node_dtype(joined)), joined in _WEAK_DEFAULT


def python_scalar_dtype(x):
    """The weak dtype of a Python scalar (bool is not weak in JAX)."""
    if isinstance(x, bool):
        return np.dtype("bool"), False
    if isinstance(x, int):
        return default_int_dtype(), True
    if isinstance(x, float):
        return default_float_dtype(), True
    if isinstance(x, complex):
        return default_complex_dtype(), True
    raise TypeError(f"not a Python scalar: {type(x).__name__}")


def dtype_and_weak(x):
    """(dtype, weak_type) of any value: Python scalar, numpy value, Array or Tracer."""
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return python_scalar_dtype(x)
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if hasattr(x, "dtype"):
        return canonicalize_dtype(x.dtype), False
    return canonicalize_dtype(np.asarray(x).dtype), False


_PYTHON_TYPES_WEAK = {bool: False, int: 0, float: 0.0, complex: 0j}


def result_type(*args, return_weak_type_flag=False):
    """`jnp.result_type`: the dtype JAX promotion gives these values or dtypes."""
    pairs = []
    for a in args:
        if isinstance(a, type) and a in _PYTHON_TYPES_WEAK:  # `int`/`float`/`complex` types are weak
            pairs.append(python_scalar_dtype(_PYTHON_TYPES_WEAK[a]))
        elif isinstance(a, (np.dtype, type, str)) and not isinstance(a, (bool, int, float, complex)):
            pairs.append((as_dtype(a), False))
        elif a is None:
            continue
        else:
            pairs.append(dtype_and_weak(a))
    if not pairs:
        raise ValueError("at least one array or dtype is required")
    dt, weak = promote(*pairs)
    return (dt, weak) if return_weak_type_flag else dt


def promote_types(a, b):
    return promote((as_dtype(a), False), (as_dtype(b), False))[0]


def issubdtype(a, b):
    if is_bfloat16(as_dtype(a)):
        return b in (bfloat16_type(), np.floating, np.inexact, np.number, np.generic) or (
            not isinstance(b, type) and is_bfloat16(as_dtype(b))
        )
    return np.issubdtype(a, b)


def is_float(dtype):
    dt = as_dtype(dtype)
    return dt.kind == "f" or is_bfloat16(dt)


def is_complex(dtype):
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype):
    return is_float(dtype) or is_complex(dtype)


def is_integer(dtype):
    return np.dtype(dtype).kind in "iu"


def is_bool(dtype):
    return np.dtype(dtype).kind == "b"


def real_dtype(dtype):
    """float32 for complex64, float64 for complex128, itself otherwise."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return np.dtype("float32") if dt.itemsize == 8 else np.dtype("float64")
    return dt


def complex_dtype(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return np.dtype("complex128") if dt == np.dtype("float64") else np.dtype("complex64")


def to_inexact(dtype):
    """The dtype floating-point functions of an integer or bool input return (JAX's rule)."""
    dt = np.dtype(dtype)
    return dt if is_inexact(dt) else default_float_dtype()


_SHORT = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def short_name(dtype):
    """JAX's abbreviation (`f32`, `i32`, `bool`) used in aval strings."""
    name = np.dtype(dtype).name
    return _SHORT.get(name, name)
