"""The cache key and NumPy values of a cached jit call's arguments, on the hot path.

`jit`'s general path flattens the arguments into a `PyTreeDef`, builds an aval per leaf and
hashes both: about 30 µs for a Python float and 100 µs for a small parameter pytree. Users pass
exactly those (NumPy batches, Python scalars, lists/tuples/dicts of arrays), so this module
reads the common kinds directly: omnistage Arrays, NumPy arrays and scalars, Python scalars,
the built-in containers (exact `tuple`, `list`, `dict` with sortable keys, `None`), and
registered nodes and namedtuples whose aux data is hashable (an optimizer's state). It
writes a flat key (a prefix code of the structure, with one aval per leaf) and the values in
`tree_flatten`'s leaf order. Anything else (an unhashable aux, GPU arrays, tracers)
answers None and the call takes the general path, which then stores its entry under this key
too, so both keys lead to one compiled program.
"""
import numpy as np

from .core import dtypes, tree_util
from .core.array import Array
from .core.aval import ShapedArray
from .core.config import config

_PYTHON_SCALARS = (bool, int, float, complex)

# (shape, dtype) -> the aval of a NumPy value; python type -> its weak aval. Both depend on the
# configuration (x64), so they are dropped whenever its epoch moves.
_avals = {}
_scalar_avals = {}
_epoch = [None]


def _numpy_aval(shape, dtype):
    aval = _avals.get((shape, dtype))
    if aval is None:
        aval = _avals[(shape, dtype)] = ShapedArray(shape, dtypes.canonicalize_dtype(dtype))
    return aval


def _leaf(x, t, key, values):
    """Append x's aval to `key` and its value to `values`; False if x is not a fast leaf."""
    if t is Array:
        key.append(x.aval)
        values.append(x._value)
    elif t is np.ndarray or isinstance(x, np.generic):
        aval = _numpy_aval(x.shape, x.dtype)
        key.append(aval)
        values.append(x if x.dtype == aval.dtype and t is np.ndarray else np.asarray(x).astype(aval.dtype, copy=False))
    elif t in _PYTHON_SCALARS:
        aval = _scalar_avals.get(t)
        if aval is None:
            dt, weak = dtypes.python_scalar_dtype(x)
            aval = _scalar_avals[t] = ShapedArray((), dt, weak)
        key.append(aval)
        # as the general path's leaf_value: NumPy's own conversion, then the cast (an int too
        # big for int32 wraps there too); one step when the value fits
        try:
            values.append(np.array(x, aval.dtype))
        except OverflowError:
            values.append(np.asarray(x).astype(aval.dtype, copy=False))
    else:
        return False
    return True


def _walk(x, key, values):
    t = type(x)
    if t is tuple or t is list:
        key.append((t, len(x)))
        for c in x:
            if not _walk(c, key, values):
                return False
        return True
    if t is dict:
        try:
            names = sorted(x)
        except TypeError:
            return False
        key.append((dict, tuple(names)))
        for k in names:
            if not _walk(x[k], key, values):
                return False
        return True
    if x is None:
        key.append(None)
        return True
    if _leaf(x, t, key, values):
        return True
    node = tree_util.flatten_node(x)  # a registered class (an optimizer's state) or a namedtuple
    if node is None:
        return False
    children, aux = node
    key.append((t, aux, len(children)))  # an unhashable aux fails the key's hash: general path
    for c in children:
        if not _walk(c, key, values):
            return False
    return True


def key_and_values(prefix, args, static_argnums):
    """(key, values) for positional `args`, static ones kept by value in the key (which may
    make it unhashable); None when an argument needs the general path."""
    if _epoch[0] != config.epoch:
        _avals.clear()
        _scalar_avals.clear()
        _epoch[0] = config.epoch
    key = [prefix, len(args)]
    values = []
    for i, a in enumerate(args):
        if i in static_argnums:
            key.append(("static", a))
        elif not _walk(a, key, values):
            return None
    return tuple(key), values  # (hashed by the cache lookup: an unhashable static value raises there)
