"""The `Program`: the one IR every pass reads and writes.

A Program is an `ast.FunctionDef` in A-normal form plus a table from variable name to
aval, and a table of array constants. Each statement is `outs = prim(atoms..., **params)`
where atoms are names or typed literals (`np.float32(2.0)`) and params are Python literals;
the last statement is `return (atoms...)`. `str(program)` is runnable Python with one import
line; every statement carries its user `file:line` as a trailing comment.

Control flow (`cond`, `while_loop`, `scan`, see `omnistage.lax.control_flow`) is a statement
whose bodies are nested, closure-free `FunctionDef`s placed just above it and named by
keyword parameters whose values are bare names:

    def cond_false(x):
        ...
        return (y,)
    def cond_true(x):
        ...
        return (y_1,)
    y_2, = cond(p, x, branches=(cond_false, cond_true))

In the `eqn` view such a parameter is a `BodyRef` (a `str` naming the FunctionDef), so
params stay literals; `program.subprogram(ref)` is the body as a Program sharing the avals
table (every variable of a program and its bodies has one, unique, name). When the source
runs, the name evaluates to the nested function itself, so the primitive's impl (NumPy
interpreter) or the primitive (printed program, `from omnistage.staging.runtime import *`)
receives a callable.
"""
import ast
import os
from typing import NamedTuple

import numpy as np

from ..core import primitive as core_primitive
from ..core.aval import ShapedArray
from . import literals
from .ast_walk import walk

HEADER = "from omnistage.staging.runtime import *  # omnistage program: runnable Python"


class Eqn(NamedTuple):
    """A readable view of one primitive statement."""

    outs: list  # output variable names
    prim: str  # primitive name
    ins: list  # ast expressions: ast.Name or typed literals
    params: dict  # Python literals
    stmt: ast.stmt


def is_eqn(stmt):
    return isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)


class BodyRef(str):
    """A parameter naming a nested body FunctionDef (printed as a bare name, not a string)."""

    __slots__ = ()

    def __repr__(self):
        return f"BodyRef({str(self)!r})"


def _param_value(node):
    if isinstance(node, ast.Name):
        return BodyRef(node.id)
    if isinstance(node, ast.Tuple) and node.elts and all(isinstance(e, ast.Name) for e in node.elts):
        return tuple(BodyRef(e.id) for e in node.elts)
    return literals.param_value(node)


def _param_ast(value):
    if isinstance(value, BodyRef):
        return ast.Name(str(value), ast.Load())
    if isinstance(value, tuple) and value and all(isinstance(v, BodyRef) for v in value):
        return ast.Tuple([ast.Name(str(v), ast.Load()) for v in value], ast.Load())
    return literals.param_ast(value)


def body_refs(params):
    """The BodyRefs among an eqn's params, in order."""
    refs = []
    for v in params.values():
        if isinstance(v, BodyRef):
            refs.append(v)
        elif isinstance(v, tuple):
            refs.extend(e for e in v if isinstance(e, BodyRef))
    return refs


def map_body_params(params, fn):
    """`params` with every BodyRef `r` replaced by `fn(r)` (tuples of refs too)."""
    out = {}
    for k, v in params.items():
        if isinstance(v, BodyRef):
            out[k] = fn(v)
        elif isinstance(v, tuple) and v and all(isinstance(e, BodyRef) for e in v):
            out[k] = tuple(fn(e) for e in v)
        else:
            out[k] = v
    return out


def eqn(stmt):
    """View `outs = prim(ins..., **params)` as an Eqn."""
    target = stmt.targets[0]
    outs = [e.id for e in target.elts] if isinstance(target, ast.Tuple) else [target.id]
    call = stmt.value
    params = {k.arg: _param_value(k.value) for k in call.keywords}
    return Eqn(outs, call.func.id, list(call.args), params, stmt)


