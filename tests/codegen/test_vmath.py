"""Accuracy, special values and vectorization of omnistage.codegen.vmath.

float32 kernels are checked on a sample of the whole float32 range (every 4099th bit pattern:
~1M values, both signs, subnormals included), on dense grids around each function's tricky
points, and on special values, against a correctly rounded float64 (NumPy) reference. float64
kernels are checked against long double. Each kernel runs inside a compiled loop, the way
generated code calls it, so the vectorized code path is the one tested.
"""
import math
import platform
import re
import subprocess
import sys

import numpy as np
import pytest

numba = pytest.importorskip("numba")
vmath = pytest.importorskip("omnistage.codegen.vmath")

F32_MAX_ULP = 2.0
F64_MAX_ULP = 3.0

_ERF64 = np.frompyfunc(math.erf, 1, 1)

# name: float64 reference (applied to float64 inputs)
REFERENCE = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "tanh": np.tanh,
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "sin": np.sin, "cos": np.cos,
    "erf": lambda x: _ERF64(x).astype(np.float64),
}
UNARY_F32 = sorted(n for (n, dt) in vmath.VMATH if dt == "float32" and n != "pow")
UNARY_F64 = sorted(n for (n, dt) in vmath.VMATH if dt == "float64" and n != "pow")

# dense grids (lo, hi) where range reduction, polynomial switch-overs or cancellation live
TRICKY = {
    "exp": [(-104, -80), (-1, 1), (80, 89)],
    "exp2": [(-151, -120), (-1, 1), (120, 129)],
    "expm1": [(-1e-3, 1e-3), (-1, 1), (-20, -10), (80, 89)],
    "log": [(0.5, 2), (1 - 1e-3, 1 + 1e-3)],
    "log2": [(0.5, 2), (1 - 1e-3, 1 + 1e-3)],
    "log10": [(0.5, 2), (1 - 1e-3, 1 + 1e-3)],
    "log1p": [(-1, -0.25), (-1e-3, 1e-3), (-0.3, 0.5)],
    "tanh": [(-1, 1), (0.6, 0.65), (8, 11)],
    "logistic": [(-110, -80), (-10, 10)],
    "sin": [(-10, 10), (1e4, 1.001e4)],
    "cos": [(-10, 10), (1e4, 1.001e4)],
    "erf": [(-1, 1), (0.85, 0.9), (3.8, 4.1)],
}
SPECIALS32 = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -1e-40,
                         1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 88.72, 88.73,
                         -103.9, -104.0, 2.0**-30, -(2.0**-30)])


def _loop(fn):
    @numba.njit(error_model="numpy")
    def run(x, out):
        for i in range(x.size):
            out[i] = fn(x[i])

    return run


_LOOPS = {}


def apply(name, x):
    """The kernel for x's dtype applied elementwise inside a compiled loop."""
    fn = vmath.lookup(name, x.dtype)
    run = _LOOPS.setdefault(fn, _loop(fn))
    out = np.empty_like(x)
    run(x, out)
    return out


def ulp_error(got, ref, dtype):
    """|got - ref| in units of the last place of `dtype` at ref (subnormal spacing below the
    normal range). Non-finite references must be matched exactly (after rounding to dtype)."""
    with np.errstate(all="ignore"):
        rounded = ref.astype(dtype)
        spacing = np.spacing(np.abs(rounded)).astype(ref.dtype)
        err = np.abs(got.astype(ref.dtype) - ref) / spacing
    special = ~np.isfinite(rounded) | ~np.isfinite(got)
    same = (got == rounded) | (np.isnan(got) & np.isnan(rounded))
    err[special] = np.where(same[special], 0.0, np.inf)
    return err


def sampled_float32(stride=4099):
    bits = np.arange(0, 2**32, stride, dtype=np.uint64).astype(np.uint32)
    return bits.view(np.float32)


def tricky_float32(name, n=200_001):
    grids = [np.linspace(lo, hi, n, dtype=np.float64).astype(np.float32) for lo, hi in TRICKY[name]]
    return np.concatenate(grids + [SPECIALS32])


def _subnormals32():
    return np.concatenate([np.arange(1, 2**23, 997, dtype=np.uint32).view(np.float32),
                           -np.arange(1, 2**23, 997, dtype=np.uint32).view(np.float32)])


def _check_f32(name, x):
    got = apply(name, x)
    with np.errstate(all="ignore"):
        ref = REFERENCE[name](x.astype(np.float64))
    err = ulp_error(got, ref, np.float32)
    worst = int(np.argmax(err))
    assert err[worst] <= F32_MAX_ULP, (
        f"{name}(float32({x[worst]!r})) = {got[worst]!r}, reference {ref[worst]!r}: "
        f"{err[worst]:.2f} ulp > {F32_MAX_ULP}")
    return err.max()


