"""The op-by-op tier (codegen/op_tier.py, op_kernels.py): a program run statement by statement on
kernels compiled once per machine gives the bits its fused native library gives (NaNs,
infinities, subnormals and signed zeros included; partial blocks, scalars, several dimensions),
and a jitted function answers from it until the fused library is loaded, then from that."""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage as fw
import omnistage.numpy as xnp
from omnistage import lax
from omnistage.codegen import c_background, op_kernels, op_tier
from omnistage.codegen.executable import compile_for_cpu

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")


@pytest.fixture(scope="module", autouse=True)
def kernel_cache(tmp_path_factory):
    """One cache for the module: its kernels are compiled once, as on a machine."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path_factory.mktemp("op-tier-cache")))
        mp.setenv("OMNISTAGE_C_TIER", "1")
        mp.setenv("OMNISTAGE_OP_TIER", "0")  # compile_for_cpu builds the fused library unless a test says otherwise
        old = fw.config.read("jax_enable_x64")
        fw.config.update("jax_enable_x64", True)  # float64 programs
        try:
            yield
        finally:
            fw.config.update("jax_enable_x64", old)


def _program(f, *args):
    return fw.jit(f).lower(*args).program


def _by_ops(program):
    """The program's OpByOpProgram (its kernels compiled here first), with no fused build."""
    plan = op_tier.plan(program)
    assert plan is not None, "the op-by-op tier does not cover this program"
    for sig in plan.missing:
        assert op_kernels.build(sig), f"no kernel for {sig}"
    plan = op_tier.plan(program)
    assert not plan.missing
    return op_tier.OpByOpProgram(program, plan)


def _bits(a):
    """The bits of `a`, every NaN one NaN (its sign and payload are not values: GCC commutes
    `a + b` in one build and not another, and x86 propagates the first operand's NaN)."""
    a = np.array(a)
    if a.dtype.kind == "c":  # (each part a float)
        a = a.reshape(-1).view(f"f{a.dtype.itemsize // 2}")
    if a.dtype.kind != "f":
        return a
    a[np.isnan(a)] = np.nan
    return a.view(f"u{a.dtype.itemsize}")


def _same_bits(f, *args):
    program = _program(f, *args)
    fused = compile_for_cpu(program)
    assert getattr(fused, "record", {}).get("tier") == "c", type(fused).__name__
    flat = [np.asarray(a) for a in args]
    want = fused(*flat)
    got = _by_ops(program).run_by_ops(*flat)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(_bits(g), _bits(w))


def _special(dtype, n, seed=0):
    """`n` values of `dtype`: NaN, infinities, signed zeros, subnormals, the extremes, then
    normals of every scale."""
    info = np.finfo(dtype)
    fixed = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal,
             info.tiny, info.max, -info.max, 1.0, -1.0, 0.5, 88.7, -103.9, 710.0, -745.2, 1e-30]
    rng = np.random.default_rng(seed)
    rest = rng.standard_normal(max(n - len(fixed), 0)) * np.exp(rng.uniform(-12, 12, max(n - len(fixed), 0)))
    with np.errstate(over="ignore"):
        return np.concatenate([np.array(fixed), rest])[:n].astype(dtype)


UNARY = [lax.exp, lax.log, lax.log1p, lax.expm1, lax.tanh, lax.logistic, lax.sin, lax.cos, lax.tan, lax.sqrt,
         lax.rsqrt, lax.abs, lax.neg, lax.sign, lax.floor, lax.ceil, lax.atan, lax.asinh, lax.cbrt,
         lax.is_finite, lambda x: lax.integer_pow(x, 3), lambda x: lax.integer_pow(x, -2),
         lambda x: lax.convert_element_type(x, np.int32), xnp.square, xnp.exp2, xnp.round]
