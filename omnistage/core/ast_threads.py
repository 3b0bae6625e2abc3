"""`ast.parse` and `compile` of an AST, safe to call from several threads at once.

CPython before 3.12.5 / 3.13 keeps the recursion depth of its AST conversions (C tree <-> Python
objects) in state shared by every thread, so two threads tracing at once could fail with
`SystemError: AST constructor recursion depth mismatch` (CPython gh-106905). Every conversion
this package makes goes through one lock here. Compiling source text needs no lock.
"""
import ast
import threading

_LOCK = threading.RLock()


def parse(source, *args, **kwargs):
    with _LOCK:
        return ast.parse(source, *args, **kwargs)


def compile_tree(tree, filename, mode):
    with _LOCK:
        return compile(tree, filename, mode)
