"""`lax.custom_root` and `lax.custom_linear_solve`, with JAX's API and JAX's implicit
differentiation: the solver itself is never differentiated.

`custom_root(f, x0, solve, tangent_solve)`: `x* = solve(f, x0)` with f(x*) = 0. The values f
closes over (made explicit with `closure_convert`) are what x* depends on; by the implicit
function theorem its tangent is `-tangent_solve(g, ∂f/∂θ[θ̇])`, `g` the linearization of f at
x* in x. A `custom_jvp`; reverse mode transposes that JVP (linear in the tangents, as long as
`tangent_solve` is linear in its right-hand side, as every linear solve is).

`custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False)`:
`x = solve(matvec, b)`. Its JVP is `solve(matvec, ḃ - ∂matvec/∂θ[θ̇](x))`; its transpose
(reverse mode) is `transpose_solve(vecmat, x̄)` (`solve` when symmetric), `vecmat` the transpose
of matvec: a `custom_vjp` solve wrapped in a `custom_jvp`, so iterative solvers with loops work
in both modes.

These need the autodiff layer, which lax may not import: `omnistage/__init__.py` adds them to
the `omnistage.lax` namespace.
"""
from .api_grad import jvp, linearize
from .api_transpose import linear_transpose
from .autodiff.custom import custom_jvp, custom_vjp
from .closures import closure_convert
from .core import tree_util
from .lax import elementwise as E
from .lax.stop_gradient import stop_gradient


def _check_same_tree(what, got, want_tree, where):
    tree = tree_util.tree_structure(got)
    if tree != want_tree:
        raise TypeError(f"{where}: {what} must have the structure of the initial guess / b ({want_tree}), got {tree}")


def _tree_neg(t):
    return tree_util.tree_map(E.neg, t)


def _tree_sub(a, b):
    return tree_util.tree_map(E.sub, a, b)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """A root of `f` found by `solve(f, initial_guess)` (-> solution, or (solution, aux) with
    has_aux), differentiable with respect to what `f` closes over by the implicit function
    theorem. `tangent_solve(g, y)` solves the linear `g(x) = y` (e.g. `lambda g, y: y / g(1.0)`
    for scalars)."""
    guess_tree = tree_util.tree_structure(initial_guess)
    f_conv, consts = closure_convert(f, initial_guess)
    _check_same_tree("f's output", f_conv(initial_guess, *consts), guess_tree, "custom_root")

    def f_with(consts):
        return lambda x: f_conv(x, *consts)

    def solve_with(x0, consts):
        out = solve(f_with(consts), x0)
        sol, aux = out if has_aux else (out, None)
        _check_same_tree("solve's solution", sol, guess_tree, "custom_root")
        return sol, aux

    @custom_jvp
    def root(x0, *consts):
        return solve_with(x0, consts)

    @root.defjvp
    def root_jvp(primals, tangents):
        x0, consts = primals[0], primals[1:]
        sol, aux = root(x0, *consts)
        if not consts:
            return (sol, aux), (_zeros_like(sol), _zeros_like(aux))
        _, rhs = jvp(lambda *c: f_conv(sol, *c), tuple(consts), tuple(tangents[1:]))
        _, g = linearize(f_with(consts), sol)
        sol_dot = _tree_neg(tangent_solve(g, rhs))
        return (sol, aux), (sol_dot, _zeros_like(aux))

    sol, aux = root(initial_guess, *consts)
    return (sol, aux) if has_aux else sol


def _zeros_like(tree):
    return tree_util.tree_map(lambda a: a * 0, tree)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """`x` with `matvec(x) = b`, computed by `solve(matvec, b)`, differentiated implicitly
    (see the module docstring); reverse mode uses `transpose_solve(vecmat, b)`, or `solve`
    when `symmetric`. With `has_aux`, `solve` returns (x, aux) and the result is (x, aux): aux is
    not differentiated (solve runs once more for it; under jit the two computations are merged
    where they coincide)."""
    b_tree = tree_util.tree_structure(b)
    if has_aux:  # solve -> (x, aux): x is differentiated implicitly, aux not at all (as JAX)
        def solve_x(matvec, rhs):
            return solve(matvec, rhs)[0]

        transpose_x = None if transpose_solve is None else (lambda vm, r: transpose_solve(vm, r)[0])
        x = custom_linear_solve(matvec, b, solve_x, transpose_x, symmetric)
        aux = tree_util.tree_map(stop_gradient, solve(matvec, b)[1])
        return x, aux
    mv_conv, consts = closure_convert(matvec, b)
    _check_same_tree("matvec's output", mv_conv(b, *consts), b_tree, "custom_linear_solve")

    def matvec_with(consts):
        return lambda v: mv_conv(v, *consts)

    def solve_rhs(rhs, consts):
        x = solve(matvec_with(consts), rhs)
        _check_same_tree("solve's solution", x, b_tree, "custom_linear_solve")
        return x

    def linear_solve_bwd(res, x_bar):
        rhs, consts = res
        if symmetric:
            return solve_rhs(x_bar, consts), None
        vecmat_t = linear_transpose(matvec_with(consts), rhs)
        rhs_bar = transpose_solve(lambda v: vecmat_t(v)[0], x_bar)
        _check_same_tree("transpose_solve's solution", rhs_bar, b_tree, "custom_linear_solve")
        return rhs_bar, None

    if transpose_solve is None and not symmetric:
        # JAX raises in reverse mode here; omnistage differentiates through `solve` itself,
        # which works whenever `solve` is differentiable (a direct solve, a fixed-count loop)
        linear_solve = solve_rhs
    else:
        linear_solve = custom_vjp(solve_rhs)  # rhs -> x is linear; its transpose solves with vecmat
        linear_solve.defvjp(lambda rhs, consts: (solve_rhs(rhs, consts), (rhs, consts)), linear_solve_bwd)

    @custom_jvp
    def solved(rhs, *consts):
        return linear_solve(rhs, tuple(consts))

    @solved.defjvp
    def solved_jvp(primals, tangents):
        rhs, consts = primals[0], tuple(primals[1:])
        x = solved(rhs, *consts)
        rhs_dot = tangents[0]
        if consts:  # the operator's own change: d(matvec)[θ̇](x) moves to the right-hand side
            _, mv_dot = jvp(lambda *c: mv_conv(x, *c), consts, tuple(tangents[1:]))
            rhs_dot = _tree_sub(rhs_dot, mv_dot)
        return x, linear_solve(rhs_dot, consts)

    return solved(b, *consts)


__all__ = ["custom_root", "custom_linear_solve"]
