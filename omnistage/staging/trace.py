"""The staging trace: runs a Python function on tracers and records one statement per
primitive application, producing a `Program`.

Omnistaging: while a StagingTrace is the innermost trace, every `bind` is staged into it,
whether or not its operands are traced. Concrete operands become typed literals (scalars)
or named constants (arrays). A tracer of an enclosing, still-live trace is captured as an
extra input; a tracer of a finished trace raises UnexpectedTracerError.

Control-flow primitives bind with `Program`-valued params (their bodies, staged by
`stage` in a sub-trace). `process_primitive` splices each such Program into this trace as a
nested FunctionDef just above the statement, renaming its variables to fresh names of this
trace, and the param becomes a `BodyRef` naming it.
"""
import ast
import inspect
import itertools
import re
import sys

import numpy as np

from ..core import primitive as core_primitive
from ..core.array import Array
from ..core.errors import TracerBoolConversionError, add_location
from ..core.source_info import describe_traceback, file_path, is_internal_file, user_loc
from ..core.tracer import Tracer
from . import literals, naming
from .program import BodyRef, Program, copy_tree, is_eqn, make_stmt, name_atom, statements
from .ast_walk import walk


class StagingTracer(Tracer):
    """A traced value: a variable of the program being staged."""

    __slots__ = ("_name",)

    def __init__(self, trace, aval, name, loc=None, deps=frozenset()):
        super().__init__(trace, aval, loc, deps)
        self._name = name


class DebugInfo:
    """What is being staged, for error messages: function, its location, arg names."""

    def __init__(self, fun, transform="jit", arg_names=()):
        self.fun_name = getattr(fun, "__name__", type(fun).__name__)
        try:
            target = inspect.unwrap(getattr(fun, "__func__", fun))  # see through functools.wraps
        except ValueError:  # a __wrapped__ cycle
            target = fun
        code = getattr(getattr(target, "__func__", target), "__code__", None)
        self.where = f"{file_path(code.co_filename)}:{code.co_firstlineno}" if code is not None else "<unknown>"
        self.transform = transform
        self.arg_names = tuple(arg_names)


