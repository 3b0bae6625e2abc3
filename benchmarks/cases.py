"""The workloads of `benchmarks/cpu.py` (issue 3, "Benchmarks"), each written four ways.

A case holds:
- `staged(xnp, lax)`: the function as a JAX user writes it, built from a `numpy`-like module
  and a `lax`-like module, so omnistage and JAX run the very same source;
- `numpy`: the idiomatic NumPy version (for most cases the same source with `xnp=numpy`);
- `numba`: a hand-written `@numba.njit` loop, serial, `error_model="numpy"`, no fastmath
  (what a careful person writes by hand; scalar libm for transcendentals);
- `inputs(quick)`: NumPy inputs (small ones under `--quick`).

Numba is imported lazily (`numba_impl()`), so importing this module stays cheap.
"""
import numpy as np

SELU_ALPHA, SELU_LAMBDA = 1.67, 1.05
MLP_SIZES = (784, 512, 10)  # in -> hidden (tanh) -> out, batch 128
MLP_SMALL_SIZES = (32, 64, 10)


class Case:
    """One benchmark row; see the module docstring for the fields."""

    def __init__(self, name, what, staged, inputs, numpy=None, numba=None, static_argnums=(),
                 small_inputs=None):
        self.name, self.what = name, what
        self.staged = staged
        self.inputs = inputs
        self.numpy = numpy or staged(np, None)
        self._numba = numba
        self.static_argnums = static_argnums
        # inputs at which the case is cheap enough for the NumPy interpreter (traced loop
        # counts); timings there are scaled up linearly and marked as extrapolated
        self.small_inputs = small_inputs

    def numba_impl(self):
        return self._numba()


def _rng():
    return np.random.default_rng(0)


# --- selu: one elementwise pass with exp ------------------------------------------------


def staged_selu(xnp, lax):
    def selu(x):
        return SELU_LAMBDA * xnp.where(x > 0, x, SELU_ALPHA * xnp.exp(x) - SELU_ALPHA)

    return selu


def numba_selu():
    import numba

    @numba.njit(error_model="numpy")
    def selu(x):
        alpha, lmbda = np.float32(SELU_ALPHA), np.float32(SELU_LAMBDA)
        out = np.empty_like(x)
        for i in range(x.size):
            v = x[i]
            out[i] = lmbda * (v if v > 0 else alpha * np.exp(v) - alpha)
        return out

    return selu


# --- norm: column standardization (two reductions over the long axis) -------------------


def staged_norm(xnp, lax):
    def norm(X):
        return (X - X.mean(0)) / X.std(0)

    return norm


def numba_norm():
    import numba

    @numba.njit(error_model="numpy")
    def norm(X):
        n, m = X.shape
        mean = np.zeros(m, np.float32)
        for i in range(n):
            for j in range(m):
                mean[j] += X[i, j]
        mean /= np.float32(n)
        var = np.zeros(m, np.float32)
        for i in range(n):
            for j in range(m):
                d = X[i, j] - mean[j]
                var[j] += d * d
        std = np.sqrt(var / np.float32(n))
        out = np.empty_like(X)
        for i in range(n):
            for j in range(m):
                out[i, j] = (X[i, j] - mean[j]) / std[j]
        return out

    return norm


# --- row softmax ------------------------------------------------------------------------


def staged_softmax(xnp, lax):
    def softmax(x):
        e = xnp.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    return softmax


def numba_softmax():
    import numba

    @numba.njit(error_model="numpy")
    def softmax(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            top = x[i, 0]
            for j in range(1, x.shape[1]):
                top = max(top, x[i, j])
            total = np.float32(0)
            for j in range(x.shape[1]):
                e = np.exp(x[i, j] - top)
                out[i, j] = e
                total += e
            for j in range(x.shape[1]):
                out[i, j] /= total
        return out

    return softmax


# --- 2-layer MLP forward: tanh(x @ W1 + b1) @ W2 + b2 ----------------------------------


def staged_mlp(xnp, lax):
    def mlp(x, w1, b1, w2, b2):
        return xnp.tanh(x @ w1 + b1) @ w2 + b2

    return mlp


def numba_mlp():
    import numba

    @numba.njit(error_model="numpy")
    def mlp(x, w1, b1, w2, b2):
        h = np.dot(x, w1)
        for i in range(h.shape[0]):
            for j in range(h.shape[1]):
                h[i, j] = np.tanh(h[i, j] + b1[j])
        out = np.dot(h, w2)
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] += b2[j]
        return out

    return mlp


