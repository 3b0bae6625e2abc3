"""The rest of jax.nn's functions (glu, hard_sigmoid/silu/swish, log1mexp, logmeanexp, mish,
sparse_plus/sigmoid, squareplus, identity, tanh, dot_product_attention) against NumPy
formulas; log1mexp's derivative against its closed form."""
import numpy as np

import omnistage as jax
from omnistage import nn

X = np.linspace(-3, 3, 13)


def _softplus(x):
    return np.log1p(np.exp(x))


def test_activations_match_numpy(x64):
    relu6 = lambda x: np.minimum(np.maximum(x, 0), 6)  # noqa: E731
    cases = {
        nn.hard_sigmoid: relu6(X + 3) / 6, nn.hard_silu: X * relu6(X + 3) / 6, nn.hard_swish: X * relu6(X + 3) / 6,
        nn.mish: X * np.tanh(_softplus(X)), nn.squareplus: (X + np.sqrt(X * X + 4)) / 2,
        nn.sparse_plus: np.where(X <= -1, 0, np.where(X >= 1, X, (X + 1) ** 2 / 4)),
        nn.sparse_sigmoid: 0.5 * np.clip(X + 1, 0, 2), nn.tanh: np.tanh(X), nn.identity: X,
    }
    for fun, want in cases.items():
        np.testing.assert_allclose(np.asarray(fun(X)), want, rtol=1e-12, atol=1e-15)
    a = np.arange(12.0).reshape(3, 4) - 5
    np.testing.assert_allclose(np.asarray(nn.glu(a)), a[:, :2] / (1 + np.exp(-a[:, 2:])), rtol=1e-12)
    pos = np.abs(X) + 0.01
    np.testing.assert_allclose(np.asarray(nn.log1mexp(pos)), np.log(-np.expm1(-pos)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(nn.log1mexp))(pos)), 1 / np.expm1(pos), rtol=1e-10)
    m = X.reshape(13, 1) * np.arange(3)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(m, axis=0)), np.log(np.mean(np.exp(m), axis=0)), rtol=1e-12)


def _attention(q, k, v, mask, scale):
    groups = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, groups, axis=2), np.repeat(v, groups, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    logits = np.where(mask, logits, -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", w, v)


def test_dot_product_attention_matches_the_formula(x64):
    rs = np.random.RandomState(0)
    q, k, v = rs.randn(2, 5, 4, 8), rs.randn(2, 6, 2, 8), rs.randn(2, 6, 2, 8)
    full = np.ones((2, 4, 5, 6), bool)
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k, v)), _attention(q, k, v, full, 1 / np.sqrt(8)), rtol=1e-10)
    mask = rs.rand(2, 4, 5, 6) > 0.3
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k, v, mask=mask, scale=0.5)), _attention(q, k, v, mask, 0.5), rtol=1e-10)
    causal = np.broadcast_to(np.tril(np.ones((5, 5), bool)), (2, 4, 5, 5))
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k[:, :5], v[:, :5], is_causal=True)),
                               _attention(q, k[:, :5], v[:, :5], causal, 1 / np.sqrt(8)), rtol=1e-10)
