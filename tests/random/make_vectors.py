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
    if x.dtype.kind == "f":
        x = x.view(f"uint{x.dtype.itemsize * 8}")
    return x.astype(np.uint64 if x.dtype.itemsize == 8 else np.int64).tolist() if x.dtype != np.bool_ else x.tolist()


def record(fn):
    out = np.asarray(fn())
    return {"dtype": out.dtype.name, "shape": out.shape, "data": _bits(out)}


def _case(name, fn):
    return name, fn


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
    ]


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


if __name__ == "__main__":
    sys.exit(main())
