"""The derivative rule tables and the helpers that fill them.

    JVP[name](primals, tangents, out, **params) -> tangent_out
        `tangents[i]` is None where the tangent is a symbolic zero (at least one is not);
        `out` is the primal output, already staged by the pass (so primal statements keep
        the user's line and names). For primitives with multiple results, `out` and
        `tangent_out` are lists (a None entry: zero tangent).
    JVP_JOINT[name](primals, tangents, **params) -> (out, tangent_out)
        for primitives whose tangent cannot reuse the primal statement (control flow: the
        tangent is carried through the same loop), the rule stages both.
    VJP[name](cts, ins, outs, **params) -> [ct_in per input]
        `cts` is the output cotangent (a list for multiple results, None entries zero);
        `ins`/`outs` are the primal values. Each entry of the result is None (zero, or not
        differentiable), a value, or a zero-argument callable computing it: reverse mode
        calls it only for inputs that need a cotangent, so unused adjoints are never staged.
    FWD[name](ins, **params) -> (outs, res)   (optional)
        replaces the primal statement in reverse mode when the adjoint needs values the
        primal does not compute (a scan's per-iteration carries); VJP then gets `res`:
        VJP[name](cts, ins, outs, res, **params).

Rules are plain Python over `omnistage.lax`; both modes stage them like user code. A
primitive whose outputs are all non-float (comparisons, integer ops) needs no rule.
Helpers derive both rules from a short definition:
    `def_partials(name, *d)`   elementwise, d[i](*ins, out, **params) = d out / d in_i
    `def_linear(name, transpose)` linear in its one operand: jvp applies it to the tangent
    `def_zero(name)`           float outputs with zero derivative (floor, round, sign)
"""
from ..core import primitive as core_primitive
from ..core.array import aval_of
from ..lax import elementwise as lax_ew
from . import zeros as Z

JVP = {}
JVP_JOINT = {}
VJP = {}
FWD = {}


def prim(name):
    return core_primitive.registry[name]


def bind(name, *args, **params):
    return core_primitive.registry[name].bind(*args, **params)


def has_rules(name):
    return (name in JVP or name in JVP_JOINT) and name in VJP


def forced(ct):
    """The value of a rule's cotangent entry (calling it when it is deferred)."""
    return ct() if callable(ct) and not hasattr(ct, "aval") else ct


# --- elementwise: partial derivatives ---------------------------------------------------


def def_partials(name, *partials):
    """Elementwise primitive `name` with partials[i](*ins, out, **params) the derivative of the output
    with respect to input i (None: no derivative, e.g. an integer operand)."""
    def jvp(primals, tangents, out, **params):
        terms = [
            lax_ew.mul(t, d(*primals, out, **params))
            for t, d in zip(tangents, partials)
            if t is not None and d is not None
        ]
        return Z.fit(Z.add_all(terms), aval_of(out))

    def vjp(ct, ins, out, **params):
        return [
            None if d is None else (lambda d=d, x=x: Z.fit(lax_ew.mul(ct, d(*ins, out, **params)), aval_of(x)))
            for d, x in zip(partials, ins)
        ]

    JVP[name], VJP[name] = jvp, vjp


def def_linear(name, transpose):
    """`name` is linear in its single operand: tangent = name(t); cotangent =
    transpose(ct, x, **params)."""
    p = prim(name)

    def jvp(primals, tangents, out, **params):
        return p.bind(tangents[0], **params)

    def vjp(ct, ins, out, **params):
        return [lambda: transpose(ct, ins[0], **params)]

    JVP[name], VJP[name] = jvp, vjp


def def_zero(name):
    """Float outputs that are locally constant (floor, round, sign): zero derivative."""
    multiple = prim(name).multiple_results

    def jvp(primals, tangents, out, **params):
        return [None] * len(out) if multiple else None

    JVP[name] = jvp
    VJP[name] = lambda ct, ins, out, **params: [None] * len(ins)


def def_jvp(name):
    def register(fn):
        JVP[name] = fn
        return fn

    return register


def def_vjp(name):
    def register(fn):
        VJP[name] = fn
        return fn

    return register
