"""The native tier (codegen/c_tier.py, c_translate.py, c_runtime.py): programs compiled through
the system C compiler give the interpreter's values (exactly for integers and bits, to rounding
for floats), programs it cannot translate keep the Numba path, and a fresh process runs a
translated program without importing Numba, then a second loads the same library."""
import json
import re
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import omnistage as fw
import omnistage.numpy as xnp
from omnistage import lax, random
from omnistage.codegen import c_tier, c_translate
from omnistage.codegen.executable import InterpretedProgram, NumbaProgram, compile_for_cpu

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OMNISTAGE_C_TIER", "1")


def _both(f, *args, static_argnums=()):
    """(native tier executable, its outputs, the interpreter's outputs) of `f` on `args`."""
    program = fw.jit(f, static_argnums=static_argnums).lower(*args).program
    native = compile_for_cpu(program)
    leaves = [a for i, a in enumerate(args) if i not in static_argnums]
    flat = [np.asarray(x) for x in fw.tree_util.tree_leaves(leaves)]
    got = native(*flat)
    want = InterpretedProgram(program)(*flat)
    return native, [np.asarray(g) for g in got], [np.asarray(w) for w in want]


def _check(f, *args, rtol=2e-6, atol=1e-6, exact=False, **kw):
    native, got, want = _both(f, *args, **kw)
    assert getattr(native, "record", {}).get("tier") == "c", f"not compiled by the native tier: {type(native).__name__}"
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact or g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return native


RNG = np.random.default_rng(0)
F32 = RNG.standard_normal((7, 5)).astype(np.float32)
SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3e38, -1e-40, 7.0], np.float32)


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * xnp.where(x > 0, x, alpha * xnp.exp(x) - alpha)


@pytest.fixture(params=[np.float32, np.float64])
def dtype(request):
    if request.param == np.float32:
        yield np.float32
        return
    old = fw.config.read("jax_enable_x64")
    fw.config.update("jax_enable_x64", True)
    yield np.float64
    fw.config.update("jax_enable_x64", old)


def test_elementwise_and_transcendentals(dtype):
    x = RNG.standard_normal(1000).astype(dtype) * 3
    _check(selu, x)
    _check(lambda x: (xnp.tanh(x) + xnp.log1p(xnp.abs(x)) * xnp.sqrt(xnp.abs(x)), xnp.sin(x) * xnp.cos(x)), x,
           rtol=1e-5, atol=1e-6)


def test_special_values_and_nan_propagating_max():
    _check(lambda x: (xnp.maximum(x, 0.0), xnp.minimum(x, -0.0), xnp.max(x), xnp.min(x), x > 1.0, xnp.isfinite(x)),
           SPECIAL, exact=True)
    _check(lambda x: xnp.exp(x) + xnp.log(xnp.abs(x)), SPECIAL, rtol=1e-6)


def test_row_max_min_over_many_lanes_keep_nans_and_signed_zeros():
    # rows longer than the 64 partial results (c_translate.lane_reduction), with the special
    # values in the tail and in the body of the row
    x = RNG.standard_normal((5, 200)).astype(np.float32)
    x[0, 150] = np.nan
    x[1, :] = -0.0
    x[1, 199] = 0.0
    x[2, :] = 0.0
    x[2, 7] = -0.0
    x[3, 63] = np.inf
    x[4, 199] = -np.inf
    x[4, :] = -np.abs(x[4, :]) - 1
    _check(lambda x: (xnp.max(x, 1), xnp.min(x, 1), xnp.sum(x, 1)), x, exact=False)
    got, want = _both(lambda x: (xnp.max(x, 1), xnp.min(x, 1)), x)[1:]
    for g, w in zip(got, want):  # the bits, signed zeros included (a NaN's payload is the keys', as in Numba's build)
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan) and g[~nan].tobytes() == w[~nan].tobytes()


def test_reductions_over_axes():
    x = RNG.standard_normal((64, 33)).astype(np.float32)
    _check(lambda x: (xnp.sum(x, 0), xnp.sum(x, 1), xnp.mean(x), xnp.max(x, 1), xnp.argmax(x, 0), xnp.prod(x[:4], 0)), x,
           rtol=1e-5, atol=1e-5)


def test_products_reach_blas(dtype):
    a = RNG.standard_normal((128, 64)).astype(dtype)
    b = RNG.standard_normal((128, 96)).astype(dtype)
    c = RNG.standard_normal((4, 32, 16)).astype(dtype)
    native = _check(lambda a, b, c: (a.T @ b, a @ a.T, xnp.einsum("bij,bkj->bik", c, c)), a, b, c, rtol=1e-4, atol=1e-4)
    assert native.record["blas_table"]


def test_big_products_run_in_kernels_blocks():
    # past kernels.GEMM_SPLIT_WORK a product is cut into row or column blocks (on the GEMM pool
    # when it is loaded), as kernels.matmul cuts it
    a = RNG.standard_normal((300, 200)).astype(np.float32)
    b = RNG.standard_normal((200, 520)).astype(np.float32)
    c = RNG.standard_normal((3, 130, 200)).astype(np.float32)
    _check(lambda a, b, c: (a @ b, b.T @ a.T, c @ b, xnp.einsum("bij,bkj->bik", c, c)), a, b, c, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("m, k, n", [(32, 784, 512), (7, 1100, 70), (130, 3, 97), (1, 600, 64), (64, 0, 64), (33, 17, 31),
                                     (250, 530, 1024), (70, 1024, 130), (1000, 300, 200), (400, 600, 7000)])
def test_float32_products_run_the_tiers_own_kernel_with_the_same_bits_on_any_threads(m, k, n):
    # c_sgemm: every layout of the operands (rows 4 KB apart among them), tails of rows and columns,
    # k past one block (512: 530, 784, 1024 and 1100 in blocks of equal size), rows past one block (240; 400 and 1000 past MC = 384: Y packed once, whole, or panel by panel when that is over 16 MB), few rows (Y read in place) and many, an empty k; the bits must not depend on the GEMM pool's blocks or threads
    from omnistage.codegen import gemm_pool

    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
    f = lambda a, b, at, bt: (a @ b, at.T @ b, a @ bt.T, at.T @ bt.T, (bt @ at).T, a.T.T @ b)  # noqa: E731
    args = (a, b, at, bt)
    native = _check(f, *args, rtol=1e-5, atol=1e-4)
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = [np.asarray(g) for g in native(*args)]
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-4 * max(1, k) ** 0.5)
    gemm_pool.start()
    deadline = time.monotonic() + 60
    while not gemm_pool.ready() and gemm_pool._workers() and time.monotonic() < deadline:
        time.sleep(0.05)  # built in the background on first use
    with gemm_pool.one_thread():
        alone = [np.asarray(g).tobytes() for g in native._run(args)]
    assert alone == [g.tobytes() for g in got]
    assert got[0].tobytes() == got[-1].tobytes()  # the same product, the same bits


