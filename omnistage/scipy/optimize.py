"""`omnistage.scipy.optimize`, as `jax.scipy.optimize`: `minimize(fun, x0, args, method='BFGS')`
and the strong-Wolfe `line_search` it uses. A port of JAX's implementation (Apache-2.0,
jax/_src/scipy/optimize): the whole optimization is one `lax.while_loop` (line search and
zoom nested inside), so it jits, and the objective's gradient comes from `value_and_grad`."""
from typing import NamedTuple

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..api_grad import value_and_grad
from .promotion import promote_args_inexact

_dot = jnp.dot


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    dtype = jnp.result_type(a, fa, fpa, b, fb, c, fc)
    C = fpa
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.array([[dc ** 2, -db ** 2],
    [-dc ** 3, db ** 3]], dtype=dtype)
    d2 = jnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
    A, B = _dot(d1, d2) / denom

    radical = B * B - 3. * A * C
    xmin = a + (-B + jnp.sqrt(radical)) / (3. * A)

    return xmin


def _quadmin(a, fa, fpa, b, fb):
    D = fa
    C = fpa
    db = b - a
    B = (fb - D - C * db) / (db ** 2)
    xmin = a - C / (2. * B)
    return xmin


def _binary_replace(replace_bit, original_dict, new_dict, keys=None):
    if keys is None:
        keys = new_dict.keys()
    return {key: jnp.where(replace_bit, new_dict[key], original_dict[key])
                    for key in keys}


class _ZoomState(NamedTuple):
    done: object
    failed: object
    j: object
    a_lo: object
    phi_lo: object
    dphi_lo: object
    a_hi: object
    phi_hi: object
    dphi_hi: object
    a_rec: object
    phi_rec: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object
    nfev: object
    ngev: object