def statements(fn):
    """`fn` and the statements of it and of its nested bodies (at any depth), in `walk`'s
    (breadth-first) order among statements. A staged body holds nothing but statements
    (equations, nested `def`s, its return), so this finds every equation and body `walk`
    finds without visiting the expression nodes between them: most of a program's nodes
    (every operand and parameter), visited for nothing at every level a pass looked."""
    todo = [fn]
    for node in todo:
        if node.__class__ is ast.FunctionDef:
            todo.extend(node.body)
    return todo


# nodes without fields that no pass edits (contexts, operators): shared by copies
_SHARED_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def copy_tree(node, rename=None):
    """A copy of AST `node` whose nodes and lists are new, for a pass to edit: what
    `copy.deepcopy` gives, ~6x faster (passes copy every program they rewrite; a sampler's
    cleanup spent most of its time in deepcopy). Leaves are shared: names, constants,
    statement locations, contexts and operators are never mutated in place. `rename`: a
    {name: new name} applied to the copy's variables, arguments and function names as it is
    made (one pass where a copy and then a rename walked the tree twice)."""
    cls = node.__class__
    new = cls.__new__(cls)
    fields = new.__dict__
    for k, v in node.__dict__.items():
        if v.__class__ is list:
            v = [copy_tree(x, rename) if isinstance(x, ast.AST) and not isinstance(x, _SHARED_LEAVES) else x for x in v]
        elif isinstance(v, ast.AST) and not isinstance(v, _SHARED_LEAVES):
            v = copy_tree(v, rename)
        fields[k] = v
    if rename is not None:
        if cls is ast.Name:
            fields["id"] = rename.get(fields["id"], fields["id"])
        elif cls is ast.arg:
            fields["arg"] = rename.get(fields["arg"], fields["arg"])
        elif cls is ast.FunctionDef:
            fields["name"] = rename.get(fields["name"], fields["name"])
    return new


# One context object for every node made here, as ast.parse shares them (contexts have no
# fields and no pass edits one): a staged statement is built per primitive per trace, and
# eager vmap and grad trace every call.
_LOAD, _STORE = ast.Load(), ast.Store()


def make_stmt(outs, prim, ins, params, loc=None, multiple=False):
    """The inverse of `eqn`: build `outs = prim(ins..., **params)` (ins are AST atoms)."""
    if multiple:
        target = ast.Tuple([ast.Name(o, _STORE) for o in outs], _STORE)
    else:
        (out,) = outs
        target = ast.Name(out, _STORE)
    call = ast.Call(
        ast.Name(prim, _LOAD),
        list(ins),
        [ast.keyword(k, _param_ast(v)) for k, v in params.items()] if params else [],
    )
    stmt = ast.Assign([target], call, lineno=0)
    stmt.loc = loc
    return stmt


def name_atom(name):
    return ast.Name(name, _LOAD)


def atom_name(node):
    """The variable name an atom refers to, or None for a literal."""
    return node.id if isinstance(node, ast.Name) else None


