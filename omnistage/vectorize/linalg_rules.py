"""Batching rules of the linear-algebra primitives and `conv_general_dilated`.

The `lax.linalg` primitives already batch over leading axes, so their rule puts the
examples first (broadcasting an unbatched `a` or `b` of triangular_solve, whose batch
axes must agree). Convolution folds the examples into an axis the convolution already
maps over (JAX's rule): the lhs batch axis, or the output-feature axis with feature
groups when the kernel is batched, and unfolds them from the result.
"""
from ..core.array import aval_of
from ..lax import shapes as S
from .rules import BATCH, all_batched_at, bind, register


def _leading_batch_rule(name):
    def rule(args, dims, **params):
        xs = all_batched_at(args, dims, 0)
        out = bind(name, *xs, **params)
        if isinstance(out, (list, tuple)):
            return list(out), [0] * len(out)
        return out, 0

    return rule


for _name in ("cholesky", "eigh", "eig", "svd", "qr", "lu", "lu_pivots_to_permutation", "triangular_solve"):
    BATCH[_name] = _leading_batch_rule(_name)


# --- convolution -------------------------------------------------------------------------------


def _reshape_axis_into(src, dst, x):
    """Merge axis `src` into axis `dst` (numbered with `src` removed), `src` major."""
    shape = aval_of(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [d for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return S.reshape(x, tuple(new_shape), tuple(perm))


def _reshape_axis_out_of(src, size1, x):
    """Split axis `src` into (size1, rest)."""
    shape = list(aval_of(x).shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return S.reshape(x, tuple(shape))


def _conv(lhs, rhs, params, **changes):
    return bind("conv_general_dilated", lhs, rhs, **{**params, **changes})


def _conv_both_batched(lhs, rhs, dl, dr, params):
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    size = aval_of(lhs).shape[dl]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if bgc > 1:
        new_lhs = _reshape_axis_into(dl, lhs_spec[0], lhs)
        bgc *= size
    else:
        new_lhs = _reshape_axis_into(dl, lhs_spec[1], lhs)
        fgc *= size
    new_rhs = _reshape_axis_into(dr, rhs_spec[0], rhs)
    out = _conv(new_lhs, new_rhs, params, feature_group_count=fgc, batch_group_count=bgc)
    return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]


def _conv_lhs_batched(lhs, rhs, dl, params):
    lhs_spec, _, out_spec = params["dimension_numbers"]
    size = aval_of(lhs).shape[dl]
    bgc = params["batch_group_count"]
    if bgc == 1:
        new_lhs = _reshape_axis_into(dl, lhs_spec[0], lhs)
    else:
        # batch groups are outermost in the lhs batch axis: split them off, fold the
        # examples under them, merge back
        new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(dl <= lhs_spec[0]), bgc, lhs)
        new_lhs = _reshape_axis_into(dl + int(lhs_spec[0] < dl), lhs_spec[0] + 1, new_lhs)
        new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
    out = _conv(new_lhs, rhs, params)
    return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]


def _conv_rhs_batched(lhs, rhs, dr, params):
    _, rhs_spec, out_spec = params["dimension_numbers"]
    size = aval_of(rhs).shape[dr]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if fgc == 1 and bgc == 1:
        new_rhs = _reshape_axis_into(dr, rhs_spec[0], rhs)
        out = _conv(lhs, new_rhs, params)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # groups must stay outermost in the output-feature axis: split them off, fold the
    # examples under them, and undo that on the output
    groups = fgc if fgc > 1 else bgc
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(dr <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(dr + int(rhs_spec[0] < dr), rhs_spec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = _conv(lhs, new_rhs, params)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = _reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


@register("conv_general_dilated")
def _conv_general_dilated(args, dims, **params):
    (lhs, rhs), (dl, dr) = args, dims
    if dl is not None and dr is not None:
        return _conv_both_batched(lhs, rhs, dl, dr, params)
    if dl is not None:
        return _conv_lhs_batched(lhs, rhs, dl, params)
    return _conv_rhs_batched(lhs, rhs, dr, params)