class StagingTrace:
    """Collects statements while a function runs on StagingTracers."""

    _ids = itertools.count()

    def __init__(self, debug_info):
        self.debug_info = debug_info
        self.stmts = []
        self.avals = {}
        self.consts = {}
        self._const_names = {}  # id(value) -> name, dedupes repeated constants
        self._const_keep = []  # keep constant objects alive so ids stay unique
        self.captures = []  # (outer tracer, inner input name)
        self._capture_names = {}
        self.in_names = []
        self.finished = False
        self._tmp = itertools.count()
        self._id = next(self._ids)

    def describe_function(self):
        d = self.debug_info
        return f"the function {d.fun_name} at {d.where} for {d.transform}"

    # --- variables ----------------------------------------------------------------------

    def _tmp_name(self):
        return f"_t{self._id}_{next(self._tmp)}"

    def new_arg(self, aval, name=None):
        var = self._tmp_name()
        self.in_names.append(var)
        self.avals[var] = aval
        self._arg_labels = getattr(self, "_arg_labels", {})
        self._arg_labels[var] = name or "arg"
        return StagingTracer(self, aval, var, None, frozenset([name or "arg"]))

    def atom(self, x):
        """The AST atom for operand `x` (a tracer of this trace, a capture, or a constant)."""
        if isinstance(x, StagingTracer):
            if x._trace is self:
                return name_atom(x._name)
            if x._trace.finished or not core_primitive.trace_is_active(x._trace):
                raise x._escaped_error()  # also a tracer of another thread's trace
            return name_atom(self._capture(x))
        if isinstance(x, Tracer):
            raise TypeError(f"cannot stage a foreign tracer {x!r}")
        value = x._value if isinstance(x, Array) else np.asarray(x)
        if literals.can_inline(value):
            return literals.literal_ast(value)
        return name_atom(self._const(x, value))

    def _capture(self, tracer):
        key = id(tracer)
        if key not in self._capture_names:
            var = self._tmp_name()
            self._capture_names[key] = var
            self.captures.append((tracer, var))
            self.in_names.append(var)
            self.avals[var] = tracer.aval
            self._arg_labels = getattr(self, "_arg_labels", {})
            self._arg_labels[var] = _capture_label(tracer)
        return self._capture_names[key]

    def _const(self, obj, value):
        key = id(obj)
        if key not in self._const_names:
            name = f"_c{len(self.consts)}"
            self._const_names[key] = name
            self._const_keep.append(obj)
            self.consts[name] = np.asarray(value)
        return self._const_names[key]

    # --- primitives ---------------------------------------------------------------------

    def process_primitive(self, prim, args, params):
        # one pass over the operands (eager vmap and grad stage their function every call)
        atoms, in_avals, deps = [], [], None
        for a in args:
            atoms.append(self.atom(a))
            if isinstance(a, Tracer):
                in_avals.append(a.aval)
                d = a._deps
                deps = d if deps is None or deps is d else deps | d
            else:
                in_avals.append(a.aval if isinstance(a, Array) else _aval_of_value(a))
        out_aval = core_primitive.abstract_eval_located(prim, in_avals, params)
        params = self._emit_bodies(params)
        loc = user_loc()
        deps = frozenset() if deps is None else deps
        out_avals = list(out_aval) if prim.multiple_results else [out_aval]
        outs = []
        for aval in out_avals:
            var = self._tmp_name()
            self.avals[var] = aval
            outs.append(StagingTracer(self, aval, var, loc, deps))
        stmt = make_stmt([t._name for t in outs], prim.name, atoms, params, loc, prim.multiple_results)
        self.stmts.append(stmt)
        return outs if prim.multiple_results else outs[0]

    # --- nested bodies ------------------------------------------------------------------

    def _emit_bodies(self, params):
        """Splice Program-valued params in as nested FunctionDefs; params name them."""
        if not any(isinstance(v, Program) or (isinstance(v, tuple) and v and isinstance(v[0], Program))
                   for v in params.values()):
            return params  # no bodies (most statements): the params as they are
        out = {}
        for k, v in params.items():
            if isinstance(v, Program):
                out[k] = self._emit_body(v)
            elif isinstance(v, tuple) and v and all(isinstance(e, Program) for e in v):
                out[k] = tuple(self._emit_body(e) for e in v)
            else:
                out[k] = v
        return out

    def _emit_body(self, program):
        labels = self.__dict__.setdefault("_arg_labels", {})
        mapping = {}
        for node in statements(program.fn):
            if node.__class__ is ast.FunctionDef:
                mapping[node.name] = self._tmp_name()
                labels[mapping[node.name]] = node.name
        for var, aval in program.avals.items():
            mapping[var] = tmp = self._tmp_name()
            self.avals[tmp] = aval
            labels[tmp] = var
        for cname, value in program.consts.items():
            mapping[cname] = self._const(value, value)
        fn = copy_tree(program.fn, rename=mapping)  # (the body's own Program is left as it was)
        self.stmts.append(fn)
        return BodyRef(fn.name)

    # --- errors -------------------------------------------------------------------------

    def provenance(self, tracer):
        d = self.debug_info
        lines = [f"The error occurred while tracing the function {d.fun_name} at {d.where} for {d.transform}."]
        if tracer._deps:
            names = ", ".join(sorted(tracer._deps))
            plural = "s" if len(tracer._deps) > 1 else ""
            lines.append(
                f"This concrete value was not available in Python because it depends on the "
                f"value of the argument{plural} {names}."
            )
        else:
            lines.append(
                "This value was staged by an omnistage.numpy/lax call (omnistaging stages every "
                "such call); use NumPy for values that must be known at trace time."
            )
        if tracer._loc is not None:
            lines.append(f"The value became traced at:\n{tracer._loc.describe()}")
        return "\n".join(lines)

    # --- finishing ----------------------------------------------------------------------

    def finish(self, outputs, name, arg_names=None):
        """Build the Program returning `outputs` (tracers or concrete values)."""
        out_atoms = [self.atom(o) for o in outputs]
        self.finished = True
        labels = getattr(self, "_arg_labels", {})
        namer = naming.Namer([naming.sanitize(name)])
        mapping = {var: namer.fresh(labels.get(var, "arg")) for var in self.in_names}
        infos = []
        for s in self.stmts:
            if isinstance(s, ast.FunctionDef):
                continue
            t = s.targets[0]
            outs = [e.id for e in t.elts] if isinstance(t, ast.Tuple) else [t.id]
            infos.append((outs, s.value.func.id, s.loc))
        mapping.update(naming.readable_names(infos, None, namer.taken))
        namer.taken.update(mapping.values())
        for s in self.stmts:  # nested bodies keep the names they were staged with
            if isinstance(s, ast.FunctionDef):
                for var in _body_names(s):
                    if var not in mapping:
                        mapping[var] = namer.fresh(_strip_counter(labels.get(var, "v")))
        renamer = _Renamer(mapping)
        body = [renamer.visit_stmt(s) for s in self.stmts]
        ret = ast.Return(ast.Tuple([renamer.visit(a) for a in out_atoms], ast.Load()))
        fn = ast.FunctionDef(
            name=naming.function_name(name),
            args=ast.arguments(
                posonlyargs=[], args=[ast.arg(mapping[v]) for v in self.in_names], vararg=None,
                kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[],
            ),
            body=body + [ret],
            decorator_list=[],
            returns=None,
            lineno=0,
            **({"type_params": []} if sys.version_info >= (3, 12) else {}),
        )
        avals = {mapping[k]: v for k, v in self.avals.items() if k in mapping}
        return Program(fn, avals, self.consts)


