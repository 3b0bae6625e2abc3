"""omnistage.codegen.c_vmath (the C port of vmath) against the Numba kernels.

SOURCE is compiled with the C tier's flags into a shared library in tmp_path, together with
loops written here (`apply_exp_float32(x, y, n)`), loaded with ctypes and compared with the
Numba kernel applied in a compiled loop (the way generated code calls it) on special values,
dense grids around each function's tricky points, strided float32 bit patterns and random points.

What must hold: the same special-value results bit for bit (signed zeros, infinities, NaN), NaN
exactly where Numba gives NaN, zero and infinite results exactly, and everything else bit-identical
when the C build fuses vmath's fmuladd exactly when Numba does (the default build on any machine
where gcc and LLVM agree that FMA is fast), at most 1 ulp apart otherwise, except expm1, tanh and
logistic, which amplify the extra rounding to 2 ulp (c_vmath's docstring).
Run with -s to see how many results differ per function and flavour.
"""
import ctypes
import os
import shutil
import subprocess
import sys
import zlib

import numpy as np
import pytest

CC = shutil.which(os.environ.get("CC", "cc"))
if CC is None:
    pytest.skip("no C compiler", allow_module_level=True)

numba = pytest.importorskip("numba")
vmath = pytest.importorskip("omnistage.codegen.vmath")

from omnistage.codegen import c_runtime, c_tier, c_vmath  # noqa: E402

# the C tier's flags; gcc vectorizes the test loops with them (test_loops_vectorize), so the
# vectorized kernels are the ones compared
CFLAGS = list(c_tier.FLAGS)
FLAVOURS = {
    "default": [],
    "fused": ["-DVM_FMULADD_F32(a,b,c)=fmaf(a,b,c)", "-DVM_FMULADD_F64(a,b,c)=fma(a,b,c)"],
    "unfused": ["-DVM_FMULADD_F32(a,b,c)=((a)*(b)+(c))", "-DVM_FMULADD_F64(a,b,c)=((a)*(b)+(c))"],
    # both forms of the float64 exponent arithmetic (the default picks one by AVX-512DQ)
    "int64_bits": ["-DVM_INT64_VIA_BITS=1"],
    "int64_conv": ["-DVM_INT64_VIA_BITS=0"],
}
# max ulp against Numba when the C build and Numba disagree on fusing fmuladd
UNMATCHED_ULP = {"expm1": 2, "tanh": 2, "logistic": 2}
KERNELS = {**vmath.VMATH, **vmath.EXPANSIONS}
CTYPE = {"float32": "float", "float64": "double"}


def _wrappers():
    """One loop per kernel: apply_<fn>(x, y, n), or apply_pow_float32(x, y, out, n)."""
    out = []
    for (name, dtype), fn in sorted(c_vmath.NAMES.items()):
        t = CTYPE[dtype]
        if name == "pow":
            out.append(f"void apply_{fn}(const {t} *x, const {t} *y, {t} *z, long n) "
                       f"{{ for (long i = 0; i < n; i++) z[i] = {fn}(x[i], y[i]); }}")
        else:
            out.append(f"void apply_{fn}(const {t} *x, {t} *y, long n) "
                       f"{{ for (long i = 0; i < n; i++) y[i] = {fn}(x[i]); }}")
    # whether this build fuses vmath's fmuladd
    out.append("float probe_fmuladd(float a, float b, float c) { return VM_FMULADD_F32(a, b, c); }")
    return "\n".join(out) + "\n"


def _build(directory, name, extra=()):
    src = directory / f"{name}.c"
    src.write_text(c_vmath.SOURCE + "\n" + _wrappers())
    lib = directory / f"{name}.so"
    subprocess.run([CC, *CFLAGS, *extra, "-o", str(lib), str(src)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib))


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("c_vmath")
    return {name: _build(d, name, flags) for name, flags in FLAVOURS.items()}