def test_only_float32_products_bring_the_own_kernel():
    from omnistage.codegen import c_vmath
    from omnistage.codegen.emit_cpu import emit_module

    a = RNG.standard_normal((16, 64)).astype(np.float32)
    for x, has in ((a, True), (a.astype(np.complex64), False)):
        program = fw.jit(lambda x: x @ x.T).lower(x).program
        source, entry = emit_module(program, c_vmath.lookup, threads=None)
        ins, outs = [((16, 64), x.dtype.name)], [((16, 16), x.dtype.name)]
        c, uses_gemm, _ = c_translate.translate(source, entry, ins, outs, c_vmath.NAMES.values())
        assert uses_gemm and ("os_sgemm_register" in c) == has


def test_training_step_gradient():
    w = RNG.standard_normal((32, 10)).astype(np.float32)
    x = RNG.standard_normal((128, 32)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 128)]

    def loss(w, x, y):
        z = xnp.tanh(x @ w)
        return -xnp.mean(xnp.sum((z - xnp.log(xnp.sum(xnp.exp(z), -1, keepdims=True))) * y, -1))

    _check(lambda w, x, y: w - 0.1 * fw.grad(loss)(w, x, y), w, x, y, rtol=1e-4, atol=1e-5)


def test_scan_with_array_carries_releases_iterations():
    xs = RNG.standard_normal((300, 16)).astype(np.float32)

    def f(xs):
        def body(c, x):
            h = xnp.tanh(c * 0.5 + x)
            return h, h.sum()

        return lax.scan(body, xnp.zeros(16, xnp.float32), xs)

    _check(f, xs, rtol=1e-5)
    _check(lambda xs: fw.grad(lambda xs: f(xs)[1].sum())(xs), xs, rtol=1e-4, atol=1e-5)


def test_while_and_fori_loops_with_array_state():
    v = RNG.standard_normal(8).astype(np.float32)

    def f(v):
        def cond(s):
            return s[0] < 20

        def body(s):
            i, v = s
            return i + 1, xnp.roll(v, 1) * 0.9 + 1.0

        _, out = lax.while_loop(cond, body, (0, v))
        return out, lax.fori_loop(0, 13, lambda i, a: a * 1.01 + i, v)

    _check(f, v, rtol=1e-5)


def test_cond_branches():
    x = RNG.standard_normal(5).astype(np.float32)
    _check(lambda p, x: lax.cond(p > 0, lambda x: x * 2.0, lambda x: xnp.sin(x), x), np.float32(1.0), x)
    _check(lambda p, x: lax.cond(p > 0, lambda x: x * 2.0, lambda x: xnp.sin(x), x), np.float32(-1.0), x)


def test_random_bits_are_exact():
    key = random.PRNGKey(42)
    _check(lambda k: (random.normal(k, (10, 3)), random.uniform(k, (64,)), random.split(k, 3),
                      random.randint(k, (20,), -5, 9)), key, rtol=1e-6)


def test_integer_semantics_follow_lax():
    a = np.array([7, -7, 7, -7, 0, -2147483648, 2147483647, 5], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 1, 0], np.int32)
    u = np.array([0, 1, 0xFFFFFFFF, 123456789, 7, 8, 9, 10], np.uint32)
    s = np.array([0, 1, 31, 32, 33, -1, 5, 100], np.int32)
    _check(lambda a, b: (lax.div(a, b), lax.rem(a, b), a + b * 2147483647, a * a, -a, a // xnp.maximum(b, 1),
                         a % xnp.maximum(b, 1), xnp.abs(a)), a, b)
    _check(lambda a, u, s: (lax.shift_left(a, s), lax.shift_right_arithmetic(a, s), lax.shift_right_logical(a, s),
                            lax.shift_right_logical(u, s.astype(xnp.uint32)), u * u, u // xnp.maximum(u, 1),
                            lax.population_count(u), ~u), a, u, s)


def test_float_to_int_conversions_saturate():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 255.9, 1e20, -1e20], np.float32)
    _check(lambda x: (x.astype(xnp.int32), x.astype(xnp.uint8), x.astype(xnp.int8), x.astype(xnp.uint32),
                      x.astype(xnp.float64).astype(xnp.int64), xnp.round(x), xnp.floor(x), xnp.sign(x)), x)


def test_views_slices_and_concatenation():
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    _check(lambda x: (x[1:5:2, ::3] * 2.0, x.T.reshape(4, 12) + 1.0, xnp.concatenate([x, x[:, :2]], 1),
                      xnp.flip(x, 0)[2]), x)


