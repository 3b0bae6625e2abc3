"""Max and min windows as primitives, as JAX's: `reduce_window_max`/`reduce_window_min`
(a max or min pool) and the two linear maps of their derivatives, `select_and_gather_add`
(the JVP: each window's tangent at the element the window chose) and
`select_and_scatter_add` (its transpose, the VJP: each window's cotangent added at that
element). They share one rule for the choice: each window is scanned in row-major order
from its first element, keeping the running choice unless the next element is greater (ge
for max) or lesser (le for min) or the running one is NaN, so a window chooses its first
NaN, else its first extremum (XLA's select semantics, `lax.reduce_window`'s composition).
Padding and base-dilation holes hold the identity (-inf for max) and take part in the
scan; a window that chooses one passes no derivative on.

Params: `window_dimensions`, `window_strides`, `padding` ((low, high) pairs, non-negative),
`base_dilation`, `window_dilation`, one entry per operand axis; the derivative primitives
also carry `select_prim` ('ge' or 'le'). As primitives, a max pool is one kernel call in
generated code and its gradient another, where the composition of slices and selects it
replaces was some 30 loop nests per pooling layer for Numba to compile.

Imports core and `_rules` only.
"""
import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R

WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")
SELECT_PRIM = {"reduce_window_max": "ge", "reduce_window_min": "le"}


def _dilate(d, rate):
    return 0 if d == 0 else 1 + rate * (d - 1)


