"""Print the JAX reference vectors stored in tests/random/jax_vectors.py.

The cases are defined once, as functions of a (random, numpy) module pair, so the test runs
the very same calls with omnistage. Run with JAX installed (only a test-time oracle;
omnistage never imports it):

    pip install jax jaxlib && python tests/random/make_vectors.py > tests/random/jax_vectors.py

The stored vectors came from jax/jaxlib 0.10.2 on CPU with JAX's defaults
(jax_default_prng_impl="threefry2x32", jax_threefry_partitionable=True). Floats are stored
as their exact bit patterns (uint32/uint64), so the comparison is bit for bit.
"""
import pprint
import sys

import numpy as np

SEEDS = (0, 42, 2**31 - 1)


def _bits(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":  # real and imaginary parts, interleaved
        x = x.view(f"float{x.dtype.itemsize * 4}")
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        x = x.view(f"uint{x.dtype.itemsize * 8}")
    return x.astype(np.uint64 if x.dtype.itemsize == 8 else np.int64).tolist() if x.dtype != np.bool_ else x.tolist()


def record(fn):
    out = np.asarray(fn())
    return {"dtype": out.dtype.name, "shape": out.shape, "data": _bits(out)}


def _case(name, fn):
    return name, fn


# np.geomspace(1e-3, 5, 9) as computed where the stored vectors were made (NumPy's AVX-512
# power/log): NumPy's AVX2 build rounds element 5 one ulp lower, which moves the float64
# loggamma sample by up to 4 ulp, so the parameters are spelled out instead of recomputed.
GEOMSPACE = np.array([float.fromhex(h) for h in (
    "0x1.0624dd2f1a9fcp-10", "0x1.7c15dc27ca2acp-9", "0x1.138b8103a2113p-7", "0x1.8f83fb4836742p-6",
    "0x1.21a1851ff630ap-4", "0x1.a3f0620194ad2p-3", "0x1.306fe0a31b715p-1", "0x1.b968100c669c3p+0",
    "0x1.4000000000000p+2")])


def _f32(x):
    """Parameters are computed by NumPy (both libraries' linspace may round differently)."""
    return np.asarray(x, np.float32)


def cases_32(jr, jnp):
    """name -> thunk, for 32-bit mode."""
    out = [case for s in SEEDS for case in _seed_cases_32(jr, jnp, s)]
    big = jr.PRNGKey(2**40 + 3)  # 32-bit mode keeps the low word
    out.append(_case("PRNGKey(2**40 + 3)", lambda: big))
    return dict(out)


def _seed_cases_32(jr, jnp, s):
    k = jr.PRNGKey(s)
    return [
        _case(f"PRNGKey({s})", lambda: k),
        _case(f"split({s})", lambda: jr.split(k)),
        _case(f"split({s}, 3)", lambda: jr.split(k, 3)),
        _case(f"split({s}, (2, 3))", lambda: jr.split(k, (2, 3))),
        _case(f"fold_in({s}, 7)", lambda: jr.fold_in(k, 7)),
        _case(f"fold_in({s}, 2**31)", lambda: jr.fold_in(k, 2**31)),
        _case(f"bits({s}, (5, 3))", lambda: jr.bits(k, (5, 3))),
        _case(f"bits({s}, (7,), uint8)", lambda: jr.bits(k, (7,), jnp.uint8)),
        _case(f"bits({s}, (3,), uint16)", lambda: jr.bits(k, (3,), jnp.uint16)),
        _case(f"uniform({s}, (7, 5))", lambda: jr.uniform(k, (7, 5))),
        _case(f"uniform({s}, (9,), -3, 7)", lambda: jr.uniform(k, (9,), minval=-3.0, maxval=7.0)),
        _case(f"uniform({s}, (3,), float16)", lambda: jr.uniform(k, (3,), jnp.float16)),
        _case(f"normal({s}, (3, 5))", lambda: jr.normal(k, (3, 5))),
        _case(f"randint({s}, (13,), -5, 100)", lambda: jr.randint(k, (13,), -5, 100)),
        _case(f"randint({s}, (6,), 0, 256, uint8)", lambda: jr.randint(k, (6,), 0, 256, jnp.uint8)),
        _case(f"bernoulli({s}, 0.3, (17,))", lambda: jr.bernoulli(k, 0.3, (17,))),
        _case(f"permutation({s}, 11)", lambda: jr.permutation(k, 11)),
        _case(f"permutation({s}, arange(12).reshape(3, 4), axis=1)",
              lambda: jr.permutation(k, jnp.arange(12).reshape(3, 4), axis=1)),
        _case(f"permutation({s}, arange(12).reshape(3, 4), axis=1, independent)",
              lambda: jr.permutation(k, jnp.arange(12).reshape(3, 4), axis=1, independent=True)),
        _case(f"choice({s}, 10, (4,), replace=False)", lambda: jr.choice(k, 10, (4,), replace=False)),
        _case(f"choice({s}, 7, (2, 3))", lambda: jr.choice(k, 7, (2, 3))),
        _case(f"choice({s}, arange(10) * 3, (5,), p)",
              lambda: jr.choice(k, jnp.arange(10) * 3, (5,), p=jnp.linspace(0.0, 1.0, 10))),
        _case(f"categorical({s}, log([.1, .2, .7]), shape=(20,))",
              lambda: jr.categorical(k, jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(20,))),
        _case(f"normal({s}, (7, 13))", lambda: jr.normal(k, (7, 13))),
        _case(f"normal({s}, (5,), float16)", lambda: jr.normal(k, (5,), jnp.float16)),
        _case(f"normal({s}, (5,), bfloat16)", lambda: jr.normal(k, (5,), jnp.bfloat16)),
        _case(f"normal({s}, (5,), complex64)", lambda: jr.normal(k, (5,), jnp.complex64)),
        _case(f"exponential({s}, (9, 3))", lambda: jr.exponential(k, (9, 3))),
        _case(f"gumbel({s}, (11,))", lambda: jr.gumbel(k, (11,))),
        _case(f"gumbel({s}, (11,), mode=high)", lambda: jr.gumbel(k, (11,), mode="high")),
        _case(f"truncated_normal({s}, -1.5, 2.0, (13,))", lambda: jr.truncated_normal(k, -1.5, 2.0, (13,))),
        _case(f"truncated_normal({s}, linspace bounds)",
              lambda: jr.truncated_normal(k, _f32(np.linspace(-3, 0.5, 7)), _f32(np.linspace(-1, 4, 7)))),
        _case(f"gamma({s}, linspace(1, 9, 11))", lambda: jr.gamma(k, _f32(np.linspace(1, 9, 11)))),
        _case(f"gamma({s}, 2.5, (3, 3))", lambda: jr.gamma(k, 2.5, (3, 3))),
        _case(f"loggamma({s}, geomspace(1e-3, 5, 9))", lambda: jr.loggamma(k, _f32(GEOMSPACE))),
        _case(f"beta({s}, 0.3, 2.0, (7,))", lambda: jr.beta(k, 0.3, 2.0, (7,))),
        _case(f"dirichlet({s}, [0.2, 1.0, 3.0], (4,))", lambda: jr.dirichlet(k, jnp.array([0.2, 1.0, 3.0]), (4,))),
        _case(f"laplace({s}, (9,))", lambda: jr.laplace(k, (9,))),
        _case(f"logistic({s}, (9,))", lambda: jr.logistic(k, (9,))),
        _case(f"t({s}, 5.0, (7,))", lambda: jr.t(k, 5.0, (7,))),
        _case(f"rademacher({s}, (10,))", lambda: jr.rademacher(k, (10,))),
    ]


def cases_64(jr, jnp):
    """name -> thunk, for 64-bit mode."""
    return dict(case for s in SEEDS + (2**40 + 3, 2**63 - 1) for case in _seed_cases_64(jr, jnp, s))


def _seed_cases_64(jr, jnp, s):
    k = jr.PRNGKey(s)
    return [
        _case(f"PRNGKey({s})", lambda: k),
        _case(f"split({s}, 3)", lambda: jr.split(k, 3)),
        _case(f"bits({s}, (5,), uint64)", lambda: jr.bits(k, (5,), jnp.uint64)),
        _case(f"uniform({s}, (7, 3), float64)", lambda: jr.uniform(k, (7, 3), jnp.float64)),
        _case(f"uniform({s}, (9,), -3, 7, float64)",
              lambda: jr.uniform(k, (9,), jnp.float64, minval=-3.0, maxval=7.0)),
        _case(f"randint({s}, (9,), -5, 2**40)", lambda: jr.randint(k, (9,), -5, 2**40)),
        _case(f"normal({s}, (3, 5), float64)", lambda: jr.normal(k, (3, 5), jnp.float64)),
        _case(f"normal({s}, (7, 13), float64)", lambda: jr.normal(k, (7, 13), jnp.float64)),
        _case(f"exponential({s}, (9,), float64)", lambda: jr.exponential(k, (9,), jnp.float64)),
        _case(f"gumbel({s}, (11,), float64)", lambda: jr.gumbel(k, (11,), jnp.float64)),
        _case(f"truncated_normal({s}, -1.5, 2.0, (13,), float64)",
              lambda: jr.truncated_normal(k, -1.5, 2.0, (13,), jnp.float64)),
        _case(f"loggamma({s}, geomspace(1e-3, 5, 9), float64)",
              lambda: jr.loggamma(k, GEOMSPACE, dtype=jnp.float64)),
    ]


# --- mantissa sweeps: normal's float arithmetic on many random-bit patterns -------------

SWEEP_STRIDE_32 = 61  # every 61st of the 2**23 float32 mantissas
SWEEP_COUNT_64 = 50_000


def sweep_bits(nbits):
    """The random bits fed to normal's float part: float32 mantissas at a fixed stride, or
    float64 patterns from a fixed NumPy generator."""
    if nbits == 32:
        return (np.arange(0, 2**23, SWEEP_STRIDE_32, dtype=np.uint32) << np.uint32(9))
    return np.random.default_rng(20261121).integers(0, 2**64, SWEEP_COUNT_64, dtype=np.uint64)


def digest(x):
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(np.asarray(x)).tobytes()).hexdigest()


