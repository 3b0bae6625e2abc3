"""Offline fitting of the polynomial coefficients used by `vmath` (not imported at run time).

`fit(f, lo, hi, powers)` returns the coefficients c_k of sum(c_k * t**p_k) that minimise the
maximum relative error of approximating f on [lo, hi] (Lawson's iteratively reweighted least
squares, which converges to the minimax solution; evaluated at 60 significant digits with
mpmath). The `FITS` table below records how every coefficient tuple in `vmath/_kernels.py` was
produced; `python -m omnistage.codegen.vmath._fit NAME` reprints one of them so the numbers in
the source can be checked and regenerated.
"""
import sys

try:
    import mpmath as mp
except ImportError as e:  # a developer tool: the package never imports it at run time
    raise ImportError("omnistage.codegen.vmath._fit (the offline coefficient fitter) needs mpmath: "
                      "pip install mpmath, or the project's test extra") from e

mp.mp.dps = 60


def _chebyshev_nodes(lo, hi, n):
    return [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]


def fit(f, lo, hi, powers, relative=True, nodes=400, iterations=40):
    """Minimax-fit sum(c_k t**powers[k]) to f on [lo, hi]; returns (coeffs, max_error)."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    ts = _chebyshev_nodes(lo, hi, nodes)
    ys = [f(t) for t in ts]
    scale = [1 / abs(y) if relative and y != 0 else mp.mpf(1) for y in ys]
    weights = [mp.mpf(1)] * nodes
    for _ in range(iterations):
        a = mp.matrix([[mp.sqrt(w) * s * t**p for p in powers] for t, s, w in zip(ts, scale, weights)])
        b = mp.matrix([mp.sqrt(w) * s * y for y, s, w in zip(ys, scale, weights)])
        coeffs = mp.qr_solve(a, b)[0]
        errs = [abs(s * (sum(c * t**p for c, p in zip(coeffs, powers)) - y)) for t, y, s in zip(ts, ys, scale)]
        # Lawson: weights grow where the error is large, pushing toward equioscillation
        weights = [w * e for w, e in zip(weights, errs)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [coeffs[i] for i in range(len(powers))], max(errs)


def _em1_tail(r):  # (e^r - 1 - r) / r^2
    return (mp.expm1(r) - r) / r**2 if r != 0 else mp.mpf(1) / 2


def _log_tail(f):  # (log1p(f) - f + f^2/2) / f^3
    return (mp.log1p(f) - f + f**2 / 2) / f**3 if f != 0 else mp.mpf(1) / 3


def _exp2_tail(r):  # (2^r - 1) / r
    return mp.expm1(r * mp.log(2)) / r if r != 0 else mp.log(2)


def _sin_tail(a2):  # (sin(a) - a) / a^3 as a function of a^2
    a = mp.sqrt(a2)
    return (mp.sin(a) - a) / a**3 if a2 != 0 else -mp.mpf(1) / 6


def _cos_tail(a2):  # (cos(a) - 1 + a^2/2) / a^4 as a function of a^2
    a = mp.sqrt(a2)
    return (mp.cos(a) - 1 + a2 / 2) / a2**2 if a2 != 0 else mp.mpf(1) / 24


def _tanh_tail(x2):  # (tanh(x) - x) / x^3 as a function of x^2
    x = mp.sqrt(x2)
    return (mp.tanh(x) - x) / x**3 if x2 != 0 else -mp.mpf(1) / 3


def _erf_small(x2):  # erf(x) / x as a function of x^2
    x = mp.sqrt(x2)
    return mp.erf(x) / x if x2 != 0 else 2 / mp.sqrt(mp.pi)


def _erfc_scaled(x):  # erfc(x) * exp(x^2)
    return mp.erfc(x) * mp.exp(x * x)


def _atanh_tail(z):  # (2 atanh(s) - 2 s) / s^3 as a function of z = s^2
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / s**3 if z != 0 else mp.mpf(2) / 3


LN2_HALF = mp.log(2) / 2
SQRT2 = mp.sqrt(2)
SQRT_HALF = mp.sqrt(2) / 2
PI_4 = mp.pi / 4

# name: (function, lo, hi, powers, relative)
FITS = {
    "em1_f32": (_em1_tail, -LN2_HALF, LN2_HALF, range(6), True),
    "em1_f64": (_em1_tail, -LN2_HALF, LN2_HALF, range(12), True),
    "exp2_f32": (_exp2_tail, -0.5, 0.5, range(7), True),
    "exp2_f64": (_exp2_tail, -0.5, 0.5, range(12), True),
    "log_f32": (_log_tail, SQRT_HALF - 1, 2 * SQRT_HALF - 1, range(9), True),
    "atanh_f64": (_atanh_tail, 0, ((SQRT2 - 1) / (SQRT2 + 1))**2, range(8), True),
    "sin_f32": (_sin_tail, 0, PI_4**2, range(5), True),
    "cos_f32": (_cos_tail, 0, PI_4**2, range(5), True),
    "sin_f64": (_sin_tail, 0, PI_4**2, range(8), True),
    "cos_f64": (_cos_tail, 0, PI_4**2, range(8), True),
    "tanh_f32": (_tanh_tail, 0, 0.625**2, range(6), True),
    "erf_small_f32": (_erf_small, 0, 0.9**2, range(7), True),
    "erfc_f32": (_erfc_scaled, 0.85, 3.95, range(12), True),
}


def main(names):
    for name in names or FITS:
        f, lo, hi, powers, rel = FITS[name]
        coeffs, err = fit(f, lo, hi, list(powers), rel)
        print(f"{name}: max {'relative' if rel else 'absolute'} error {mp.nstr(err, 3)}")
        print("    (" + ", ".join(mp.nstr(c, 20) for c in coeffs) + ")")


if __name__ == "__main__":
    main(sys.argv[1:])