def _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, a_lo, phi_lo,
                    dphi_lo, a_hi, phi_hi, dphi_hi, g_0, pass_through):
    """
    Implementation of zoom. Algorithm 3.6 from Wright and Nocedal, 'Numerical
    Optimization', 1999, pg. 59-61. Tries cubic, quadratic, and bisection methods
    of zooming.
    """
    state = _ZoomState(
            done=False,
            failed=False,
            j=0,
            a_lo=a_lo,
            phi_lo=phi_lo,
            dphi_lo=dphi_lo,
            a_hi=a_hi,
            phi_hi=phi_hi,
            dphi_hi=dphi_hi,
            a_rec=(a_lo + a_hi) / 2.,
            phi_rec=(phi_lo + phi_hi) / 2.,
            a_star=1.,
            phi_star=phi_lo,
            dphi_star=dphi_lo,
            g_star=g_0,
            nfev=0,
            ngev=0,
    )
    delta1 = 0.2
    delta2 = 0.1

    def body(state):
        # Body of zoom algorithm. We use boolean arithmetic to avoid using jax.cond
        # so that it works on GPU/TPU.
        dalpha = (state.a_hi - state.a_lo)
        a = jnp.minimum(state.a_hi, state.a_lo)
        b = jnp.maximum(state.a_hi, state.a_lo)
        cchk = delta1 * dalpha
        qchk = delta2 * dalpha

        # This will cause the line search to stop, and since the Wolfe conditions
        # are not satisfied the minimization should stop too.
        threshold = jnp.where((np.finfo(dalpha.dtype).bits < 64), 1e-5, 1e-10)
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        # Cubmin is sometimes nan, though in this case the bounds check will fail.
        a_j_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
        state.phi_hi, state.a_rec, state.phi_rec)
        use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
        a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
        a_j_bisection = (state.a_lo + state.a_hi) / 2.
        use_bisection = (~use_cubic) & (~use_quad)

        a_j = jnp.where(use_cubic, a_j_cubic, state.a_rec)
        a_j = jnp.where(use_quad, a_j_quad, a_j)
        a_j = jnp.where(use_bisection, a_j_bisection, a_j)

        # TODO(jakevdp): should we use some sort of fixed-point approach here instead?
        phi_j, dphi_j, g_j = restricted_func_and_grad(a_j)
        phi_j = phi_j.astype(state.phi_lo.dtype)
        dphi_j = dphi_j.astype(state.dphi_lo.dtype)
        g_j = g_j.astype(state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1,
        ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        state = state._replace(
                **_binary_replace(
                        hi_to_j,
                        state._asdict(),
                        dict(
                                a_hi=a_j,
                phi_hi=phi_j,
                dphi_hi=dphi_j,
                a_rec=state.a_hi,
                phi_rec=state.phi_hi,
                        ),
                ),
        )

        # for termination
        state = state._replace(
                done=star_to_j | state.done,
                **_binary_replace(
                        star_to_j,
                        state._asdict(),
                        dict(
                                a_star=a_j,
                phi_star=phi_j,
                dphi_star=dphi_j,
                g_star=g_j,
                        )
                ),
        )
        state = state._replace(
                **_binary_replace(
                        hi_to_lo,
                        state._asdict(),
                        dict(
                                a_hi=state.a_lo,
                phi_hi=state.phi_lo,
                dphi_hi=state.dphi_lo,
                a_rec=state.a_hi,
                phi_rec=state.phi_hi,
                        ),
                ),
        )
        state = state._replace(
                **_binary_replace(
                        lo_to_j & ~hi_to_lo,
                        state._asdict(),
                        dict(
                                a_rec=state.a_lo,
                phi_rec=state.phi_lo,
                        ),
                ),
        )
        state = state._replace(
                **_binary_replace(
                        lo_to_j,
                        state._asdict(),
                        dict(
                                a_lo=a_j,
                phi_lo=phi_j,
                dphi_lo=dphi_j,
                        ),
                ),
        )
        state = state._replace(j=state.j + 1)
        # Choose higher cutoff for maxiter than Scipy as Jax takes longer to find
        # the same value - possibly floating point issues?
        state = state._replace(failed= state.failed | (state.j >= 30))
        return state

    state = lax.while_loop(lambda state: (~state.done) & (~pass_through) & (~state.failed),
    body,
    state)

    return state


class _LineSearchState(NamedTuple):
    done: object
    failed: object
    i: object
    a_i1: object
    phi_i1: object
    dphi_i1: object
    nfev: object
    ngev: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object


class _LineSearchResults(NamedTuple):
    """Results of line search.

    Parameters:
        failed: True if the strong Wolfe criteria were satisfied
        nit: integer number of iterations
        nfev: integer number of functions evaluations
        ngev: integer number of gradients evaluations
        k: integer number of iterations
        a_k: integer step size
        f_k: final function value
        g_k: final gradient value
        status: integer end status
    """
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4,
c2=0.9, maxiter=20):
    """Inexact line search that satisfies strong Wolfe conditions.

    Algorithm 3.5 from Wright and Nocedal, 'Numerical Optimization', 1999, pg. 59-61

    Args:
        fun: function of the form f(x) where x is a flat ndarray and returns a real
            scalar. The function should be composed of operations with vjp defined.
        x0: initial guess.
        pk: direction to search in. Assumes the direction is a descent direction.
        old_fval, gfk: initial value of value_and_gradient as position.
        old_old_fval: unused argument, only for scipy API compliance.
        maxiter: maximum number of iterations to search
        c1, c2: Wolfe criteria constant, see ref.

    Returns: LineSearchResults
    """
    xk, pk = promote_args_inexact(xk, pk)
    def restricted_func_and_grad(t):
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        dphi = jnp.real(_dot(g, pk))
        return phi, dphi, g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted_func_and_grad(0)
    else:
        phi_0 = old_fval
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = jnp.where(candidate_start_value > 1, 1.0, candidate_start_value)
    else:
        start_value = 1

    def wolfe_one(a_i, phi_i):
        # actually negation of W1
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):
        return jnp.abs(dphi_i) <= -c2 * dphi_0

    state = _LineSearchState(
            done=jnp.array(False, dtype=bool),
            failed=jnp.array(False, dtype=bool),
            # algorithm begins at 1 as per Wright and Nocedal, however Scipy has a
            # bug and starts at 0. See https://github.com/scipy/scipy/issues/12157
            i=1,
            a_i1=0.,
            phi_i1=phi_0,
            dphi_i1=dphi_0,
            nfev=1 if (old_fval is None or gfk is None) else 0,
            ngev=1 if (old_fval is None or gfk is None) else 0,
            a_star=0.,
            phi_star=phi_0,
            dphi_star=dphi_0,
            g_star=gfk,
    )

    def body(state):
        # no amax in this version, we just double as in scipy.
        # unlike original algorithm we do our next choice at the start of this loop
        a_i = jnp.where(state.i == 1, start_value, state.a_i1 * 2.)

        phi_i, dphi_i, g_i = restricted_func_and_grad(a_i)
        state = state._replace(nfev=state.nfev + 1,
        ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(restricted_func_and_grad,
        wolfe_one,
        wolfe_two,
        state.a_i1,
        state.phi_i1,
        state.dphi_i1,
        a_i,
        phi_i,
        dphi_i,
        gfk,
        ~star_to_zoom1)

        state = state._replace(nfev=state.nfev + zoom1.nfev,
        ngev=state.ngev + zoom1.ngev)

        zoom2 = _zoom(restricted_func_and_grad,
        wolfe_one,
        wolfe_two,
        a_i,
        phi_i,
        dphi_i,
        state.a_i1,
        state.phi_i1,
        state.dphi_i1,
        gfk,
        ~star_to_zoom2)

        state = state._replace(nfev=state.nfev + zoom2.nfev,
        ngev=state.ngev + zoom2.ngev)

        state = state._replace(
                done=star_to_zoom1 | state.done,
                failed=(star_to_zoom1 & zoom1.failed) | state.failed,
                **_binary_replace(
                        star_to_zoom1,
                        state._asdict(),
                        zoom1._asdict(),
                        keys=['a_star', 'phi_star', 'dphi_star', 'g_star'],
                ),
        )
        state = state._replace(
                done=star_to_i | state.done,
                **_binary_replace(
                        star_to_i,
                        state._asdict(),
                        dict(
                                a_star=a_i,
                phi_star=phi_i,
                dphi_star=dphi_i,
                g_star=g_i,
                        ),
                ),
        )
        state = state._replace(
                done=star_to_zoom2 | state.done,
                failed=(star_to_zoom2 & zoom2.failed) | state.failed,
                **_binary_replace(
                        star_to_zoom2,
                        state._asdict(),
                        zoom2._asdict(),
                        keys=['a_star', 'phi_star', 'dphi_star', 'g_star'],
                ),
        )
        state = state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)
        return state

    state = lax.while_loop(
        lambda state: (~state.done) & (state.i <= maxiter) & (~state.failed),
        body,
        state)

    status = jnp.where(
            state.failed,
            jnp.array(1),  # zoom failed
                    jnp.where(
                            state.i > maxiter,
                jnp.array(3),  # maxiter reached
                            jnp.array(0),  # passed (should be)
                    ),
    )
    # Step sizes which are too small causes the optimizer to get stuck with a
    # direction of zero in <64 bit mode - avoid with a floor on minimum step size.
    alpha_k = jnp.asarray(state.a_star)
    alpha_k = jnp.where((np.finfo(alpha_k.dtype).bits != 64)
                                        & (jnp.abs(alpha_k) < 1e-8),
                jnp.sign(alpha_k) * 1e-8,
                alpha_k)
    results = _LineSearchResults(
            failed=state.failed | (~state.done),
            nit=state.i - 1,  # because iterations started at 1
            nfev=state.nfev,
            ngev=state.ngev,
            k=state.i,
            a_k=alpha_k,
            f_k=state.phi_star,
            g_k=state.g_star,
            status=status,
    )
    return results