def _c_source(f, *args):
    from omnistage.codegen import c_vmath
    from omnistage.codegen.emit_cpu import emit_module

    program = fw.jit(f).lower(*args).program
    source, entry = emit_module(program, c_vmath.lookup, threads=None)
    outs = [(o.shape, o.dtype.name) for o in fw.tree_util.tree_leaves(fw.eval_shape(f, *args))]
    return c_translate.translate(source, entry, [(a.shape, a.dtype.name) for a in args], outs, c_vmath.NAMES.values())[0]


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.complex64])
def test_copies_are_memmoves_or_the_linked_copy_kernel_with_exact_values(dtype):
    # the strided copy is c_copy's object, linked only where a piece is not one contiguous run;
    # reshapes and contiguous slices are memmoves in the program
    x = (RNG.standard_normal((6, 8)) * 50).astype(dtype)
    moves = lambda x: (x.reshape(4, 12)[None] + 1, xnp.concatenate([x[:3], x[4:]], 0) * 2)  # noqa: E731
    strided = lambda x: (x.T.reshape(4, 12) + 1, xnp.flip(x, 0)[1:, ::2] * 2, xnp.concatenate([x, x[:, :2]], 1) - 1)  # noqa: E731
    for f, linked in ((moves, False), (strided, True)):
        _check(f, x, exact=True)
        c = _c_source(f, x)
        assert ("c_copy's strided copy" in c) == linked and ("os_strided_copy((const char *)" in c) == linked
        assert linked or "memmove(" in c


def test_dynamic_windows_and_dropped_scatter_rows():
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    u = RNG.standard_normal((3, 4)).astype(np.float32)
    idx = np.array([0, 5, 9, -7], np.int32)  # 9 is out of bounds: its update is dropped
    for i in (np.int32(1), np.int32(5), np.int32(-3)):  # clamped into range, as XLA does
        _check(lambda x, u, i, idx: (lax.dynamic_slice(x, (i, np.int32(2)), (3, 4)) * 2.0,
                                     lax.dynamic_update_slice(x, u, (i, np.int32(3))),
                                     x.at[idx].set(0.5, mode="drop"), x.at[idx, 1].add(1.0, mode="drop")),
               x, u, i, idx, exact=True)


@pytest.mark.parametrize("cdtype", [np.complex64, np.complex128])
def test_complex_numbers(cdtype):
    if cdtype == np.complex128:
        old = fw.config.read("jax_enable_x64")
        fw.config.update("jax_enable_x64", True)
    try:
        z = (RNG.standard_normal(16) + 1j * RNG.standard_normal(16)).astype(cdtype)
        z[:4] = [0, complex(np.inf, 1), complex(np.nan, 0), 2j]  # (Numba's path raises on z + 1 == 0)
        x = RNG.standard_normal(16).astype(z.real.dtype)
        _check(lambda z, x: (z * z + x, xnp.abs(z), xnp.exp(z) / (z + 1), z.real * x, xnp.conj(z), (x + 0j).sum(),
                             xnp.sqrt(z), z == z, xnp.log(z) * 2.0, z - 1j, xnp.tanh(z), xnp.arcsin(z)), z, x,
               rtol=3e-6, atol=1e-6)
        m = (RNG.standard_normal((8, 8)) + 1j * RNG.standard_normal((8, 8))).astype(cdtype)
        _check(lambda m: m @ m.T + 1.0, m, rtol=1e-5, atol=1e-5)
    finally:
        if cdtype == np.complex128:
            fw.config.update("jax_enable_x64", old)


def test_results_are_built_in_the_callers_buffers():
    # the entry writes an array it allocates once and returns as it is straight into the output
    # buffer; every other result (returned twice, a view, an input, a loop's carry) is copied
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    source = textwrap.dedent("""
        import numpy as np
        def f(x):
            y = np.empty((3,), np.float32)
            for i in range(3):
                y[i] = x[i] * np.float32(2.0)
            z = np.empty((3,), np.float32)
            for i in range(3):
                z[i] = x[i]
            z = x
            return (y, z, y)
    """)
    c, _, _ = c_translate.translate(source, "f", [((3,), "float32")], [((3,), "float32")] * 3, [])
    assert "= *os_out0 ?" not in c and "= *os_out1 ?" not in c  # y is returned twice, z bound twice
    c, _, _ = c_translate.translate(source.replace("(y, z, y)", "(y, z)"), "f", [((3,), "float32")],
                                    [((3,), "float32")] * 2, [])
    assert "v_y = *os_out0 ?" in c and "= *os_out1 ?" not in c

    def f(x, n):
        e = xnp.exp(x)
        carry = lax.fori_loop(0, n, lambda i, c: c * 0.5 + e, x)
        return e, e, e[1:3], x, carry, e.sum(0), xnp.maximum(x, 0.0)
    _check(f, x, np.int32(3))

    def train(w, m, x):  # a loop body's new carries are built in the loop's slots, uncopied
        def body(i, s):
            w, m = s
            m = 0.9 * m + x.T @ xnp.tanh(x @ w)
            return w - 0.01 * m, m
        return lax.fori_loop(0, 7, body, (w, m))
    w, m = RNG.standard_normal((8, 4)).astype(np.float32), np.zeros((8, 4), np.float32)
    native = _check(train, w, m, x, rtol=1e-5)
    from omnistage.codegen import c_vmath
    from omnistage.codegen.emit_cpu import emit_module

    source, entry = emit_module(native.program, c_vmath.lookup, threads=None)
    ins, outs = [((8, 4), "float32")] * 2 + [((6, 8), "float32")], [((8, 4), "float32")] * 2
    c, _, _ = c_translate.translate(source, entry, ins, outs, c_vmath.NAMES.values())
    assert re.search(r"(os_t\d+) = (os_dst\d+);\n\s+(os_t\d+) = (os_dst\d+);\n\s+if \(os_fn_scan_body", c), c


def test_boolean_operands_select_and_reduce():
    # bool arrays are read as bytes in C (so their loops vectorize): every value still selects
    x = RNG.standard_normal((9, 131)).astype(np.float32)
    m = RNG.random((9, 131)) < 0.5
    _check(lambda l, m: (-xnp.sum(xnp.logaddexp(0.0, xnp.where(m, -1.0, 1.0) * l)), xnp.where(m, l, 0.0), m & (l > 0),
                         m.astype(np.float32) * 3.0, xnp.sum(m, axis=1)), x, m, rtol=1e-5)


