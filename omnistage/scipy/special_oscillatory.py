"""`jax.scipy.special`'s oscillatory integrals and Bessel functions: `sici` (the sine and cosine
integrals: Cephes' rational forms below 4, its auxiliary functions f, g up to 1e9 and the
leading asymptotic term above, as JAX's), `fresnel` (Cephes' fresnl, the float32 fresnlf
coefficients for float32 and half precision, with an exact argument reduction of pi x**2 / 2,
as JAX's) and `bessel_jn` (J_0..J_v of real z by Miller's backward recurrence normalised by
J_0 + 2 (J_2 + J_4 + ...) = 1, n_iter steps, as JAX's). All are compositions of whole-array lax
operations with JAX's derivative rules. Imports numpy, lax and this package's promotion rules.
"""
import math
import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..autodiff.custom import custom_jvp
from .promotion import promote_args_inexact as _inexact


def _real_float(name, x):
    """x as a real floating array (integers become the default float); complex raises, as JAX."""
    (x,) = _inexact(x)
    if np.dtype(x.dtype).kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs (got {x.dtype}); pass the real part.")
    return x


def _poly(coefficients, x):
    """Horner's rule with Python-float coefficients, highest degree first."""
    p = jnp.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        p = p * x + np.asarray(c, x.dtype)
    return p


# --- sici -------------------------------------------------------------------------------

# Cephes sici.c: Si = x SN(x^2)/SD(x^2), Ci = gamma + log x + x^2 CN(x^2)/CD(x^2) on [0, 4]
_SN = (-8.39167827910303881427E-11, 4.62591714427012837309E-8, -9.75759303843632795789E-6,
       9.76945438170435310816E-4, -4.13470316229406538752E-2, 1.00000000000000000302E0)
_SD = (2.03269266195951942049E-12, 1.27997891179943299903E-9, 4.41827842801218905784E-7,
       9.96412122043875552487E-5, 1.42085239326149893930E-2, 9.99999999999999996984E-1)
_CN = (2.02524002389102268789E-11, -1.35249504915790756375E-8, 3.59325051419993077021E-6,
       -4.74007206873407909465E-4, 2.89159652607555242092E-2, -1.00000000000000000080E0)
_CD = (4.07746040061880559506E-12, 3.06780997581887812692E-9, 1.23210355685883423679E-6,
       3.17442024775032769882E-4, 5.10028056236446052392E-2, 4.00000000000000000080E0)
# the auxiliary functions f = FN/(x FD), g = z GN/GD in z = 1/x^2, on (4, 8) and [8, 1e9]
_FN4 = (4.23612862892216586994E0, 5.45937717161812843388E0, 1.62083287701538329132E0,
        1.67006611831323023771E-1, 6.81020132472518137426E-3, 1.08936580650328664411E-4,
        5.48900223421373614008E-7)
_FD4 = (1, 8.16496634205391016773E0, 7.30828822505564552187E0, 1.86792257950184183883E0,
        1.78792052963149907262E-1, 7.01710668322789753610E-3, 1.10034357153915731354E-4,
        5.48900252756255700982E-7)
_GN4 = (8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1,
        7.48527737628469092119E-2, 5.38868681462177273157E-3, 1.61999794598934024525E-4,
        1.97963874140963632189E-6, 7.82579040744090311069E-9)
_GD4 = (1, 1.64402202413355338886E0, 6.66296701268987968381E-1, 9.88771761277688796203E-2,
        6.22396345441768420760E-3, 1.73221081474177119497E-4, 2.02659182086343991969E-6,
        7.82579218933534490868E-9)
_FN8 = (4.55880873470465315206E-1, 7.13715274100146711374E-1, 1.60300158222319456320E-1,
        1.16064229408124407915E-2, 3.49556442447859055605E-4, 4.86215430826454749482E-6,
        3.20092790091004902806E-8, 9.41779576128512936592E-11, 9.70507110881952024631E-14)
_FD8 = (1.0, 9.17463611873684053703E-1, 1.78685545332074536321E-1, 1.22253594771971293032E-2,
        3.58696481881851580297E-4, 4.92435064317881464393E-6, 3.21956939101046018377E-8,
        9.43720590350276732376E-11, 9.70507110881952025725E-14)
