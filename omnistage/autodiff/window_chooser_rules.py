"""Derivative rules of the max/min window primitives (`lax/window_choosers.py`), as JAX's:
`reduce_window_max`'s tangent is `select_and_gather_add` of the tangent (each window's
tangent at the element it chose), its cotangent `select_and_scatter_add` (each window's
cotangent added at that element). Those two are linear in their first operand and each
other's transpose; the operand only chooses, so it gets no derivative. Imports lax and the
rule tables.
"""
from .rules import JVP, VJP, bind


def _gather(t, x, select_prim, params):
    return bind("select_and_gather_add", t, x, select_prim=select_prim, **params)


def _scatter(ct, x, select_prim, params):
    return bind("select_and_scatter_add", ct, x, select_prim=select_prim, **params)


def _reduce_rules(name, select_prim):
    def jvp(primals, tangents, out, **params):
        return _gather(tangents[0], primals[0], select_prim, params)

    def vjp(ct, ins, out, **params):
        return [lambda: _scatter(ct, ins[0], select_prim, params)]

    JVP[name], VJP[name] = jvp, vjp


_reduce_rules("reduce_window_max", "ge")
_reduce_rules("reduce_window_min", "le")


def _linear_rules(name, transpose):
    """`name`(t, x) is linear in t: its tangent applies it to t's tangent, its cotangent is
    `transpose`(ct, x); x gets none."""

    def jvp(primals, tangents, out, *, select_prim, **params):
        if tangents[0] is None:
            return None
        return bind(name, tangents[0], primals[1], select_prim=select_prim, **params)

    def vjp(ct, ins, out, *, select_prim, **params):
        return [lambda: transpose(ct, ins[1], select_prim, params), None]

    JVP[name], VJP[name] = jvp, vjp


_linear_rules("select_and_gather_add", _scatter)
_linear_rules("select_and_scatter_add", _gather)
