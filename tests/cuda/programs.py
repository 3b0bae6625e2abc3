"""Programs the CUDA tests run under the simulator and compile to PTX: each entry is
(name, function, argument factory). Small shapes: the simulator runs every thread in Python.
The reductions' sizes exceed one block's share, so the second pass over partials runs."""
import numpy as np

import omnistage
import omnistage.lax as lax
import omnistage.numpy as jnp
from omnistage import random


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _i32(*shape, seed=0, lo=-50, hi=50):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(np.int32)


def selu(x):
    alpha, scale = 1.67, 1.05
    return scale * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def transcendentals(x):
    return jnp.tanh(x) + jnp.log1p(jnp.abs(x)) - jnp.sqrt(jnp.abs(x)) * jnp.cos(x) + jnp.floor(x) + jnp.exp2(x)


def integer_ops(a, b):
    return (a * b + 7) // jnp.where(b == 0, 3, b), a % 5, lax.shift_right_logical(a, 3), jnp.maximum(a, b)


def compare_and_select(x, y):
    return jnp.where((x > y) & ~(x < -1), x, y), jnp.isfinite(x / y), jnp.clip(x, -0.5, 0.5)


def casts(x):
    return x.astype(jnp.int32), (x * 1e10).astype(jnp.int32), x.astype(jnp.bool_), jnp.round(x)


def complex_arith(x, y):
    z = lax.complex(x, y)
    return (z * z + z / (z + 1.0)).real, jnp.conj(z) * z


def index_maps(x):
    return x.T[1:, ::-1] * 2.0, jnp.broadcast_to(x[0], (3, 5)) + jnp.arange(5.0), x.reshape(5, 3)[:, 1]


def reductions(x):
    return x.sum(), x.sum(axis=0), x.max(axis=1), x.min(), jnp.prod(x[:2, :3] + 1.0), (x > 0).any(axis=0), (x > 0).all()


def big_sum(x):
    return (x * x).sum(), x.mean(axis=1), x.max(axis=0)


def argreductions(x):
    return jnp.argmax(x, axis=0), jnp.argmin(x, axis=1), jnp.argmax(x)


def int_reductions(a):
    return a.sum(axis=1), a.max(), jnp.prod(a[:2, :2]), a.min(axis=0)


def softmax(x):
    e = jnp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def matmuls(a, b):
    return a @ b, jnp.einsum("ij,kj->ik", a, a), jnp.dot(a[0], b[:, 0])


def batched_matmul(a, b):
    return jnp.einsum("bij,bjk->bik", a, b)


def int_matmul(a, b):
    return a @ b


def concat(x, y):
    return jnp.concatenate([x, y, x], axis=1), jnp.stack([x[0], y[0, :2]])


def scalar_mix(x, s):
    return x * s + s * s, (x * s).sum() / s


def cond_branch(x, p):
    return lax.cond(p > 0, lambda v: jnp.sin(v) * 2.0, lambda v: v - 1.0, x)


def while_count(x):
    def cond(c):
        return c[0] < 10

    def body(c):
        return c[0] + 1, c[1] * 1.5 + 1.0

    return lax.while_loop(cond, body, (0, x))


def fori(x):
    return lax.fori_loop(0, 4, lambda i, v: v * 0.5 + i, x)


def scan_cumulative(xs):
    def step(c, x):
        c = c + x
        return c, c * 2.0

    return lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)


def host_fallback(x):
    # test_simulator removes eig's kernel to run this eig on the host; sorted: the kernel's
    # eigenvalue order is not LAPACK's
    return jnp.sort(jnp.linalg.eigvals(x @ x.T + 1.0).real), jnp.cumsum(x, axis=0)


def _loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


grad_loss = omnistage.grad(_loss)
vmapped = omnistage.vmap(lambda row: row * row.sum() - jnp.max(row))


def random_normal(key):
    return random.normal(key, (6,)), random.uniform(random.fold_in(key, 1), (2, 3))


def misc_rules(x, n):
    return lax.round(x), jnp.sign(n), lax.population_count(n), n << 3, n >> 2


def indexing(x, i, idx):
    return (x[i], x[:, i], lax.dynamic_slice(x, (i, 1), (2, 2)), x[idx], x.at[i, 1:3].set(-1.0),
            x.at[idx].add(1.0), x.at[idx, 0].max(0.5), lax.dynamic_update_slice(x, x[:2, :2] * 0, (5, i)))


