"""Convolution: the `conv_general_dilated` primitive (any number of spatial dimensions,
strides, explicit or 'SAME'/'VALID' padding, lhs/rhs dilation, feature and batch groups,
dimension numbers) and the `conv`/`conv_with_general_padding` conveniences.

The primitive's `dimension_numbers` parameter is the normalized form
`(lhs_spec, rhs_spec, out_spec)`, each a tuple of dimension indices in the order
(batch or out-feature, feature or in-feature, spatial...), as in JAX's `ConvDimensionNumbers`;
the wrappers accept `None` (NCHW/OIHW/NCHW) and string specs like ('NHWC', 'HWIO', 'NHWC').
The NumPy implementation dilates and pads the input, takes strided windows and contracts them
with the kernel via einsum. Imports core only (and `shapes`' pad implementation).
"""
import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _rules as R
from ._rules import operands
from .shapes import _pad_impl


# --- dimension numbers -------------------------------------------------------------------


def _default_spec(ndim):
    return tuple(range(ndim))


def _spec_from_string(spec, batch_char, feature_char, rhs_spec):
    """Indices (batch, feature, spatial...) of a string spec like 'NHWC' or 'HWIO'.

    Spatial dimensions are ordered as they appear in the rhs spec (JAX's rule), so strides,
    padding and dilations list them in that order whatever their positions elsewhere."""
    if len(set(spec)) != len(spec) or batch_char not in spec or feature_char not in spec:
        raise ValueError(
            f"conv dimension spec {spec!r} must contain {batch_char!r} and {feature_char!r} "
            f"exactly once and no repeated letters."
        )
    spatial_order = [c for c in rhs_spec if c not in "OI"]
    spatial = [c for c in spec if c not in (batch_char, feature_char)]
    if sorted(spatial) != sorted(spatial_order):
        raise ValueError(f"conv dimension specs name different spatial dimensions: {spec!r} and {rhs_spec!r}.")
    return (spec.index(batch_char), spec.index(feature_char)) + tuple(spec.index(c) for c in spatial_order)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """Normalize `dimension_numbers` (None, three strings, or three index tuples)."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(
            f"conv_general_dilated requires lhs and rhs of the same rank, got shapes "
            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}."
        )
    if dimension_numbers is None:
        return (_default_spec(nd),) * 3
    if len(dimension_numbers) != 3:
        raise TypeError(f"conv dimension_numbers must have three entries (lhs, rhs, out), got {dimension_numbers!r}.")
    lhs, rhs, out = dimension_numbers
    if isinstance(lhs, str):
        for s in (lhs, rhs, out):
            if len(s) != nd:
                raise TypeError(f"conv dimension spec {s!r} has {len(s)} letters for operands of rank {nd}.")
        return (
            _spec_from_string(lhs, "N", "C", rhs),
            _spec_from_string(rhs, "O", "I", rhs),
            _spec_from_string(out, "N", "C", rhs),
        )
    return tuple(tuple(int(i) for i in s) for s in (lhs, rhs, out))


# --- padding -----------------------------------------------------------------------------


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) pairs for 'SAME', 'SAME_LOWER' or 'VALID' padding."""
    kind = padding.upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"Unknown padding {padding!r}: use 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs.")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        low = total // 2 if kind == "SAME" else total - total // 2
        pads.append((low, total - low))
    return tuple(pads)


def _dilate_dim(d, rate):
    return 0 if d == 0 else 1 + rate * (d - 1)


# --- the primitive -----------------------------------------------------------------------


def _spatial(shape, spec):
    return tuple(shape[i] for i in spec[2:])