class Program:
    """An ANF function (`fn`), its avals table and constants. Passes return new Programs."""

    def __init__(self, fn, avals, consts=None, debug_name=None):
        self.fn = fn
        self.avals = dict(avals)
        self.consts = dict(consts or {})
        self.debug_name = debug_name or fn.name
        self._compiled = None

    # --- structure ----------------------------------------------------------------------

    @property
    def name(self):
        return self.fn.name

    @property
    def in_names(self):
        return [a.arg for a in self.fn.args.args]

    @property
    def body(self):
        return self.fn.body

    @property
    def return_stmt(self):
        return self.fn.body[-1]

    @property
    def out_atoms(self):
        ret = self.return_stmt.value
        return list(ret.elts) if isinstance(ret, ast.Tuple) else [ret]

    def atom_aval(self, node):
        if isinstance(node, ast.Name):
            if node.id in self.avals:
                return self.avals[node.id]
            if node.id in self.consts:
                c = self.consts[node.id]
                return ShapedArray(c.shape, c.dtype)
            raise NameError(f"undefined variable {node.id!r} in program {self.name}")
        return literals.literal_aval(node)

    @property
    def in_avals(self):
        return [self.avals[n] for n in self.in_names]

    @property
    def out_avals(self):
        return [self.atom_aval(a) for a in self.out_atoms]

    def eqns(self):
        """The primitive statements of the top-level body, as Eqn views."""
        return [eqn(s) for s in self.fn.body if is_eqn(s)]

    def bodies(self):
        """The nested body FunctionDefs of the top-level body, by name."""
        return {s.name: s for s in self.fn.body if isinstance(s, ast.FunctionDef)}

    def subprogram(self, ref):
        """The nested body named `ref` (a BodyRef or name, at any depth) as a Program that
        shares this program's avals table and constants."""
        for node in walk(self.fn):
            if isinstance(node, ast.FunctionDef) and node.name == ref and node is not self.fn:
                return Program(node, self.avals, self.consts)
        raise KeyError(f"program {self.name} has no body named {ref!r}")

    def __call__(self, *args):
        """Run on NumPy values with the NumPy interpreter; returns a tuple of NumPy values.
        (Lets a control-flow impl call a body whether it is a Program or a function.)"""
        from .interpret import interpret

        return interpret(self, *args)

    # --- printing -----------------------------------------------------------------------

    def source(self, with_header=True, with_locs=True):
        """Runnable Python: each parameter annotated with its aval (`x: 'f32[4,4]'`, strings,
        so the text still runs), each statement with its user `file:line` comment."""
        lines = [HEADER] if with_header else []
        for name, value in self.consts.items():
            lines.append(f"{name} = {_const_source(value)}")
        if self.consts or with_header:
            lines.append("")
        lines.extend(format_function(self.fn, with_locs=with_locs, avals=self.avals))
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.source()

    def __repr__(self):
        ins = ", ".join(f"{n}:{self.avals[n].str_short()}" for n in self.in_names)
        return f"<Program {self.name}({ins}) with {len(self.eqns())} equations>"

    def pretty(self):
        """The source with each statement's output avals appended to its comment."""
        return self.source()

    # --- checking -----------------------------------------------------------------------

    def check(self):
        """Re-infer every statement's aval from its inputs; raise on any disagreement."""
        check_body(self.fn.body, self.in_names, self.avals, self.consts, self.name)
        return self


def _const_source(value):
    """Python source that rebuilds the constant exactly (shape and dtype included)."""
    v = np.asarray(value)
    # NumPy has no np.bfloat16 (ml_dtypes registers the name 'bfloat16' with np.dtype)
    dtype = f"np.{v.dtype.name}" if hasattr(np, v.dtype.name) else repr(v.dtype.name)
    if v.dtype.kind in "fcV" and not np.all(np.isfinite(v)):  # "V": ml_dtypes' bfloat16
        # nan/inf have no literal: rebuild from the raw bytes
        raw = np.ascontiguousarray(v).tobytes().hex()
        return f"np.frombuffer(bytes.fromhex({raw!r}), dtype={dtype}).reshape({v.shape!r})"
    src = f"np.array({v.tolist()!r}, dtype={dtype})"
    return src if v.size or v.ndim == 1 else f"{src}.reshape({v.shape!r})"


def format_function(fn, indent="", with_locs=True, avals=None):
    """Lines of `fn`'s source; each statement gets its user `file:line` comment and, given
    the avals table, each parameter (nested bodies' too) its aval as a string annotation."""
    args = ", ".join(_param(a.arg, avals) for a in fn.args.args)
    lines = [f"{indent}def {fn.name}({args}):"]
    inner = indent + "    "
    for stmt in fn.body:
        if isinstance(stmt, ast.FunctionDef):
            lines.extend(format_function(stmt, inner, with_locs, avals))
            continue
        text = ast.unparse(stmt)
        loc = getattr(stmt, "loc", None)
        if with_locs and loc is not None:
            text += f"  # {loc.short}"
        lines.append(inner + text)
    return lines


