"""The NumPy interpreter: run a Program's source with each primitive bound to its NumPy
implementation. Used by eager `grad`/`vmap` and, until a code generator is plugged in, `jit`.
"""
import ast

import numpy as np

from ..core import memory_limit
from ..core import primitive as core_primitive
from . import literals
from .program import eqn, is_eqn, map_body_params
from .ast_walk import walk


def _impl_namespace():
    # Warnings are silenced once per program run (below), so the per-op wrappers that do
    # the same for eager calls (`__wrapped__`) are skipped here.
    ns = {name: getattr(prim.impl, "__wrapped__", prim.impl) for name, prim in core_primitive.registry.items()}
    ns["np"] = np
    return ns


def compile_program(program):
    """A Python function running `program` on NumPy arrays (cached on the program)."""
    if program._compiled is None:
        check_sizes(program)  # an array bigger than the machine: say which statement
        ns = _impl_namespace()
        ns.update(program.consts)
        src = program.source(with_header=False, with_locs=False)
        code = compile(src, f"<omnistage program {program.name}>", "exec")
        exec(code, ns)  # noqa: S102 - our own generated source
        fn = ns[program.name]

        def run(*args):
            with np.errstate(all="ignore"):
                return fn(*args)

        program._compiled = run
    return program._compiled


def check_sizes(program):
    """Raise IntermediateTooLargeError for the first statement of `program` (nested bodies
    included) whose result is larger than this machine's memory, naming its user line."""
    limit = memory_limit.memory_limit()
    if limit is None:
        return
    for stmt in walk(program.fn):
        if not is_eqn(stmt):
            continue
        e = eqn(stmt)
        for name in e.outs:
            aval = program.avals.get(name)
            if aval is None or not hasattr(aval, "shape"):
                continue
            nbytes = memory_limit.nbytes_of(aval.shape, aval.dtype)
            if nbytes > limit:
                loc = getattr(stmt, "loc", None)
                raise memory_limit.IntermediateTooLargeError(memory_limit.too_large_message(
                    f"the program {program.name!r} computes a value {name!r} ({e.prim})",
                    aval.shape, aval.dtype, nbytes, limit, loc and loc.short))


def interpret(program, *args):
    """Run `program` on NumPy values; returns a tuple of NumPy values."""
    return compile_program(program)(*args)


def interpret_checked(program, *args):
    """Run `program` statement by statement, checking every value against the avals table
    (dtype and shape). Slow; for tests, to prove NumPy implementations are dtype-exact.
    Nested control-flow bodies run checked too: the impls receive checked callables."""
    return _checked_function(program, program.fn)(*args)


def _checked_function(program, fn):
    in_names = [a.arg for a in fn.args.args]

    def run(*args):
        if len(args) != len(in_names):
            raise AssertionError(f"{fn.name} takes {len(in_names)} arguments, got {len(args)}")
        env = dict(program.consts)
        for name, value in zip(in_names, args):
            env[name] = _checked_value(program, name, value, f"argument of {fn.name}")
        return _run_checked_body(program, fn, env)

    run.__name__ = fn.name
    return run


def _checked_value(program, name, value, what, where=""):
    aval = program.avals[name]
    value = np.asarray(value)
    if value.dtype != aval.dtype or value.shape != aval.shape:
        raise AssertionError(
            f"{what} gave {value.dtype}{list(value.shape)}, abstract eval says {aval}{where}"
        )
    return value


def _run_checked_body(program, fn, env):
    def read(node):
        if isinstance(node, ast.Name):
            return env[node.id]
        return literals.literal_value(node)

    for stmt in fn.body:
        if isinstance(stmt, ast.FunctionDef):
            env[stmt.name] = _checked_function(program, stmt)
            continue
        if isinstance(stmt, ast.Return):
            ret = stmt.value
            atoms = list(ret.elts) if isinstance(ret, ast.Tuple) else [ret]
            return tuple(read(a) for a in atoms)
        if not is_eqn(stmt):
            raise NotImplementedError(f"interpret_checked: {ast.unparse(stmt)}")
        e = eqn(stmt)
        prim = core_primitive.registry[e.prim]
        params = map_body_params(e.params, env.__getitem__)
        out = prim.impl(*[read(a) for a in e.ins], **params)
        outs = list(out) if prim.multiple_results else [out]
        if len(outs) != len(e.outs):
            raise AssertionError(f"{e.prim} impl gave {len(outs)} results, expected {len(e.outs)}")
        for name, value in zip(e.outs, outs):
            env[name] = _checked_value(program, name, value, f"{e.prim} impl", f": {ast.unparse(stmt)}")
    raise AssertionError(f"{fn.name} has no return")
