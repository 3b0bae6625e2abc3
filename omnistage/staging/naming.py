"""Readable variable names for staged programs, derived from the user's own names.

After a trace, each run of statements that came from one user statement `name = ...`
gives its last output the user's `name`; the others are named after their primitive.
Names never shadow a primitive, a Python builtin or keyword, or `np`.
"""
import ast
import builtins
import functools
import keyword
import linecache
import re

from ..core import ast_threads
from ..core import primitive as core_primitive

_RESERVED = set(dir(builtins)) | set(keyword.kwlist) | {"np"}


class Namer:
    """Hands out unique identifiers: `x`, `x_1`, `x_2`, ..."""

    def __init__(self, taken=()):
        self.taken = set(taken)
        # base -> the suffix its search starts at: base_1 .. base_(n-1) were taken when base_n
        # was handed out, and `taken` only grows, so the first free suffix is never below n
        # (a search from 1 each time made naming a program's thousands of `add_k`s quadratic)
        self._next = {}

    def fresh(self, base):
        base = sanitize(base)
        if base not in self.taken and not _is_reserved(base):
            self.taken.add(base)
            return base
        i = self._next.get(base, 1)
        while f"{base}_{i}" in self.taken:
            i += 1
        name = f"{base}_{i}"
        self.taken.add(name)
        self._next[base] = i + 1
        return name


def _is_reserved(name):
    return name in _RESERVED or name in core_primitive.registry or name.startswith("_c")


def sanitize(name):
    return _sanitized(str(name))


@functools.lru_cache(maxsize=4096)
def _sanitized(name):
    # a pure function of the string, called for every variable of every staged program (eager
    # vmap and grad stage per call): remembered, bounded
    name = re.sub(r"\W", "_", name).strip("_") or "v"
    if name[0].isdigit():
        name = "v" + name
    if keyword.iskeyword(name):
        name += "_"
    return name


@functools.lru_cache(maxsize=4096)
def _assign_target(file, line):
    text = linecache.getline(file, line).strip()
    if not text:
        return None
    try:
        tree = ast_threads.parse(text)
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return None


def user_target(loc):
    """The variable the user's statement at `loc` assigns, if it is `name = ...` (not for
    statements a pass derived from it: a tangent or cotangent is not the user's variable)."""
    if loc is None or getattr(loc, "role", None) is not None:
        return None
    return _assign_target(loc.file, loc.line)


def readable_names(stmts, out_prims, taken):
    """Map each temporary (in statement order) to a readable name.

    `stmts` is a list of (outs, prim_name, loc); returns {temp: name}.
    """
    namer = Namer(taken)
    mapping = {}
    n = len(stmts)
    for i, (outs, prim, loc) in enumerate(stmts):
        nxt = stmts[i + 1][2] if i + 1 < n else None
        last_of_run = not (
            nxt is not None and loc is not None and nxt.line == loc.line
            and nxt.file == loc.file and nxt.frame_id == loc.frame_id
        )
        target = user_target(loc) if last_of_run and len(outs) == 1 else None
        for o in outs:
            mapping[o] = namer.fresh(target or prim)
    return mapping


def function_name(name):
    """The program's function name: never a primitive's (the body would call itself)."""
    name = sanitize(name)
    return name + "_fn" if _is_reserved(name) else name