def _param(name, avals):
    aval = avals.get(name) if avals else None
    return name if aval is None else f"{name}: {aval.str_short()!r}"


class ProgramCheckError(Exception):
    """A pass produced an ill-typed program."""


def check_body(body, in_names, avals, consts, where, assigned=None):
    """Check one function body; nested bodies are checked closure-free (only their own
    arguments and the constants are visible), and every name is assigned once program-wide."""
    assigned = set(in_names) if assigned is None else assigned
    defined = set(in_names) | set(consts)
    bodies = {}
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef):
            _check_nested(stmt, avals, consts, where, assigned)
            bodies[stmt.name] = Program(stmt, avals, consts)
            continue
        if isinstance(stmt, ast.Return):
            for node in walk(stmt.value):
                if isinstance(node, ast.Name) and node.id not in defined:
                    raise ProgramCheckError(f"{where}: return uses undefined {node.id!r}")
            continue
        if not is_eqn(stmt):
            raise ProgramCheckError(f"{where}: not an equation: {ast.unparse(stmt)}")
        _check_eqn(stmt, avals, consts, where, defined, bodies)
        for name in eqn(stmt).outs:
            if name in assigned:
                raise ProgramCheckError(f"{where}: {name!r} assigned twice")
            assigned.add(name)
    if not body or not isinstance(body[-1], ast.Return):
        raise ProgramCheckError(f"{where}: the body does not end with a return")


def _check_nested(fn, avals, consts, where, assigned):
    args = [a.arg for a in fn.args.args]
    for a in args:
        if a not in avals:
            raise ProgramCheckError(f"{where}: body {fn.name} argument {a!r} has no aval")
        if a in assigned:
            raise ProgramCheckError(f"{where}: {a!r} assigned twice")
        assigned.add(a)
    check_body(fn.body, args, avals, consts, f"{where}.{fn.name}", assigned)


def _check_eqn(stmt, avals, consts, where, defined, bodies):
    e = eqn(stmt)
    prim = core_primitive.registry.get(e.prim)
    if prim is None:
        raise ProgramCheckError(f"{where}: unknown primitive {e.prim!r}")
    in_avals = []
    for a in e.ins:
        if isinstance(a, ast.Name):
            if a.id not in defined:
                raise ProgramCheckError(f"{where}: {ast.unparse(stmt)} uses undefined {a.id!r}")
            if a.id in consts:
                c = consts[a.id]
                in_avals.append(ShapedArray(c.shape, c.dtype))
            else:
                in_avals.append(avals[a.id])
        elif literals.is_literal(a):
            in_avals.append(literals.literal_aval(a))
        else:
            raise ProgramCheckError(f"{where}: operand is not an atom: {ast.unparse(a)}")
    missing = [r for r in body_refs(e.params) if r not in bodies]
    if missing:
        raise ProgramCheckError(f"{where}: {ast.unparse(stmt)}: no body {missing[0]!r} defined above it")
    params = map_body_params(e.params, bodies.__getitem__)
    try:
        out = prim.abstract_eval(*in_avals, **params)
    except Exception as exc:  # noqa: BLE001 - re-raised with the statement
        raise ProgramCheckError(f"{where}: {ast.unparse(stmt)}: {exc}") from exc
    outs = list(out) if prim.multiple_results else [out]
    if len(outs) != len(e.outs):
        raise ProgramCheckError(f"{where}: {ast.unparse(stmt)}: arity {len(e.outs)} != {len(outs)}")
    for name, aval in zip(e.outs, outs):
        have = avals.get(name)
        if have is None or have.shape != aval.shape or have.dtype != aval.dtype:
            raise ProgramCheckError(
                f"{where}: {ast.unparse(stmt)}: table says {name}: {have}, inferred {aval}"
            )
        if name in defined:
            raise ProgramCheckError(f"{where}: {name!r} assigned twice")
        defined.add(name)