BINARY = [lax.add, lax.sub, lax.mul, lax.div, lax.max, lax.min, lax.pow, lax.atan2, lax.rem, lax.nextafter,
          lambda a, b: xnp.where(a > b, a, b * 2), lambda a, b: lax.lt(a, b) & lax.ne(b, b)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", range(len(UNARY)))
def test_unary_bits(dtype, k):
    # 2 full blocks and a partial one
    _same_bits(UNARY[k], _special(dtype, 2 * op_kernels.BLOCK + 37))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", range(len(BINARY)))
def test_binary_bits(dtype, k):
    a = _special(dtype, 3000, seed=1)
    b = np.roll(_special(dtype, 3000, seed=2), 7)  # special values meet each other and normals
    _same_bits(BINARY[k], a, b)


def test_selu_scalars_and_dimensions():
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * xnp.where(x > 0, x, alpha * xnp.exp(x) - alpha)

    _same_bits(selu, _special(np.float32, 100000).reshape(400, 250))
    _same_bits(selu, np.float32(-0.75))  # rank 0: one padded block
    _same_bits(lambda x, y: xnp.maximum(x, 0.0) * y + xnp.tanh(y), _special(np.float32, 5000), np.float32(3.0))


def test_broadcasts_and_movement():
    x = _special(np.float32, 600, seed=3).reshape(20, 30)
    y = _special(np.float32, 30, seed=4)
    _same_bits(lambda x, y: xnp.exp(x - y[None, :]).T.reshape(-1)[::-1], x, y)
    _same_bits(lambda x: lax.convert_element_type(x, np.float64) * 3.0 + xnp.log(x).astype(np.float64), x)
    _same_bits(lambda x, y: xnp.concatenate([xnp.exp(x), x[:5]]).T + xnp.pad(y, (2, 1))[1:-2, None], x, y)
    _same_bits(lambda x: xnp.pad(xnp.tanh(x), ((1, 2), (3, 0)), constant_values=-1.5), x)
    # mnist_vae's image grid: 100 transposes, hstacks and vstacks
    images = np.random.default_rng(11).random((100, 784)) > 0.5
    _same_bits(lambda v: xnp.vstack([xnp.hstack([v.reshape(-1, 28, 28)[r * 10 + c].T for c in range(10)][::-1])
                                     for r in range(10)]).T, images)


OPS = [lambda a, b: xnp.exp(a) - b, lambda a, b: xnp.maximum(a, b), lambda a, b: a * b + 1.0,
       lambda a, b: xnp.tanh(a) / b, lambda a, b: xnp.where(a < b, xnp.log1p(b), -a), lambda a, b: xnp.sqrt(a) + b]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.booleans()), min_size=1, max_size=6),
       st.sampled_from([1, 7, 4096, 5000]), st.sampled_from([np.float32, np.float64]))
def test_chains_bits(chain, n, dtype):
    """Random chains of elementwise statements: fused into one loop, or run one by one."""

    def f(x, y):
        a, b = x, y
        for op, swap in chain:
            a, b = (OPS[op](b, a), a) if swap else (OPS[op](a, b), b)
        return a, b

    _same_bits(f, _special(dtype, n, seed=5), _special(dtype, n, seed=6)[::-1].copy())


def test_not_covered():
    x = np.ones(10, np.float32)
    assert op_tier.plan(_program(lambda x: xnp.sum(xnp.exp(x)), np.ones(300 * 1024, np.float64))) is None  # many blocks
    assert op_tier.plan(_program(lambda x: xnp.sum(x, axis=0), np.ones((5000, 100), np.float32))) is None  # long columns
    assert op_tier.plan(_program(lambda x: xnp.prod(x), x)) is None  # other reductions
    assert op_tier.plan(_program(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2, x), x)) is None  # control flow
    assert op_tier.plan(_program(lambda x: xnp.exp(x.astype(np.float16)), x)) is None  # float16


