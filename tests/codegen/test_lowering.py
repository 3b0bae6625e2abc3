"""Differential tests of the Numba lowerings: every primitive of the registry (control flow
aside) compiles to Numba, and the compiled program equals the NumPy interpreter (exactly
for integers and booleans, to tolerance for floats, NaNs in the same places, same dtypes and
shapes), on several dtypes and shapes (0-d, size 0, odd sizes).

Programs group several primitives each, because Numba compiles every program (about 0.1 to
1 s); each group is small enough that a failure still names the primitive.
"""
import zlib

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen import emit_cpu, fusable_forms, index_maps, scalar_rules
from omnistage.core import tree_util
from omnistage.core import primitive as core_primitive
from omnistage.core.primitive import registry

CONTROL_FLOW = {"cond", "while_loop", "scan"}  # lowered by the control-flow code generator
# Never reach code generation: `staging.cleanup` inlines these (stop_gradient, custom rules),
# and vmap rewrites the collectives away (outside vmap they are an unbound-axis error).
NOT_LOWERED = set(core_primitive.inline_for_lowering) | {"psum", "pmax", "pmin", "all_gather", "axis_index", "ppermute"}
# compiled by the tests that can run them: debug_print prints (tests/api/test_debug_print.py),
# the cross-process steps need an MPI job (tests/distributed), pure_callback calls Python
# (tests/test_pure_callback.py)
COMPILED_ELSEWHERE = {"debug_print", "process_allreduce", "process_allgather", "process_index", "process_ppermute", "pure_callback"}
SEEN = set()  # primitives that reached the Numba backend in a differential test of this file

TOLERANCE = {  # (rtol, atol) by result dtype
    "float32": (1e-5, 1e-6), "complex64": (1e-5, 1e-6),
    "float64": (1e-12, 1e-14), "complex128": (1e-12, 1e-14),
}


def _leaves(tree):
    return [np.asarray(v) for v in tree_util.tree_leaves(tree)]


def assert_matches(got, want, tol=None):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"output {k}: dtype {g.dtype} != interpreter's {w.dtype}"
        assert g.shape == w.shape, f"output {k}: shape {g.shape} != interpreter's {w.shape}"
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
        else:
            rtol, atol = tol or TOLERANCE[g.dtype.name]
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"output {k}")


def check(f, *args, tol=None, compare=True):
    """jit(f) on the Numba backend equals jit(f) on the interpreter; the compiled program is
    really Numba. Returns (numba result, interpreter result)."""
    cpu = omnistage.jit(f, backend="cpu")
    compiled = cpu.lower(*args).compile()
    text = compiled.as_text()
    assert "numba.njit" in text and "interpreted by NumPy" not in text, text[:400]
    SEEN.update(e.prim for e in compiled.program.eqns())
    got = cpu(*args)
    want = omnistage.jit(f, backend="interpreter")(*args)
    if compare:
        assert_matches(got, want, tol)
    return got, want


