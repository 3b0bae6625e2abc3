"""The native tier's complex numbers (codegen/c_complex.py): each C port gives the bits of the
support.py helper it replaces (Numba's implementation) on special values (zeros, infinities,
NaNs, overflow and underflow thresholds, subnormals, branch points) and random points, for
complex64 and complex128. NaNs compare as NaN whatever their payload and sign."""
import ctypes
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from omnistage.codegen import aot, c_complex, c_runtime, c_tier

CC = aot.compiler()
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")
# Numba's bits for complex * and / depend on the process: in the full suite (two workers, many
# programs compiled before) support.complex_mul came out with fused multiply-adds. The C ports
# are compared with what a fresh process's Numba computes (test_in_a_fresh_process).
FRESH = os.environ.get("OMNISTAGE_TEST_FRESH_PROCESS") == "1"
in_fresh_process = pytest.mark.skipif(not FRESH, reason="run by test_in_a_fresh_process")

UNARY = ["complex_exp", "complex_log", "complex_sqrt", "complex_sin", "complex_cos", "complex_tan",
         "complex_sinh", "complex_cosh", "complex_tanh", "complex_arcsin", "complex_arccos",
         "complex_arctan", "complex_arcsinh", "complex_arccosh", "complex_arctanh", "complex_sign"]
BINARY = ["complex_mul", "complex_div", "cmax", "cmin"]
TYPES = {"c64": (np.complex64, "os_c64"), "c128": (np.complex128, "os_c128")}