# (1 + 2^-13)^2 - 1 is 2^-12 + 2^-26 with one rounding, 2^-12 with two
_PROBE = (np.float32(1 + 2.0**-13), np.float32(1 + 2.0**-13), np.float32(-1))


def c_fuses(lib):
    lib.probe_fmuladd.restype = ctypes.c_float
    lib.probe_fmuladd.argtypes = [ctypes.c_float] * 3
    return lib.probe_fmuladd(*map(float, _PROBE)) != 2.0**-12


@pytest.fixture(scope="module")
def numba_fuses():
    from omnistage.codegen.vmath._intrinsics import fmuladd

    probe = numba.njit(lambda a, b, c: fmuladd(a, b, c))
    return probe(*_PROBE) != 2.0**-12


def c_apply(lib, name, dtype, *args):
    args = [np.ascontiguousarray(a, dtype=dtype) for a in args]
    out = np.empty_like(args[0])
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    getattr(lib, "apply_" + c_vmath.NAMES[(name, dtype)])(*map(ptr, args), ptr(out), ctypes.c_long(out.size))
    return out


_LOOPS = {}


def numba_apply(name, dtype, *args):
    """The Numba kernel applied in a compiled loop (inlined and vectorized like generated code)."""
    fn = KERNELS[(name, dtype)]
    if fn not in _LOOPS:
        if name == "pow":
            @numba.njit(error_model="numpy")
            def run(x, y, out):
                for i in range(x.size):
                    out[i] = fn(x[i], y[i])
        else:
            @numba.njit(error_model="numpy")
            def run(x, out):
                for i in range(x.size):
                    out[i] = fn(x[i])
        _LOOPS[fn] = run
    args = [np.ascontiguousarray(a, dtype=dtype) for a in args]
    out = np.empty_like(args[0])
    _LOOPS[fn](*args, out)
    return out


# ---- inputs ------------------------------------------------------------------------------------
F32, F64 = np.finfo(np.float32), np.finfo(np.float64)
SPECIALS = {
    "float32": np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40, -1e-40,
                           F32.tiny, -F32.tiny, F32.max, -F32.max, 1.0, -1.0, 0.5, -0.5, 2.0, 88.72,
                           88.73, 89.0, -87.0, -103.9, -104.0, -150.0, 128.0, 129.0, -149.0, -151.0,
                           2.0**-25, -(2.0**-25), 2.0**-26, 2.0**-12, -(2.0**-12), 2.0**-30, -(2.0**-30),
                           0.625, -0.625, 10.0, -10.0, 0.875, 3.95, -3.95, 4.0, 30.0, -30.0, 1e4, 3e38,
                           np.nextafter(np.float32(1), np.float32(2)),
                           np.nextafter(np.float32(1), np.float32(0)),
                           np.nextafter(np.float32(-1), np.float32(0)),
                           np.nextafter(np.float32(-1), np.float32(-2))]),
    "float64": np.float64([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e-310, -1e-310,
                           F64.tiny, -F64.tiny, F64.max, -F64.max, 1.0, -1.0, 0.5, -0.5, 2.0, 709.78,
                           709.79, 710.0, -708.0, -745.1, -746.0, -1075.0, 1024.0, 1025.0, -1074.0,
                           -1076.0, 2.0**-54, -(2.0**-54), 2.0**-55, 2.0**-60, -(2.0**-60), 20.0,
                           -20.0, 45.0, -45.0, 1e300, np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0),
                           np.nextafter(-1.0, 0.0), np.nextafter(-1.0, -2.0)]),
}
# dense grids (lo, hi) around range-reduction boundaries, polynomial switch-overs, cancellation
# and over/underflow thresholds
TRICKY = {
    "exp": [(-104, -80), (-1, 1), (80, 89), (-746, -700), (700, 710)],
    "exp2": [(-151, -120), (-1, 1), (120, 129), (-1076, -1020), (1020, 1025)],
    "expm1": [(-1e-3, 1e-3), (-1, 1), (-20, -10), (80, 89), (-46, -29), (700, 710)],
    "log": [(0.5, 2), (1 - 1e-3, 1 + 1e-3)],
    "log2": [(0.5, 2), (1 - 1e-3, 1 + 1e-3)],
    "log10": [(0.5, 2), (1 - 1e-3, 1 + 1e-3)],
    "log1p": [(-1, -0.25), (-1e-3, 1e-3), (-0.3, 0.5)],
    "tanh": [(-1, 1), (0.6, 0.65), (8, 11), (18, 21), (-1e-3, 1e-3)],
    "logistic": [(-110, -80), (-10, 10), (-750, -700)],
    "sin": [(-10, 10), (1e4, 1.001e4), (-1e-3, 1e-3)],
    "cos": [(-10, 10), (1e4, 1.001e4), (-1e-3, 1e-3)],
    "erf": [(-1, 1), (0.85, 0.9), (3.8, 4.1)],
    "erf_inv": [(-1, 1), (0.99, 1), (-1, -0.99), (-1e-3, 1e-3)],
}
# random points spread over each function's interesting range (log-uniform magnitude)
SCALE = {"exp": 110, "exp2": 160, "expm1": 100, "logistic": 120, "tanh": 25, "erf": 5, "erf_inv": 1,
         "sin": 1e5, "cos": 1e5}