@pytest.mark.parametrize("name", UNARY_F32)
def test_float32_within_2_ulp_over_sampled_whole_range(name):
    x = sampled_float32()
    if name == "erf":  # the math.erf reference is a Python loop: a sparser sample
        x = sampled_float32(stride=40009)
    _check_f32(name, x[~np.isnan(x)])


@pytest.mark.parametrize("name", UNARY_F32)
def test_float32_within_2_ulp_near_tricky_points_and_subnormals(name):
    n = 20_001 if name == "erf" else 200_001
    _check_f32(name, np.concatenate([tricky_float32(name, n), _subnormals32()]))


@pytest.mark.parametrize("name", UNARY_F32)
def test_float32_special_values_match_numpy_bit_for_bit(name):
    x = SPECIALS32
    got = apply(name, x)
    with np.errstate(all="ignore"):
        ref = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
    exact = ~np.isfinite(ref) | (ref == 0) | np.isin(np.abs(ref), [1.0])
    np.testing.assert_array_equal(got[exact], ref[exact])
    # nan and signed zeros must match too, not just compare equal
    nan_ref = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan_ref)
    zero = ref == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(ref[zero]))


def test_named_edge_cases_follow_numpy():
    f = lambda name, v: apply(name, np.float32([v]))[0]  # noqa: E731
    assert f("exp", 89.0) == np.inf
    assert f("exp", -104.0) == np.exp(np.float32(-104.0))
    assert f("exp", -100.0) == np.float32(np.exp(-100.0))  # subnormal result, correctly rounded
    assert f("log", 0.0) == -np.inf and np.isnan(f("log", -1.0)) and f("log", np.inf) == np.inf
    assert f("log", 1e-45) == np.float32(np.log(np.float64(np.float32(1e-45))))
    assert f("tanh", 50.0) == 1.0 and f("tanh", -50.0) == -1.0
    assert f("log1p", -1.0) == -np.inf and np.isnan(f("log1p", -2.0))
    assert f("expm1", -np.inf) == -1.0 and f("logistic", -np.inf) == 0.0
    assert np.isnan(f("sin", np.inf)) and np.isnan(f("cos", -np.inf))
    assert f("log2", 8.0) == 3.0 and f("log10", 1000.0) == 3.0


def test_float32_sin_cos_exact_reduction_for_huge_arguments():
    x = np.float32([1e10, 3e38, -2.5e33, 2.0**100, 1.7e19, 16777216.0, 1e22])
    for name in ("sin", "cos"):
        assert _check_f32(name, x) <= 0.51  # correctly rounded up to the final rounding


# ---- pow ---------------------------------------------------------------------------------

def _pow_loop():
    fn = vmath.lookup("pow", np.float32)

    @numba.njit(error_model="numpy")
    def run(x, y, out):
        for i in range(x.size):
            out[i] = fn(x[i], y[i])

    return run


def test_float32_pow_within_2_ulp_on_random_pairs(rng):
    run = _pow_loop()
    cases = [
        (rng.uniform(0, 10, 200_000), rng.uniform(-40, 40, 200_000)),
        (rng.standard_normal(200_000) * 3, rng.integers(-30, 30, 200_000)),
        (np.exp(rng.uniform(-80, 80, 200_000)), rng.uniform(-1.5, 1.5, 200_000)),
    ]
    for xs, ys in cases:
        x, y = xs.astype(np.float32), ys.astype(np.float32)
        out = np.empty_like(x)
        run(x, y, out)
        with np.errstate(all="ignore"):
            ref = np.power(x.astype(np.float64), y.astype(np.float64))
        err = ulp_error(out, ref, np.float32)
        i = int(np.argmax(err))
        assert err[i] <= F32_MAX_ULP, f"pow({x[i]!r}, {y[i]!r}) = {out[i]!r}, ref {ref[i]!r}"


def test_float32_pow_special_cases_match_c99_as_numpy():
    values = np.float32([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.25, -0.25, np.inf, -np.inf, np.nan,
                         3.0, -3.0, 1e-45, -1e-45, 1e38, 1.5])
    x, y = (a.ravel() for a in np.meshgrid(values, values))
    out = np.empty_like(x)
    _pow_loop()(x, y, out)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
        close = ulp_error(out, np.power(x.astype(np.float64), y.astype(np.float64)), np.float32) <= 1
    same = (out == ref) & (np.signbit(out) == np.signbit(ref)) | (np.isnan(out) & np.isnan(ref))
    bad = ~(same | (np.isfinite(ref) & (ref != 0) & close))
    assert not bad.any(), list(zip(x[bad], y[bad], out[bad], ref[bad]))


# ---- float64 -----------------------------------------------------------------------------