def test_missing_kernels_are_requested_not_waited_for(monkeypatch):
    asked = []
    monkeypatch.setenv("OMNISTAGE_OP_TIER", "1")
    monkeypatch.setenv("OMNISTAGE_C_BACKGROUND", "1")
    monkeypatch.setattr(op_kernels, "request", lambda sigs: asked.extend(sigs))
    monkeypatch.setattr(op_kernels, "load", lambda sig: None)  # as on a machine that never built one
    program = _program(lambda x: xnp.expm1(x) * 2, np.ones(10, np.float64))
    assert op_tier.compile_program(program, "k") is None
    assert [s.prim for s in asked] == ["expm1"]


def test_jit_answers_op_by_op_then_fused(monkeypatch):
    monkeypatch.setenv("OMNISTAGE_OP_TIER", "1")
    monkeypatch.setenv("OMNISTAGE_C_BACKGROUND", "1")
    x = _special(np.float32, 20000, seed=8)

    def f(x):
        return xnp.where(x > 0, x, 1.6 * xnp.expm1(x)) * 1.05

    _by_ops(_program(f, x))  # its kernels exist on this "machine"
    jitted = fw.jit(f)
    compiled = jitted.lower(x).compile()
    assert isinstance(compiled.executable, op_tier.OpByOpProgram)
    first = np.asarray(compiled(x))
    op_tier.wait()
    assert compiled.executable.fused is not None and compiled.executable.fused.record.get("tier") == "c"
    np.testing.assert_array_equal(_bits(np.asarray(compiled(x))), _bits(first))
    while c_background.pending():  # (its optimized build, from the helper)
        import time

        time.sleep(0.02)


def test_fresh_process_first_call_by_ops_next_process_fused(tmp_path):
    """Issue 17's path: a machine with the kernels, a new program: the first process answers op by
    op, leaves the fused library behind; the next loads it."""
    script = textwrap.dedent("""
        import sys, time
        import numpy as np, omnistage as fw, omnistage.numpy as xnp
        from omnistage.codegen import c_background, op_tier
        f = fw.jit(lambda x: 1.05 * xnp.where(x > 0, x, 1.67 * xnp.exp(x) - 1.67))
        x = np.linspace(-3, 3, 10001, dtype=np.float32)
        y = np.asarray(f(x))
        kind = type(f.lower(x).compile().executable).__name__
        while c_background.pending():
            time.sleep(0.02)
        print(kind, y.view(np.uint32).sum(dtype=np.uint64))
    """)
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"), OMNISTAGE_C_BACKGROUND="1", OMNISTAGE_OP_TIER="1")
    run = lambda: subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    outs = [run() for _ in range(3)]
    for o in outs:
        assert o.returncode == 0, o.stderr
    kinds = [o.stdout.split()[0] for o in outs]
    sums = {o.stdout.split()[1] for o in outs}
    # 1: no kernel yet (compiled as before, the kernel requested); the cache then holds the program
    assert kinds[0] != "OpByOpProgram" and kinds[1] != "OpByOpProgram" and len(sums) == 1
    for name in os.listdir(tmp_path / "cache"):  # the programs go; the kernels stay
        if name.startswith(("omnistage_aot_", "omnistage_c_")) and not name.startswith("omnistage_aot_ops-"):
            os.unlink(tmp_path / "cache" / name)
    again = [run() for _ in range(2)]
    assert [o.stdout.split()[0] for o in again] == ["OpByOpProgram", "AotProgram"], [o.stderr for o in again]
    assert {o.stdout.split()[1] for o in again} == sums


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_by_scalars_and_rows(dtype):
    """The emitter may multiply by a hoisted reciprocal where a divisor is loop-invariant."""
    x = _special(dtype, 9000, seed=9)
    _same_bits(lambda x, s: x / s, x, dtype(3.0))
    _same_bits(lambda x: x / 3.0, x)
    _same_bits(lambda x: 7.0 / x, x)
    _same_bits(lambda x, r: x.reshape(90, 100) / r[:, None], x, _special(dtype, 90, seed=10))