def unary_inputs(name, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype}".encode()))
    ft = np.dtype(dtype).type
    parts = [SPECIALS[dtype]]
    for lo, hi in TRICKY.get(name, []):
        parts.append(np.linspace(lo, hi, 2001))
    if dtype == "float32":
        # strided bit patterns: the whole float32 range, both signs, subnormals, NaN payloads
        parts.append(np.arange(0, 2**32, 65521, dtype=np.uint64).astype(np.uint32).view(np.float32))
        parts.append(rng.integers(1, 2**23, 300, dtype=np.uint32).view(np.float32))  # subnormals
    else:
        parts.append(rng.integers(0, 2**64, 20000, dtype=np.uint64).view(np.float64))
        parts.append((rng.integers(1, 2**52, 300, dtype=np.uint64)).view(np.float64))
    mag = np.exp(rng.uniform(np.log(1e-6), np.log(SCALE.get(name, 1e6)), 4000))
    parts.append(mag * rng.choice([-1.0, 1.0], mag.size))
    if name.startswith("log"):
        parts.append(rng.uniform(0, 4, 2000))
    return _concat(parts, ft)


def _concat(parts, ft):
    """Parts cast to `ft` one by one: a bit-pattern part keeps its signalling NaNs (a cast
    through float64 would quiet them)."""
    with np.errstate(over="ignore"):
        return np.concatenate([p if p.dtype == ft else np.asarray(p, dtype=np.float64).astype(ft)
                               for p in map(np.asarray, parts)])


def pow_inputs():
    rng = np.random.default_rng(7)
    s = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                    1e-45, -1e-45, F32.max, -F32.max, F32.tiny, 0.25, 1.5, -1.5, 100.0, -100.0, 1e30])
    xs, ys = np.meshgrid(s, s)  # every special x with every special y
    n = 4000
    bits = lambda: rng.integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)  # noqa: E731
    x = _concat([xs.ravel(), np.exp(rng.uniform(-80, 80, n)) * rng.choice([-1, 1], n),
                 rng.uniform(0.9, 1.1, n), rng.uniform(-3, 3, n), bits()], np.float32)
    y = _concat([ys.ravel(), rng.uniform(-3, 3, n) * rng.choice([1, 0.01, 1000], n),
                 rng.uniform(-2000, 2000, n), rng.integers(-60, 60, n), bits()], np.float32)
    return x, y, xs.size


