"""Exponentially scaled modified Bessel functions of order 0 and 1, `bessel_i0e` and
`bessel_i1e`, as compositions of lax operations: Cephes' Chebyshev expansions on |x| <= 8
(in x/2 - 2) and above (in 32/x - 2, divided by sqrt(x)). i0e uses Cephes' coefficients, the
shorter float32 set for float32 (as JAX); i1e has the same form with coefficients fitted once
to scipy.special.i1e by Chebyshev interpolation (relative error < 5e-14). float16/bfloat16
compute in float32. Both carry JAX's derivative rules. Imports core and lax only.
"""
import numpy as np

from .conveniences import full_like
from .custom_derivatives import with_jvp
from .elementwise import abs, add, convert_element_type, div, gt, le, mul, reciprocal, select, sign, sqrt, sub
from .gamma_functions import const

# Cephes' i0e Chebyshev coefficients, highest first (float32 uses the last 18 and 7, as JAX)
_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I0E_F32 = (_I0E_A[-18:], _I0E_B[-7:])
_I1E_A = (
    7.047032678763368e-15, -5.006439645468356e-14, 3.2207788026615986e-13,
    -1.9838001904782377e-12, 1.1736110540523076e-11, -6.663491748994074e-11,
    3.6255913042039205e-10, -1.8872498779295338e-09, 9.38153752729839e-09,
    -4.4450591412284463e-08, 2.0032947546331058e-07, -8.56872026543836e-07,
    3.4702513081999176e-06, -1.3273163656099299e-05, 4.781565107556757e-05,
    -0.00016176081582594128, 0.0005122859561686, -0.0015135724506312536, 0.004156422944312886,
    -0.010564084894626187, 0.024726449030626502, -0.05294598120809498, 0.10264365868984708,
    -0.176416518357834, 0.25258718644363365,
)
_I1E_B = (
    -2.0378435780948596e-15, -3.803974679110405e-15, 1.072533874578671e-14, 4.270268349452971e-14,
    -2.0772857118644377e-14, -4.083612103437866e-13, -7.19799950637797e-13, 2.035637740243302e-12,
    1.4125905123980949e-11, 3.252601696751275e-11, -1.897486261682209e-11, -5.58974359489209e-10,
    -3.835380383171146e-09, -2.6314688463345777e-08, -2.5122362381034764e-07,
    -3.882564808882786e-06, -0.00011058893876265452, -0.009761097491361477, 0.7785762350182801,
)


def chebyshev(y, coefficients):
    """Cephes' chbevl: a Chebyshev series in y/2 by Clenshaw's recurrence, highest first."""
    b0 = full_like(y, 0)
    b1 = b2 = b0
    for coefficient in coefficients:
        b2, b1 = b1, b0
        b0 = add(sub(mul(y, b1), b2), const(y, coefficient))
    return mul(sub(b0, b2), const(y, 0.5))


def _in_float32_or_wider(fn):
    def wrapped(x):
        dt = np.dtype(x.dtype)
        if dt in (np.float32, np.float64):
            return fn(x)
        return convert_element_type(fn(convert_element_type(x, np.float32)), dt)

    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


def _two_ranges(x, below_8, above_8):
    """(|x|, |x| <= 8, the series below 8 at |x|, the series above 8 over sqrt(|x|))."""
    ax = abs(x)
    small = le(ax, const(x, 8))
    safe = select(small, full_like(x, 8), ax)  # the large-|x| series is not evaluated (or valid) below 8
    below = chebyshev(sub(mul(ax, const(x, 0.5)), const(x, 2)), below_8)
    above = div(chebyshev(sub(div(const(x, 32), safe), const(x, 2)), above_8), sqrt(safe))
    return ax, small, below, above


@_in_float32_or_wider
def bessel_i0e_value(x):
    """exp(-|x|) I0(x)."""
    a, b = _I0E_F32 if np.dtype(x.dtype) == np.float32 else (_I0E_A, _I0E_B)
    _, small, below, above = _two_ranges(x, a, b)
    return select(small, below, above)


@_in_float32_or_wider
def bessel_i1e_value(x):
    """exp(-|x|) I1(x)."""
    ax, small, below, above = _two_ranges(x, _I1E_A, _I1E_B)
    return mul(sign(x), select(small, mul(below, ax), above))



def _i1e_dx(t, ans, x):
    """i1e' = i0e - i1e (sign(x) + 1/x), and 1/2 at 0 (JAX's rule, guarded near 0)."""
    eps = const(x, np.finfo(x.dtype).eps)
    not_tiny = gt(abs(x), eps)
    safe = select(not_tiny, x, full_like(x, eps))
    dy = sub(bessel_i0e_value(safe), mul(ans, add(sign(safe), reciprocal(safe))))
    return mul(t, select(not_tiny, dy, full_like(x, 0.5)))


bessel_i0e = with_jvp(bessel_i0e_value, lambda t, ans, x: mul(t, sub(bessel_i1e_value(x), mul(sign(x), ans))))
bessel_i1e = with_jvp(bessel_i1e_value, _i1e_dx)


__all__ = ["bessel_i0e", "bessel_i1e"]