def _wrappers():
    # one loop per function and type over arrays of (re, im) pairs, the layout of NumPy's complex
    lines = []
    for s, (_, t) in TYPES.items():
        real = "float" if s == "c64" else "double"
        for name in UNARY:
            stem = c_complex.NAMES[name]
            lines.append(f"void t_{name}_{s}(const {t} *x, {t} *o, long n) {{ for (long i = 0; i < n; i++) o[i] = {stem}_{s}(x[i]); }}")
        for name in BINARY:
            stem = c_complex.NAMES[name]
            lines.append(f"void t_{name}_{s}(const {t} *a, const {t} *b, {t} *o, long n) {{ for (long i = 0; i < n; i++) o[i] = {stem}_{s}(a[i], b[i]); }}")
        lines.append(f"void t_complex_abs_{s}(const {t} *x, {real} *o, long n) {{ for (long i = 0; i < n; i++) o[i] = os_cabs_{s}(x[i]); }}")
        for op in ("add", "sub"):
            lines.append(f"void t_{op}_{s}(const {t} *a, const {t} *b, {t} *o, long n) {{ for (long i = 0; i < n; i++) o[i] = os_c{op}_{s}(a[i], b[i]); }}")
        for op in ("neg", "conj"):
            lines.append(f"void t_{op}_{s}(const {t} *a, {t} *o, long n) {{ for (long i = 0; i < n; i++) o[i] = os_c{op}_{s}(a[i]); }}")
        for op in ("eq", "ne"):
            lines.append(f"void t_{op}_{s}(const {t} *a, const {t} *b, unsigned char *o, long n) {{ for (long i = 0; i < n; i++) o[i] = os_c{op}_{s}(a[i], b[i]); }}")
        lines.append(f"void t_make_{s}(const {real} *re, const {real} *im, {t} *o, long n) {{ for (long i = 0; i < n; i++) o[i] = {t}_make(re[i], im[i]); }}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    work = tmp_path_factory.mktemp("c_complex")
    (work / "t.c").write_text(c_runtime.SOURCE + c_complex.SOURCE + _wrappers())
    done = subprocess.run([*CC, *c_tier.FLAGS, "-Wall", "-o", "t.so", "t.c", "-lm"], cwd=work,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # no warning in c_complex's lines (c_runtime's own unused helpers warn here)
    first = c_runtime.SOURCE.count("\n") + 1
    last = first + c_complex.SOURCE.count("\n")
    lines = [int(m) for m in re.findall(r"t\.c:(\d+):\d+: warning", done.stderr)]
    assert not [n for n in lines if first <= n <= last], done.stderr
    # GCC < 13's SLP vectorizer fuses x*y - z, u*v + w lane pairs into vfmaddsub/vfmsubadd despite
    # -ffp-contract=off (c_complex's OS_CKEEP stops it): no fused multiply-add anywhere here
    objdump = shutil.which("objdump")
    if objdump is not None:
        asm = subprocess.run([objdump, "-d", "--no-show-raw-insn", "t.so"], cwd=work, capture_output=True, text=True).stdout
        fused = sorted(set(re.findall(r"\s(v?fn?m(?:add|sub|addsub|subadd)\d+\w*)\s", asm)))
        assert not fused, fused
    return ctypes.CDLL(str(work / "t.so"))


def _call(lib, fname, out_dtype, *arrays):
    arrays = [np.ascontiguousarray(a) for a in arrays]
    out = np.empty(len(arrays[0]), out_dtype)
    getattr(lib, fname)(*[a.ctypes.data_as(ctypes.c_void_p) for a in arrays], out.ctypes.data_as(ctypes.c_void_p),
                        ctypes.c_long(len(out)))
    return out


def _parts(dtype):
    f = np.finfo(np.float32 if dtype == np.complex64 else np.float64)
    vals = [0.0, 1.0, 0.5, 2.0, 3.0, 1e-3, 0.75, math.pi / 2, math.pi, 10.0, 88.5, 89.5, 710.0,
            1 - 2.0 ** -24, 1 + 2.0 ** -23, 1e-20, 2.0 ** -63, 1e-30, 1e19, 1e30, 3e38,
            float(f.max), float(f.max) / 2, float(f.max) / 4, float(f.max) / 2.4142135623730951,
            float(f.tiny), float(f.tiny) / 8, float(f.smallest_subnormal), math.inf, math.nan]
    if dtype == np.complex128:
        vals += [1e-200, 1e200, 1e300, 1 - 2.0 ** -53, 1 + 2.0 ** -52, 1.7e38, 1e-310]
    vals = np.array(vals, np.float64).astype(f.dtype)
    return np.unique(np.concatenate([vals, -vals]))  # both signs of each (NaN: one of them)


def _points(dtype, n_random=3000, seed=0):
    rng = np.random.default_rng(seed)
    parts = _parts(dtype)
    grid = np.empty((len(parts), len(parts)), dtype)
    grid.real = parts[:, None]
    grid.imag = parts[None, :]
    grid = grid.ravel()
    fdt = np.float32 if dtype == np.complex64 else np.float64
    lo, hi = (-40, 38) if dtype == np.complex64 else (-300, 300)
    mag = 10.0 ** rng.uniform(lo, hi, (2, n_random))
    wide = (mag[0] * rng.choice([-1, 1], n_random) + 1j * mag[1] * rng.choice([-1, 1], n_random)).astype(dtype)
    unit = (rng.standard_normal(n_random) * 2 + 1j * rng.standard_normal(n_random) * 2).astype(dtype)
    # near the branch points: +-1, +-i, the real and imaginary axes
    eps = (rng.standard_normal(500) * 10.0 ** rng.uniform(-12, -1, 500)).astype(fdt)
    near = np.concatenate([(1 + eps) + 1j * eps[::-1], (-1 + eps) + 1j * eps[::-1], eps + 1j * (1 + eps[::-1]),
                           eps + 1j * (-1 + eps[::-1]), -np.abs(unit.real) + 0j, 1j * unit.imag]).astype(dtype)
    return np.concatenate([grid, wide, unit, near]).astype(dtype)


def _numba(fn, dtype, *arrays):
    """fn (a support.py dispatcher) on each element, as `dtype` values; NaN where it raised,
    with the positions where it did"""
    out_dtype = (np.float32 if dtype == np.complex64 else np.float64) if fn.__name__ == "complex_abs" else dtype
    out = np.empty(len(arrays[0]), out_dtype)
    raised = np.zeros(len(out), bool)
    for i, args in enumerate(zip(*arrays)):
        try:
            out[i] = fn(*args)
        except ZeroDivisionError:
            raised[i] = True
            out[i] = np.nan
    return out, raised


def _ulps(got, want):
    """per element: 0 where the bits agree (NaN counts as NaN), the distance in units in the last
    place where both are finite numbers of the same sign, inf where they differ otherwise"""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind == "c":
        return np.maximum(_ulps(got.real, want.real), _ulps(got.imag, want.imag))
    ity = np.int32 if got.dtype == np.float32 else np.int64
    gi, wi = got.view(ity).astype(np.int64), want.view(ity).astype(np.int64)
    same = (gi == wi) | (np.isnan(got) & np.isnan(want))
    comparable = np.isfinite(got) & np.isfinite(want) & (np.signbit(got) == np.signbit(want)) & (got != 0) & (want != 0)
    d = np.where(comparable, np.abs(gi - wi), np.inf).astype(np.float64)
    return np.where(same, 0.0, d)


def _differ(got, want, raised):
    """indices where the C result is not Numba's (the points where Numba raised excepted)"""
    return np.flatnonzero((_ulps(got, want) > 0) & ~raised)


@pytest.fixture(scope="module")
def support():
    from omnistage.codegen import support as s
    return s


@in_fresh_process
@pytest.mark.parametrize("s", list(TYPES))
def test_unary_functions_give_numbas_bits(lib, support, s):
    dtype = TYPES[s][0]
    z = _points(dtype)
    for name in UNARY + ["complex_abs"]:
        want, raised = _numba(getattr(support, name), dtype, list(z))
        got = _call(lib, f"t_{name}_{s}", want.dtype, z)
        bad = _differ(got, want, raised)
        assert len(bad) == 0, f"{name} {s}: {len(bad)} differ, e.g. " + ", ".join(
            f"{z[i]!r} -> C {got[i]!r}, Numba {want[i]!r}" for i in bad[:5])
        # Numba raises ZeroDivisionError only in sqrt's b / (2 t) with t == 0: complex128 0 +- 5e-324j
        # (and the arguments that reach it); the C functions give the IEEE value there instead
        if raised.any():
            assert s == "c128" and name in ("complex_sqrt", "complex_arcsin", "complex_arccos", "complex_arcsinh",
                                            "complex_arccosh"), (name, z[raised])
        if name == "complex_sqrt" and s == "c128":
            tiny = (z.real == 0) & (np.abs(z.imag) == np.finfo(np.float64).smallest_subnormal)
            assert tiny.any() and (raised == tiny).all()
            assert np.isinf(got[tiny].imag).all() and (np.sign(got[tiny].imag) == np.sign(z[tiny].imag)).all()


@in_fresh_process
@pytest.mark.parametrize("s", list(TYPES))
def test_binary_functions_give_numbas_bits(lib, support, s):
    dtype = TYPES[s][0]
    rng = np.random.default_rng(1)
    parts = _parts(dtype)
    parts = parts[rng.permutation(len(parts))[:14]].tolist() + [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0]
    grid = np.array([complex(r, i) for r in parts for i in parts], dtype)
    a = np.concatenate([np.repeat(grid, len(grid)), _points(dtype, 2000, seed=2)[-6000:]])
    b = np.concatenate([np.tile(grid, len(grid)), _points(dtype, 2000, seed=3)[-6000:]])
    zero = (b.real == 0) & (b.imag == 0)
    for name in BINARY:
        want, raised = _numba(getattr(support, name), dtype, list(a), list(b))
        got = _call(lib, f"t_{name}_{s}", dtype, a, b)
        bad = _differ(got, want, raised)
        assert len(bad) == 0, f"{name} {s}: {len(bad)} differ, e.g. " + ", ".join(
            f"{a[i]!r}, {b[i]!r} -> C {got[i]!r}, Numba {want[i]!r}" for i in bad[:5])
        if name == "complex_div":
            # Numba raises for a zero divisor; the C port gives np.divide's value
            np.testing.assert_array_equal(raised, zero)
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(got[zero], np.divide(a[zero], b[zero]))
        else:
            assert not raised.any()


@pytest.mark.parametrize("s", list(TYPES))
def test_componentwise_operations(lib, s):
    dtype = TYPES[s][0]
    a, b = _points(dtype, 500, seed=4), _points(dtype, 500, seed=5)[::-1]
    with np.errstate(all="ignore"):
        for op, want in (("add", a + b), ("sub", a - b)):
            assert _ulps(_call(lib, f"t_{op}_{s}", dtype, a, b), want).max() == 0, op
    neg = _call(lib, f"t_neg_{s}", dtype, a)
    conj = _call(lib, f"t_conj_{s}", dtype, a)
    fdt = a.real.dtype
    ity = np.uint32 if fdt == np.float32 else np.uint64
    sign = ity(1) << ity(8 * fdt.itemsize - 1)
    # sign flips, NaNs included (Numba: fsub -0.0, x)
    assert (neg.real.view(ity) == (a.real.view(ity) ^ sign)).all() and (neg.imag.view(ity) == (a.imag.view(ity) ^ sign)).all()
    assert (conj.real.view(ity) == a.real.view(ity)).all() and (conj.imag.view(ity) == (a.imag.view(ity) ^ sign)).all()
    eq = _call(lib, f"t_eq_{s}", np.uint8, a, b).astype(bool)
    ne = _call(lib, f"t_ne_{s}", np.uint8, a, b).astype(bool)
    np.testing.assert_array_equal(eq, a == b)
    np.testing.assert_array_equal(ne, a != b)
    np.testing.assert_array_equal(_call(lib, f"t_eq_{s}", np.uint8, a, a).astype(bool), a == a)
    made = _call(lib, f"t_make_{s}", dtype, a.real.copy(), a.imag.copy())
    assert (made.view(ity) == a.view(ity)).all()


def test_names_cover_the_support_helpers():
    # every name is compiled (and so defined, for both types) by the wrappers above
    assert set(c_complex.NAMES) == set(UNARY + BINARY + ["complex_abs"])


@pytest.mark.skipif(FRESH, reason="this is the fresh process")
def test_in_a_fresh_process():
    env = dict(os.environ, OMNISTAGE_TEST_FRESH_PROCESS="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", os.path.abspath(__file__),
                           "-k", "numbas_bits"], env=env, capture_output=True, text=True, timeout=600,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout, done.stdout[-2000:]