# ---- comparison ----------------------------------------------------------------------------------
def ordered(a):
    """Float bits as integers ordered like the values, -0 one step below +0 (so signed zeros
    count as different, and the step from +-max to +-inf is 1 ulp)."""
    ity = np.int32 if a.dtype == np.float32 else np.int64
    bits = a.view(ity).astype(np.int64)
    mag = bits & np.int64(np.iinfo(ity).max)
    return np.where(bits < 0, -mag - 1, mag)


def compare(name, dtype, got, ref, n_special):
    """(differing results, max ulp); asserts NaN agreement, the special inputs' results bit
    for bit, and zero/inf results exactly."""
    nan_got, nan_ref = np.isnan(got), np.isnan(ref)
    assert np.array_equal(nan_got, nan_ref), (name, dtype, "NaN mismatch",
                                              np.flatnonzero(nan_got != nan_ref)[:10])
    ok = ~nan_ref
    g, r = got[ok], ref[ok]
    ulps = np.abs(ordered(g) - ordered(r))
    head = ok[:n_special]
    special_bits = ordered(got[:n_special][head]) == ordered(ref[:n_special][head])
    assert special_bits.all(), (name, dtype, "special values differ")
    edge = (r == 0) | np.isinf(r) | (g == 0) | np.isinf(g)
    assert (ulps[edge] == 0).all(), (name, dtype, "zero/inf results differ", g[edge][ulps[edge] != 0][:5])
    return int(np.count_nonzero(ulps)), int(ulps.max(initial=0))


REPORT = {}
UNARY = sorted(k for k in c_vmath.NAMES if k[0] != "pow")


def _bound(lib, numba_fuses, name):
    return 0 if c_fuses(lib) == numba_fuses else UNMATCHED_ULP.get(name, 1)


@pytest.mark.parametrize("flavour", list(FLAVOURS))
@pytest.mark.parametrize("name,dtype", UNARY, ids=[f"{n}_{d}" for n, d in UNARY])
def test_unary_matches_numba(libs, numba_fuses, flavour, name, dtype):
    x = unary_inputs(name, dtype)
    ref = numba_apply(name, dtype, x)
    got = c_apply(libs[flavour], name, dtype, x)
    diff, worst = compare(name, dtype, got, ref, len(SPECIALS[dtype]))
    print(f"\n{flavour:8s} {name}_{dtype}: {diff} of {x.size} differ, max {worst} ulp")
    assert worst <= _bound(libs[flavour], numba_fuses, name)


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_pow_matches_numba(libs, numba_fuses, flavour):
    x, y, n_special = pow_inputs()
    ref = numba_apply("pow", "float32", x, y)
    got = c_apply(libs[flavour], "pow", "float32", x, y)
    diff, worst = compare("pow", "float32", got, ref, n_special)
    print(f"\n{flavour:8s} pow_float32: {diff} of {x.size} differ, max {worst} ulp")
    assert worst <= _bound(libs[flavour], numba_fuses, "pow")


def test_default_fuses_like_numba(libs, numba_fuses):
    """The default build picks the flavour Numba's LLVM picks on this machine."""
    assert c_fuses(libs["fused"]) and not c_fuses(libs["unfused"])
    assert c_fuses(libs["default"]) == numba_fuses


def test_names_cover_vmath():
    assert set(c_vmath.NAMES) == set(vmath.VMATH) | set(vmath.EXPANSIONS)
    for (name, dtype), fn in {**vmath.VMATH, **vmath.EXPANSIONS}.items():
        assert c_vmath.NAMES[(name, dtype)] == fn.py_func.__name__
        assert c_vmath.lookup(name, np.dtype(dtype)) == fn.py_func.__name__
        assert c_vmath.lookup(name, dtype) == fn.py_func.__name__
    assert c_vmath.lookup("sin", "float64") is None
    assert c_vmath.lookup("exp", "complex64") is None
    assert c_vmath.lookup("exp", "not a dtype") is None
    for fn in c_vmath.NAMES.values():
        assert f" {fn}(" in c_vmath.SOURCE


