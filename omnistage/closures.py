"""Functions that close over traced values, made explicit: `closure_convert` and
`custom_gradient`, with JAX's API.

`closure_convert(f, *example_args)` stages `f` on the example arguments' avals; the values of
an enclosing trace it closes over (captures) that could carry a derivative (inexact dtypes)
become explicit trailing arguments of the returned function, which replays the staged program.
`custom_gradient(f)`, where `f(*args) -> (out, vjp_rule)`, is a `custom_vjp` whose forward
pass stages `vjp_rule` on the output's avals and keeps the values the rule closes over as
residuals; the backward pass replays the staged rule on them and the cotangents.
"""
import functools
import inspect

from .autodiff.custom import custom_vjp
from .core import tree_util
from .core.array import aval_of
from .core.aval import ShapedArray
from .core.errors import add_location
from .core.source_info import describe_here
from .core.tracer import Tracer
from .lax import control_flow as CF
from .lax._rules import to_operand
from .staging import replay
from .staging.convert import convert


def _may_carry_derivative(x):
    """JAX hoists only what could be perturbed: traced values of inexact dtype."""
    return isinstance(x, Tracer) and x.aval.dtype.kind in "fc"


def closure_convert(fun, *example_args):
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)` for arguments
    with the example arguments' structure, shapes and dtypes; `consts` are the traced
    floating-point values `fun` closes over (empty outside a transformation)."""
    leaves, in_tree = tree_util.tree_flatten(example_args)
    avals = [aval_of(to_operand(x)) for x in leaves]
    target = convert(fun)
    staged = CF.stage_body(lambda *xs: target(*tree_util.tree_unflatten(in_tree, list(xs))), tuple(avals),
                           "closure_convert")
    hoisted = [_may_carry_derivative(t) for t in staged.captures]
    kept = [t for t, h in zip(staged.captures, hoisted) if not h]
    consts = [t for t, h in zip(staged.captures, hoisted) if h]

    def converted(*args_and_consts):
        n_args = len(args_and_consts) - len(consts)
        args, const_values = args_and_consts[:n_args], args_and_consts[n_args:]
        flat, tree = tree_util.tree_flatten(tuple(args))
        if tree != in_tree:
            raise add_location(TypeError(
                f"The inputs to the closure produced by closure_convert must have the same pytree "
                f"structure as the example arguments passed when closure_convert was called. "
                f"Expected {in_tree}, but got {tree}"), describe_here())
        it_kept, it_const = iter(kept), iter(const_values)
        captured = [next(it_const) if h else next(it_kept) for h in hoisted]
        outs, _ = replay.evaluate(staged.program, [to_operand(x) for x in flat] + captured)
        return tree_util.tree_unflatten(staged.out_tree, outs)

    functools.update_wrapper(converted, fun)
    return converted, consts


def custom_gradient(fun):
    """`fun(*args) -> (out, vjp)` with `vjp(cotangent of out) -> cotangents of args` (a tuple,
    or one value when `fun` has one argument) becomes a function computing `out` whose reverse-mode
    derivative is `vjp`. As in JAX it has no forward mode (jvp raises)."""

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        n_args = len(args) + len(kwargs)
        target = convert(fun)  # Python control flow on traced values, as in jit
        box = {}

        def primal(*xs):
            return _pair(fun, target(*xs))[0]

        def fwd(*xs):
            out, rule = _pair(fun, target(*xs))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            ct_avals = tuple(ShapedArray(a.shape, a.dtype) for a in (aval_of(to_operand(x)) for x in out_leaves))
            box["rule"] = CF.stage_body(
                lambda *cts: rule(tree_util.tree_unflatten(out_tree, list(cts))), ct_avals,
                f"{getattr(fun, '__name__', 'fun')} vjp rule")
            return out, list(box["rule"].captures)

        def bwd(residuals, ct):
            rule = box["rule"]
            outs, _ = replay.evaluate(rule.program, tree_util.tree_leaves(ct) + list(residuals))
            cts = tree_util.tree_unflatten(rule.out_tree, outs)
            if tree_util.treedef_is_leaf(rule.out_tree) or n_args == 1 and not isinstance(cts, tuple):
                cts = (cts,)
            return tuple(cts)

        primal.__name__ = getattr(fun, "__name__", "custom_gradient")
        try:  # custom_vjp binds keyword arguments to positions through this signature
            primal.__signature__ = inspect.signature(fun)
        except (TypeError, ValueError):
            pass
        with_rule = custom_vjp(primal)
        with_rule.defvjp(fwd, bwd)
        return with_rule(*args, **kwargs)

    return wrapped


def _pair(fun, got):
    if not (isinstance(got, (tuple, list)) and len(got) == 2 and callable(got[1])):
        raise add_location(TypeError(
            f"custom_gradient: {getattr(fun, '__name__', fun)} must return a pair (output, vjp function), "
            f"got {type(got).__name__}"), describe_here())
    return got


__all__ = ["closure_convert", "custom_gradient"]