PRODUCTS = [
    (lambda a, b: a @ b, (64, 48), (48, 40)),  # BLAS, both C-ordered
    (lambda a, b: a.T @ b, (48, 64), (48, 40)),  # a transposed operand (folded: BLAS's flag)
    (lambda a, b: a @ b.T, (64, 48), (40, 48)),
    (lambda a, b: (a @ b).T, (64, 48), (48, 40)),  # a transposed product (folded: operands swapped)
    (lambda a, b: xnp.einsum("bij,bjk->bik", a, b), (3, 20, 30), (3, 30, 25)),  # batched
    (lambda a, b: xnp.einsum("ijb,bjk->bik", a, b), (20, 30, 3), (3, 30, 25)),  # batch not leading: a copy
    (lambda a, b: xnp.tensordot(a, b, ((0, 2), (1, 0))), (6, 30, 7), (7, 6, 40)),  # two contracted axes
    (lambda a, b: a @ b, (4, 5), (5, 3)),  # 60 multiply-adds: the loop nest
    (lambda a, b: xnp.einsum("bij,bkj->bik", a, b), (2, 3, 4), (2, 5, 4)),
    (lambda a, b: xnp.dot(a, b), (9,), (9,)),  # a 0-d result
    (lambda a, b: a @ b, (8, 0), (0, 5)),  # no terms: zeros
    (lambda a, b: a @ b, (0, 8), (8, 5)),  # no rows
    (lambda a, b: xnp.tanh(a @ b) @ b.T * 2.0 - a, (70, 33), (33, 70)),  # products among elementwise ones
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", range(len(PRODUCTS)))
def test_products_bits(dtype, k):
    f, sa, sb = PRODUCTS[k]
    rng = np.random.default_rng(k)
    a = (rng.standard_normal(sa) * np.exp(rng.uniform(-3, 3, sa))).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    if a.size > 3:
        a.reshape(-1)[:3] = [np.nan, np.inf, -0.0]
    _same_bits(f, a, b)


def test_kernel_lsq_gram_by_ops():
    xs = np.random.default_rng(3).standard_normal((100, 20)).astype(np.float32)
    gram = lambda xs: fw.vmap(lambda x: fw.vmap(lambda y: xnp.dot(x, y))(xs))(xs)  # noqa: E731
    _same_bits(gram, xs)
    np.testing.assert_allclose(_by_ops(_program(gram, xs)).run_by_ops(xs)[0], xs @ xs.T, rtol=1e-5, atol=1e-4)


SUMS = [
    (lambda x: xnp.sum(x), (20,)),  # shorter than a vector: left to right
    (lambda x: xnp.sum(x), (1000,)),  # lanes: 15 full rounds and a tail
    (lambda x: xnp.sum(xnp.exp(x) * 2.0, axis=-1), (30, 64)),  # one round, no tail
    (lambda x: xnp.sum(x, axis=(1, 2)), (7, 5, 33)),  # runs of the last axis added up
    (lambda x: xnp.sum(x, axis=(1, 2)), (7, 5, 6)),
    (lambda x: xnp.sum(x, axis=(0, 2)), (3, 4, 40)),  # few outputs: kept-outer
    (lambda x: xnp.sum(x, axis=1), (4, 0)),  # no terms
    (lambda x: xnp.sum(x * x, axis=-1) + 1.0, (50, 1024)),  # the longest unblocked sum
    (lambda x: xnp.sum(x), (1025,)),  # blocked: a full block and one element
    (lambda x: xnp.sum(x, axis=-1), (3, 5000)),  # blocks with a partial one, per row
    (lambda x: xnp.sum(x), (60, 784)),  # mnist's images: a block per row
    (lambda x: xnp.sum(x, axis=(1, 2)), (4, 100, 20)),  # short rows, blocked: each row a block
    (lambda x: xnp.sum(x, axis=(0, 2)), (3, 40, 2100)),
    (lambda x: xnp.sum(x, axis=0), (128, 1024)),  # a bias gradient: the output row, in memory order
    (lambda x: xnp.sum(x, axis=0), (300, 10)),  # few columns: register accumulators
    (lambda x: xnp.sum(x, axis=(0, 1)), (40, 30, 3)),  # a long sum into a wide row
    (lambda x: xnp.sum(x, axis=1), (5, 70, 80)),  # a middle axis
    (lambda x: xnp.sum(x * 2.0, axis=(0, 2)), (6, 70, 8)),  # not the last axis, many outputs
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", range(len(SUMS)))
def test_sums_bits(dtype, k):
    f, shape = SUMS[k]
    rng = np.random.default_rng(k)
    x = (rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape))).astype(dtype)
    if x.size > 40:
        x.reshape(-1)[[3, 17, 39]] = [-0.0, np.inf, info_max(dtype)]
    _same_bits(f, x)
    _same_bits(f, -np.zeros(shape, dtype))  # a sum of -0s is -0 in both (the lanes start at -0)