def test_constants_are_vmath_tables():
    """The literals in SOURCE come from c_vmath's copies of vmath's tables: check the copies."""
    from omnistage.codegen.vmath import _kernels, _xla_erf_inv

    assert c_vmath.COEFFS is _kernels.COEFFS  # one table (vmath_tables)
    for name in c_vmath.COEFFS:
        for single, ft in ((True, np.float32), (False, np.float64)):
            assert c_vmath.poly(name, single) == tuple(float(v) for v in _kernels._poly(ft, name))
    for single, ft in ((True, np.float32), (False, np.float64)):
        ours, theirs = c_vmath.consts(single), vars(_kernels._Consts(ft))
        for key, value in ours.items():
            want = float(theirs[key])
            assert value == want or (np.isnan(value) and np.isnan(want)), (key, single)
    assert np.array_equal(np.array(c_vmath.payne_hanek_table()), _kernels._payne_hanek_table())
    for i, value in c_vmath.erf_inv_consts().items():
        want = float(getattr(_xla_erf_inv, f"_erf_inv_float32_c{i}_float32"))
        assert value == want or (np.isnan(value) and np.isnan(want)), i
    for i, text in c_vmath._ERF_INV_INTS.items():
        (want,) = [v for k, v in vars(_xla_erf_inv).items() if k.startswith(f"_erf_inv_float32_c{i}_")]
        assert int(text.rstrip("u"), 0) == int(want), i


