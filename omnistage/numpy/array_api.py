"""The Array API standard's additions to the namespace (`__array_api_version__`,
`__array_namespace_info__`, `astype`, `can_cast`, `isdtype`, `unstack`, `from_dlpack`), and
NumPy's names JAX keeps for compatibility that are thin wrappers here: `resize`, `isscalar`,
`iterable`, `trim_zeros`, saving and loading, printing options, and NumPy's non-numeric
scalar types. Imports core, lax and this package's public functions only.
"""
import numpy as np

from ..core import devices as core_devices
from ..core import dtypes

__array_api_version__ = "2024.12"


def _jnp():
    from .. import numpy as jnp  # noqa: PLC0415 - this package imports this module

    return jnp


class _NamespaceInfo:
    """What `__array_namespace_info__()` returns: the namespace's capabilities, devices and
    default dtypes (which follow 64-bit mode, read when asked)."""

    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def default_device(self):
        return core_devices.devices()[0]

    def devices(self):
        return [d for backend in core_devices.available_backends() for d in core_devices.devices(backend)]

    def default_dtypes(self, *, device=None):
        return {
            "real floating": dtypes.default_float_dtype(), "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(), "indexing": dtypes.default_int_dtype(),
        }

    def dtypes(self, *, device=None, kind=None):
        x64 = dtypes.default_float_dtype() == np.float64
        names = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64"]
        if x64:
            names += ["int64", "uint64", "float64", "complex128"]
        found = {n: np.dtype(n) for n in names}
        if kind is None:
            return found
        return {n: d for n, d in found.items() if isdtype(d, kind)}


def __array_namespace_info__():  # noqa: N807 - the standard's name
    return _NamespaceInfo()


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: dtypes.is_float(d),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iuc" or dtypes.is_float(d),
}


def _as_dtype(x):
    """np.dtype of a dtype, a scalar type (NumPy's or ours) or an array."""
    inner = getattr(x, "dtype", None)
    return inner if isinstance(inner, np.dtype) else dtypes.as_dtype(x)


def isdtype(dtype, kind):
    """Whether `dtype` is of `kind`: a dtype, a kind name ('bool', 'signed integer', 'unsigned
    integer', 'integral', 'real floating', 'complex floating', 'numeric') or a tuple of them."""
    dt = _as_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized kind {k!r}: use one of {sorted(_KINDS)} or a dtype.")
            if _KINDS[k](dt):
                return True
        elif dt == _as_dtype(k):
            return True
    return False


def can_cast(from_, to, casting="safe"):
    """Whether `from_` (a dtype or array) casts to `to` under `casting` (NumPy's rule)."""
    return bool(np.can_cast(_as_dtype(from_), _as_dtype(to), casting))