def _check_groups(lhs, rhs, lhs_spec, rhs_spec, feature_group_count, batch_group_count):
    in_features, batch = lhs.shape[lhs_spec[1]], lhs.shape[lhs_spec[0]]
    out_features, kernel_in = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    shapes = f"(lhs shape {lhs.shape}, rhs shape {rhs.shape})"
    if feature_group_count < 1 or batch_group_count < 1 or (feature_group_count > 1 and batch_group_count > 1):
        raise ValueError(
            f"conv_general_dilated requires feature_group_count and batch_group_count >= 1 and at "
            f"most one of them > 1, got {feature_group_count} and {batch_group_count}."
        )
    if in_features != kernel_in * feature_group_count:
        raise TypeError(
            f"conv_general_dilated lhs feature dimension ({in_features}) must equal the rhs input "
            f"feature dimension ({kernel_in}) times feature_group_count ({feature_group_count}) {shapes}."
        )
    groups = max(feature_group_count, batch_group_count)
    if out_features % groups:
        raise TypeError(
            f"conv_general_dilated rhs output feature dimension ({out_features}) must be a multiple "
            f"of the group count ({groups}) {shapes}."
        )
    if batch % batch_group_count:
        raise TypeError(f"conv_general_dilated lhs batch dimension ({batch}) must be a multiple of batch_group_count ({batch_group_count}) {shapes}.")