class _BFGSResults(NamedTuple):
    """Results from BFGS optimization.

    Parameters:
        converged: True if minimization converged.
        failed: True if line search failed.
        k: integer the number of iterations of the BFGS update.
        nfev: integer total number of objective evaluations performed.
        ngev: integer total number of jacobian evaluations
        nhev: integer total number of hessian evaluations
        x_k: array containing the last argument value found during the search. If
            the search converged, then this value is the argmin of the objective
            function.
        f_k: array containing the value of the objective function at `x_k`. If the
            search converged, then this is the (local) minimum of the objective
            function.
        g_k: array containing the gradient of the objective function at `x_k`. If
            the search converged the l2-norm of this tensor should be below the
            tolerance.
        H_k: array containing the inverse of the estimated Hessian.
        status: int describing end state.
        line_search_status: int describing line search end state (only means
            something if line search fails).
    """
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


_dot = jnp.dot
_einsum = jnp.einsum


def minimize_bfgs(
        fun,
        x0,
        maxiter=None,
        norm=np.inf,
        gtol: float=1e-5,
        line_search_maxiter: int=10,
):
    """Minimize a function using BFGS.

    Implements the BFGS algorithm from
        Algorithm 6.1 from Wright and Nocedal, 'Numerical Optimization', 1999, pg.
        136-143.

    Args:
        fun: function of the form f(x) where x is a flat ndarray and returns a real
            scalar. The function should be composed of operations with vjp defined.
        x0: initial guess.
        maxiter: maximum number of iterations.
        norm: order of norm for convergence check. Default inf.
        gtol: terminates minimization when |grad|_norm < g_tol.
        line_search_maxiter: maximum number of linesearch iterations.

    Returns:
        Optimization result.
    """

    if maxiter is None:
        maxiter = np.size(x0) * 200

    d = x0.shape[0]

    initial_H = jnp.eye(d, dtype=x0.dtype)
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(
            converged=jnp.linalg.norm(g_0, ord=norm) < gtol,
            failed=False,
            k=0,
            nfev=1,
            ngev=1,
            nhev=0,
            x_k=x0,
            f_k=f_0,
            g_k=g_0,
            H_k=initial_H,
            old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
            status=0,
            line_search_status=0,
    )

    def cond_fun(state):
        return (jnp.logical_not(state.converged)
                        & jnp.logical_not(state.failed)
                        & (state.k < maxiter))

    def body_fun(state):
        p_k = -_dot(state.H_k, state.g_k)
        line_search_results = line_search(
                fun,
                state.x_k,
                p_k,
                old_fval=state.f_k,
                old_old_fval=state.old_old_fval,
                gfk=state.g_k,
                maxiter=line_search_maxiter,
        )
        state = state._replace(
                nfev=state.nfev + line_search_results.nfev,
                ngev=state.ngev + line_search_results.ngev,
                failed=line_search_results.failed,
                line_search_status=line_search_results.status,
        )
        s_k = line_search_results.a_k * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = line_search_results.f_k
        g_kp1 = line_search_results.g_k
        y_k = g_kp1 - state.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))

        sy_k = s_k[:, np.newaxis] * y_k[np.newaxis, :]
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * sy_k
        H_kp1 = (_einsum('ij,jk,lk', w, state.H_k, w)
                          + rho_k * s_k[:, np.newaxis] * s_k[np.newaxis, :])
        H_kp1 = jnp.where(jnp.isfinite(rho_k), H_kp1, state.H_k)
        converged = jnp.linalg.norm(g_kp1, ord=norm) < gtol

        state = state._replace(
                converged=converged,
                k=state.k + 1,
                x_k=x_kp1,
                f_k=f_kp1,
                g_k=g_kp1,
                H_k=H_kp1,
                old_old_fval=state.f_k,
        )
        return state

    state = lax.while_loop(cond_fun, body_fun, state)
    status = jnp.where(
            state.converged,
            0,  # converged
            jnp.where(
                    state.k == maxiter,
                    1,  # max iters reached
                    jnp.where(
                            state.failed,
                2 + state.line_search_status, # ls failed (+ reason)
                            -1,  # undefined
                    )
            )
    )
    state = state._replace(status=status)
    return state