RNG = np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _reseed(request):
    """Each test draws the same inputs whatever ran before it (or on which xdist worker)."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5]


def floats(shape, dtype="float32", scale=3.0, specials=True):
    x = (RNG.standard_normal(shape) * scale).astype(dtype)
    if specials and x.size:
        flat = x.reshape(-1)
        k = min(len(FLOAT_SPECIALS), flat.size // 2)
        flat[RNG.choice(flat.size, k, replace=False)] = FLOAT_SPECIALS[:k]
    return x


def complexes(shape, dtype="complex64", scale=2.0):
    re = RNG.standard_normal(shape) * scale
    im = RNG.standard_normal(shape) * scale
    return (re + 1j * im).astype(dtype)


def ints(shape, dtype="int32", lo=-50, hi=50):
    return RNG.integers(lo, hi, shape).astype(dtype)


def bools(shape):
    return RNG.random(shape) < 0.5


SHAPES = [(), (0,), (3, 5)]


# --- every primitive has a lowering ---------------------------------------------------------


def _has_lowering(prim):
    return (
        prim in scalar_rules.RULES or prim in index_maps.INDEX_MAPS or prim == "iota"
        or prim in emit_cpu.REDUCTIONS or prim in ("argmax", "argmin") or prim in emit_cpu.OPAQUE_RULES
        # split into one elementwise statement per word before lowering (fusable_forms.py)
        or (prim == "threefry2x32" and fusable_forms.WORD in scalar_rules.RULES)
    )


def test_every_non_control_flow_primitive_has_a_numba_lowering():
    missing = sorted(p for p in registry if p not in CONTROL_FLOW | NOT_LOWERED and not _has_lowering(p))
    assert not missing, f"primitives without a Numba lowering: {missing}"


# --- elementwise: floating point ------------------------------------------------------------

FLOAT_UNARY = [
    lax.neg, lax.sign, lax.abs, lax.floor, lax.ceil, lax.round,
    lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), lax.is_finite, lax.exp, lax.exp2,
    lax.log, lax.expm1, lax.log1p, lax.sqrt, lax.rsqrt, lax.cbrt, lax.tanh, lax.logistic, lax.sin,
    lax.cos, lax.tan, lax.asin, lax.acos, lax.atan, lax.sinh, lax.cosh, lax.asinh, lax.acosh,
    lax.atanh, lax.real, lax.imag, lax.conj, lambda x: lax.integer_pow(x, 3),
    lambda x: lax.integer_pow(x, -2), lambda x: lax.integer_pow(x, 0),
]


def _all_of(fns):
    return lambda *xs: tuple(fn(*xs) for fn in fns)


@pytest.mark.parametrize("shape", SHAPES)
def test_float32_unary_elementwise(shape):
    check(_all_of(FLOAT_UNARY), floats(shape))


def test_float64_unary_elementwise(x64):
    check(_all_of(FLOAT_UNARY), floats((4, 9), "float64"))


def test_round_half_away_from_zero_rounds_in_float32():
    # 0.49999997f + 0.5f rounds up to 1.0 in float32 (not in float64)
    x = np.array([0.49999997, -0.49999997, 2.5, -2.5, 0.5, 1.5], np.float32)
    check(lax.round, x)


FLOAT_BINARY = [
    lax.add, lax.sub, lax.mul, lax.div, lax.rem, lax.pow, lax.max, lax.min, lax.atan2,
    lax.nextafter, lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge, lax.complex,
]


@pytest.mark.parametrize("shape", [(), (0,), (11,), (2, 3)])
def test_float32_binary_elementwise(shape):
    check(_all_of(FLOAT_BINARY), floats(shape), floats(shape))


def test_float64_binary_elementwise(x64):
    check(_all_of(FLOAT_BINARY), floats((5, 7), "float64"), floats((5, 7), "float64"))


def test_binary_elementwise_with_a_scalar_operand():
    check(lambda x, s: (lax.max(x, s), lax.div(s, x), lax.pow(x, s)), floats((6,)), np.float32(1.5))


def test_complex_keeps_infinite_and_nan_parts():
    re = np.array([np.inf, 1.0, np.nan, -np.inf], np.float32)
    im = np.array([1.0, np.inf, 2.0, np.nan], np.float32)
    got, _ = check(lax.complex, re, im)
    np.testing.assert_array_equal(np.asarray(got).real, re)


def test_fma_rounds_once():
    from omnistage.lax.fused_multiply_add import fma

    a = (1 + RNG.random(64)).astype(np.float32)
    b = (1 + RNG.random(64)).astype(np.float32)
    c = -(a.astype(np.float64) * b).astype(np.float32)  # a*b + c is the product's rounding error
    got, want = check(fma, a, b, c, tol=(0, 0))
    assert np.count_nonzero(np.asarray(got)) > 0


def test_fma_float64_and_specials(x64):
    from omnistage.lax.fused_multiply_add import fma

    a, b, c = floats((3, 5), "float64"), floats((3, 5), "float64"), floats((3, 5), "float64")
    check(fma, a, b, c)


COMPLEX_UNARY = [
    lax.neg, lax.sign, lax.abs, lax.exp, lax.log, lax.expm1, lax.log1p, lax.sqrt, lax.rsqrt,
    lax.tanh, lax.logistic, lax.sin, lax.cos, lax.tan, lax.asin, lax.acos, lax.atan, lax.sinh,
    lax.cosh, lax.asinh, lax.acosh, lax.atanh, lax.real, lax.imag, lax.conj, lax.exp2,
    lambda x: lax.integer_pow(x, 3), lambda x: lax.integer_pow(x, -1),
]
COMPLEX_BINARY = [lax.add, lax.sub, lax.mul, lax.div, lax.pow, lax.max, lax.min, lax.eq, lax.ne]


@pytest.mark.parametrize("shape", [(), (9,)])
def test_complex64_elementwise(shape):
    x, y = complexes(shape), complexes(shape)
    check(_all_of(COMPLEX_UNARY), x, tol=(2e-5, 1e-6))
    check(_all_of(COMPLEX_BINARY), x, y, tol=(2e-5, 1e-6))


def test_complex_max_min_are_lexicographic_and_propagate_nan():
    x = np.array([1 + 2j, 1 + 2j, complex(np.nan, 0), complex(1, np.nan), 3 + 0j], np.complex64)
    y = np.array([1 + 3j, 0 + 9j, 2 + 0j, 2 + 0j, complex(3, np.nan)], np.complex64)
    check(lambda a, b: (lax.max(a, b), lax.min(a, b), lax.max(b, a), lax.min(b, a)), x, y)


def test_complex128_elementwise(x64):
    check(_all_of(COMPLEX_UNARY + [lambda x: lax.div(x, x)]), complexes((7,), "complex128"))


# --- elementwise: integers and booleans -----------------------------------------------------

INT_BINARY = [
    lax.add, lax.sub, lax.mul, lax.div, lax.rem, lax.max, lax.min, lax.eq, lax.ne, lax.lt, lax.le,
    lax.gt, lax.ge, lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.shift_left,
    lax.shift_right_arithmetic, lax.shift_right_logical,
]
INT_UNARY = [
    lax.neg, lax.sign, lax.abs, lax.bitwise_not, lax.population_count,
    lambda x: lax.integer_pow(x, 2), lambda x: lax.integer_pow(x, 5),
]


def _int_operands(dtype, shape):
    info = np.iinfo(dtype)
    x, y = ints(shape, dtype, max(info.min, -50), min(info.max, 50)), ints(shape, dtype, max(info.min, -9), 10)
    if x.size >= 6:  # division by zero, INT_MIN / -1, extreme values, shifts past the width
        x.reshape(-1)[:6] = [info.min, info.min, info.max, 7, info.min, 3]
        y.reshape(-1)[:6] = [0, -1 if info.min else 1, 0, 0, 1, info.bits]
    return x, y


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "uint32", "int16"])
def test_integer_elementwise_is_exact(dtype):
    x, y = _int_operands(dtype, (24,))
    check(lambda a, b: (_all_of(INT_BINARY)(a, b), _all_of(INT_UNARY)(a)), x, y)


def test_int64_and_uint64_elementwise(x64):
    for dtype in ("int64", "uint64"):
        x, y = _int_operands(dtype, (3, 8))
        check(lambda a, b: (_all_of(INT_BINARY)(a, b), _all_of(INT_UNARY)(a)), x, y)


def test_integer_division_follows_xla():
    x = np.array([7, -7, 7, -7, 5, -5, np.iinfo(np.int32).min, np.iinfo(np.int32).min], np.int32)
    y = np.array([2, 2, -2, -2, 0, 0, -1, 0], np.int32)
    got, _ = check(lambda a, b: (lax.div(a, b), lax.rem(a, b)), x, y)
    np.testing.assert_array_equal(got[0], [3, -3, -3, 3, -1, -1, np.iinfo(np.int32).min, -1])
    np.testing.assert_array_equal(got[1], [1, -1, 1, -1, 5, -5, 0, np.iinfo(np.int32).min])


def test_shifts_by_negative_and_oversized_counts():
    x = np.array([-8, 8, -1, 1, 12345, -12345], np.int32)
    s = np.array([-1, 32, 33, -5, 31, 40], np.int32)
    check(lambda a, b: (lax.shift_left(a, b), lax.shift_right_arithmetic(a, b), lax.shift_right_logical(a, b)), x, s)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "uint32", "int64", "uint64"])
def test_shifts_in_every_integer_width(dtype, x64):
    """The shift intrinsics work in the operand's own width: counts of the width and above,
    negative counts (signed) and huge counts (unsigned) give NumPy's results, as do left
    shifts that push bits out and arithmetic shifts of negative values."""
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, info.max // 3, 5, 0, 1, info.min + 1, 3], dtype)
    huge = -1 if info.kind == "i" else info.max
    s = np.array([huge, info.bits, info.bits - 1, 1, 0, info.bits + 3, 2, info.bits - 2], dtype)
    check(lambda a, b: (lax.shift_left(a, b), lax.shift_right_arithmetic(a, b), lax.shift_right_logical(a, b)), x, s)
    # a constant count (LLVM folds the range check) and a count broadcast from a scalar
    check(lambda a: (lax.shift_left(a, np.asarray(3, dtype)), lax.shift_right_logical(a, np.asarray(info.bits, dtype))), x)


@pytest.mark.parametrize("shape", [(), (0,), (13,)])
def test_boolean_elementwise(shape):
    fns = [lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lambda a, b: lax.bitwise_not(a), lax.eq,
           lax.ne, lax.max, lax.min, lax.lt, lax.ge, lambda a, b: lax.select(a, a, b)]
    check(_all_of(fns), bools(shape), bools(shape))


def test_select_n_with_an_integer_which_clamps():
    which = np.array([0, 1, 2, -3, 7, 1, 0], np.int32)
    cases = [floats((7,)) for _ in range(3)]
    check(lambda w, a, b, c: (lax.select_n(w, a, b, c), lax.select_n(w, a)), which, *cases)
    check(lambda w, a, b: lax.select_n(w, a, b), np.int32(1), ints((3,)), ints((3,)))


CONVERSIONS = ["int8", "int32", "uint8", "uint32", "float32", "bool", "complex64"]


@pytest.mark.parametrize("src", ["float32", "int32", "bool", "complex64", "uint8"])
def test_convert_element_type(src):
    if src == "float32":
        x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.1e9, 255.7, -1.5, -0.7, 0.0, 2**31, 1e20], np.float32)
    elif src == "complex64":
        x = np.array([1 + 2j, 0 + 3j, -2.7 + 0j, complex(np.nan, 1), 0j, 1e10 + 0j], np.complex64)
    elif src == "bool":
        x = bools((9,))
    else:
        x = ints((9,), src, 0 if src == "uint8" else -300, 300)
    check(lambda v: tuple(lax.convert_element_type(v, dt) for dt in CONVERSIONS), x)


def test_float_to_int64_conversion_saturates(x64):
    x = np.array([np.nan, np.inf, -np.inf, 1e19, -1e19, 9.2e18, -7.5, 4e9], np.float64)
    check(lambda v: tuple(lax.convert_element_type(v, dt) for dt in ("int64", "uint64", "int32", "uint32", "int16")), x)


# --- bitcast_convert_type -------------------------------------------------------------------


def test_bitcast_convert_type_same_width():
    x = floats((3, 4))
    check(lambda v: (lax.bitcast_convert_type(v, jnp.int32), lax.bitcast_convert_type(v, jnp.uint32)), x)
    check(lambda v: lax.bitcast_convert_type(v, jnp.float32), ints((5,)))
    check(lambda v: lax.bitcast_convert_type(v, jnp.int32), np.float32(-1.5))


def test_bitcast_convert_type_changes_width():
    check(lambda v: lax.bitcast_convert_type(v, jnp.uint8), floats((2, 3)))
    # (the interpreter cannot view a 0-d array as a narrower dtype; NumPy is the oracle here)
    got = omnistage.jit(lambda v: lax.bitcast_convert_type(v, jnp.int16), backend="cpu")(np.float32(3.0))
    np.testing.assert_array_equal(got, np.array([3.0], np.float32).view(np.int16))
    check(lambda v: lax.bitcast_convert_type(v, jnp.float32), ints((3, 4), "uint8", 0, 255))
    check(lambda v: lax.bitcast_convert_type(v, jnp.float32), complexes((2,)))


# --- gather / scatter -----------------------------------------------------------------------


def _indices(shape, k, bound):
    return RNG.integers(-2, bound + 2, shape + (k,)).astype(np.int32)  # some out of bounds


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "complex64"])
def test_gather_clamps_out_of_bounds_indices(dtype):
    x = {"float32": floats, "int32": ints, "bool": bools, "complex64": complexes}[dtype]((5, 4, 3))
    check(
        lambda v, i, j: (lax.gather(v, i), lax.gather(v, j, axes=(2, 0)), lax.gather(v, i[:, :0], axes=())),
        x, _indices((6,), 1, 5), _indices((2, 3), 2, 4),
    )


def test_gather_edge_shapes():
    check(lambda v, i: lax.gather(v, i, axes=()), np.float32(2.5), np.zeros((3, 0), np.int32))
    check(lambda v, i: lax.gather(v, i), np.zeros((0, 3), np.float32), _indices((4,), 1, 2))
    check(lambda v, i: lax.gather(v, i), floats((4, 3)), np.zeros((0, 1), np.int32))


def test_numpy_indexing_lowers_to_gather():
    x = floats((6, 5))
    check(lambda v, i: (v[i], v[:, i], v[i, 2], v[-1]), x, np.array([0, -1, 3, 5], np.int32))


SCATTERS = [lax.scatter, lax.scatter_add, lax.scatter_mul, lax.scatter_min, lax.scatter_max]


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_scatter_family_drops_out_of_bounds_and_accumulates_duplicates(dtype):
    make = {"float32": floats, "int32": ints, "bool": bools}[dtype]
    x, i = make((5, 3)), np.array([[0], [2], [2], [-1], [5], [4], [0]], np.int32)
    u = make((7, 3))
    check(lambda v, idx, upd: tuple(s(v, idx, upd) for s in SCATTERS), x, i, u)


def test_scatter_on_several_axes_and_complex():
    x, i, u = complexes((4, 3, 2)), _indices((5,), 2, 3), complexes((5, 3))
    check(lambda v, idx, upd: (lax.scatter(v, idx, upd, axes=(2, 0)), lax.scatter_add(v, idx, upd, axes=(2, 0)),
                               lax.scatter_mul(v, idx, upd, axes=(2, 0))), x, i, u)
    check(lambda v, idx, upd: lax.scatter_add(v, idx, upd, axes=()), floats((3,)), np.zeros((4, 0), np.int32), floats((4, 3)))


def test_numpy_at_updates_lower_to_scatter():
    x, i = floats((6,)), np.array([1, -1, 1, 3], np.int32)
    check(lambda v, idx: (v.at[idx].set(1.0), v.at[idx].add(2.0), v.at[idx].multiply(3.0),
                          v.at[idx].min(0.0), v.at[idx].max(0.0)), x, i)


# --- dynamic_slice / dynamic_update_slice / pad ---------------------------------------------


@pytest.mark.parametrize("start", [(0, 0), (2, 1), (-1, 9), (100, -100)])
def test_dynamic_slice_and_update_clamp_their_starts(start):
    x, u = floats((5, 4)), floats((2, 3))
    s0, s1 = np.int32(start[0]), np.int32(start[1])
    check(lambda v, upd, a, b: (lax.dynamic_slice(v, (a, b), (2, 3)), lax.dynamic_update_slice(v, upd, (a, b)),
                                lax.dynamic_slice(v, (a, 1), (0, 4)), lax.dynamic_index_in_dim(v, a, 1, False)),
          x, u, s0, s1)


def test_dynamic_slice_of_scalars_ints_and_bools():
    check(lambda v, u: (lax.dynamic_slice(v, (), ()), lax.dynamic_update_slice(v, u, ())), np.float32(1.0), np.float32(2.0))
    check(lambda v, u, a: (lax.dynamic_slice(v, (a,), (3,)), lax.dynamic_update_slice(v, u, (a,))),
          ints((7,)), ints((3,)), np.int32(5))
    check(lambda v, u, a: lax.dynamic_update_slice(v, u, (a,)), bools((7,)), bools((2,)), np.int32(-4))


PAD_CONFIGS = [
    ((1, 2, 0), (0, 0, 0)), ((0, 0, 1), (2, 1, 2)), ((-1, 2, 0), (1, -2, 1)),
    ((-3, -3, 2), (0, 0, 0)), ((-4, 0, 0), (0, 0, 0)),
]


@pytest.mark.parametrize("config", PAD_CONFIGS)
def test_pad_with_negative_and_interior_padding(config):
    x = floats((4, 3))
    check(lambda v, p: lax.pad(v, p, config), x, np.float32(-7.0))
    check(lambda v: lax.pad(v, 9, config), ints((4, 3)))


def test_pad_scalars_bools_and_empty():
    check(lambda v, p: lax.pad(v, p, ()), np.float32(2.0), np.float32(0.0))
    check(lambda v: lax.pad(v, True, ((1, 1, 1),)), bools((3,)))
    check(lambda v: lax.pad(v, 1.0, ((2, 1, 3),)), np.zeros((0,), np.float32))
    check(lambda v: jnp.pad(v, ((1, 2), (0, 1))), floats((2, 3)))


# --- cumulative -------------------------------------------------------------------------------

CUMULATIVE = [lax.cumsum, lax.cumprod, lax.cummax, lax.cummin]


AXES_REVERSE = [(0, False), (1, True), (2, False), (2, True)]


def _cumulative_program(fns):
    return lambda v: tuple(f(v, axis, reverse) for axis, reverse in AXES_REVERSE for f in fns)


def test_cumulative_ops_along_each_axis_and_direction():
    check(_cumulative_program(CUMULATIVE + [lax.cumlogsumexp]), floats((3, 4, 5), scale=1.0))
    check(_cumulative_program(CUMULATIVE), ints((3, 4, 5), lo=-3, hi=4))
    check(_cumulative_program([lax.cummax, lax.cummin]), bools((3, 4, 5)))


def test_cumulative_complex_float64_and_empty(x64):
    check(lambda v: (lax.cumsum(v, 0, True), lax.cumprod(v, 0)), complexes((6,)))
    check(lambda v: tuple(f(v, 0) for f in CUMULATIVE + [lax.cumlogsumexp]), floats((9,), "float64", 1.0))
    check(lambda v: tuple(f(v, 1) for f in CUMULATIVE + [lax.cumlogsumexp]), np.zeros((2, 0), np.float32))
    check(lambda v: (jnp.cumsum(v), jnp.cumprod(v, axis=0)), ints((3, 2), "int64"))


# --- sort -------------------------------------------------------------------------------------


def test_sort_puts_nans_last_and_is_stable():
    x = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, 1.0, -np.nan, np.inf, 0.0, 1.0], np.float32)
    idx = np.arange(10, dtype=np.int32)
    got, _ = check(lambda k, v: (lax.sort(k), lax.sort((k, v), num_keys=1)), x, idx)
    np.testing.assert_array_equal(got[1][1], [4, 2, 3, 8, 5, 9, 0, 7, 1, 6])


@pytest.mark.parametrize("dimension", [0, 1, 2])
def test_sort_multi_operand_along_each_dimension(dimension):
    k1, k2, v = ints((4, 5, 6), lo=0, hi=3), floats((4, 5, 6)), complexes((4, 5, 6))
    check(lambda a, b, c: (lax.sort((a, b, c), dimension, num_keys=2), lax.sort(b, dimension)), k1, k2, v)


def test_sort_complex_bool_int_keys_and_edge_shapes():
    c = np.array([1 + 2j, 1 + 1j, 0 + 5j, complex(np.nan, 0), 1 + 1j, complex(1, np.nan)], np.complex64)
    check(lambda k, v: lax.sort((k, v)), c, np.arange(6, dtype=np.int32))
    check(lambda k: (lax.sort(k), lax.sort(k, is_stable=False)), bools((3, 7)))
    check(lambda k: lax.sort(k, 0), ints((0, 3)))
    check(lambda k: lax.sort(k), ints((1,)))


def test_numpy_sorting_functions():
    x = floats((4, 7))
    check(lambda v: (jnp.sort(v, axis=0), jnp.argsort(v, axis=1), lax.top_k(v, 3)), x)


# --- linear algebra ---------------------------------------------------------------------------


def _spd(n, batch=(), dtype="float32"):
    a = RNG.standard_normal(batch + (n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(batch + (n, n))
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


LINALG_DTYPES = ["float32", "complex64"]


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_cholesky_and_not_positive_definite_gives_nan(dtype):
    a = _spd(4, (2,), dtype)
    a[1] = -a[1]  # not positive definite
    check(lambda m: lax.linalg.cholesky(m), a, tol=(1e-4, 1e-5))
    check(lambda m: lax.linalg.cholesky(m), np.zeros((0, 3, 3), dtype))


def _same_up_to_phase(got, want, tol):
    """Columns equal up to a unit factor each (eigen/singular vectors are defined up to one)."""
    got, want = np.asarray(got), np.asarray(want)
    for g, w in zip(got.reshape((-1,) + got.shape[-2:]), want.reshape((-1,) + want.shape[-2:])):
        for j in range(g.shape[-1]):
            k = np.argmax(np.abs(w[:, j]))
            phase = g[k, j] / w[k, j] if w[k, j] != 0 else 1
            np.testing.assert_allclose(g[:, j], w[:, j] * phase, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_eigh_reads_the_lower_or_upper_triangle(dtype):
    a = _spd(5, (2,), dtype)
    a[..., 0, 4] = 100.0  # only one triangle is read: this changes the upper-triangle result
    got, want = check(lambda m: [lax.linalg.eigh(m, lower=lower, symmetrize_input=False) for lower in (True, False)],
                      a, compare=False)
    for (v, w), (v_ref, w_ref) in zip(got, want):
        assert_matches(w, w_ref, (1e-4, 1e-4))
        assert np.asarray(v).dtype == np.asarray(v_ref).dtype
        _same_up_to_phase(v, v_ref, 1e-3)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_eig_matches_numpy_conventions(dtype):
    a = RNG.standard_normal((2, 4, 4)).astype(dtype)  # real matrices with complex eigenvalues
    no_vectors = dict(compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    got, want = check(lambda m: (lax.linalg.eig(m), lax.linalg.eig(m, **no_vectors)), a, compare=False)
    (w, vl, vr), (w_ref, vl_ref, vr_ref) = got[0], want[0]
    assert_matches([w, got[1]], [w_ref, want[1]], (1e-4, 1e-4))
    for g, r in ((vl, vl_ref), (vr, vr_ref)):
        assert np.asarray(g).dtype == np.asarray(r).dtype
        _same_up_to_phase(g, r, 1e-3)


def test_eig_float64_real_eigenvalues(x64):
    a = _spd(3, (), "float64")
    check(lambda m: lax.linalg.eig(m, compute_left_eigenvectors=False), a, tol=(1e-9, 1e-9))


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 4)])
def test_svd_and_qr(dtype, shape):
    a = (RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if dtype == "complex64" else 0)).astype(dtype)
    fulls = (True, False)
    got, want = check(lambda m: ([lax.linalg.svd(m, full_matrices=f) for f in fulls], lax.linalg.svd(m, compute_uv=False),
                                 [lax.linalg.qr(m, full_matrices=f) for f in fulls]), a, compare=False)
    k = min(shape[-2:])
    for (u, s, vh), (u_ref, s_ref, vh_ref) in zip(got[0], want[0]):
        assert_matches(s, s_ref, (1e-4, 1e-5))
        _same_up_to_phase(np.asarray(u)[..., :k], np.asarray(u_ref)[..., :k], 1e-3)
        assert np.asarray(u).shape == np.asarray(u_ref).shape and np.asarray(vh).shape == np.asarray(vh_ref).shape
    assert_matches(got[1:], want[1:], (1e-4, 1e-4))


def test_svd_qr_of_empty_matrices():
    for shape in ((0, 3), (3, 0)):
        a = np.zeros(shape, np.float32)
        check(lambda m: (lax.linalg.svd(m), lax.linalg.qr(m), lax.linalg.qr(m, full_matrices=False)), a)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(2, 4, 4), (3, 5), (5, 3)])
def test_lu_and_pivots_to_permutation(dtype, shape):
    a = (RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if dtype == "complex64" else 0)).astype(dtype)
    a[..., 1, :] = 0  # a zero row: exercises the unscaled zero pivot column
    check(lambda m: lax.linalg.lu(m), a, tol=(1e-4, 1e-5))
    pivots = np.array([[2, 2, 3], [0, 3, 3]], np.int32)
    check(lambda p: lax.linalg.lu_pivots_to_permutation(p, 5), pivots)


TRIANGULAR_VARIANTS = [
    dict(transpose_a=t, conjugate_a=c, unit_diagonal=u) for t, c in ((False, False), (True, False), (True, True))
    for u in (False, True)
]


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
def test_triangular_solve_variants(left_side, lower):
    a = _spd(4, (2,), "complex64")
    b = complexes((2, 4, 3) if left_side else (2, 3, 4))
    check(lambda m, r: [lax.linalg.triangular_solve(m, r, left_side=left_side, lower=lower, **v) for v in TRIANGULAR_VARIANTS],
          a, b, tol=(1e-4, 1e-5))


def test_numpy_linalg_functions(x64):
    a = _spd(4, (), "float64")
    check(lambda m: (jnp.linalg.inv(m), jnp.linalg.det(m), jnp.linalg.solve(m, m[:, 0]), jnp.linalg.cholesky(m),
                     jnp.linalg.eigvalsh(m)), a, tol=(1e-9, 1e-9))


# --- convolution ----------------------------------------------------------------------------


CONV_CASES = [
    dict(window_strides=(1,), padding=((0, 0),)),
    dict(window_strides=(2,), padding=((1, 2),), rhs_dilation=(2,)),
    dict(window_strides=(1,), padding=((-1, 3),), lhs_dilation=(3,)),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_1d(case):
    lhs, rhs = floats((2, 3, 9), specials=False), floats((4, 3, 3), specials=False)
    check(lambda x, k: lax.conv_general_dilated(x, k, **case), lhs, rhs, tol=(1e-4, 1e-4))
    check(lambda x, k: lax.conv_general_dilated(x, k, **case), ints((2, 3, 9), lo=-5, hi=5), ints((4, 3, 3), lo=-5, hi=5))


def test_conv_2d_layouts_groups_and_padding_modes():
    x, k = floats((2, 7, 6, 4), specials=False), floats((3, 3, 2, 6), specials=False)
    dn = ("NHWC", "HWIO", "NHWC")
    check(lambda a, b: (lax.conv_general_dilated(a, b, (1, 2), "SAME", dimension_numbers=dn, feature_group_count=2),
                        lax.conv_general_dilated(a, b, (2, 1), "VALID", rhs_dilation=(2, 1), dimension_numbers=dn,
                                                 feature_group_count=2)), x, k, tol=(1e-4, 1e-4))
    xb, kb = floats((4, 3, 5, 5), specials=False), floats((6, 3, 2, 2), specials=False)
    check(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), ((1, 0), (0, 1)), batch_group_count=2), xb, kb, tol=(1e-4, 1e-4))


def test_conv_3d_float64_complex_and_empty(x64):
    x, k = floats((1, 2, 4, 3, 5), "float64", specials=False), floats((2, 2, 2, 2, 2), "float64", specials=False)
    check(lambda a, b: lax.conv_general_dilated(a, b, (1, 1, 2), "SAME", lhs_dilation=(1, 2, 1)), x, k)
    check(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID"), complexes((1, 2, 5), "complex128"),
          complexes((3, 2, 2), "complex128"))
    check(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID"), np.zeros((0, 2, 5)), floats((3, 2, 2), "float64"))
    check(lambda a, b: lax.conv_general_dilated(a, b, (), ()), floats((3, 4), "float64"), floats((5, 4), "float64"))


# --- max/min windows ------------------------------------------------------------------------


def test_max_min_windows_and_their_derivatives():
    """reduce_window_max/min and select_and_gather_add/select_and_scatter_add (their JVP and
    VJP): NaN, infinities and ties in the windows, padding, strides and both dilations."""
    x = floats((2, 6, 5, 3))
    x[0, :2, :2, 0] = 1.0  # a tied window
    window = dict(window_dimensions=(1, 2, 3, 1), window_strides=(1, 2, 1, 1),
                  padding=((0, 0), (1, 0), (1, 1), (0, 0)), base_dilation=(1, 1, 2, 1), window_dilation=(1, 1, 2, 1))
    args = tuple(window.values())

    def pools(v):
        return (lax.reduce_window(v, -np.inf, lax.max, *args), lax.reduce_window(v, np.inf, lax.min, *args))

    check(pools, x)
    check(lambda v: lax.reduce_window(v, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 1), "SAME"), ints((4, 5)))
    t = floats((2, 6, 5, 3), specials=False)
    check(lambda v, dv: omnistage.jvp(pools, (v,), (dv,)), x, t)
    ct = floats(pools(x)[0].shape, specials=False)
    check(lambda v, c: omnistage.vjp(lambda u: pools(u)[0], v)[1](c), x, ct)


# --- random bits and FFTs -------------------------------------------------------------------


def test_random_bits_and_ffts():
    check(lambda k: omnistage.random.normal(k, (7, 3)), omnistage.random.key_data(omnistage.random.PRNGKey(3))
          if hasattr(omnistage.random, "key_data") else omnistage.random.PRNGKey(3))
    x = floats((4, 6), specials=False)
    check(lambda v: (jnp.fft.fft(v), jnp.fft.rfft2(v), jnp.fft.irfft(jnp.fft.rfft(v)), jnp.fft.ifftn(v.astype(jnp.complex64))), x,
          tol=(1e-4, 1e-4))


# --- everything together ----------------------------------------------------------------------


def test_shape_ops_reductions_and_contractions_reach_numba():
    x = floats((3, 4), specials=False)
    check(lambda v: (jnp.sum(v, 0), jnp.prod(v, 1), jnp.max(v), jnp.min(v, 0), jnp.argmax(v, 1), jnp.argmin(v, 0),
                     jnp.all(v > 0), jnp.any(v > 0, 1), v @ v.T, jnp.concatenate([v, v], 1), v[::-1, 1:3].reshape(-1),
                     jnp.squeeze(v[None]), jnp.arange(5), lax.reduce_xor(v > 0, (0,))), x, tol=(1e-4, 1e-5))


def test_every_primitive_was_compiled_by_numba_in_this_file(request):
    """Runs last: the tests above must together compile every non-control-flow primitive."""
    if hasattr(request.config, "workerinput"):
        pytest.skip("xdist splits the file over processes; run with -n0 for this check")
    functions = {name for name in globals() if name.startswith("test_")}
    selected = {item.originalname for item in request.session.items if item.module is request.module}
    if selected != functions:
        pytest.skip("only meaningful when the whole file runs")
    missing = sorted(p for p in registry if p not in CONTROL_FLOW | NOT_LOWERED | COMPILED_ELSEWHERE and p not in SEEN)
    assert not missing, f"primitives that no differential test compiled with Numba: {missing}"


# --- generated code that Numba compiles quickly ---------------------------------------------


def test_generated_code_avoids_constructs_numba_compiles_slowly():
    """Slice assignment (`y[t] = row`, `out[:, 0:2] = x`), `x.transpose(...)` and conditional
    expressions each cost Numba from tens of milliseconds to seconds of compile time per
    program (generic implementations compiled per signature; branches that its SSA and
    liveness passes analyse per variable). Their lowerings are loop nests and LLVM selects;
    the results still equal the interpreter's."""
    import re

    def f(a, b, m, r, k, w):
        cat = jnp.concatenate([a, b, a], 1)
        tmm = a.T @ b  # a transposed operand of a matmul
        bmm = jnp.einsum("bij,bkj->bik", m, m)  # batched, transposed
        tri = lax.linalg.triangular_solve(m[0], r, left_side=False, lower=False, transpose_a=True)
        shifts = (lax.shift_right_logical(k, np.uint32(3)), lax.shift_left(k, k), lax.shift_right_arithmetic(w, w))
        _, ys = lax.scan(lambda c, x: (c + x.sum(), jnp.outer(x, x)), np.float32(0), a)
        picked = jnp.where(a > 0, a, -a), lax.select_n(w % 3, a[0, :3], b[0, :3], a[1, :3])
        return cat, tmm, bmm, tri, shifts, ys, picked

    args = (floats((4, 3), specials=False), floats((4, 3), specials=False),
            floats((2, 3, 3), specials=False) + 4 * np.eye(3, dtype=np.float32), floats((5, 3), specials=False),
            ints((3,), "uint32", 0, 40), ints((3,), "int32", -40, 40))
    check(f, *args, tol=(1e-4, 1e-4))
    text = omnistage.jit(f, backend="cpu").lower(*args).compile().as_text()
    assert ".transpose(" not in text
    assert not re.search(r"\[[^\]\n]*:[^\]\n]*\]\s*=[^=]", text), "a slice assignment"
    assert not re.search(r"\bif\b[^:\n]*\belse\b", text), "a conditional expression"
