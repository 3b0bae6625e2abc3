"""Replay a Program statement by statement through `bind`: the engine of every pass.

`evaluate(program, args)` binds each primitive of `program` to the values in an environment,
so the statements land in whatever trace is innermost (a StagingTrace: they are restaged
into a new Program; none: they run eagerly). Passes (`autodiff`, `vectorize`) hand it a
`rule(e, ins)` hook that may bind something else instead of the primitive; each staged
statement keeps the location of the statement it came from (with the pass's role), so
derived programs print the user's `file:line`.

`stage_program(fn, in_avals, ...)` stages a flat function into a closure-free Program (the
bodies of control-flow statements a pass rewrites).

`without_effects()`: replays inside it leave out effectful statements (debug prints), in
bodies too: a pass that evaluates a body again only to recompute values (reverse mode's
recomputation of a loop step or a branch) must not print a second time.
"""
import ast
import contextlib
import copy

from ..core import primitive as core_primitive
from ..core.source_info import located
from ..core.thread_local import ThreadLocalStack
from . import literals
from .program import Program, eqn, is_eqn, map_body_params
from .ast_walk import walk

_quiet = ThreadLocalStack()  # non-empty inside `without_effects()` (of this thread)


@contextlib.contextmanager
def without_effects():
    _quiet.append(True)
    try:
        yield
    finally:
        _quiet.pop()


def _without_effects(program):
    """`program` without its effectful statements, at every depth (itself if it has none)."""
    def effectful(stmt):
        return is_eqn(stmt) and eqn(stmt).prim in core_primitive.EFFECTFUL

    if not any(effectful(s) for s in walk(program.fn)):
        return program
    fn = copy.deepcopy(program.fn)
    for node in walk(fn):
        if isinstance(node, ast.FunctionDef):
            node.body = [s for s in node.body if not effectful(s)]
    return Program(fn, program.avals, program.consts, program.debug_name)


def atom_value(env, program, node):
    """The value of an atom: a variable in `env`, a constant, or a typed literal."""
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        return program.consts[node.id]
    return literals.literal_value(node)


def body_params(program, params):
    """`params` with every BodyRef replaced by the nested body as a Program."""
    return map_body_params(params, program.subprogram)


def equations(program):
    """The primitive statements of `program`'s top-level body as Eqn views."""
    return [eqn(s) for s in program.fn.body if is_eqn(s)]


def bind_eqn(program, e, ins, role=None):
    """Bind `e`'s primitive to `ins` at `e`'s location; always returns a list of outputs."""
    prim = core_primitive.registry[e.prim]
    params = body_params(program, e.params)
    if _quiet:
        params = {k: _without_effects(v) if isinstance(v, Program) else
                  tuple(_without_effects(b) if isinstance(b, Program) else b for b in v) if isinstance(v, tuple) else v
                  for k, v in params.items()}
    with located(getattr(e.stmt, "loc", None), role):
        out = prim.bind(*ins, **params)
    return list(out) if prim.multiple_results else [out]


def evaluate(program, args, rule=None, env=None):
    """Run `program` on `args` by binding; returns (outputs, env).

    `rule(program, e, ins)` may return the list of outputs for eqn `e` (or None to bind the
    primitive itself). `env` maps variable names to values and is returned for passes that
    need the intermediate values (reverse mode)."""
    env = {} if env is None else env
    in_names = program.in_names
    if len(args) != len(in_names):
        raise TypeError(f"program {program.name} takes {len(in_names)} arguments, got {len(args)}")
    env.update(zip(in_names, args))
    quiet = bool(_quiet.items)  # read once: eager vmap and grad replay a program every call
    consts = program.consts
    for e in equations(program):
        if quiet and e.prim in core_primitive.EFFECTFUL:
            continue  # its result (a token) is never read
        # atom_value inlined: a variable, else a constant, else a typed literal
        ins = [(env[a.id] if a.id in env else consts[a.id]) if a.__class__ is ast.Name else literals.literal_value(a)
               for a in e.ins]
        outs = rule(program, e, ins) if rule is not None else None
        if outs is None:
            outs = bind_eqn(program, e, ins)
        env.update(zip(e.outs, outs))
    return [atom_value(env, program, a) for a in program.out_atoms], env


def evaluate_annotated(program, args, notes, rule):
    """Run `program` with a note beside each value (a tangent, a batch dimension; None: no
    note). `rule(program, e, ins, in_notes)` returns None to bind `e` as it is (its outputs
    get no notes) or (outputs, output notes). Returns (outputs, output notes)."""
    env = {name: n for name, n in zip(program.in_names, notes) if n is not None}

    def note_of(atom):
        return env.get(atom.id) if isinstance(atom, ast.Name) else None

    def hook(prog, e, ins):
        got = rule(prog, e, ins, [note_of(a) for a in e.ins])
        if got is None:
            return None
        outs, out_notes = got
        env.update((name, n) for name, n in zip(e.outs, out_notes) if n is not None)
        return outs

    outs, _ = evaluate(program, list(args), hook)
    return outs, [note_of(a) for a in program.out_atoms]


def stage_program(fn, in_avals, labels=None, name="body"):
    """Stage the flat function `fn(*tracers) -> list of values` into a closure-free Program.

    Values `fn` closes over that belong to an enclosing live trace are an error: a pass's
    bodies must take everything as arguments."""
    from ..lax._rules import to_operand
    from .trace import DebugInfo, stage

    def flat(*xs):
        return [to_operand(o) for o in fn(*xs)]

    flat.__name__ = name
    program, trace = stage(flat, in_avals, labels, DebugInfo(flat, name), name)
    if trace.captures:
        raise AssertionError(f"{name}: a pass's body captured values of an enclosing trace")
    return program