def _body_names(fn):
    """Every name a nested body binds, in order: its name, arguments, statement outputs."""
    names = []
    for node in statements(fn):
        if node.__class__ is ast.FunctionDef:
            names.append(node.name)
            names.extend(a.arg for a in node.args.args)
        elif node.__class__ is ast.Assign:
            for t in node.targets:
                names.extend(e.id for e in walk(t) if isinstance(e, ast.Name))
    return names


def _strip_counter(label):
    """`sin_3` -> `sin`: the base a fresh name is made from."""
    return re.sub(r"_\d+$", "", label) or label


def _capture_label(tracer):
    """A readable label for a captured outer tracer: the outer argument's label, or the
    user variable its creating statement assigned."""
    outer = tracer._trace
    label = getattr(outer, "_arg_labels", {}).get(getattr(tracer, "_name", None))
    if label is None:
        label = naming.user_target(tracer._loc)
    return label or "captured"


def _plain_body(fn):
    """Whether nested body `fn` holds names only where _Renamer.visit_stmt looks: its name,
    its positional arguments (annotated with strings) and its statements; no decorators,
    return annotation, defaults or other kinds of arguments."""
    args = fn.args
    return (not fn.decorator_list and fn.returns is None and not args.posonlyargs and args.vararg is None
            and not args.kwonlyargs and args.kwarg is None and not args.defaults
            and all(a.annotation is None or a.annotation.__class__ is ast.Constant for a in args.args))