_LONG_REFERENCE = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "tanh": np.tanh,
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
}
_RANGES64 = {
    "exp": [(-745.2, 709.7), (-1, 1)], "exp2": [(-1075, 1023.9), (-1, 1)],
    "expm1": [(-40, 709), (-1e-3, 1e-3), (-1, 1)],
    "log": [(0, 10), (0.5, 2), (1e-300, 1e-290)], "log2": [(0, 10), (0.5, 2)],
    "log10": [(0, 10), (0.5, 2)], "log1p": [(-1, 1), (-1e-4, 1e-4), (0, 1e6)],
    "tanh": [(-1, 1), (-25, 25), (-1e-5, 1e-5)], "logistic": [(-40, 40), (-745, -700)],
}


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 60, reason="needs x87 long double as reference")
@pytest.mark.parametrize("name", UNARY_F64)
def test_float64_within_a_few_ulp(name, rng):
    x = np.concatenate([rng.uniform(lo, hi, 200_000) for lo, hi in _RANGES64[name]])
    x = np.concatenate([x, np.float64([0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1e-310, 1.0])])
    got = apply(name, x)
    with np.errstate(all="ignore"):
        ref = _LONG_REFERENCE[name](x.astype(np.longdouble))
    err = ulp_error(got, ref, np.float64)
    i = int(np.argmax(err))
    assert err[i] <= F64_MAX_ULP, f"{name}({x[i]!r}) = {got[i]!r}, reference {ref[i]!r}: {err[i]:.2f} ulp"
    nan_in = np.float64([np.nan])
    assert np.isnan(apply(name, nan_in)[0])


@pytest.mark.parametrize("name", UNARY_F64)
def test_float64_special_values_match_numpy(name):
    x = np.float64([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, 800.0, -800.0, 5e-324])
    got = apply(name, x)
    with np.errstate(all="ignore"):
        ref = REFERENCE[name](x)
    exact = ~np.isfinite(ref) | (ref == 0) | (np.abs(ref) == 1)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[exact], ref[exact])
    zero = ref == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(ref[zero]))


# ---- code quality: vectorization, fast-math flags, table, laziness --------------------------

_PACKED = re.compile(r"\bv[a-z0-9]+p[sd]\s+[^\n]*%[yz]mm")


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="inspects x86-64 assembly")
@pytest.mark.parametrize("name, dtype", sorted(vmath.VMATH))
def test_loop_calling_kernel_is_vectorized(name, dtype):
    fn = vmath.lookup(name, dtype)
    if name == "pow":
        @numba.njit(error_model="numpy")
        def loop(x, y, out):
            for i in range(x.size):
                out[i] = fn(x[i], y[i])
        sig = (numba.types.Array(numba.from_dtype(np.dtype(dtype)), 1, "C"),) * 3
    else:
        loop = _loop(fn)
        sig = (numba.types.Array(numba.from_dtype(np.dtype(dtype)), 1, "C"),) * 2
    loop.compile(sig)
    asm = loop.inspect_asm(sig)
    if not re.search(r"%ymm", asm):
        pytest.skip("this CPU/LLVM target has no 256-bit vectors")
    packed = _PACKED.findall(asm)
    assert len(packed) >= 10, f"{name} {dtype}: no packed SIMD arithmetic in the loop"
    libm = re.findall(r"call[^\n]*(exp|log|sin|cos|tanh|pow|erf)f?\b", asm)
    assert not libm, f"{name} {dtype}: loop still calls libm: {libm[:3]}"


@pytest.mark.parametrize("name, dtype", sorted(vmath.VMATH))
def test_kernels_use_no_nan_or_inf_assuming_fast_math(name, dtype):
    fn = vmath.lookup(name, dtype)
    nargs = 2 if name == "pow" else 1
    fn.compile((numba.from_dtype(np.dtype(dtype)),) * nargs)
    llvm_ir = fn.inspect_llvm(fn.signatures[0])
    assert not re.search(r"\b(nnan|ninf|fast|reassoc)\b", llvm_ir)


def test_lookup_by_lax_name_and_dtype():
    assert vmath.lookup("exp", np.float32) is vmath.VMATH[("exp", "float32")]
    assert vmath.lookup("exp", "float64") is vmath.exp_float64
    assert vmath.lookup("sin", np.float64) is None  # falls back to NumPy in the code generator
    assert vmath.lookup("exp", np.complex64) is None
    assert vmath.lookup("no_such_op", np.float32) is None
    for (name, dtype), fn in vmath.VMATH.items():
        assert getattr(vmath, f"{name}_{dtype}") is fn  # generated code imports it by this name


def test_import_omnistage_does_not_import_numba():
    code = "import sys, omnistage, omnistage.numpy, omnistage.lax; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