_GN8 = (6.97359953443276214934E-1, 3.30410979305632063225E-1, 3.84878767649974295920E-2,
        1.71718239052347903558E-3, 3.48941165502279436777E-5, 3.47131167084116673800E-7,
        1.70404452782044526189E-9, 3.85945925430276600453E-12, 3.14040098946363334640E-15)
_GD8 = (1.0, 1.68548898811011640017E0, 4.87852258695304967486E-1, 4.67913194259625806320E-2,
        1.90284426674399523638E-3, 3.68475504442561108162E-5, 3.57043223443740838771E-7,
        1.72693748966316146736E-9, 3.87830166023954706752E-12, 3.14040098946363335242E-15)


def _sici_value(x):
    ax = jnp.abs(x)
    near = ax <= 4
    mid = (ax > 4) & (ax <= 1e9)
    # each branch sees a safe argument, so the discarded ones stay finite
    xs = jnp.where(near & (ax > 0), ax, jnp.ones_like(ax))
    t = xs * xs
    si_near = jnp.where(ax == 0, jnp.zeros_like(ax), xs * _poly(_SN, t) / _poly(_SD, t))
    ci_near = jnp.where(ax == 0, jnp.full_like(ax, -np.inf), np.euler_gamma + jnp.log(xs) + t * _poly(_CN, t) / _poly(_CD, t))
    xm = jnp.where(mid, ax, jnp.full_like(ax, 6.0))
    z = 1 / (xm * xm)
    below_8 = xm < 8
    f = jnp.where(below_8, _poly(_FN4, z) / (xm * _poly(_FD4, z)), _poly(_FN8, z) / (xm * _poly(_FD8, z)))
    g = jnp.where(below_8, z * _poly(_GN4, z) / _poly(_GD4, z), z * _poly(_GN8, z) / _poly(_GD8, z))
    s, c = jnp.sin(xm), jnp.cos(xm)
    si_mid, ci_mid = math.pi / 2 - f * c - g * s, f * s - g * c
    xf = jnp.where(near | mid, jnp.full_like(ax, 2e9), ax)
    finite = xf != np.inf
    si_far = jnp.where(finite, math.pi / 2 - jnp.cos(xf) / xf, jnp.full_like(ax, math.pi / 2))
    ci_far = jnp.where(finite, jnp.sin(xf) / xf, jnp.zeros_like(ax))
    si = jnp.where(near, si_near, jnp.where(mid, si_mid, si_far))
    ci = jnp.where(near, ci_near, jnp.where(mid, ci_mid, ci_far))
    return jnp.sign(x) * si, jnp.where(x == -np.inf, jnp.full_like(x, np.nan), ci)