def mlp_inputs(sizes, batch):
    rng = _rng()
    d_in, d_hidden, d_out = sizes
    f32 = np.float32
    return (
        rng.standard_normal((batch, d_in)).astype(f32),
        (rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in)).astype(f32),
        rng.standard_normal(d_hidden).astype(f32) * f32(0.1),
        (rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)).astype(f32),
        rng.standard_normal(d_out).astype(f32) * f32(0.1),
    )


# --- sum(arange(n)) with static n, and a fori_loop sum with traced n ------------------


def staged_sum_arange(xnp, lax):
    def sum_arange(n):
        return xnp.sum(xnp.arange(n))

    return sum_arange


def numpy_sum_arange(n):
    # int32 like JAX's default (64-bit off); wraps on overflow the same way
    return np.arange(n, dtype=np.int32).sum(dtype=np.int32)


def staged_fori_sum(xnp, lax):
    def fori_sum(n):
        return lax.fori_loop(0, n, lambda i, total: total + i, 0)

    return fori_sum


def numba_int32_sum():
    import numba

    @numba.njit(error_model="numpy")
    def int32_sum(n):
        # int64 accumulation then one truncation == int32 wrap-around at every step
        total = 0
        for i in range(n):
            total += i
        return np.int32(total)

    return int32_sum


# --- dispatch overhead of a cached call on a scalar -----------------------------------


def staged_add_one(xnp, lax):
    def add_one(x):
        return x + 1.0

    return add_one


def numba_add_one():
    import numba

    @numba.njit(error_model="numpy")
    def add_one(x):
        return x + np.float32(1.0)

    return add_one


def _sizes(quick, full, small):
    return small if quick else full


CASES = [
    Case("selu", "selu",
         staged_selu, lambda q: (_rng().standard_normal(_sizes(q, 1_000_000, 1000)).astype(np.float32),),
         numba=numba_selu),
    Case("norm", "(X - X.mean(0)) / X.std(0)",
         staged_norm, lambda q: (_rng().standard_normal(_sizes(q, (10000, 10), (100, 10))).astype(np.float32),),
         numba=numba_norm),
    Case("softmax", "row softmax",
         staged_softmax, lambda q: (_rng().standard_normal(_sizes(q, (4096, 512), (16, 32))).astype(np.float32),),
         numba=numba_softmax),
    Case("mlp", "MLP 784-512-10 tanh",
         staged_mlp, lambda q: mlp_inputs(MLP_SIZES, _sizes(q, 128, 4)),
         numba=numba_mlp),
    Case("mlp_small", "MLP 32-64-10 tanh",
         staged_mlp, lambda q: mlp_inputs(MLP_SMALL_SIZES, _sizes(q, 128, 4)),
         numba=numba_mlp),
    Case("sum_arange", "sum(arange(n)), static",
         staged_sum_arange, lambda q: (_sizes(q, 10_000_000, 1000),),
         numpy=numpy_sum_arange, numba=numba_int32_sum, static_argnums=(0,)),
    Case("fori_sum", "fori_loop sum of i, traced",
         staged_fori_sum, lambda q: (np.int32(_sizes(q, 10_000_000, 1000)),),
         numpy=numpy_sum_arange, numba=numba_int32_sum,
         small_inputs=lambda q: (np.int32(_sizes(q, 100_000, 100)),)),
    Case("dispatch", "cached call of x + 1.0",
         staged_add_one, lambda q: (np.float32(1.0),), numba=numba_add_one),
]

BY_NAME = {c.name: c for c in CASES}