def padding_and_cumulative(x):
    return (jnp.pad(x, ((1, 2), (0, 1)), constant_values=-1.0), lax.pad(x, 0.0, ((-1, 1, 1), (1, -1, 0))),
            jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0), lax.cummax(x, axis=1, reverse=True),
            lax.cumlogsumexp(x, axis=0))


def bitcasts(x):
    return lax.bitcast_convert_type(x, jnp.int32), lax.bitcast_convert_type(x.astype(jnp.int32), jnp.float32)


_TABLE = np.arange(3, dtype=np.float32)


def constants_and_passthrough(x):
    return x + _TABLE, x, 2.0


def switch3(i, x):
    return lax.switch(i, [jnp.sin, jnp.cos, lambda v: -v], x)


def while_with_constant(x):
    return lax.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 2.0 + _TABLE, x)


PROGRAMS = [
    ("selu", selu, lambda: (_f32(4, 5),)),
    ("transcendentals", transcendentals, lambda: (_f32(3, 4),)),
    ("integer_ops", integer_ops, lambda: (_i32(4, 3), _i32(4, 3, seed=1, lo=-3, hi=3))),
    ("compare_and_select", compare_and_select, lambda: (_f32(3, 3), np.array([[0, 1, -2]] * 3, np.float32))),
    ("casts", casts, lambda: (np.array([[-2.5, 0.5, np.nan, np.inf], [1e3, -0.0, 1.5, 2.5]], np.float32),)),
    ("complex_arith", complex_arith, lambda: (_f32(2, 3), _f32(2, 3, seed=1))),
    ("index_maps", index_maps, lambda: (_f32(3, 5),)),
    ("reductions", reductions, lambda: (_f32(6, 7),)),
    ("big_sum", big_sum, lambda: (_f32(2, 70),)),
    ("argreductions", argreductions,
     lambda: (np.array([[1, 5, 5, np.nan], [7, 2, 2, 0], [3, 3, np.nan, 9]], np.float32),)),
    ("int_reductions", int_reductions, lambda: (_i32(3, 20),)),
    ("softmax", softmax, lambda: (_f32(3, 6),)),
    ("matmuls", matmuls, lambda: (_f32(3, 4), _f32(4, 2, seed=1))),
    ("batched_matmul", batched_matmul, lambda: (_f32(2, 2, 3), _f32(2, 3, 2, seed=1))),
    ("int_matmul", int_matmul, lambda: (_i32(2, 3), _i32(3, 2, seed=1))),
    ("concat", concat, lambda: (_f32(2, 2), _f32(2, 3, seed=1))),
    ("scalar_mix", scalar_mix, lambda: (_f32(2, 3), np.float32(1.5))),
    ("cond_true", cond_branch, lambda: (_f32(3,), np.float32(1.0))),
    ("cond_false", cond_branch, lambda: (_f32(3,), np.float32(-1.0))),
    ("while_count", while_count, lambda: (_f32(2),)),
    ("fori", fori, lambda: (_f32(3),)),
    ("scan_cumulative", scan_cumulative, lambda: (_f32(4, 2),)),
    ("host_fallback", host_fallback, lambda: (_f32(3, 4),)),
    ("constants_and_passthrough", constants_and_passthrough, lambda: (_f32(3),)),
    ("switch_clamped", switch3, lambda: (np.int32(5), _f32(2))),
    ("while_with_constant", while_with_constant, lambda: (np.ones(3, np.float32),)),
    ("grad_loss", grad_loss, lambda: (_f32(3, 2) * 0.3, _f32(4, 3, seed=1))),
    ("vmapped", vmapped, lambda: (_f32(3, 4),)),
    ("random_normal", random_normal, lambda: (np.asarray(random.PRNGKey(7)),)),
    ("indexing", indexing, lambda: (_f32(4, 5), np.int32(2), np.array([3, 0, 3, 9, -1], np.int32))),
    ("padding_and_cumulative", padding_and_cumulative, lambda: (_f32(3, 4),)),
    ("bitcasts", bitcasts, lambda: (_f32(2, 3),)),
    ("misc_rules", misc_rules, lambda: (np.array([-2.5, -0.5, 0.5, 1.5, 2.5], np.float32),
                                        np.array([-7, 0, 3, 2**30, -2**31], np.int32))),
]

# the kernels kept in modules of their own have their programs in files of their own
from . import programs_conv, programs_decomp, programs_eig, programs_solve, programs_sort  # noqa: E402

for _more in (programs_sort, programs_conv, programs_solve, programs_decomp, programs_eig):
    PROGRAMS += _more.PROGRAMS