def test_untranslatable_program_keeps_the_numba_path():
    m = RNG.standard_normal((4, 4)).astype(np.float32)
    program = fw.jit(lambda m: xnp.fft.fft(m @ m.T).real).lower(m).program  # numpy.fft: not translated
    exe = compile_for_cpu(program)
    assert isinstance(exe, (NumbaProgram, InterpretedProgram))
    np.testing.assert_allclose(np.asarray(exe(m)[0]), np.fft.fft(m @ m.T).real, rtol=1e-4, atol=1e-4)


def test_runtime_kernels_without_a_c_rule_run_their_numba_build_from_c():
    # convolutions, max pooling and its gradient, qr: the library calls the kernels' Numba
    # builds through its table (numba_kernel_table); the rest of the program is C
    from omnistage.example_libraries import stax

    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 2, 9, 9)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    # pooled: an input, not the convolution's output, whose near-ties the interpreter's and
    # the kernel's roundings may break differently (moving the gradient to the other element)
    y = rng.standard_normal((3, 4, 5, 9)).astype(np.float32)
    _, pool = stax.MaxPool((2, 2), (1, 1))

    def f(x, w, y):
        conv = lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        g = fw.grad(lambda y: (pool((), y) ** 2).sum())(y)
        q, r = xnp.linalg.qr(g[0, 0])
        return conv, g, xnp.abs(r)
    native = _check(f, x, w, y, rtol=1e-4, atol=1e-4)
    # (float convolutions and pools are C's own: c_conv, c_windows)
    assert {name for name, _ in native.record["numba_kernels"]} == {"qr"}


# (lhs shape, rhs shape, dimension numbers, strides, padding, lhs dilation, rhs dilation, feature
# groups, batch groups): layouts that need relayouts in and out, strides with padding, a
# transposed convolution (lhs dilation: several phases), dilated kernels, per-example feature
# groups, batch groups (a kernel's gradient), 1-D and 3-D, zero-sized, and big enough for tasks
# on the pool
_CONV_CASES = [
    ((2, 7, 6, 3), (3, 2, 3, 6), ("NHWC", "HWIO", "NHWC"), (2, 1), ((1, 0), (0, 2)), (1, 1), (1, 2), 1, 1),
    ((3, 4, 9, 8), (6, 4, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (2, 2), (1, 1), 1, 1),
    ((2, 9, 8, 6), (3, 3, 2, 6), ("NHWC", "HWIO", "NCHW"), (1, 2), "VALID", (2, 1), (1, 1), 3, 1),
    ((4, 5, 5, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), (1, 1), 1, 2),
    ((2, 11, 3), (4, 3, 5), ("NWC", "WIO", "NWC"), (3,), ((2, 1),), (1,), (2,), 1, 1),
    ((1, 2, 4, 5, 3), (2, 2, 3, 2, 3), ("NCDHW", "OIDHW", "NCDHW"), (1, 2, 1), "SAME", (1, 1, 2), (1, 1, 1), 1, 1),
    ((0, 6, 6, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), (1, 1), 1, 1),
    ((64, 14, 14, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"), (1, 1), "VALID", (1, 1), (1, 1), 1, 1),
]


@pytest.mark.parametrize("case", range(len(_CONV_CASES)))
def test_float_convolutions_run_in_c_with_the_numba_kernels_bits(case, dtype):
    lhs_shape, rhs_shape, dims, strides, padding, lhs_dil, rhs_dil, groups, bgroups = _CONV_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(lhs_shape).astype(dtype)
    w = rng.standard_normal(rhs_shape).astype(dtype)

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
                                        dimension_numbers=dims, feature_group_count=groups,
                                        batch_group_count=bgroups)
    native = _check(f, x, w, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-4 if dtype == np.float32 else 1e-10)
    assert "numba_kernels" not in native.record and native.record["blas_table"] == (x.size > 0)
    got = np.asarray(native(x, w)[0])
    want = np.asarray(NumbaProgram(native.program)(x, w)[0])  # kernels.conv_in_layout
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


# (operand shape, window, strides, padding, base dilation, window dilation)
_WINDOW_CASES = [
    ((2, 7, 6, 3), (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
    ((2, 3, 9, 8), (1, 1, 3, 3), (1, 1, 1, 2), "SAME", None, None),
    ((3, 8, 5), (2, 3, 1), (1, 2, 1), ((1, 0), (2, 1), (0, 0)), (1, 2, 1), (1, 1, 1)),
    ((4, 6, 7), (1, 2, 2), (1, 1, 2), ((0, 0), (1, 1), (1, 2)), None, (1, 2, 1)),
    ((0, 4, 4), (1, 2, 2), (1, 1, 1), "VALID", None, None),
]


@pytest.mark.parametrize("kind", ["float32", "float64", "int32"])
@pytest.mark.parametrize("case", range(len(_WINDOW_CASES)))
def test_pools_and_their_gradients_run_in_c_with_the_numba_kernels_choices(case, kind):
    shape, window, strides, padding, base, wdil = _WINDOW_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.integers(-3, 4, shape).astype(kind)  # ties: the first extremum wins
    if kind != "int32":
        x = x + rng.standard_normal(shape).astype(kind) * (rng.random(shape) < 0.5)
        x.reshape(-1)[::7] = np.nan  # the first NaN wins
    old = fw.config.read("jax_enable_x64")
    fw.config.update("jax_enable_x64", kind == "float64")
    try:
        def pools(x):
            return [lax.reduce_window(x, init, op, window, strides, padding, base_dilation=base, window_dilation=wdil)
                    for init, op in ((-np.inf if kind != "int32" else np.iinfo(np.int32).min, lax.max),
                                     (np.inf if kind != "int32" else np.iinfo(np.int32).max, lax.min))]
        programs = [pools]
        if kind != "int32":  # select_and_scatter_add (the gradient), select_and_gather_add (a tangent)
            programs += [lambda x: fw.grad(lambda x: sum((p * p).sum() for p in pools(x)))(xnp.nan_to_num(x)),
                         lambda x: fw.jvp(pools, (xnp.nan_to_num(x),), (xnp.cos(x),))[1]]
        for f in programs:
            native, got = _native(f, x)
            assert native.record["tier"] == "c" and "numba_kernels" not in native.record
            want = [np.asarray(v) for v in NumbaProgram(native.program)(x)]
            assert [g.tobytes() for g in got] == [v.tobytes() for v in want]
    finally:
        fw.config.update("jax_enable_x64", old)


def test_c_convolutions_run_their_tasks_on_the_pool_with_the_bits_of_one_thread():
    from tests.helpers import gemm_pool_ready

    pool = gemm_pool_ready()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 14, 14, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 8)).astype(np.float32)
    native, (pooled,) = _native(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=(
        "NHWC", "HWIO", "NHWC")), x, w)
    with pool.one_thread():
        alone = np.asarray(native(x, w)[0])
    assert native.record["tier"] == "c" and pooled.tobytes() == alone.tobytes()


NUMBA_KERNELS_SCRIPT = """
import sys
import numpy as np
import omnistage as fw
from omnistage import lax
x = (np.arange(2 * 3 * 7 * 7, dtype=np.float32).reshape(2, 3, 7, 7) / 50) * np.complex64(1 + 0.5j)
w = np.cos(np.arange(4 * 3 * 3 * 3, dtype=np.float32)).reshape(4, 3, 3, 3) * np.complex64(1 - 2j)
# (a complex convolution: the Numba kernel's; float ones are c_conv's)
f = fw.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")) + 1.0)
y = np.asarray(f(x, w))
np.save(sys.argv[1], y)
"""


def test_a_library_calling_numba_kernels_loads_them_in_a_later_process(tmp_path):
    script = tmp_path / "conv.py"
    script.write_text(NUMBA_KERNELS_SCRIPT)
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"), OMNISTAGE_C_TIER="1")
    outs = []
    for k in range(2):  # the first process builds the library, the second loads it and fills its table
        out = tmp_path / f"y{k}.npy"
        subprocess.run([sys.executable, str(script), str(out)], env=env, check=True, capture_output=True, text=True)
        outs.append(np.load(out))
    x = (np.arange(2 * 3 * 7 * 7, dtype=np.float32).reshape(2, 3, 7, 7) / 50) * (1 + 0.5j)
    w = np.cos(np.arange(4 * 3 * 3 * 3, dtype=np.float32)).reshape(4, 3, 3, 3) * (1 - 2j)
    want = np.zeros((2, 4, 5, 5), complex)
    for i in range(5):
        for j in range(5):
            want[:, :, i, j] = np.einsum("ncab,ocab->no", x[:, :, i:i + 3, j:j + 3], w)
    np.testing.assert_allclose(outs[0], want + 1.0, rtol=1e-5, atol=1e-5)
    assert outs[0].tobytes() == outs[1].tobytes()
    records = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("omnistage_aot_*.json")]
    assert any(r.get("numba_kernels") for r in records)


