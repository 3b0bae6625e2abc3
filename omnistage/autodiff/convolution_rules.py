"""Derivative rules of `conv_general_dilated`, as JAX's. The convolution is bilinear, so the
JVP is conv(t_lhs, rhs) + conv(lhs, t_rhs), and each cotangent is another convolution:

- lhs: the cotangent convolved with the spatially flipped kernel, its in/out feature roles
  swapped; window strides become lhs dilation (and lhs dilation window strides), with the
  padding that undoes the forward one. Feature groups move into the kernel's input-feature
  dimension; batch groups become feature groups whose result is folded back into the batch.
- rhs: the lhs convolved with the cotangent (batch and feature roles swapped), the
  window strides becoming rhs dilation; feature groups become batch groups and vice versa.

Dimension numbers are the primitive's normalized (lhs_spec, rhs_spec, out_spec) triples, each
(batch or out-feature, feature or in-feature, spatial...). Imports lax and the rule tables.
"""
from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import shapes as S
from . import zeros as Z
from .rules import JVP, VJP, bind


def _conv(lhs, rhs, params, **changes):
    return bind("conv_general_dilated", lhs, rhs, **{**params, **changes})


def _dilate(shape, rates):
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, rates))


def _spatial(shape, spec):
    return tuple(shape[i] for i in spec[2:])


def _spec_transpose(spec):
    """The spec with its first two roles swapped (batch <-> feature, out <-> in)."""
    return (spec[1], spec[0]) + tuple(spec[2:])


def _split_axis(x, axis, size):
    """Axis `axis` of x reshaped into (size, rest)."""
    shape = list(aval_of(x).shape)
    shape[axis:axis + 1] = [size, shape[axis] // size]
    return S.reshape(x, tuple(shape))


def _merge_axis(x, src, dst):
    """Axis `src` of x folded into axis `dst` (numbered after `src` is removed) as its
    major part (JAX's `_reshape_axis_into`)."""
    shape = list(aval_of(x).shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [d for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return S.reshape(S.transpose(x, tuple(perm)), tuple(new_shape))


def _as_dtype(x, dt):
    return x if aval_of(x).dtype == dt else E.convert_element_type(x, dt)


# --- the rules ------------------------------------------------------------------------------


def _conv_jvp(primals, tangents, out, **params):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    terms = []
    if t_lhs is not None:
        terms.append(_conv(t_lhs, rhs, params))
    if t_rhs is not None:
        terms.append(_conv(lhs, t_rhs, params))
    return Z.add_all(terms)


def _lhs_padding(in_sp, window_sp, strides, out_sp, padding, lhs_dilation, rhs_dilation):
    lhs_d = _dilate(in_sp, lhs_dilation)
    rhs_d = _dilate(window_sp, rhs_dilation)
    out_d = _dilate(out_sp, strides)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding)]
    after = [l + k - 1 - o - b for l, k, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def _rhs_padding(in_sp, window_sp, strides, out_sp, padding, lhs_dilation, rhs_dilation):
    lhs_d = _dilate(in_sp, lhs_dilation)
    rhs_d = _dilate(window_sp, rhs_dilation)
    out_d = _dilate(out_sp, strides)
    lows = [lo for lo, _ in padding]
    highs = [o - l + k - lo - 1 for o, l, k, lo in zip(out_d, lhs_d, rhs_d, lows)]
    return tuple(zip(lows, highs))


def _lhs_transpose(ct, lhs, rhs, params):
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    lhs_shape, rhs_shape = tuple(aval_of(lhs).shape), tuple(aval_of(rhs).shape)
    groups = max(fgc, bgc)
    if groups > 1:
        # the groups move from the kernel's out-feature dimension into its in-feature one
        rhs = _merge_axis(_split_axis(rhs, rhs_spec[0], groups), rhs_spec[0], rhs_spec[1])
    padding = _lhs_padding(
        _spatial(lhs_shape, lhs_spec), _spatial(rhs_shape, rhs_spec), params["window_strides"],
        _spatial(aval_of(ct).shape, out_spec), params["padding"], params["lhs_dilation"],
        params["rhs_dilation"],
    )
    kernel = _as_dtype(S.rev(rhs, tuple(rhs_spec[2:])), aval_of(ct).dtype)
    out = _conv(
        ct, kernel, params, window_strides=params["lhs_dilation"], padding=padding,
        lhs_dilation=params["window_strides"], dimension_numbers=(out_spec, _spec_transpose(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, preferred_element_type=None,
    )
    out = _as_dtype(out, aval_of(lhs).dtype)
    if bgc > 1:
        # batch groups were laid out along the features: fold them back into the batch
        out = _merge_axis(_split_axis(out, lhs_spec[1], bgc), lhs_spec[1], lhs_spec[0])
    return out


def _rhs_transpose(ct, lhs, rhs, params):
    dnums = params["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = dnums
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    lhs_shape, rhs_shape = tuple(aval_of(lhs).shape), tuple(aval_of(rhs).shape)
    if 0 in tuple(aval_of(ct).shape):
        return Z.zeros(aval_of(rhs))
    padding = _rhs_padding(
        _spatial(lhs_shape, lhs_spec), _spatial(rhs_shape, rhs_spec), params["window_strides"],
        _spatial(aval_of(ct).shape, out_spec), params["padding"], params["lhs_dilation"],
        params["rhs_dilation"],
    )
    trans = tuple(_spec_transpose(s) for s in dnums)
    out = _conv(
        _as_dtype(lhs, aval_of(ct).dtype), ct, params, window_strides=params["rhs_dilation"],
        padding=padding, rhs_dilation=params["window_strides"],
        dimension_numbers=(trans[0], trans[2], trans[1]),
        feature_group_count=bgc, batch_group_count=fgc, preferred_element_type=None,
    )
    return _as_dtype(out, aval_of(rhs).dtype)


def _conv_vjp(ct, ins, out, **params):
    lhs, rhs = ins
    return [lambda: _lhs_transpose(ct, lhs, rhs, params), lambda: _rhs_transpose(ct, lhs, rhs, params)]


JVP["conv_general_dilated"], VJP["conv_general_dilated"] = _conv_jvp, _conv_vjp