_sici = custom_jvp(_sici_value)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    """Si' = sin(x)/x (1 at 0), Ci' = cos(x)/x (JAX's rule)."""
    (x,), (t,) = primals, tangents
    safe = jnp.where(x == 0, jnp.ones_like(x), x)
    return _sici(x), (t * jnp.where(x == 0, jnp.ones_like(x), jnp.sin(safe) / safe), t * jnp.cos(x) / x)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): Si = integral of sin(t)/t from 0 to x,
    Ci = gamma + log|x| + integral of (cos(t) - 1)/t from 0 to x (the real part for x < 0, as
    SciPy's; NaN at -inf)."""
    return _sici(_real_float("sici", x))


# --- fresnel ----------------------------------------------------------------------------

# Cephes fresnl.c (float64) and fresnlf (float32: polynomials only, no denominators)
_FRESNEL = {
    np.dtype("float64"): dict(
        sn=(-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
            2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11),
        sd=(1.0, 2.81376268889994315696e2, 4.55847810806532581675e4, 5.17343888770096400730e6,
            4.19320245898111231129e8, 2.24411795645340920940e10, 6.07366389490084639049e11),
        cn=(-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
            1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1),
        cd=(3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
            1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
            1.00000000000000000118e0),
        fn=(4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
            3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
            1.02304514164907233465e-10, 1.72010743268161828879e-13, 1.34283276233062758925e-16,
            3.76329711269987889006e-20),
        fd=(1.0, 7.51586398353378947175e-1, 1.16888925859191382142e-1, 6.44051526508858611005e-3,
            1.55934409164153020873e-4, 1.84627567348930545870e-6, 1.12699224763999035261e-8,
            3.60140029589371370404e-11, 5.88754533621578410010e-14, 4.52001434074129701496e-17,
            1.25443237090011264384e-20),
        gn=(5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
            6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
            4.45344415861750144738e-10, 1.08268041139020870318e-12, 1.37555460633261799868e-15,
            8.36354435630677421531e-19, 1.86958710162783235106e-22),
        gd=(1.0, 1.47495759925128324529e0, 3.37748989120019970451e-1, 2.53603741420338795122e-2,
            8.14679107184306179049e-4, 1.27545075667729118702e-5, 1.04314589657571990585e-7,
            4.60680728146520428211e-10, 1.10273215066240270757e-12, 1.38796531259578871258e-15,
            8.39158816283118707363e-19, 1.86958710162783236342e-22)),
    np.dtype("float32"): dict(
        sn=(1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6, -3.120693124703272e-4,
            7.244727626597022e-3, -9.228055941124598e-2, 5.235987735681432e-1),
        cn=(1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5, -1.604381798862293e-3,
            2.818489036795073e-2, -2.467398198317899e-1, 9.999999760004487e-1),
        fn=(-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9, 7.343848463587323e7,
            -8.732356681548485e5, 8.560515466275470e3, -1.032877601091159e2, 2.999401847870011e0),
        gn=(-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8, 6.492611570598858e6,
            -7.787789623358162e4, 8.602931494734327e2, -1.493439396592284e1, 9.999841934744914e-1)),
}


def _ratio(k, numerator, x):
    """numerator(x) / denominator(x) where the float64 table has one, else the polynomial alone."""
    denominator = k.get(numerator[0] + "d")
    top = _poly(k[numerator], x)
    return top if denominator is None else top / _poly(denominator, x)


def sincos_pi_x2_half(x):
    """(sin(pi x**2 / 2), cos(pi x**2 / 2)) with the argument reduced exactly mod 2 first:
    with s = x mod 2, x**2/2 = s (x - s/2) mod 2 (SciPy's sinpi/cospi, as JAX's)."""
    x = jnp.abs(x)
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s / 2), 2.0)
    sin = jnp.where(r < 0.5, jnp.sin(math.pi * r),
                    jnp.where(r > 1.5, jnp.sin(math.pi * (r - 2.0)), -jnp.sin(math.pi * (r - 1.0))))
    cos = jnp.where(r == 0.5, jnp.zeros_like(r),
                    jnp.where(r < 1.0, -jnp.sin(math.pi * (r - 0.5)), jnp.sin(math.pi * (r - 1.5))))
    return sin, cos


def _fresnel_value(xx):
    k = _FRESNEL[np.dtype(xx.dtype)]
    single = np.dtype(xx.dtype) == np.float32
    x = jnp.abs(xx)
    x2 = x * x
    t = x2 * x2
    s_small = x * x2 * _ratio(k, "sn", t)
    c_small = x * _ratio(k, "cn", t)
    sin, cos = sincos_pi_x2_half(x)
    xl = jnp.where(x == 0, jnp.ones_like(x), x)  # the large/other forms divide by x
    if single:
        s_large = c_large = jnp.full_like(x, 0.5)
    else:
        c_large = 0.5 + sin / (math.pi * xl)
        s_large = 0.5 - cos / (math.pi * xl)
    pt = math.pi * xl * xl
    u = 1 / (pt * pt)
    f = 1 - u * _ratio(k, "fn", u)
    g = _ratio(k, "gn", u) / pt
    c_other = 0.5 + (f * sin - g * cos) / (math.pi * xl)
    s_other = 0.5 - (f * cos + g * sin) / (math.pi * xl)
    small, large, inf = x2 < 2.5625, x > 36974.0, jnp.isinf(xx)
    half = jnp.full_like(x, 0.5)
    s = jnp.where(inf, half, jnp.where(small, s_small, jnp.where(large, s_large, s_other)))
    c = jnp.where(inf, half, jnp.where(small, c_small, jnp.where(large, c_large, c_other)))
    negative = xx < 0
    return jnp.where(negative, -s, s), jnp.where(negative, -c, c)


