"""NumPy's polynomial, histogram, window and calculus helpers as JAX has them: `poly*`,
`roots`, `vander`, `interp`, `digitize`, `bincount`, `histogram*`, window functions,
`trapezoid`, `gradient`, `unwrap`, `cov`, `corrcoef`.

All are compositions of this package's functions. Where NumPy's result shape depends on the
values (`bincount` without `length`, `roots` with leading zeros, `trim` options) the shape
must be static, as in JAX: `length=`, `strip_zeros=False`. Imports core, lax and this
package's public functions only.
"""
import numpy as np

from ..core import dtypes


def _jnp():
    from .. import numpy as jnp  # noqa: PLC0415 - this package imports this module

    return jnp


def _inexact(*args):
    jnp = _jnp()
    arrays = [jnp.asarray(a) for a in args]
    dt = dtypes.to_inexact(jnp.result_type(*arrays))
    return [a.astype(dt) if a.dtype != dt else a for a in arrays]


# --- polynomials (coefficients highest degree first) ----------------------------------------


def polyval(p, x, *, unroll=16):
    """p[0] x**(n-1) + ... + p[n-1] by Horner's rule."""
    jnp = _jnp()
    p, x = jnp.asarray(p), jnp.asarray(x)
    dt = jnp.result_type(p, x)
    y = jnp.zeros_like(x, dtype=dt)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def polyadd(a1, a2):
    jnp = _jnp()
    a1, a2 = jnp.atleast_1d(a1), jnp.atleast_1d(a2)
    n = max(a1.shape[0], a2.shape[0])
    return jnp.pad(a1, (n - a1.shape[0], 0)) + jnp.pad(a2, (n - a2.shape[0], 0))


