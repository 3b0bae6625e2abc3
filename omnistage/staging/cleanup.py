"""Clean-up passes over Programs (Program -> Program), run before code generation.

Owns dead-code elimination; common-subexpression elimination and algebraic simplification
of what passes introduce come next to it. `make_jaxpr` shows the staged program as traced
(omnistaging: nothing dropped); `jit` runs these passes before compiling.
"""
import ast
import copy

from .convert import all_names
from .program import Program, body_refs, eqn, is_eqn

# Primitives kept even when their results are unused (side effects, e.g. debug printing).
EFFECTFUL = set()


def dce(program):
    """A copy of `program` without statements whose results are never used."""
    fn = copy.deepcopy(program.fn)
    fn.body = _dce_body(fn.body)
    live_names = all_names(fn)
    avals = {k: v for k, v in program.avals.items() if k in live_names}
    consts = {k: v for k, v in program.consts.items() if k in live_names}
    return Program(fn, avals, consts, program.debug_name)


def _dce_body(body):
    ret = body[-1]
    live = {n.id for n in ast.walk(ret) if isinstance(n, ast.Name)}
    live_bodies = set()
    kept = [ret]
    for stmt in reversed(body[:-1]):
        if isinstance(stmt, ast.FunctionDef):
            if stmt.name in live_bodies:
                stmt.body = _dce_body(stmt.body)
                kept.append(stmt)
            continue
        if not is_eqn(stmt):
            kept.append(stmt)
            live |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
            continue
        e = eqn(stmt)
        if e.prim in EFFECTFUL or any(o in live for o in e.outs):
            kept.append(stmt)
            live |= {a.id for a in e.ins if isinstance(a, ast.Name)}
            live_bodies |= {str(r) for r in body_refs(e.params)}
    kept.reverse()
    return kept

