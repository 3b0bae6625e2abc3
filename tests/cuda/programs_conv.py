"""Programs for the CUDA conv kernels, merged into `programs.PROGRAMS` (simulator tests and the
PTX check): (name, function, argument factory) entries, small shapes."""
import numpy as np

import omnistage
import omnistage.lax as lax


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _i32(*shape, seed=0):
    return np.random.default_rng(seed).integers(-60, 60, shape).astype(np.int32)


def conv_nchw(x, w):
    """NCHW/OIHW: strides, asymmetric padding and both dilations."""
    return (lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 2))),
            lax.conv_general_dilated(x, w, (1, 2), ((2, -1), (-1, 1)), lhs_dilation=(2, 1), rhs_dilation=(1, 2)))


def conv_nhwc(x, w):
    """Channels last ('NHWC', 'HWIO', 'NHWC') and a mixed output layout ('NCHW')."""
    return (lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
            lax.conv_general_dilated(x, w, (2, 1), ((0, 1), (1, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                                     dimension_numbers=("NHWC", "HWIO", "NCHW")))


def conv_groups(x, wf, wb):
    """Feature groups (channels split two ways) and batch groups (batch split two ways)."""
    return (lax.conv_general_dilated(x, wf, (1, 1), "VALID", feature_group_count=2),
            lax.conv_general_dilated(x, wb, (1, 1), ((1, 0), (0, 0)), batch_group_count=2))


def conv_1d_3d(x1, w1, x3, w3):
    return (lax.conv_general_dilated(x1, w1, (2,), ((3, -1),), rhs_dilation=(2,)),
            lax.conv_general_dilated(x3, w3, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")))


def conv_no_spatial_and_empty(x, w, x4, w4):
    """Rank-2 operands (no spatial dimensions: a matmul) and an output with no elements."""
    return lax.conv_general_dilated(x, w, (), ()), lax.conv_general_dilated(x4, w4, (1, 1), ((-2, -2), (0, 0)))


def conv_int(x, w):
    """int32 (wrapping) and int8 operands accumulated in float32 (preferred_element_type)."""
    return (lax.conv_general_dilated(x, w, (1, 1), "SAME"),
            lax.conv_general_dilated(x.astype(np.int8), w.astype(np.int8), (1, 1), "VALID",
                                     preferred_element_type=np.float32))


def conv_complex(x, w):
    return lax.conv_general_dilated(lax.complex(x, -x), lax.complex(w, w * 0.5), (1, 1), ((1, 0), (0, 1)))


def _conv_loss(x, w):
    y = lax.conv_general_dilated(x, w, (2, 1), ((1, 1), (0, 1)), rhs_dilation=(1, 2), feature_group_count=2)
    return (y * y).sum()


# the transposed convolutions of the gradient: lhs dilation, swapped dimension numbers, groups
conv_grad = omnistage.grad(_conv_loss, argnums=(0, 1))


PROGRAMS = [
    ("conv_nchw", conv_nchw, lambda: (_f32(2, 3, 5, 4), _f32(2, 3, 3, 2, seed=1))),
    ("conv_nhwc", conv_nhwc, lambda: (_f32(2, 4, 5, 3), _f32(2, 3, 3, 2, seed=1))),
    ("conv_groups", conv_groups, lambda: (_f32(4, 4, 3, 3), _f32(4, 2, 2, 2, seed=1), _f32(4, 4, 2, 1, seed=2))),
    ("conv_1d_3d", conv_1d_3d, lambda: (_f32(2, 2, 7), _f32(3, 2, 2, seed=1), _f32(1, 3, 4, 3, 2), _f32(2, 2, 1, 2, 2, seed=1))),
    ("conv_no_spatial_and_empty", conv_no_spatial_and_empty,
     lambda: (_f32(3, 4), _f32(5, 4, seed=1), _f32(1, 2, 3, 3), _f32(2, 2, 1, 1, seed=1))),
    ("conv_int", conv_int, lambda: (_i32(1, 2, 4, 3), _i32(2, 2, 2, 2, seed=1))),
    ("conv_complex", conv_complex, lambda: (_f32(1, 2, 3, 3), _f32(2, 2, 2, 2, seed=1))),
    ("conv_grad", conv_grad, lambda: (_f32(2, 4, 4, 3), _f32(4, 2, 2, 2, seed=1))),
]
