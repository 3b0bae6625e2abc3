"""`linearize`: split a JVP into the part computed now and the linear part kept for later.

The JVP of the program is staged once; statements that do not depend on a tangent (the
primal computation and the coefficients of the linear map, e.g. `cos(x)` for `sin`) run now;
the rest, linear in the tangents, is replayed on each call of the returned function with
the saved values as residuals.
"""
import ast

from ..staging import replay
from . import forward
from . import zeros as Z


def linearize_program(program, args, diff):
    """Run the known part of `program`'s JVP now. Returns (outputs, linear) where
    `linear(tangents)` maps tangents of the inputs with `diff` set to output tangents."""
    n = len(args)
    diff_idx = [i for i, d in enumerate(diff) if d]
    in_avals = program.in_avals
    n_out = len(program.out_atoms)

    def jvp_fn(*xs):
        ts = [None] * n
        for k, i in enumerate(diff_idx):
            ts[i] = xs[n + k]
        outs, touts = forward.jvp_call(program, xs[:n], ts)
        return list(outs) + [Z.instantiate(t, a) for t, a in zip(touts, program.out_avals)]

    jp = replay.stage_program(jvp_fn, in_avals + [in_avals[i] for i in diff_idx], name=f"{program.name}_jvp")
    tangent_names = set(jp.in_names[n:])
    unknown = set(tangent_names)
    env = dict(zip(jp.in_names[:n], args))
    later = []
    for e in replay.equations(jp):
        if any(isinstance(a, ast.Name) and a.id in unknown for a in e.ins):
            unknown.update(e.outs)
            later.append(e)
            continue
        ins = [replay.atom_value(env, jp, a) for a in e.ins]
        env.update(zip(e.outs, replay.bind_eqn(jp, e, ins)))
    out_atoms = jp.out_atoms
    if any(isinstance(a, ast.Name) and a.id in unknown for a in out_atoms[:n_out]):
        outs, _ = replay.evaluate(program, list(args))  # a primal output inside a tangent loop
    else:
        outs = [replay.atom_value(env, jp, a) for a in out_atoms[:n_out]]

    def linear(tangents):
        local = dict(env)
        local.update(zip(jp.in_names[n:], tangents))
        for e in later:
            ins = [replay.atom_value(local, jp, a) for a in e.ins]
            local.update(zip(e.outs, replay.bind_eqn(jp, e, ins)))
        return [replay.atom_value(local, jp, a) for a in out_atoms[n_out:]]

    return outs, linear