def test_switched_off_by_environment(monkeypatch):
    monkeypatch.setenv("OMNISTAGE_C_TIER", "0")
    program = fw.jit(selu).lower(F32).program
    assert c_tier.compile_program(program) is None
    assert isinstance(compile_for_cpu(program), NumbaProgram)


def test_translator_refuses_what_it_does_not_know():
    source = textwrap.dedent("""
        import numpy as np
        def f(x):
            y = np.sort(x)
            return (y,)
    """)
    with pytest.raises(c_translate.Unsupported):
        c_translate.translate(source, "f", [((3,), "float32")], [((3,), "float32")], [])
    with pytest.raises(c_translate.Unsupported):  # mixed-signedness 64-bit arithmetic has no C meaning here
        c_translate.translate("def f(a, b):\n    return (a + b,)\n", "f", [((), "uint64"), ((), "int64")],
                              [((), "float64")], [])


SCRIPT = """
import hashlib, json, sys
import numpy as np
import omnistage as fw, omnistage.numpy as xnp
from omnistage import random

def step(w, x):
    return w - 0.1 * fw.grad(lambda w: xnp.mean(xnp.tanh(x @ w) ** 2.0))(w)

w = np.linspace(-1, 1, 32 * 8, dtype=np.float32).reshape(32, 8)
x = np.linspace(-2, 2, 64 * 32, dtype=np.float32).reshape(64, 32)
f = fw.jit(step)
out = np.asarray(f(w, x))
z = np.asarray(fw.jit(lambda k: random.normal(k, (10, 3)))(random.PRNGKey(1)))
print(json.dumps({"digest": hashlib.sha256(out.tobytes() + z.tobytes()).hexdigest(),
                  "numba": "numba" in sys.modules, "status": f.lower(w, x).compile().cache_status
                  if hasattr(f.lower(w, x).compile(), "cache_status") else None}))
"""