_fresnel = custom_jvp(_fresnel_value)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    """S' = sin(pi x**2 / 2), C' = cos(pi x**2 / 2) (JAX's rule)."""
    (x,), (t,) = primals, tangents
    sin, cos = sincos_pi_x2_half(x)
    return _fresnel(x), (t * sin, t * cos)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)): the integrals of sin(pi t**2 / 2) and cos(pi t**2 / 2)
    from 0 to x (Cephes' approximations, accurate on [-10, 10] and beyond; float16/bfloat16
    compute in float32, as JAX's)."""
    x = _real_float("fresnel", x)
    dt = np.dtype(x.dtype)
    if dt not in _FRESNEL:
        s, c = _fresnel(x.astype(np.float32))
        return s.astype(dt), c.astype(dt)
    return _fresnel(x)


# --- bessel_jn --------------------------------------------------------------------------


_RESCALE_ABOVE = 2.0 ** 64  # float32 overflows near 2**128; one step grows by at most 2 (k+1) / |z|


def _bessel_jn_values(z, v, n_iter):
    """Miller's algorithm: f_k = 2 (k+1) f_{k+1} / z - f_{k+2} from f_{n_iter+1} = 1e-16,
    f_{n_iter+2} = 0 down to k = 0, then J_k = f_k / (f_0 + 2 (f_2 + f_4 + ...)), as JAX's.
    Beyond JAX: where |f| passes 2**64 the running values are scaled down by 2**-64 (exact)
    and each f_k remembers how many times, so small |z| does not overflow to NaN in float32."""
    at_zero = z == 0
    zs = jnp.where(at_zero, jnp.ones_like(z), z)
    down = np.asarray(1 / _RESCALE_ABOVE, z.dtype)

    def step(carry, k):
        f0, f1, total, scalings = carry
        f = 2 * (k + 1) * f1 / zs - f0
        total = total + jnp.where(jnp.fmod(k, 2) == 0, 2 * f, jnp.zeros_like(f))
        big = jnp.abs(f) > _RESCALE_ABOVE
        f, f1, total = (jnp.where(big, a * down, a) for a in (f, f1, total))
        scalings = scalings + big.astype(z.dtype)
        return (f1, f, total, scalings), (f, scalings)

    zero = jnp.zeros_like(z)
    init = (zero, jnp.full_like(z, 1e-16), zero, zero)
    ks = jnp.arange(n_iter, -1, -1, dtype=z.dtype)  # the recurrence runs downwards
    (_, _, total, scalings), (fs, fs_scalings) = lax.scan(step, init, ks)
    fs, fs_scalings = jnp.flip(fs, axis=0)[: v + 1], jnp.flip(fs_scalings, axis=0)[: v + 1]  # [k] = f_k
    fs = fs * jnp.exp2((fs_scalings - scalings) * 64.0)  # into the frame of the final total
    j = fs / (total - fs[0])
    exact_at_zero = (jnp.arange(v + 1) == 0).astype(z.dtype).reshape((v + 1,) + (1,) * z.ndim)
    return jnp.where(at_zero, exact_at_zero, j)


def bessel_jn(z, *, v, n_iter=50):
    """Bessel functions of the first kind J_0(z), ..., J_v(z) of real z, as an array of shape
    (v + 1, *z.shape) (Zhang and Jin's backward recurrence, as JAX's; n_iter steps, enough for
    |z| up to about n_iter / 2 - see JAX's docstring for the rule of thumb)."""
    try:
        v = operator.index(v)
        n_iter = operator.index(n_iter)
    except TypeError:
        raise TypeError(f"bessel_jn: v and n_iter must be Python integers (static), got v={v!r}, n_iter={n_iter!r}; "
                        "mark them static under jit (static_argnames).") from None
    if v < 0 or n_iter < v:
        raise ValueError(f"bessel_jn: need 0 <= v <= n_iter, got v={v}, n_iter={n_iter}.")
    z = _real_float("bessel_jn", z)
    return _bessel_jn_values(z, v, n_iter)


__all__ = ["sici", "fresnel", "bessel_jn"]