def astype(x, dtype, /, *, copy=False, device=None):
    """x converted to dtype (the Array API's function form of `x.astype`)."""
    return _jnp().asarray(x).astype(dtype)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    jnp = _jnp()
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("unstack requires an array of rank >= 1")
    axis = axis % x.ndim
    return tuple(jnp.take(x, i, axis=axis) for i in range(x.shape[axis]))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from any object with `__dlpack__` (copied to the host through NumPy)."""
    return _jnp().asarray(np.from_dlpack(x))


def resize(a, new_shape):
    """The elements of a repeated (in C order) to fill new_shape."""
    jnp = _jnp()
    a = jnp.ravel(jnp.asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    size = int(np.prod(new_shape))
    if a.size == 0 or size == 0:
        return jnp.zeros(new_shape, a.dtype)
    repeats = -(-size // a.size)
    return jnp.reshape(jnp.tile(a, repeats)[:size], new_shape)


def isscalar(element):
    """True for Python scalars, NumPy scalars and rank-0 arrays (JAX's rule)."""
    if hasattr(element, "__jax_array__") or hasattr(element, "shape"):
        return np.ndim(element) == 0 and not isinstance(element, np.ndarray) or np.isscalar(element)
    return np.isscalar(element)


iterable = np.iterable


def trim_zeros(filt, trim="fb"):
    """filt without leading ('f') and trailing ('b') zeros; the result's size depends on the
    values, so filt must be concrete (not traced)."""
    jnp = _jnp()
    values = np.asarray(filt)
    nonzero = np.nonzero(values)[0]
    if nonzero.size == 0:
        return jnp.asarray(values[:0])
    start = nonzero[0] if "f" in trim.lower() else 0
    stop = nonzero[-1] + 1 if "b" in trim.lower() else len(values)
    return jnp.asarray(filt)[start:stop]


def save(file, arr, allow_pickle=True):
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    np.savez(file, *[np.asarray(a) for a in args], **{k: np.asarray(v) for k, v in kwds.items()})


def load(file, *args, **kwargs):
    """numpy.load, arrays returned as omnistage arrays."""
    out = np.load(file, *args, **kwargs)
    return _jnp().asarray(out) if isinstance(out, np.ndarray) and out.dtype != object else out


def fromfile(*args, **kwargs):
    return _jnp().asarray(np.fromfile(*args, **kwargs))


def fromstring(string, dtype=float, count=-1, *, sep):
    return _jnp().asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(iterable_, dtype, count=-1, *, like=None):
    return _jnp().asarray(np.fromiter(iterable_, dtype=dtype, count=count))


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function called once on the coordinate arrays of shape (as NumPy's)."""
    jnp = _jnp()
    return function(*(jnp.asarray(i, dtype=dtype) for i in np.indices(shape)), **kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def einsum_path(subscripts, *operands, optimize="greedy"):
    """numpy.einsum_path on arrays of the operands' shapes (the path depends on shapes only)."""
    return np.einsum_path(subscripts, *[np.empty(np.shape(o), dtype=np.float32) for o in operands], optimize=optimize)


def packbits(a, axis=None, bitorder="big"):
    """Bits of a boolean or integer array packed into uint8 (groups of 8 along axis)."""
    jnp = _jnp()
    a = jnp.asarray(a)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = axis % a.ndim
    bits = (a != 0).astype(jnp.uint8)
    n = bits.shape[axis]
    pad = (-n) % 8
    if pad:
        bits = jnp.pad(bits, [(0, pad) if i == axis else (0, 0) for i in range(bits.ndim)])
    bits = jnp.moveaxis(bits, axis, -1)
    bits = jnp.reshape(bits, bits.shape[:-1] + (-1, 8))
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128], np.uint8)
    packed = jnp.sum(bits * weights, axis=-1, dtype=jnp.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array, 8 per element along axis (count keeps the first count)."""
    jnp = _jnp()
    a = jnp.asarray(a)
    if a.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = axis % a.ndim
    shifts = np.array([7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else [0, 1, 2, 3, 4, 5, 6, 7], np.uint8)
    bits = (jnp.expand_dims(a, -1) >> shifts) & np.uint8(1)
    bits = jnp.moveaxis(bits, axis, -2)
    bits = jnp.reshape(bits, bits.shape[:-2] + (-1,))
    if count is not None:
        bits = bits[..., :count]
    return jnp.moveaxis(bits, -1, axis)


get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions
object_ = np.object_
flexible = np.flexible
character = np.character
ComplexWarning = np.exceptions.ComplexWarning

__all__ = [
    "__array_api_version__", "__array_namespace_info__", "isdtype", "can_cast", "astype", "unstack",
    "from_dlpack", "resize", "isscalar", "iterable", "trim_zeros", "save", "savez", "load", "fromfile",
    "fromstring", "fromiter", "fromfunction", "array_repr", "array_str", "einsum_path", "packbits", "unpackbits",
    "get_printoptions", "set_printoptions", "printoptions", "object_", "flexible", "character", "ComplexWarning",
]