def test_fresh_processes_never_import_numba_and_agree_bit_for_bit(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "NUMBA_"))}
    env.update(OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR=str(tmp_path / "numba"), OMNISTAGE_C_TIER="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0]["digest"] == runs[1]["digest"]
    assert not runs[0]["numba"] and not runs[1]["numba"], runs
    assert any(n.startswith("omnistage_c_") for n in os.listdir(tmp_path / "cache"))


def _native(f, *args):
    """(native tier executable, its outputs) of `f` on `args` (no interpreter run)."""
    native = compile_for_cpu(fw.jit(f).lower(*args).program)
    return native, [np.asarray(g) for g in native(*args)]


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_eig_runs_in_c_on_lapack_and_equals_the_numba_kernel_bit_for_bit(kind):
    from omnistage.codegen import kernels

    old = fw.config.read("jax_enable_x64")
    fw.config.update("jax_enable_x64", True)
    try:
        rng = np.random.default_rng(5)
        a = rng.standard_normal((6, 4, 4))
        if kind == "complex":
            a = a + 1j * rng.standard_normal((6, 4, 4))
        a[1] = np.diag([1.0, 2.0, 3.0, 4.0])  # real eigenvalues, exact
        a[2] *= 1e-120  # scaled by a power of two before LAPACK (kernels.eig)
        a[3, 0, 1] = np.nan  # NaN results, not an error
        a[4] = [[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3]]  # a conjugate pair
        f = lambda a: lax.linalg.eig(a, compute_left_eigenvectors=True)  # noqa: E731
        native, got = _native(f, a)
        assert native.record["tier"] == "c" and native.record["lapack_table"]
        w, vl, vr = (np.empty((6, 4), np.complex128), np.empty((6, 4, 4), np.complex128),
                     np.empty((6, 4, 4), np.complex128))
        kernels.eig(a, w, vl, vr)
        for g, want in zip(got, (w, vl, vr)):
            assert g.tobytes() == want.tobytes()
        ok = [0, 1, 2, 4, 5]
        np.testing.assert_allclose(a[ok] @ vr[ok], vr[ok] * w[ok][:, None, :], atol=1e-12)
        assert np.isnan(w[3]).all()
        # eigenvalues alone, and the right vectors alone: LAPACK's jobvr='N' / jobvl='N'
        for g, want in zip(_native(xnp.linalg.eigvals, a)[1] + _native(xnp.linalg.eig, a)[1], (w, w, vr)):
            np.testing.assert_array_equal(g[ok], want[ok])
    finally:
        fw.config.update("jax_enable_x64", old)


def test_a_vmapped_spectral_radius_needs_no_numba(tmp_path):
    code = textwrap.dedent("""
        import sys, numpy as np, omnistage as fw, omnistage.numpy as xnp
        f = fw.jit(fw.vmap(lambda w: xnp.max(xnp.abs(xnp.linalg.eigvals(w)))))
        ws = np.random.default_rng(0).random((128, 3, 3)).astype(np.float32)
        got = np.asarray(f(ws))
        want = np.abs(np.linalg.eigvals(ws.astype(np.float64))).max(-1)
        assert np.allclose(got, want, rtol=1e-6), (got, want)
        print("numba" in sys.modules)
    """)
    env = {**os.environ, "OMNISTAGE_CACHE_DIR": str(tmp_path / "c"), "OMNISTAGE_C_TIER": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_lu_triangular_solve_and_solve_run_in_c_as_the_numba_build_computes_them():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 5, 5)).astype(np.float32)
    a[1, :, 0] = 0  # a zero column: no pivot, nothing scaled
    a[2, 1, 1] = np.nan  # a NaN wins the pivot search (np.argmax)
    c = (rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))).astype(np.complex64)
    rhs = rng.standard_normal((4, 5, 2)).astype(np.float32)
    ties = np.array([[[1, 2, 3], [2, 4, 6], [3, 6, 9]], [[2, 1, 1], [-2, 1, 1], [2, 3, -1]]], np.float32)
    for x in (a, c, rng.standard_normal((2, 3, 5)).astype(np.float32), ties):
        native, got = _native(lax.linalg.lu, x)
        assert native.record["tier"] == "c"
        numba_build = NumbaProgram(native.program)  # the kernel inlined into the program, contracted
        for g, want in zip(got, numba_build(x)):  # the same operations in the same order
            want = np.asarray(want)
            if g.dtype.kind == "c":  # LLVM may contract a complex product's parts too: to rounding
                np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
                continue
            # real: the same bits, but for a NaN's sign
            assert g.dtype == want.dtype and np.array_equal(np.isnan(g), np.isnan(want))
            assert np.where(np.isnan(g), 0, g).tobytes() == np.where(np.isnan(want), 0, want).tobytes()
    _check(lambda p: lax.linalg.lu_pivots_to_permutation(p, 6), np.array([[2, 2, 5, 9], [0, -1, 3, 3]], np.int32))
    ok = a[[0, 3]]
    for lower, unit in ((True, False), (False, True)):
        _check(lambda m, b: lax.linalg.triangular_solve(m, b, left_side=True, lower=lower, unit_diagonal=unit), ok,
               rhs[:2], rtol=1e-4, atol=1e-5)
    _check(xnp.linalg.solve, ok, rhs[:2], rtol=1e-4, atol=1e-5)
    _check(xnp.linalg.solve, c, c[..., :2], rtol=1e-4, atol=1e-5)
    _check(xnp.linalg.det, ok, rtol=1e-4)


def test_a_vmapped_gradient_through_eig_runs_in_c():
    def radius(w):
        return xnp.max(xnp.abs(xnp.linalg.eigvals(w)))

    ws = np.random.default_rng(2).random((16, 3, 3)).astype(np.float32)
    _check(lambda ws: ws - 0.1 * fw.vmap(fw.grad(radius))(ws), ws, rtol=1e-4, atol=1e-5)


def _pool_ready():
    from omnistage.codegen import gemm_pool

    gemm_pool.start()
    deadline = time.monotonic() + 60
    while not gemm_pool.ready() and gemm_pool._workers() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_loops_numba_would_thread_run_on_the_pool_with_the_same_bits_either_way(monkeypatch):
    from omnistage.codegen import parallel

    if not parallel.likely_enabled():
        pytest.skip("parallel loops are off here (one CPU, OMNISTAGE_PARALLEL=0 or no threading layer)")

    def softmax_rows(x):  # row reductions inside the loop over rows
        e = xnp.exp(x - xnp.max(x, axis=1, keepdims=True))
        return e / xnp.sum(e, axis=1, keepdims=True), selu(x).sum()

    x = np.random.default_rng(0).standard_normal((1024, 512)).astype(np.float32)  # (a sum that cancels fails rtol)
    native = _check(softmax_rows, x, rtol=1e-5, atol=1e-6)
    assert native.record["threads"] and "numba.prange" not in native.as_text()
    from omnistage.codegen import aot, c_vmath
    from omnistage.codegen.emit_cpu import emit_module

    source, entry = emit_module(native.program, c_vmath.lookup, threads=None)
    assert "np.empty(" in c_tier._threaded(source)  # a row buffer: allocated per row, from each thread's arena
    ins, outs = aot.signature(native.program)
    c, _, _ = c_translate.translate(c_tier._threaded(source), entry, ins, outs, c_vmath.NAMES.values())
    assert "static void os_pfor_1(" in c and "#pragma omp" not in c
    # ...and given back at the end of its row, so the next row reuses it (kept, 1024 rows walked
    # 2 MB of fresh arena a call)
    loop = c[c.index("static void os_pfor_1("):]
    loop = loop[:loop.index("\n}\n")]
    assert loop.index("os_mark_get(A)") < loop.index("os_alloc(A, 512 * sizeof(float))") < loop.index("os_reset(A, ")
    _pool_ready()
    runs = {}
    for threads in (0, 1, 0):
        native._threads.value = threads
        runs.setdefault(threads, []).append([o.tobytes() for o in native._run((x,))])
    assert runs[0][0] == runs[1][0] == runs[0][1]