class OptimizeResults(NamedTuple):
    """Object holding optimization results.

    Parameters:
        x: final solution.
        success: ``True`` if optimization succeeded.
        status: integer solver specific return code. 0 means converged (nominal),
            1=max BFGS iters reached, 3=zoom failed, 4=saddle point reached,
            5=max line search iters reached, -1=undefined
        fun: final function value.
        jac: final jacobian array.
        hess_inv: final inverse Hessian estimate.
        nfev: integer number of function calls used.
        njev: integer number of gradient evaluations.
        nit: integer number of iterations of the optimization algorithm.
    """
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize a scalar function of one 1-D array (JAX's `jax.scipy.optimize.minimize`).

    `method` must be 'BFGS'; `options` are BFGS's (`maxiter`, `norm`, `gtol`,
    `line_search_maxiter`); `tol` is accepted and unused, as in JAX. Returns OptimizeResults.
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to omnistage.scipy.optimize.minimize must be a tuple, got {args!r}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized: omnistage.scipy.optimize.minimize supports 'BFGS'.")
    results = minimize_bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(
        x=results.x_k, success=results.converged & jnp.logical_not(results.failed), status=results.status,
        fun=results.f_k, jac=results.g_k, hess_inv=results.H_k, nfev=results.nfev, njev=results.ngev,
        nit=results.k,
    )


__all__ = ["OptimizeResults", "line_search", "minimize"]