class _Renamer:
    """Renames variables, nested body arguments and nested body names, in place."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit(self, node):
        """`node` with every name under it renamed (in place: one walk, where ast's
        NodeTransformer paid a method dispatch per node, most of emitting a nested body)."""
        get = self.mapping.get
        for n in walk(node):
            cls = n.__class__
            if cls is ast.Name:
                new = get(n.id)
                if new is not None:
                    n.id = new
            elif cls is ast.arg:
                n.arg = get(n.arg, n.arg)
            elif cls is ast.FunctionDef:
                n.name = get(n.name, n.name)
        return node

    def visit_stmt(self, stmt):
        """`visit(stmt)`, with equations renamed directly: their targets, operand names and
        body-naming params are all the names they hold (a literal's `np` is never a
        variable), and ast's generic walk over every node was most of `finish` (eager vmap
        stages a function each call)."""
        if stmt.__class__ is ast.FunctionDef and _plain_body(stmt):
            # a nested body: its name, its arguments, then each statement as above (the walk
            # over every node of it, at every level it was emitted into, was most of `finish`)
            get = self.mapping.get
            stmt.name = get(stmt.name, stmt.name)
            for a in stmt.args.args:
                a.arg = get(a.arg, a.arg)
            for s in stmt.body:
                self.visit_stmt(s)
            return stmt
        if not is_eqn(stmt) or len(stmt.targets) != 1:
            return self.visit(stmt)
        get = self.mapping.get
        target = stmt.targets[0]
        for node in target.elts if isinstance(target, ast.Tuple) else (target,):
            if not isinstance(node, ast.Name):
                return self.visit(stmt)
            node.id = get(node.id, node.id)
        for node in stmt.value.args:
            if isinstance(node, ast.Name):
                node.id = get(node.id, node.id)
        for kw in stmt.value.keywords:
            value = kw.value
            if isinstance(value, ast.Name):
                value.id = get(value.id, value.id)
            elif isinstance(value, ast.Tuple):
                for node in value.elts:
                    if isinstance(node, ast.Name):
                        node.id = get(node.id, node.id)
        return stmt


def _aval_of_value(x):
    from ..core.array import aval_of

    return aval_of(x)


def _note_unconverted(exc):
    """A traced condition in a user function the control-flow rewrite could not convert (typed
    at the interactive prompt, made by exec): the error says why the `if` ran as plain Python."""
    if not isinstance(exc, TracerBoolConversionError) or getattr(exc, "_omnistage_unconverted_noted", False):
        return
    from .convert import why_not_converted

    code, tb = None, exc.__traceback__
    while tb is not None:
        c = tb.tb_frame.f_code
        if not is_internal_file(c.co_filename) and not c.co_filename.startswith("<frozen"):
            code = c
        tb = tb.tb_next
    reason = why_not_converted(code) if code is not None else None
    if reason is None or not exc.args:
        return
    exc.args = (
        f"{exc.args[0]}\nomnistage could not convert the Python control flow of {code.co_name}, so "
        f"its condition ran as plain Python: {reason}. Define {code.co_name} in a file (a module or "
        f"script), or use lax.cond / lax.while_loop / jnp.where.",
    ) + tuple(exc.args[1:])
    exc._omnistage_unconverted_noted = True


def stage(fun, in_avals, arg_names=None, debug_info=None, name=None):
    """Trace `fun(*tracers)` (flat inputs and outputs) into a Program.

    Returns (program, trace) — the trace lists captured outer tracers, if any.
    """
    debug_info = debug_info or DebugInfo(fun, "make_jaxpr")
    trace = StagingTrace(debug_info)
    names = list(arg_names) if arg_names is not None else [f"a{i}" for i in range(len(in_avals))]
    tracers = [trace.new_arg(aval, n) for aval, n in zip(in_avals, names)]
    try:
        with core_primitive.new_trace(trace):
            outs = fun(*tracers)
        program = trace.finish(list(outs), name or debug_info.fun_name)
    except (TypeError, ValueError, IndexError, NotImplementedError) as e:
        # errors raised by op libraries while tracing name the user's line, like shape-rule errors
        _note_unconverted(e)
        raise add_location(e, describe_traceback(e.__traceback__))
    finally:
        trace.finished = True
    return program, trace