def info_max(dtype):
    return np.finfo(dtype).max


def test_kernel_lsq_rbf_gram_and_predict_by_ops():
    xs = np.random.default_rng(4).standard_normal((100, 20)).astype(np.float32)
    v = np.random.default_rng(5).standard_normal(100).astype(np.float32)
    rbf = lambda x, y: xnp.exp(-xnp.sum((x - y) ** 2))  # noqa: E731
    gram = lambda xs: fw.vmap(lambda x: fw.vmap(lambda y: rbf(x, y))(xs))(xs)  # noqa: E731
    predict = lambda xs, v: fw.vmap(lambda x: xnp.sum(v * fw.vmap(lambda x_: xnp.dot(x, x_))(xs)))(xs)  # noqa: E731
    _same_bits(gram, xs)
    _same_bits(predict, xs, v)
    want = np.exp(-((xs[:, None, :] - xs[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(_by_ops(_program(gram, xs)).run_by_ops(xs)[0], want, rtol=1e-5, atol=1e-6)


EXTREMA = [(lambda x: xnp.max(x), (20,)), (lambda x: xnp.min(x, axis=-1), (30, 100)),
           (lambda x: xnp.max(x, axis=0), (50, 40)), (lambda x: xnp.min(x, axis=0), (50, 4)),
           (lambda x: xnp.max(x, axis=(0, 2)), (5, 6, 7)), (lambda x: xnp.max(x), (3000,)),
           (lambda x: lax.reduce_min(x, (1,)), (3, 0))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", range(len(EXTREMA)))
def test_extrema_bits(dtype, k):
    f, shape = EXTREMA[k]
    rng = np.random.default_rng(k)
    x = rng.standard_normal(shape).astype(dtype)
    _same_bits(f, x)
    _same_bits(f, np.where(rng.random(shape) < 0.5, -0.0, 0.0).astype(dtype))  # zeros of both signs
    _same_bits(f, -np.zeros(shape, dtype))
    if x.size:
        x.reshape(-1)[rng.integers(0, x.size, 3)] = [np.nan, np.inf, -np.inf]
        _same_bits(f, x)
    _same_bits(f, np.full(shape, -np.inf, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_argmax_and_argmin_bits(dtype):
    # the examples' accuracy: argmax of the targets and of the predictions, compared, averaged
    def accuracy(x, t):
        return xnp.mean(xnp.argmax(x, axis=1) == xnp.argmax(t, axis=1)), xnp.argmin(x, axis=0), xnp.argmax(x, axis=0)

    rng = np.random.default_rng(9)
    t = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 300)]
    x = rng.standard_normal((300, 10)).astype(dtype) if dtype != np.int32 else rng.integers(-3, 3, (300, 10)).astype(dtype)
    _same_bits(accuracy, x, t)
    if dtype == np.int32:
        return
    x[::7, 3] = np.nan  # the first NaN wins
    x[::5, 1] = np.nan
    x[2::9] = -0.0  # ties of signed zeros: the first
    x[4::9, ::2] = 0.0
    x[6::9] = np.inf
    _same_bits(accuracy, x, t)
    assert op_tier.plan(_program(accuracy, x, t)) is not None


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_iota_runs_by_ops_with_the_fused_values(dtype):
    # advi's mesh: linspace, meshgrid (iota, broadcasts, concatenation) answered op by op
    def f(x):
        i = lax.broadcasted_iota(dtype, (3, 200 if dtype != "uint8" else 256), 1)
        return i, lax.convert_element_type(i, x.dtype) * x + xnp.linspace(-2.0, 2.0, 7, dtype=x.dtype)[:1]

    _same_bits(f, np.full((3, 1), 0.37, np.float32))


def test_iota_past_what_numpy_and_the_loop_agree_on_is_compiled():
    assert op_tier.plan(_program(lambda: lax.broadcasted_iota("int8", (200,), 0))) is None
    assert op_tier.plan(_program(lambda: lax.iota("float32", 2 ** 24 + 2))) is None
    assert op_tier.plan(_program(lambda: lax.iota("int8", 128))) is not None


@pytest.mark.parametrize("shape", [(2, 3), (5000,), (10, 3)])
def test_random_bits_by_ops(shape):
    # the seeds' randn: threefry2x32's two words (fusable_forms) and the bitcast to float32
    # run on op kernels, with the fused library's bits
    from omnistage import random

    def randn(key):
        key, sub = random.split(key)
        return key, random.normal(sub, shape), random.uniform(sub, shape, minval=-2.0), random.bits(sub, shape)

    program = _program(randn, random.PRNGKey(3))
    assert op_tier.plan(program) is not None
    _same_bits(randn, np.asarray(random.PRNGKey(3)))


def test_gathers_and_dynamic_slices_by_ops():
    # data movement by the primitives' own implementations: clamped and negative indices,
    # a table lookup (float64 normal's erf_inv), an update at an out-of-range start
    def f(x, i, idx):
        return (x[idx], xnp.take(x, idx, axis=0, mode="clip"), lax.dynamic_slice(x, (i, 0), (3, 4)),
                lax.dynamic_update_slice(x, x[:2, :2] * 2, (i, i)), x[i])

    x = _special(np.float32, 40).reshape(10, 4)
    idx = np.array([[0, 3], [9, -1], [-10, 4]], np.int32)
    for i in (0, 2, 9, -3, 100):
        _same_bits(f, x, np.int32(i), idx)
    assert op_tier.plan(_program(f, x, np.int32(1), idx)) is not None


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_bits(dtype):
    # complex arithmetic runs on op kernels (the fused code's complex rules, not NumPy's
    # multiplication and division algorithms); the seeds' complex randn included
    from omnistage import random

    real = np.float32 if dtype == np.complex64 else np.float64
    a, b = np.empty(64, dtype), np.empty(64, dtype)
    a.real, a.imag = _special(real, 64, seed=1), _special(real, 64, seed=2)[::-1]
    b.real, b.imag = _special(real, 64, seed=3), -_special(real, 64, seed=4)

    def f(a, b, key):
        return (a * b, a / b, a + b * 1j, xnp.exp(a), xnp.abs(a), xnp.conj(b) - a, a == b, xnp.real(a) + xnp.imag(b),
                lax.complex(xnp.real(b), xnp.real(a)), random.normal(key, (2, 3), dtype=dtype) / (1.5 + 0j))

    key = np.asarray(random.PRNGKey(0))
    _same_bits(f, a, b, key)
    assert op_tier.plan(_program(f, a, b, key)) is not None