def test_parallel_loops_of_control_flow_bodies_run_on_the_gemm_pool_with_the_same_bits():
    # an optimizer update inside a fori_loop: big enough for threads, outlined for the pool
    from omnistage.codegen import c_vmath, gemm_pool, parallel
    from omnistage.codegen.emit_cpu import emit_module

    if not parallel.likely_enabled():
        pytest.skip("parallel loops are off here")

    def train(w, m, x):
        def body(i, s):
            w, m = s
            m = 0.9 * m + xnp.tanh(x @ w) * 1e-3
            return w - 0.01 * xnp.sqrt(m * m + 1.0), m
        return lax.fori_loop(0, 3, body, (w, m))
    rng = np.random.default_rng(3)
    w = rng.standard_normal((600, 512)).astype(np.float32)
    m = np.zeros((600, 512), np.float32)
    x = rng.standard_normal((600, 600)).astype(np.float32) / 30
    native = _check(train, w, m, x, rtol=1e-4, atol=1e-5)
    source, entry = emit_module(native.program, c_vmath.lookup, threads=None)
    ins, outs = [((600, 512), "float32")] * 2 + [((600, 600), "float32")], [((600, 512), "float32")] * 2
    c, _, _ = c_translate.translate(c_tier._threaded(source), entry, ins, outs, c_vmath.NAMES.values())
    assert "static void os_pfor_1(" in c and "#pragma omp" not in c
    _pool_ready()
    runs = []
    for threads in (0, 1, 1, 0):
        native._threads.value = threads
        runs.append([o.tobytes() for o in native._run((w, m, x))])
    with gemm_pool.one_thread():
        native._threads.value = 1
        runs.append([o.tobytes() for o in native._run((w, m, x))])
    assert all(r == runs[0] for r in runs)


def test_a_forked_child_runs_parallel_loops_without_the_parents_workers(tmp_path):
    # a child forked after the pool started has none of its threads (multiprocessing's fork on Linux)
    code = textwrap.dedent("""
        import os, sys, numpy as np, omnistage as fw, omnistage.numpy as xnp
        from omnistage.codegen import parallel
        if not parallel.likely_enabled():
            print("skip"); sys.exit(0)
        f = fw.jit(lambda x: 1.05 * xnp.where(x > 0, x, 1.67 * xnp.exp(x) - 1.67))
        x = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
        ex = f.lower(x).compile().executable
        assert ex.record["threads"], ex.record
        ex._tier._enter("parallel")  # threads on now
        want = np.asarray(f(x))
        pid = os.fork()
        if pid == 0:
            ok = np.array_equal(np.asarray(f(x)), want)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """)
    env = {**os.environ, "OMNISTAGE_CACHE_DIR": str(tmp_path / "c"), "OMNISTAGE_C_TIER": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    if done.stdout.strip() == "skip":
        pytest.skip("parallel loops are off here")
    assert done.stdout.strip() == "child 0"


def test_small_programs_compile_at_o1_with_the_bits_of_o2(tmp_path, monkeypatch):
    f = lambda k: (random.normal(k, (10, 3)), xnp.exp(random.uniform(k, (7,))), xnp.tanh(random.uniform(k, (5,))))  # noqa: E731
    key = random.PRNGKey(3)
    from omnistage.codegen import c_vmath
    from omnistage.codegen.emit_cpu import emit_module

    assert c_tier._small(*emit_module(fw.jit(f).lower(key).program, c_vmath.lookup, threads=None))
    outs = []
    for small_work, where in ((c_tier.SMALL_WORK, "o1"), (0, "o2")):
        monkeypatch.setattr(c_tier, "SMALL_WORK", small_work)
        monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path / where))
        native, got = _native(f, key)
        assert native.record["tier"] == "c"
        outs.append([g.tobytes() for g in got])
    assert outs[0] == outs[1]


def test_static_work_counts_statements_of_literal_loops():
    from omnistage.codegen import parallel

    body = ["    x = 1", "    for _i0 in range(4):", "        for _i1 in range(3):", "            y = 2",
            "        z = 3", "    # a comment", "    return (x,)"]
    assert parallel.static_work(body) == 1 + 4 * 3 + 4 + 1
    assert parallel.static_work(["    for _i0 in range(n):", "        y = 2"]) is None
    assert parallel.static_work(["    while x:", "        y = 2"]) is None


def test_cholesky_and_eigh_call_lapack_from_c_with_the_numba_builds_bits():
    old = fw.config.read("jax_enable_x64")
    fw.config.update("jax_enable_x64", True)
    try:
        rng = np.random.default_rng(4)

        def spd(b, n, cplx=False):
            m = rng.standard_normal((b, n, n)) + (1j * rng.standard_normal((b, n, n)) if cplx else 0)
            return m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)

        real, cplx = spd(4, 5), spd(3, 4, True)
        real[1, 0, 0] = -50.0  # not positive definite: NaN factor
        real[2, 1, 1] = np.nan  # NaN: a NaN factor and NaN eigen-decomposition
        cplx[1, 2, 2] = -100.0
        for f in (lax.linalg.cholesky, lambda a: lax.linalg.eigh(a), lambda a: lax.linalg.eigh(a, lower=False),
                  xnp.linalg.eigvalsh):
            for a in (real, cplx, real.astype(np.float32)):
                native, got = _native(f, a)
                assert native.record["tier"] == "c" and native.record["lapack_table"]
                for g, want in zip(got, NumbaProgram(native.program)(a)):
                    assert g.tobytes() == np.asarray(want).tobytes()
        w, v = _native(lambda a: lax.linalg.eigh(a)[::-1], real[[0, 3]])[1]
        np.testing.assert_allclose(real[[0, 3]] @ v, v * w[:, None, :], atol=1e-10)
    finally:
        fw.config.update("jax_enable_x64", old)


