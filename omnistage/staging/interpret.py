"""The NumPy interpreter: run a Program's source with each primitive bound to its NumPy
implementation. Used by eager `grad`/`vmap` and, until a code generator is plugged in, `jit`.
"""
import ast

import numpy as np

from ..core import primitive as core_primitive
from . import literals
from .program import eqn, is_eqn


def _impl_namespace():
    # Warnings are silenced once per program run (below), so the per-op wrappers that do
    # the same for eager calls (`__wrapped__`) are skipped here.
    ns = {name: getattr(prim.impl, "__wrapped__", prim.impl) for name, prim in core_primitive.registry.items()}
    ns["np"] = np
    return ns


def compile_program(program):
    """A Python function running `program` on NumPy arrays (cached on the program)."""
    if program._compiled is None:
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


def interpret(program, *args):
    """Run `program` on NumPy values; returns a tuple of NumPy values."""
    return compile_program(program)(*args)


def interpret_checked(program, *args):
    """Run `program` statement by statement, checking every value against the avals table
    (dtype and shape). Slow; for tests, to prove NumPy implementations are dtype-exact."""
    env = dict(zip(program.in_names, args))
    env.update(program.consts)

    def read(node):
        if isinstance(node, ast.Name):
            return env[node.id]
        return literals.literal_value(node)

    for stmt in program.body:
        if isinstance(stmt, ast.Return):
            return tuple(read(a) for a in program.out_atoms)
        if not is_eqn(stmt):
            raise NotImplementedError(f"interpret_checked: {ast.unparse(stmt)}")
        e = eqn(stmt)
        prim = core_primitive.registry[e.prim]
        out = prim.impl(*[read(a) for a in e.ins], **e.params)
        outs = list(out) if prim.multiple_results else [out]
        for name, value in zip(e.outs, outs):
            aval = program.avals[name]
            value = np.asarray(value)
            if value.dtype != aval.dtype or value.shape != aval.shape:
                raise AssertionError(
                    f"{e.prim} impl gave {value.dtype}{list(value.shape)}, "
                    f"abstract eval says {aval}: {ast.unparse(stmt)}"
                )
            env[name] = value
    raise AssertionError("program has no return")