def _conv_out_spatial(lhs_sp, rhs_sp, window_strides, padding, lhs_dilation, rhs_dilation):
    out = []
    for n, k, s, (lo, hi), ld, rd in zip(lhs_sp, rhs_sp, window_strides, padding, lhs_dilation, rhs_dilation):
        padded = _dilate_dim(n, ld) + lo + hi
        window = _dilate_dim(k, rd)
        out.append(max(0, (padded - window) // s + 1) if padded >= window else 0)
    return out


def _conv_abstract(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError(f"conv_general_dilated requires lhs and rhs of equal rank >= 2, got shapes {lhs.shape} and {rhs.shape}.")
    for name, spec in zip(("lhs", "rhs", "out"), dimension_numbers):
        if sorted(spec) != list(range(lhs.ndim)):
            raise TypeError(f"conv_general_dilated {name} dimension numbers {spec} are not a permutation of range({lhs.ndim}).")
    nsp = lhs.ndim - 2
    for name, v in (("window_strides", window_strides), ("padding", padding), ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(v) != nsp:
            raise TypeError(f"conv_general_dilated {name} must have one entry per spatial dimension ({nsp}), got {v}.")
    if any(s < 1 for s in window_strides + lhs_dilation + rhs_dilation):
        raise ValueError("conv_general_dilated strides and dilations must be positive.")
    dt = R.same_dtype("conv_general_dilated", (lhs, rhs))
    R.check_kind("conv_general_dilated", dt, R.NUMBER)
    if preferred_element_type is not None:
        dt = np.dtype(preferred_element_type)
    _check_groups(lhs, rhs, lhs_spec, rhs_spec, feature_group_count, batch_group_count)
    spatial = _conv_out_spatial(_spatial(lhs.shape, lhs_spec), _spatial(rhs.shape, rhs_spec), window_strides, padding, lhs_dilation, rhs_dilation)
    out_shape = [0] * lhs.ndim
    out_shape[out_spec[0]] = lhs.shape[lhs_spec[0]] // batch_group_count
    out_shape[out_spec[1]] = rhs.shape[rhs_spec[0]]
    for i, d in zip(out_spec[2:], spatial):
        out_shape[i] = d
    return ShapedArray(out_shape, dt, lhs.weak_type and rhs.weak_type)


def _windows(x, kernel_spatial, window_strides, rhs_dilation, out_spatial):
    """Strided view (N, C, *out_spatial, *kernel_spatial) of the padded input (N, C, ...)."""
    nsp = len(kernel_spatial)
    window = tuple(_dilate_dim(k, r) for k, r in zip(kernel_spatial, rhs_dilation))
    view = np.lib.stride_tricks.sliding_window_view(x, window, axis=tuple(range(2, 2 + nsp)))
    picks = tuple(slice(0, o * s, s) if o else slice(0, 0) for o, s in zip(out_spatial, window_strides))
    picks += tuple(slice(None, None, r) for r in rhs_dilation)
    return view[(slice(None), slice(None)) + picks]


@R.quiet
def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_aval = _conv_abstract(
        ShapedArray(np.shape(lhs), np.asarray(lhs).dtype), ShapedArray(np.shape(rhs), np.asarray(rhs).dtype),
        window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, preferred_element_type=preferred_element_type,
    )
    dt = out_aval.dtype
    if 0 in out_aval.shape:
        return np.zeros(out_aval.shape, dt)
    x = np.transpose(np.asarray(lhs), lhs_spec).astype(dt)  # (N, C, spatial...)
    k = np.transpose(np.asarray(rhs), rhs_spec).astype(dt)  # (O, I, spatial...)
    config = ((0, 0, 0), (0, 0, 0)) + tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation))
    x = _pad_impl(x, np.zeros((), dt), padding_config=config)
    out_spatial = [out_aval.shape[i] for i in out_spec[2:]]
    win = _windows(x, k.shape[2:], window_strides, rhs_dilation, out_spatial)  # (N, C, *out, *kern)
    out = _grouped_contraction(win, k, x.ndim - 2, feature_group_count, batch_group_count)
    # out is (N, O, spatial...) in spec order; out_spec[j] says where its dimension j goes
    return np.ascontiguousarray(np.transpose(out, np.argsort(out_spec)), dtype=dt)


_SP = "pqrstuvwxyz"
_KN = "defhjklm"


def _grouped_contraction(win, k, nsp, feature_group_count, batch_group_count):
    """einsum of windows (N, C, *out, *kern) with kernels (O, I, *kern) -> (N', O, *out)."""
    out_sp, kern = _SP[:nsp], _KN[:nsp]
    n, c = win.shape[:2]
    o = k.shape[0]
    if batch_group_count > 1:
        g = batch_group_count
        win = win.reshape((g, n // g, c) + win.shape[2:])
        k = k.reshape((g, o // g) + k.shape[1:])
        out = np.einsum(f"gnc{out_sp}{kern},goc{kern}->ngo{out_sp}", win, k)
        return out.reshape((n // g, o) + out.shape[3:])
    g = feature_group_count
    win = win.reshape((n, g, c // g) + win.shape[2:])
    k = k.reshape((g, o // g) + k.shape[1:])
    out = np.einsum(f"ngc{out_sp}{kern},goc{kern}->ngo{out_sp}", win, k)
    return out.reshape((n, o) + out.shape[3:])


conv_general_dilated_p = Primitive("conv_general_dilated", _conv_abstract, _conv_impl)


def _per_dim(name, value, nsp, default=1):
    if value is None:
        return (default,) * nsp
    value = tuple(int(v) for v in value)
    if len(value) != nsp:
        raise TypeError(f"conv_general_dilated {name} must have one entry per spatial dimension ({nsp}), got {value}.")
    return value


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None):
    """General n-d convolution (JAX's `lax.conv_general_dilated`)."""
    lhs, rhs = operands(lhs, rhs)
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    nsp = lhs.ndim - 2
    strides = _per_dim("window_strides", window_strides, nsp)
    lhs_dil = _per_dim("lhs_dilation", lhs_dilation, nsp)
    rhs_dil = _per_dim("rhs_dilation", rhs_dilation, nsp)
    if isinstance(padding, str):
        window = [_dilate_dim(d, r) for d, r in zip(_spatial(rhs.shape, dnums[1]), rhs_dil)]
        padding = padtype_to_pads(_spatial(lhs.shape, dnums[0]), window, strides, padding)
    pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type).name
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=pads, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
        dimension_numbers=dnums, feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), precision=None, preferred_element_type=pet,
    )


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """NCHW/OIHW convolution without dilation (JAX's `lax.conv`)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision, preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_dimension_numbers", "padtype_to_pads"]