def test_import_without_numba():
    code = ("import sys, omnistage.codegen.c_vmath as m; assert m.SOURCE; "
            "bad = [k for k in ('numba', 'llvmlite') if k in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- vectorization ---------------------------------------------------------------------------------
def _gcc_avx2():
    """Whether CC is gcc >= 12 targeting x86-64 with AVX2 at -march=native (what the assertions
    on gcc's vectorizer report are about)."""
    done = subprocess.run([CC, "-march=native", "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True)
    macros = dict(line.split(" ", 2)[1:] for line in done.stdout.splitlines() if line.count(" ") >= 2)
    return (done.returncode == 0 and "__clang__" not in macros and int(macros.get("__GNUC__", "0")) >= 12
            and "__x86_64__" in macros and "__AVX2__" in macros)


# loops over c_runtime helpers that gcc stopped vectorizing before their selects went through
# integer masks / single comparisons: a clamp before fma / max / min
_RUNTIME_LOOPS = {
    **{f"fma_{t}": f"void l_fma_{t}(const {t} *x, {t} *o, long n) {{ for (long i = 0; i < n; i++) {{"
                   f" {t} v = x[i] > {lo} ? x[i] : {lo}; {t} a = os_fma_{f}(v, 0.07, -0.11);"
                   f" a = os_fma_{f}(a, v, 0.116); o[i] = os_fma_{f}(v * v, -0.5, a); }} }}"
       for t, f, lo in (("float", "float32", "1e-38f"), ("double", "float64", "1e-300"))},
    **{f"fmaxmin_{t}": f"void l_fmaxmin_{t}(const {t} *x, const {t} *y, {t} *o, long n) {{ for (long i = 0; i < n; i++) {{"
                       f" {t} v = x[i] < 0 ? 0 : x[i]; o[i] = os_fmin_{t}(os_fmax_{t}(v, y[i]), 1); }} }}"
       for t in ("float", "double")},
    **{f"f2i_{i}_{t}": f"void l_f2i_{i}_{t}(const {t} *x, {c} *o, long n) {{ for (long i = 0; i < n; i++)"
                       f" o[i] = os_f2i_{i}_{t}(x[i]); }}"
       for i, c in (("int8", "int8_t"), ("int32", "int32_t"), ("int64", "int64_t"), ("uint8", "uint8_t"),
                    ("uint32", "uint32_t"), ("uint64", "uint64_t")) for t in ("float", "double")},
}


def _vectorized_lines(tmp_path, name, text):
    """The source lines of the loops gcc reports vectorized, compiling `text` with CFLAGS."""
    src = tmp_path / f"{name}.c"
    src.write_text(text)
    done = subprocess.run([CC, *CFLAGS, "-fopt-info-vec-optimized", "-c", str(src), "-o", str(tmp_path / f"{name}.o")],
                          capture_output=True, text=True, check=True)
    return {int(line.split(":")[1]) for line in done.stderr.splitlines() if "optimized: loop vectorized" in line}


def _lines_of(text, prefix):
    """{name: line number} of the one-line functions `void <prefix><name>(` in text."""
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("void " + prefix):
            out[line[len("void " + prefix):line.index("(")]] = number
    return out


@pytest.mark.skipif(not _gcc_avx2(), reason="asserts gcc >= 12's vectorizer report on x86-64 with AVX2")
def test_loops_vectorize(tmp_path):
    """gcc vectorizes a loop calling any vmath kernel (and the c_runtime helpers above) at the
    tier's flags: c_vmath's docstring says what that takes. A kernel that stops vectorizing runs
    4-16x slower in the C tier (float64 exp: 350 us instead of 57 for 1e5 values)."""
    text = c_vmath.SOURCE + "\n" + _wrappers()
    done = _vectorized_lines(tmp_path, "kernels", text)
    scalar = sorted(fn for fn, line in _lines_of(text, "apply_").items() if line not in done)
    assert not scalar, f"gcc leaves the loops over {scalar} scalar"
    assert len(_lines_of(text, "apply_")) == len(c_vmath.NAMES)

    text = c_runtime.SOURCE + "\n" + "\n".join(_RUNTIME_LOOPS.values()) + "\n"
    done = _vectorized_lines(tmp_path, "runtime", text)
    scalar = sorted(fn for fn, line in _lines_of(text, "l_").items() if line not in done)
    assert not scalar, f"gcc leaves the loops over c_runtime's {scalar} scalar"


def test_runtime_int64_conversions_agree(tmp_path):
    """c_runtime's float -> int64 / uint64 conversions give the same values through the bits
    (OS_INT64_VIA_BITS, how AVX2 machines build them) as through C's conversions."""
    loops = "\n".join(f"void c_{i}_{t}(const {t} *x, {i}_t *o, long n) {{ for (long k = 0; k < n; k++) o[k] = os_f2i_{i}_{t}(x[k]); }}"
                      for i in ("int64", "uint64") for t in ("float", "double"))
    src = tmp_path / "conv.c"
    src.write_text(c_runtime.SOURCE + "\n" + loops + "\n")
    libs = []
    for via_bits in (0, 1):
        lib = tmp_path / f"conv{via_bits}.so"
        subprocess.run([CC, *CFLAGS, f"-DOS_INT64_VIA_BITS={via_bits}", "-o", str(lib), str(src)], check=True,
                       capture_output=True)
        libs.append(ctypes.CDLL(str(lib)))
    rng = np.random.default_rng(5)
    for dtype, bits in (("float32", np.uint32), ("float64", np.uint64)):
        big = [2.0**k * s + d for k in (31, 32, 52, 53, 62, 63, 64) for s in (1, -1) for d in (-1, 0, 1)]
        parts = [SPECIALS[dtype], big, rng.integers(0, np.iinfo(bits).max, 20000, dtype=bits).view(dtype),
                 np.exp(rng.uniform(-5, 45, 20000)) * rng.choice([-1.0, 1.0], 20000)]
        x = _concat(parts, np.dtype(dtype).type)
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)]).astype(dtype)
        for target in ("int64", "uint64"):
            outs = []
            for lib in libs:
                out = np.empty(x.size, dtype=target)
                getattr(lib, f"c_{target}_{CTYPE[dtype]}")(x.ctypes.data_as(ctypes.c_void_p),
                                                           out.ctypes.data_as(ctypes.c_void_p), ctypes.c_long(x.size))
                outs.append(out)
            assert np.array_equal(*outs), (dtype, target, x[outs[0] != outs[1]][:5])