def _jax_normal_from_bits(bits, dtype):
    """jax.random.normal's float arithmetic (jax/_src/random/core.py `_uniform` and
    `_normal_real`) applied to given bits; checked equal to jax.random.normal itself."""
    import jax
    from jax import lax
    from jax._src.lax import special

    def f(bits):
        nbits, nmant = np.dtype(dtype).itemsize * 8, np.finfo(dtype).nmant
        lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
        hi = np.array(1.0, dtype)
        float_bits = lax.bitwise_or(lax.shift_right_logical(bits, np.array(nbits - nmant, bits.dtype)),
                                    np.array(1.0, dtype).view(bits.dtype))
        floats = lax.bitcast_convert_type(float_bits, dtype) - np.array(1.0, dtype)
        u = lax.max(lo, floats * (hi - lo) + lo)
        return lax.mul(np.array(np.sqrt(2), dtype), special.erf_inv(u))

    return np.asarray(jax.jit(f)(bits))


def _sweep_digests():
    return {"normal_float32": digest(_jax_normal_from_bits(sweep_bits(32), np.float32)),
            "normal_float64": digest(_jax_normal_from_bits(sweep_bits(64), np.float64))}


def _evaluate(cases):
    return {name: record(fn) for name, fn in cases.items()}


def main():
    import jax
    import jax.numpy as jnp
    import jax.random as jr

    print(f'"""JAX reference vectors, printed by make_vectors.py (jax {jax.__version__}, '
          f'threefry_partitionable={jax.config.jax_threefry_partitionable}). Do not edit."""')
    print("# fmt: off")
    print("VECTORS = " + pprint.pformat(_evaluate(cases_32(jr, jnp)), width=100, compact=True))
    jax.config.update("jax_enable_x64", True)
    print("VECTORS_X64 = " + pprint.pformat(_evaluate(cases_64(jr, jnp)), width=100, compact=True))
    print("SWEEP_DIGESTS = " + pprint.pformat(_sweep_digests(), width=100))


if __name__ == "__main__":
    sys.exit(main())