def pooled_shape(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """The shape of the windows' results over an operand of `shape`."""
    out = []
    for n, w, s, (lo, hi), b, r in zip(shape, window_dimensions, window_strides, padding, base_dilation,
                                       window_dilation):
        padded, span = _dilate(n, b) + lo + hi, _dilate(w, r)
        out.append(max(0, (padded - span) // s + 1) if padded >= span else 0)
    return tuple(out)


def identity(select_prim, dtype):
    """The value padding holds: the identity of max ('ge') or min ('le') for `dtype`."""
    dt = np.dtype(dtype)
    if dt.kind == "f" or dtypes.is_float(dt):
        return -np.inf if select_prim == "ge" else np.inf
    info = np.iinfo(dt)
    return info.min if select_prim == "ge" else info.max


def _check(name, aval, params):
    nd = aval.ndim
    for key in WINDOW_PARAMS:
        if len(params[key]) != nd:
            raise TypeError(f"{name}: {key} must have one entry per operand axis ({nd}), got {params[key]}.")
    sizes = [params[k] for k in ("window_dimensions", "window_strides", "base_dilation", "window_dilation")]
    if any(v < 1 for size in sizes for v in size):
        raise ValueError(f"{name}: window dimensions, strides and dilations must be positive.")
    if any(lo < 0 or hi < 0 for lo, hi in params["padding"]):
        raise ValueError(f"{name}: padding must be non-negative, got {params['padding']}.")
    R.check_kind(name, aval.dtype, R.REAL_NUMBER)


def _pooled(aval, params):
    return pooled_shape(aval.shape, *(params[k] for k in WINDOW_PARAMS))


# --- the choice, in NumPy ---------------------------------------------------------------------


def _choices(x, select_prim, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """Flat index into `x` of the element each window chooses, -1 where it chooses padding
    or a dilation hole (an int64 array of the pooled shape)."""
    x = np.asarray(x)
    if dtypes.is_float(x.dtype) and x.dtype.itemsize < 4:
        x = x.astype(np.float32)  # float16/bfloat16: exact, and NumPy's argmax knows float32
    out_shape = pooled_shape(x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    if 0 in out_shape:
        return np.zeros(out_shape, np.int64)
    dil = [_dilate(d, b) for d, b in zip(x.shape, base_dilation)]
    padded_shape = tuple(d + lo + hi for d, (lo, hi) in zip(dil, padding))
    values = np.full(padded_shape, identity(select_prim, x.dtype), x.dtype)
    ids = np.full(padded_shape, -1, np.int64)
    place = tuple(slice(lo, lo + d, b) for d, (lo, _), b in zip(dil, padding, base_dilation))
    values[place] = x
    ids[place] = np.arange(x.size).reshape(x.shape)
    spans = tuple(_dilate(w, r) for w, r in zip(window_dimensions, window_dilation))
    nd = x.ndim
    picks = tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out_shape, window_strides))
    picks += tuple(slice(None, None, r) for r in window_dilation)

    def windows(a):
        view = np.lib.stride_tricks.sliding_window_view(a, spans)[picks]
        return view.reshape(out_shape + (-1,))

    # argmax/argmin return the first extremum, or the first NaN where there is one
    pick = np.argmax if select_prim == "ge" else np.argmin
    k = pick(windows(values), axis=nd)
    return np.take_along_axis(windows(ids), k[..., None], axis=nd)[..., 0]


def _window_params(params):
    return {k: params[k] for k in WINDOW_PARAMS}


# --- reduce_window_max / reduce_window_min ------------------------------------------------------


def _reduce_abstract(name):
    def abstract_eval(x, **params):
        _check(name, x, params)
        return ShapedArray(_pooled(x, params), x.dtype, x.weak_type)

    return abstract_eval


def _reduce_impl(name):
    def impl(x, **params):
        x = np.asarray(x)
        ids = _choices(x, SELECT_PRIM[name], **params)
        out = np.full(ids.shape, identity(SELECT_PRIM[name], x.dtype), x.dtype)
        chosen = ids >= 0
        out[chosen] = x.reshape(-1)[ids[chosen]]
        return out

    return impl


reduce_window_max_p = Primitive("reduce_window_max", _reduce_abstract("reduce_window_max"),
                                _reduce_impl("reduce_window_max"))
reduce_window_min_p = Primitive("reduce_window_min", _reduce_abstract("reduce_window_min"),
                                _reduce_impl("reduce_window_min"))


# --- select_and_gather_add: the JVP ------------------------------------------------------------


def _gather_abstract(t, x, *, select_prim, **params):
    _check("select_and_gather_add", x, params)
    if t.shape != x.shape:
        raise TypeError(f"select_and_gather_add: tangents {t.shape} and operand {x.shape} must have one shape.")
    return ShapedArray(_pooled(x, params), t.dtype, t.weak_type)


def _gather_impl(t, x, *, select_prim, **params):
    t = np.asarray(t)
    ids = _choices(x, select_prim, **params)
    out = np.zeros(ids.shape, t.dtype)
    chosen = ids >= 0
    out[chosen] = t.reshape(-1)[ids[chosen]]
    return out


select_and_gather_add_p = Primitive("select_and_gather_add", _gather_abstract, _gather_impl)


# --- select_and_scatter_add: the VJP -----------------------------------------------------------


def _scatter_abstract(source, x, *, select_prim, **params):
    _check("select_and_scatter_add", x, params)
    pooled = _pooled(x, params)
    if source.shape != pooled:
        raise TypeError(
            f"select_and_scatter_add: source shape {source.shape} must be the pooled shape {pooled} "
            f"of the operand {x.shape}."
        )
    return ShapedArray(x.shape, source.dtype, source.weak_type)


def _scatter_impl(source, x, *, select_prim, **params):
    source, x = np.asarray(source), np.asarray(x)
    ids = _choices(x, select_prim, **params)
    out = np.zeros(x.size, source.dtype)
    chosen = ids >= 0
    np.add.at(out, ids[chosen], source[chosen])  # in window order, as the kernels add
    return out.reshape(x.shape)


select_and_scatter_add_p = Primitive("select_and_scatter_add", _scatter_abstract, _scatter_impl)


# --- binding ----------------------------------------------------------------------------------------


def reduce_window_chooser(x, select_prim, window_dimensions, window_strides, padding, base_dilation,
                          window_dilation):
    """A max ('ge') or min ('le') window reduction of one array (identity padding)."""
    prim = reduce_window_max_p if select_prim == "ge" else reduce_window_min_p
    return prim.bind(x, **_as_params(window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _as_params(window_dimensions, window_strides, padding, base_dilation, window_dilation):
    return dict(
        window_dimensions=tuple(int(v) for v in window_dimensions),
        window_strides=tuple(int(v) for v in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        base_dilation=tuple(int(v) for v in base_dilation),
        window_dilation=tuple(int(v) for v in window_dilation),
    )


__all__ = []  # reached through reduce_window and the rules; the primitives as lax.<name>_p
