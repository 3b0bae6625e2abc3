"""Reverse mode by direct adjoints: replay the primal, then walk it backwards.

`vjp_forward(program, primals, active)` binds the primal statements (keeping every value in
a `Tape`) and marks which variables depend on the active inputs. `vjp_backward(tape, cts)`
visits the statements in reverse; for each one with a nonzero output cotangent and an active
input it binds the primitive's VJP rule at the primal statement's line, marked `(vjp)`, and
adds the results into the inputs' cotangents. Inactive inputs (integers, constants, values
that do not depend on what is differentiated) never get an adjoint statement.
"""
import ast

from ..core import primitive as core_primitive
from ..core.source_info import located
from ..staging import replay
from . import rules
from . import zeros as Z
from .errors import missing_rule


class Tape:
    """What the backward walk needs: the program, every primal value, the active set and
    the residuals of primitives with a forward rule."""

    __slots__ = ("program", "env", "active", "res")

    def __init__(self, program, env, active, res):
        self.program, self.env, self.active, self.res = program, env, active, res


def vjp_forward(program, primals, active_inputs):
    """Replay `program` on `primals`; `active_inputs[i]`: input i is differentiated."""
    active = {
        n for n, a in zip(program.in_names, active_inputs)
        if a and Z.is_differentiable(program.avals[n])
    }
    res = {}

    def rule(prog, e, ins):
        if not any(isinstance(a, ast.Name) and a.id in active for a in e.ins):
            return None
        active.update(o for o in e.outs if Z.is_differentiable(prog.avals[o]))
        fwd = rules.FWD.get(e.prim)
        if fwd is None:
            return None
        with located(getattr(e.stmt, "loc", None)):
            outs, res[id(e.stmt)] = fwd(ins, **replay.body_params(prog, e.params))
        return list(outs)

    outs, env = replay.evaluate(program, list(primals), rule)
    return outs, Tape(program, env, active, res)


def vjp_backward(tape, cts_out):
    """Cotangents of the program's inputs (None: zero) given its outputs' (None: zero)."""
    program, env, active = tape.program, tape.env, tape.active
    ct = {}
    for atom, c in zip(program.out_atoms, cts_out):
        if c is not None and isinstance(atom, ast.Name) and atom.id in active:
            ct[atom.id] = Z.add(ct.get(atom.id), Z.fit(c, program.avals[atom.id]))
    for e in reversed(replay.equations(program)):
        cts = [ct.pop(o, None) for o in e.outs]
        if all(c is None for c in cts):
            continue
        needs = [isinstance(a, ast.Name) and a.id in active for a in e.ins]
        if not any(needs):
            continue
        with located(getattr(e.stmt, "loc", None), "vjp"):
            for name, c in _adjoints(program, env, tape.res, e, cts, needs):
                ct[name] = Z.add(ct.get(name), Z.fit(c, program.avals[name]))
    return [ct.get(n) for n in program.in_names]


def _adjoints(program, env, res, e, cts, needs):
    """(input name, cotangent) for each input of `e` that needs one and gets a nonzero."""
    vjp = rules.VJP.get(e.prim)
    if vjp is None:
        raise missing_rule("VJP", e)
    multiple = core_primitive.registry[e.prim].multiple_results
    ins = [replay.atom_value(env, program, a) for a in e.ins]
    outs = [env[o] for o in e.outs]
    params = replay.body_params(program, e.params)
    extra = (res[id(e.stmt)],) if id(e.stmt) in res else ()
    got = vjp(cts if multiple else cts[0], ins, outs if multiple else outs[0], *extra, **params)
    out = []
    for atom, need, c in zip(e.ins, needs, got):
        if need:
            c = rules.forced(c)
            if c is not None:
                out.append((atom.id, c))
    return out