def test_conjugated_triangular_solves_and_a_gaussian_process_gradient_run_in_c():
    rng = np.random.default_rng(9)
    m = (np.tril(rng.standard_normal((2, 4, 4))) + 4 * np.eye(4) + 1j * np.tril(rng.standard_normal((2, 4, 4)))).astype(np.complex64)
    b = (rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))).astype(np.complex64)
    for transpose in (False, True):
        _check(lambda m, b: lax.linalg.triangular_solve(m, b, left_side=True, lower=True, conjugate_a=True,
                                                        transpose_a=transpose), m, b, rtol=1e-4, atol=1e-5)

    def marginal_likelihood(params, x, y):  # the GP example's: cholesky, two solves, a log-det
        amp, scale = xnp.exp(params[0]), xnp.exp(params[1])
        k = amp * xnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / scale) + 1e-3 * xnp.eye(x.shape[0])
        chol = xnp.linalg.cholesky(k)
        alpha = fw.scipy.linalg.cho_solve((chol, True), y) if hasattr(fw, "scipy") else xnp.linalg.solve(k, y)
        return 0.5 * y @ alpha + xnp.sum(xnp.log(xnp.diag(chol)))

    x = np.linspace(-2, 2, 20).astype(np.float32)
    y = np.sin(x).astype(np.float32)
    _check(fw.grad(marginal_likelihood), np.array([0.1, -0.2], np.float32), x, y, rtol=1e-3, atol=1e-4)


def test_sorts_run_in_c_with_the_numba_builds_order():
    rng = np.random.default_rng(11)
    f32 = rng.standard_normal((5, 333)).astype(np.float32)  # several merge passes, an odd count of them
    f32[0, :40] = np.nan
    f32[1, :60] = np.tile([0.0, -0.0, 1.0], 20)  # ties: stability, and -0.0 equal to 0.0
    f32[2, 7] = -np.inf
    ints = rng.integers(-3, 3, (4, 70)).astype(np.int32)
    c64 = (rng.integers(-2, 2, (3, 40)) + 1j * rng.standard_normal((3, 40))).astype(np.complex64)
    cases = [(lambda x: xnp.sort(x, axis=1), f32), (lambda x: xnp.sort(x, axis=0), f32),
             (lambda x: xnp.argsort(x, axis=1), f32), (lambda x: xnp.argsort(x), ints), (xnp.sort, c64),
             (lambda x: xnp.sort(x > 0, axis=1), f32), (lambda x: lax.top_k(x, 5), f32[2:]),
             (lambda a, b: lax.sort((a, b), num_keys=2), ints, f32[:4, :70])]
    for f, *args in cases:
        native, got = _native(f, *args)
        assert native.record["tier"] == "c"
        for g, want in zip(got, NumbaProgram(native.program)(*args)):
            assert g.tobytes() == np.asarray(want).tobytes()
    np.testing.assert_array_equal(_native(lambda x: xnp.sort(x, axis=1), f32)[1][0], np.sort(f32, axis=1))


def test_svd_calls_gesdd_from_c_with_the_numba_builds_bits():
    old = fw.config.read("jax_enable_x64")
    fw.config.update("jax_enable_x64", True)
    try:
        rng = np.random.default_rng(12)
        tall = rng.standard_normal((3, 5, 4))
        tall[1, 2, 2] = np.nan  # NaN results
        wide = rng.standard_normal((2, 3, 6))
        cplx = rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))
        for f, a in ((lambda a: lax.linalg.svd(a, full_matrices=True), tall),
                     (lambda a: lax.linalg.svd(a, full_matrices=False), tall),
                     (lambda a: lax.linalg.svd(a, full_matrices=True), wide),
                     (lambda a: xnp.linalg.svd(a, compute_uv=False), wide), (xnp.linalg.svd, cplx),
                     (lambda a: lax.linalg.svd(a, full_matrices=True), np.zeros((2, 3, 0))),
                     (lambda a: xnp.linalg.svd(a, full_matrices=False), tall.astype(np.float32))):
            native, got = _native(f, a)
            assert native.record["tier"] == "c" and native.record["lapack_table"]
            for g, want in zip(got, NumbaProgram(native.program)(a)):
                assert g.tobytes() == np.asarray(want).tobytes()
        u, s, vh = _native(lambda a: lax.linalg.svd(a, full_matrices=False), wide)[1]
        np.testing.assert_allclose((u * s[:, None, :]) @ vh, wide, atol=1e-12)
    finally:
        fw.config.update("jax_enable_x64", old)


def test_calls_pass_one_tuple_of_arrays_with_the_pointer_calls_results():
    # omnistage_aot_call reads the buffers from the tuple (aot.object_layout); the array-of-
    # pointers call must give the same results, for inputs, constants (a closure's array),
    # rank-0 values and several outputs
    w = RNG.standard_normal((4, 3)).astype(np.float32)

    def f(x, s):
        return x @ w + s, (x * s).sum(), s * 2

    native = _check(f, F32[:, :4].copy(), np.float32(1.5))
    assert native._call_objects is not None
    args = [F32[:, :4].copy(), np.asarray(np.float32(1.5))]
    by_tuple = native._run(args)
    calls, native._call_objects = native._call_objects, None
    try:
        by_pointers = native._run(args)
    finally:
        native._call_objects = calls
    for a, b in zip(by_tuple, by_pointers):
        np.testing.assert_array_equal(a, b)
