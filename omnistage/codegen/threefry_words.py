"""`split(program)`: each `threefry2x32` statement (two results) becomes one single-result
elementwise statement per result it has a use for, `threefry2x32_word(k1, k2, x1, x2, word=i)`,
so the fusion plan can compute the hash inside the loops that use its words, as it does for
any elementwise statement. The random bits JAX draws are `word0 ^ word1`: fused, that is one
loop with no intermediate arrays, and LLVM computes the hash once per element (both words
come from the same pure call, inlined and merged). A 1M-element `random.uniform` went from
~8.7 ms (a loop storing both words, then a loop reading them) to ~1 ms.

A code-generation rewrite (the CPU emitter's; CUDA has its own threefry kernel): the result
is never interpreted, so `threefry2x32_word` is a scalar rule, not a registered primitive.
"""
import ast
import copy

from ..staging.program import Program, eqn, is_eqn, make_stmt

WORD = "threefry2x32_word"


def split(program):
    """`program` with its threefry2x32 statements split (itself if it has none)."""
    if not any(is_eqn(s) and eqn(s).prim == "threefry2x32" for s in ast.walk(program.fn)):
        return program
    fn = copy.deepcopy(program.fn)
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef):
            node.body = [s for stmt in node.body for s in _split(stmt, used)]
    return Program(fn, program.avals, program.consts, program.debug_name)


def _split(stmt, used):
    if not (is_eqn(stmt) and eqn(stmt).prim == "threefry2x32"):
        return [stmt]
    e = eqn(stmt)
    loc = getattr(stmt, "loc", None)
    return [make_stmt([out], WORD, e.ins, {**e.params, "word": i}, loc)
            for i, out in enumerate(e.outs) if out in used]