def polysub(a1, a2):
    return polyadd(a1, -_jnp().asarray(a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    jnp = _jnp()
    a1, a2 = jnp.atleast_1d(a1), jnp.atleast_1d(a2)
    if a1.shape[0] == 0 or a2.shape[0] == 0:
        return jnp.zeros(1, jnp.result_type(a1, a2))
    return jnp.convolve(a1, a2, mode="full")


def polyder(p, m=1):
    jnp = _jnp()
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    (p,) = _inexact(p)
    for _ in range(m):
        n = p.shape[0] - 1
        if n <= 0:
            return jnp.zeros(1, p.dtype) if n == 0 else p
        p = p[:-1] * np.arange(n, 0, -1).astype(p.dtype)
    return p


def polyint(p, m=1, k=None):
    jnp = _jnp()
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    (p,) = _inexact(p)
    k = np.zeros(m) if k is None else np.atleast_1d(np.asarray(k))
    if k.shape[0] == 1 and m > 1:
        k = np.repeat(k, m)
    for i in range(m):
        n = p.shape[0]
        p = jnp.concatenate([p / np.arange(n, 0, -1).astype(p.dtype), jnp.asarray([k[i]], dtype=p.dtype)])
    return p


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial division (v's leading coefficient must be nonzero)."""
    jnp = _jnp()
    u, v = _inexact(u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = jnp.zeros(max(m - n + 1, 1), u.dtype)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    return q, r[max(m - n + 1, 0):] if m >= n else r


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (or a matrix's eigenvalues)."""
    jnp = _jnp()
    (a,) = _inexact(seq_of_zeros)
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] > 0:
        a = jnp.linalg.eigvals(a)
    elif a.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    coefficients = jnp.ones(1, a.dtype)
    for i in range(a.shape[0]):
        coefficients = jnp.convolve(coefficients, jnp.stack([jnp.ones((), a.dtype), -a[i]]), mode="full")
    return coefficients


def roots(p, *, strip_zeros=True):
    """Roots of the polynomial (eigenvalues of its companion matrix). With strip_zeros (the
    default) the coefficients must be concrete, leading/trailing zeros being removed."""
    jnp = _jnp()
    p = jnp.atleast_1d(p)
    if strip_zeros:
        values = np.asarray(p)
        nz = np.nonzero(values)[0]
        if nz.size == 0:
            return jnp.zeros(0, dtypes.complex_dtype(dtypes.to_inexact(p.dtype)))
        trailing = len(values) - nz[-1] - 1
        p = p[nz[0]:nz[-1] + 1]
        found = _companion_roots(p, jnp)
        return jnp.concatenate([found, jnp.zeros(trailing, found.dtype)]) if trailing else found
    return _companion_roots(p, jnp)


def _companion_roots(p, jnp):
    (p,) = _inexact(p)
    n = p.shape[0] - 1
    if n < 1:
        return jnp.zeros(0, dtypes.complex_dtype(p.dtype))
    companion = jnp.diag(jnp.ones(n - 1, p.dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return jnp.linalg.eigvals(companion)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit (coefficients highest degree first)."""
    jnp = _jnp()
    x, y = _inexact(x, y)
    order = int(deg) + 1
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = jnp.asarray(w, dtype=x.dtype)
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))
    c, resids, rank, s = jnp.linalg.lstsq(lhs / scale, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if cov:
        raise NotImplementedError("polyfit(cov=True) is not supported.")
    return c


def vander(x, N=None, increasing=False):  # noqa: N803 - NumPy's argument name
    """Columns x**(N-1), ..., x**0 (or increasing)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = x.shape[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    return jnp.power(x[:, None], powers.astype(x.dtype) if dtypes.is_inexact(x.dtype) else powers)


# --- interpolation, binning, histograms ----------------------------------------------------


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x (xp increasing)."""
    jnp = _jnp()
    x, xp, fp = _inexact(x, xp, fp)
    if period is not None:
        period = jnp.abs(period)
        x = x % period
        xp = xp % period
        order = jnp.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = jnp.concatenate([fp[-1:], fp, fp[:1]])
    i = jnp.clip(jnp.searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    safe = jnp.where(dx == 0, jnp.ones_like(dx), dx)
    f = jnp.where(dx == 0, fp[i], fp[i - 1] + (delta / safe) * (fp[i] - fp[i - 1]))
    if period is None:
        f = jnp.where(x < xp[0], fp[0] if left is None else left, f)
        f = jnp.where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin each x falls in (bins increasing or decreasing)."""
    jnp = _jnp()
    x, bins = jnp.asarray(x), jnp.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return jnp.zeros(x.shape, dtype=jnp.int32)
    side = "left" if right else "right"
    increasing = np.asarray(bins[-1] >= bins[0]) if not _traced(bins) else True
    if increasing:
        return jnp.searchsorted(bins, x, side=side).astype(jnp.int32)
    return (bins.shape[0] - jnp.searchsorted(bins[::-1], x, side=side)).astype(jnp.int32)


def _traced(x):
    from ..core.tracer import Tracer  # noqa: PLC0415

    return isinstance(x, Tracer)


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative integer in x; `length` (static) must be
    given when x is traced, else it is max(x) + 1 (at least minlength)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    if not dtypes.is_integer(x.dtype) and x.dtype != np.bool_:
        raise TypeError(f"bincount: x argument must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    if length is None:
        if _traced(x):
            raise ValueError("bincount of a traced array needs a static length= (the result's size).")
        length = max(int(np.max(np.asarray(x), initial=-1)) + 1, minlength)
    length = max(int(length), minlength)
    w = jnp.ones(x.shape, dtypes.default_int_dtype()) if weights is None else jnp.asarray(weights)
    return jnp.zeros(length, w.dtype).at[jnp.clip(x, 0)].add(w, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    jnp = _jnp()
    if not isinstance(bins, (int, np.integer)):
        return _inexact(bins)[0]
    (a,) = _inexact(a)
    if range is None:
        lo, hi = jnp.min(a), jnp.max(a)
    else:
        lo, hi = (jnp.asarray(r, dtype=a.dtype) for r in range)
    same = lo == hi
    lo = jnp.where(same, lo - 0.5, lo)
    hi = jnp.where(same, hi + 0.5, hi)
    return jnp.linspace(lo, hi, int(bins) + 1, dtype=a.dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, bin_edges); the last bin includes its right edge, as NumPy's."""
    jnp = _jnp()
    a = jnp.ravel(_inexact(a)[0])
    edges = histogram_bin_edges(a, bins, range, weights)
    n = edges.shape[0] - 1
    index = jnp.searchsorted(edges, a, side="right") - 1
    index = jnp.where(a == edges[-1], n - 1, index)
    inside = (index >= 0) & (index < n)
    w = jnp.ones_like(a) if weights is None else jnp.ravel(jnp.asarray(weights, dtype=a.dtype))
    counts = jnp.zeros(n, w.dtype).at[jnp.where(inside, index, n)].add(jnp.where(inside, w, 0), mode="drop")
    if density:
        counts = counts / (jnp.sum(counts) * jnp.diff(edges))
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Multidimensional histogram of sample (N, D): (counts, list of edges)."""
    jnp = _jnp()
    (sample,) = _inexact(sample)
    if sample.ndim != 2:
        sample = jnp.reshape(sample, (sample.shape[0], -1)) if sample.ndim > 2 else sample[:, None]
    d = sample.shape[1]
    bins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    ranges = [None] * d if range is None else list(range)
    edges = [histogram_bin_edges(sample[:, i], bins[i], ranges[i]) for i in builtin_range(d)]
    sizes = [e.shape[0] - 1 for e in edges]
    flat = jnp.zeros((), jnp.int32)
    inside = jnp.ones(sample.shape[0], bool)
    for i in builtin_range(d):
        col, e, n = sample[:, i], edges[i], sizes[i]
        idx = jnp.searchsorted(e, col, side="right") - 1
        idx = jnp.where(col == e[-1], n - 1, idx)
        inside = inside & (idx >= 0) & (idx < n)
        flat = flat * n + jnp.clip(idx, 0, n - 1)
    w = jnp.ones(sample.shape[0], sample.dtype) if weights is None else jnp.asarray(weights, dtype=sample.dtype)
    total = int(np.prod(sizes))
    counts = jnp.zeros(total, w.dtype).at[jnp.where(inside, flat, total)].add(w, mode="drop").reshape(sizes)
    if density:
        counts = counts / jnp.sum(counts)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = sizes[i]
            counts = counts / jnp.diff(e).reshape(shape)
    return counts, edges


builtin_range = range


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    jnp = _jnp()
    counts, edges = histogramdd(jnp.stack([jnp.asarray(x), jnp.asarray(y)], axis=1), bins, range, weights, density)
    return counts, edges[0], edges[1]


# --- windows -------------------------------------------------------------------------------


def _window(M, fn):  # noqa: N803
    jnp = _jnp()
    dt = dtypes.default_float_dtype()
    if M < 1:
        return jnp.zeros(0, dt)
    if M == 1:
        return jnp.ones(1, dt)
    n = jnp.arange(M, dtype=dt)
    return fn(n, M, jnp)


def bartlett(M):  # noqa: N803
    return _window(M, lambda n, M, jnp: 1 - jnp.abs(2 * n / (M - 1) - 1))


def blackman(M):  # noqa: N803
    return _window(M, lambda n, M, jnp: 0.42 - 0.5 * jnp.cos(2 * np.pi * n / (M - 1)) + 0.08 * jnp.cos(4 * np.pi * n / (M - 1)))


def hamming(M):  # noqa: N803
    return _window(M, lambda n, M, jnp: 0.54 - 0.46 * jnp.cos(2 * np.pi * n / (M - 1)))


def hanning(M):  # noqa: N803
    return _window(M, lambda n, M, jnp: 0.5 - 0.5 * jnp.cos(2 * np.pi * n / (M - 1)))


def kaiser(M, beta):  # noqa: N803
    def fn(n, M, jnp):
        alpha = (M - 1) / 2.0
        return jnp.i0(beta * jnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / jnp.i0(jnp.asarray(beta, dtype=n.dtype))

    return _window(M, fn)


# --- calculus and statistics ------------------------------------------------------------


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y by the trapezoidal rule along axis."""
    jnp = _jnp()
    (y,) = _inexact(y)
    y = jnp.moveaxis(y, axis, -1)
    if x is None:
        d = jnp.asarray(dx, dtype=y.dtype)
    else:
        x = jnp.asarray(x, dtype=y.dtype)
        d = jnp.diff(x) if x.ndim == 1 else jnp.diff(jnp.moveaxis(x, axis, -1), axis=-1)
    return jnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1) * 0.5


def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order at the edges (NumPy's default)."""
    jnp = _jnp()
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("gradient: only edge_order=1 is supported.")
    (f,) = _inexact(f)
    axes = tuple(builtin_range(f.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(a % f.ndim for a in axes)
    spacings = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacings) == 1 and len(axes) > 1:
        spacings = spacings * len(axes)
    out = []
    for ax, h in zip(axes, spacings):
        g = jnp.moveaxis(f, ax, -1)
        if g.shape[-1] < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements are required.")
        h = jnp.asarray(h, dtype=f.dtype)
        if h.ndim == 0:
            inner = (g[..., 2:] - g[..., :-2]) / (2 * h)
            first = (g[..., 1:2] - g[..., :1]) / h
            last = (g[..., -1:] - g[..., -2:-1]) / h
        else:
            dx = jnp.diff(h)
            a = -dx[1:] / (dx[:-1] * (dx[:-1] + dx[1:]))
            b = (dx[1:] - dx[:-1]) / (dx[:-1] * dx[1:])
            c = dx[:-1] / (dx[1:] * (dx[:-1] + dx[1:]))
            inner = a * g[..., :-2] + b * g[..., 1:-1] + c * g[..., 2:]
            first = (g[..., 1:2] - g[..., :1]) / dx[0]
            last = (g[..., -1:] - g[..., -2:-1]) / dx[-1]
        out.append(jnp.moveaxis(jnp.concatenate([first, inner, last], axis=-1), -1, ax))
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """p with jumps larger than discont (default period/2) undone by multiples of period."""
    jnp = _jnp()
    (p,) = _inexact(p)
    dd = jnp.diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    half = period / 2
    ddmod = jnp.mod(dd + half, period) - half
    ddmod = jnp.where((ddmod == -half) & (dd > 0), half, ddmod)
    correction = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
    first = jnp.take(p, np.array([0]), axis=axis)
    rest = jnp.take(p, np.arange(1, p.shape[axis]), axis=axis) + jnp.cumsum(correction, axis=axis)
    return jnp.concatenate([first, rest], axis=axis)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables (rows, unless rowvar=False)."""
    jnp = _jnp()
    (m,) = _inexact(m)
    x = jnp.atleast_2d(m)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        (y,) = _inexact(y)
        y = jnp.atleast_2d(y)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = jnp.concatenate([x, y], axis=0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    w = None
    if fweights is not None:
        w = jnp.asarray(fweights, dtype=x.dtype)
    if aweights is not None:
        a = jnp.asarray(aweights, dtype=x.dtype)
        w = a if w is None else w * a
    if w is None:
        avg = jnp.mean(x, axis=1)
        fact = x.shape[1] - ddof
        xc = x - avg[:, None]
        c = xc @ jnp.conj(xc.T)
    else:
        w_sum = jnp.sum(w)
        avg = jnp.sum(x * w, axis=1) / w_sum
        fact = w_sum - ddof if aweights is None else w_sum - ddof * jnp.sum(w * jnp.asarray(aweights, x.dtype)) / w_sum
        xc = x - avg[:, None]
        c = (xc * w) @ jnp.conj(xc.T)
    c = c / fact
    return jnp.squeeze(c) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients (clipped to [-1, 1] for real input)."""
    jnp = _jnp()
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = jnp.diag(c)
    s = jnp.sqrt(jnp.real(d))
    c = c / s[:, None] / s[None, :]
    return c if dtypes.is_complex(c.dtype) else jnp.clip(c, -1, 1)


__all__ = [
    "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv", "poly", "roots", "polyfit",
    "vander", "interp", "digitize", "bincount", "histogram_bin_edges", "histogram", "histogramdd", "histogram2d",
    "bartlett", "blackman", "hamming", "hanning", "kaiser", "trapezoid", "gradient", "unwrap", "cov", "corrcoef",
]
