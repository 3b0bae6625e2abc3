"""Forward mode: replay a Program with tangents beside every differentiable value.

`jvp_call(program, primals, tangents)` binds each primal statement as it is (same line,
same names) and, where an input has a nonzero tangent, the primitive's JVP rule right after
it, at the same user line marked `(jvp)`. Tangents are symbolic zeros (None) until
something nonzero flows in, so untouched parts of the program cost nothing.
"""
from ..core import primitive as core_primitive
from ..core.source_info import located
from ..staging import replay
from . import rules
from . import zeros as Z
from .errors import missing_rule


def jvp_call(program, primals, tangents):
    """Run `program` on `primals` with `tangents` (None: zero) in the current context.

    Returns (outputs, output tangents) as lists; a None output tangent is zero."""

    def rule(prog, e, ins, ts):
        return None if all(t is None for t in ts) else _jvp_eqn(prog, e, ins, ts)

    return replay.evaluate_annotated(program, primals, tangents, rule)


def _jvp_eqn(prog, e, ins, ts):
    loc = getattr(e.stmt, "loc", None)
    params = replay.body_params(prog, e.params)
    multiple = core_primitive.registry[e.prim].multiple_results
    joint = rules.JVP_JOINT.get(e.prim)
    if joint is not None:
        with located(loc, "jvp"):
            outs, touts = joint(ins, ts, **params)
        return (list(outs), list(touts)) if multiple else ([outs], [touts])
    outs = replay.bind_eqn(prog, e, ins)
    out_avals = [prog.avals[o] for o in e.outs]
    if not any(Z.is_differentiable(a) for a in out_avals):
        return outs, [None] * len(outs)
    jvp = rules.JVP.get(e.prim)
    if jvp is None:
        raise missing_rule("JVP", e)
    with located(loc, "jvp"):
        touts = jvp(ins, ts, outs if multiple else outs[0], **params)
    touts = list(touts) if multiple else [touts]
    return outs, [t if Z.is_differentiable(a) else None for t, a in zip(touts, out_avals)]
