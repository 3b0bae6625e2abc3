"""Transposed convolution and convolution shape helpers, as JAX's `lax`: `conv_transpose`
(a fractionally strided `conv_general_dilated`: the input dilated by the strides),
`conv_shape_tuple`, `conv_general_shape_tuple`, `conv_transpose_shape_tuple`,
`conv_general_permutations`, and the `Precision` enum that `precision=` arguments accept.

`precision` is accepted and ignored: on CPUs every float32 contraction is computed in
float32 or wider (JAX: "Has no impact on CPU backends"), and the CUDA kernels use no
reduced-precision tensor-core modes. Imports core and the lax modules beside it only.
"""
import enum

import numpy as np

from .convolution import conv_dimension_numbers, conv_general_dilated, padtype_to_pads
from .shapes import rev, transpose


class Precision(enum.Enum):
    """Precision of contractions (JAX's `lax.Precision`): accepted, without effect here."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_NAMES.get(value)

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_NAMES = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST, "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH, "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT, None: Precision.DEFAULT,
}


def _dilate(d, rate):
    return 0 if d == 0 else 1 + rate * (d - 1)


def conv_general_permutations(dimension_numbers):
    """(lhs_perm, rhs_perm, out_perm) of string dimension numbers like ('NHWC', 'HWIO', 'NHWC')."""
    rank = len(dimension_numbers[0])
    return conv_dimension_numbers((0,) * rank, (0,) * rank, dimension_numbers)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Output shape of a convolution in canonical (N, C, spatial...) order."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding dimension: got padding={pads} for lhs_shape[2:]={tuple(lhs_shape[2:])}")
    space = tuple(max(0, (p - k) // s + 1) if p >= k else 0 for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """Output shape of `conv_general_dilated` without dilation, in the output's layout."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm), window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def _conv_transpose_padding(k, s, padding):
    """(before, after) padding of one dimension of the transposed convolution."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding!r}: use 'SAME', 'VALID' or (low, high) pairs.")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """Output shape of `conv_transpose`, in the output's layout."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    unpadded = [(i - 1) * s - k + 2 for i, k, s in zip(lhs_t[2:], rhs_t[2:], window_strides)]
    space = [u + int(np.sum(p)) for u, p in zip(unpadded, padding)]
    out = (lhs_t[0], rhs_t[0]) + tuple(space)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


_DEFAULT_SPECS = {
    2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """N-d transposed convolution (JAX's `lax.conv_transpose`): a fractionally strided
    convolution, with Keras' Conv2DTranspose output padding. The kernel is not flipped
    unless `transpose_kernel` (then it also swaps the kernel's in/out feature axes)."""
    ndim = len(lhs.shape)
    if ndim != len(rhs.shape) or ndim < 2:
        raise TypeError(f"conv_transpose requires lhs and rhs of equal rank >= 2, got shapes {tuple(lhs.shape)} and {tuple(rhs.shape)}.")
    if dimension_numbers is None:
        if ndim not in _DEFAULT_SPECS:
            raise ValueError("No 4+ dimensional dimension_number defaults: pass dimension_numbers.")
        dimension_numbers = _DEFAULT_SPECS[ndim]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    k_spatial = [rhs.shape[i] for i in dn[1][2:]]
    rhs_dilation = (1,) * (ndim - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        each = [padding] * len(strides) if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(_dilate(k, r), s, p) for k, r, s, p in zip(k_spatial, rhs_dilation, strides, each))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn[1][2:]))
        perm = list(range(ndim))
        perm[dn[1][0]], perm[dn[1][1]] = perm[dn[1][1]], perm[dn[1][0]]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, tuple(strides), rhs_dilation, dn,
                                precision=precision, preferred_element_type=preferred_element_type)


__all__ = [
    "Precision", "conv_transpose", "conv_shape_tuple", "conv_general_shape_tuple",
    "conv_transpose_shape_tuple", "conv_general_permutations",
]
