"""The AST rewrite of Python control flow, so that it works on traced values.

`convert(fun)` parses `fun`'s source and rewrites, in `fun` and in every function nested in
it, each construct into a call of a runtime helper (`control_flow_runtime.Runtime`, reached
through the closure variable `_omni`) that decides at trace time: a static condition keeps
plain Python semantics, a traced one stages `lax.cond` / `lax.while_loop` / logical ops.

    if test: A else: B       ->  def if_true_1(x, y): A; return (x, y)
                                 def if_false_1(x, y): B; return (x, y)
                                 x, y = _omni.if_stmt(test, if_true_1, if_false_1, locals(), ('x', 'y'), 12)
    while test: A            ->  def while_test_1(i): return test
                                 def while_body_1(i): A; return (i,)
                                 i, = _omni.while_stmt(while_test_1, while_body_1, locals(), ('i',), 12)
    for i in range(a, b): A  ->  def for_body_1(i, x): A; return (i, x)
                                 i, x = _omni.for_stmt(range, (a, b), for_body_1, locals(), ('i', 'x'), 12)
    a if t else b            ->  _omni.if_exp(t, lambda: a, lambda: b, 12)
    a and b, a or b, not a   ->  _omni.and_(a, lambda: b), _omni.or_(a, lambda: b), _omni.not_(a)
    f(x)                     ->  _omni.call(f)(x)        (converts user functions on first call)

`x, y` are the variables the construct's bodies assign (its outputs or loop carries); the
trailing number is the user's line, for messages. A `return` inside an `if` is rewritten to
one exit first (the statements after the `if` move into the branches that fall through, and
each `return v` becomes `return_value = v`). Constructs that cannot be staged (`break`,
`continue`, `return`, `raise`, `del` inside them) stay Python, with their condition wrapped
in `_omni.static_test(...)`: static conditions run as before, traced ones raise an error
that names the construct and the user's line.

The new function is compiled with the original file name and line numbers (tracebacks and
staged `file:line` comments point at the user's lines) and built with the original
`__globals__`, defaults and closure cells. The rewrite is cached per code object (a lambda
made again in a loop reuses it), the new function per function object. A lambda's source is
found in its file's AST by line, parameters and (Python 3.11+) columns. Calls go through
`_omni.call`, so the functions a converted function calls (globals, closure variables,
arguments, methods, callable objects, itself when recursive) are converted on their first
call. Functions without source (builtins, C extensions, `exec`-made code), generators,
coroutines and functions of omnistage, NumPy, the standard library and installed packages
are returned unchanged. `converted_source(f)` shows the rewritten source.
"""
import ast
import builtins
import copy
import functools
import inspect
import linecache
import os
import sys
import sysconfig
import textwrap
import types
import warnings
import weakref

from ..core import ast_threads
from ..core.source_info import is_internal_file
from ..core.thread_local import ThreadLocalStack
from .control_flow_runtime import Runtime
from .ast_walk import walk

RUNTIME_NAME = "_omni"
# fun -> its converted function is kept on fun itself (`_CONVERSION_ATTR`): a WeakKeyDictionary
# value would pin its key through `converted.__wrapped__`, and with it every jit cache of fun.
_CONVERSION_ATTR = "__omnistage_conversion__"
_NOT_CONVERTED = weakref.WeakKeyDictionary()  # fun -> why it is returned unchanged
_TEMPLATES = weakref.WeakKeyDictionary()  # code object -> _Template, or why it is not converted
_REWRITTEN_CODE = weakref.WeakSet()  # code objects the rewrite compiled (nested ones included)

_LIB_DIRS = tuple(
    os.path.abspath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    if p
)
_SKIP_MODULES = ("omnistage", "numpy", "scipy", "jax", "numba")


# --- public entry points --------------------------------------------------------------------


def convert(fun):
    """`fun` with Python control flow on traced values rewritten (cached per function object;
    the rewrite itself is cached per code object, so a lambda made again reuses it).

    Bound methods, `functools.partial` objects and callable objects (through their class's
    `__call__`) are converted through their function; anything without convertible source
    is returned unchanged."""
    if _OFF:
        return fun
    if isinstance(fun, types.MethodType):
        func = convert(fun.__func__)
        return fun if func is fun.__func__ else types.MethodType(func, fun.__self__)
    if isinstance(fun, functools.partial):
        func = convert(fun.func)
        return fun if func is fun.func else functools.partial(func, *fun.args, **fun.keywords)
    if not isinstance(fun, types.FunctionType):
        return _convert_callable_object(fun)
    if getattr(fun, "__omnistage_converted__", False) or fun.__code__ in _REWRITTEN_CODE:
        return fun
    entry = fun.__dict__.get(_CONVERSION_ATTR)
    if entry is not None and entry[0]() is fun:  # (not an entry functools.wraps copied from another)
        return entry[1]
    if fun in _NOT_CONVERTED:
        return fun
    reason = _unconvertible(fun)
    template = _template(fun) if reason is None else reason
    if isinstance(template, str):
        _NOT_CONVERTED[fun] = template
        return fun
    converted = template.instantiate(fun)
    fun.__dict__[_CONVERSION_ATTR] = (weakref.ref(fun), converted)  # a cycle the collector frees
    return converted


_OFF = ThreadLocalStack()  # non-empty while `call_unconverted` runs (in this thread)


def call_unconverted(fun, *args, **kwargs):
    """`fun(*args, **kwargs)` with conversion off for everything the call reaches: functions it
    calls, and those `grad`, `vmap` or a nested `jit` stage (JAX's behaviour, for
    `jit(..., python_control_flow=False)`)."""
    _OFF.append(fun)
    try:
        return fun(*args, **kwargs)
    finally:
        _OFF.pop()


def conversion_is_off():
    return bool(_OFF)


def _convert_callable_object(obj):
    """An instance whose class defines `__call__` in Python: its converted bound `__call__`."""
    if isinstance(obj, type):
        return obj  # a class: calling it constructs, nothing to trace through
    call = getattr(type(obj), "__call__", None)
    if not isinstance(call, types.FunctionType):
        return obj
    conv = convert(call)
    return obj if conv is call else types.MethodType(conv, obj)


def converted_source(fun):
    """The rewritten source of `fun` (as `convert` compiles it)."""
    conv = convert(fun)
    base = getattr(conv, "__func__", getattr(conv, "func", conv))
    template = getattr(base, "__omnistage_template__", None)
    source = None if template is None else template.source
    if source is None and getattr(fun, "__wrapped__", None) is not None:
        return converted_source(fun.__wrapped__)  # jit(f) and the like: f's rewrite
    if source is None:
        raw = getattr(fun, "__func__", getattr(fun, "func", fun))
        why = _NOT_CONVERTED.get(raw, "it is not a Python function") if isinstance(raw, types.FunctionType) else "it is not a Python function"
        raise ValueError(f"{fun!r} is not converted: {why}")
    return source


def why_not_converted(code):
    """Why functions of `code` run unconverted, or None (converted, or never tried)."""
    template = _TEMPLATES.get(code)
    return template if isinstance(template, str) else None


class _NoSource(Exception):
    pass


def _unconvertible(fun):
    """Why `fun` is returned unchanged, or None."""
    code = fun.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return "generators and coroutines are not converted"
    module = getattr(fun, "__module__", None) or ""
    if module.split(".")[0] in _SKIP_MODULES:
        return f"functions of {module} are not converted"
    filename = os.path.abspath(code.co_filename)
    if is_internal_file(filename):  # the guided tour's examples (__main__.py) are user code
        return "omnistage's own functions are not converted"
    if filename.startswith(_LIB_DIRS):
        return "functions of the standard library and installed packages are not converted"
    return None


# --- building the new function --------------------------------------------------------------


class _Template:
    """The rewrite of one code object, shared by every function made from it (each gets its
    own globals, defaults and closure cells)."""

    __slots__ = ("code", "runtime_cell", "_display", "_source", "filename", "globals_id")

    def __init__(self, code, runtime, display, fun):
        self.code, self.runtime_cell = code, types.CellType(runtime)
        self._display, self._source = display, None
        self.filename, self.globals_id = fun.__code__.co_filename, id(fun.__globals__)

    @property
    def source(self):
        """The rewritten source (converted_source), unparsed when first asked for: only a
        person reads it, and ast.unparse was a tenth of a rewrite's time."""
        if self._source is None:
            self._source = ast.unparse(self._display)
        return self._source

    def fits(self, fun):
        # equal code objects from another file or module namespace are rewritten anew
        return self.filename == fun.__code__.co_filename and self.globals_id == id(fun.__globals__)

    def instantiate(self, fun):
        cells = dict(zip(fun.__code__.co_freevars, fun.__closure__ or ()))
        cells[RUNTIME_NAME] = self.runtime_cell
        closure = tuple(cells[v] for v in self.code.co_freevars)
        new = types.FunctionType(self.code, fun.__globals__, fun.__name__, fun.__defaults__, closure or None)
        new.__kwdefaults__ = copy.copy(fun.__kwdefaults__)
        new.__dict__.update(fun.__dict__)
        new.__qualname__, new.__module__, new.__doc__ = fun.__qualname__, fun.__module__, fun.__doc__
        new.__annotations__ = dict(getattr(fun, "__annotations__", {}))
        new.__wrapped__ = fun
        new.__omnistage_converted__ = True
        new.__omnistage_template__ = self
        return new


def _template(fun):
    """The cached rewrite of `fun`'s code object, or why it cannot be rewritten."""
    code = fun.__code__
    template = _TEMPLATES.get(code)
    if template is not None and (isinstance(template, str) or template.fits(fun)):
        return template
    _CURRENT_FILE.append(code.co_filename)
    try:
        template = _rewrite(fun, _parse(fun))
    except _NoSource as e:
        template = str(e)
    except (SyntaxError, _RewriteError) as e:  # pragma: no cover - a rewrite bug; keep the user's code running
        template = f"the rewrite failed ({e})"
        warnings.warn(f"omnistage could not convert {fun.__qualname__}: {e}", stacklevel=3)
    finally:
        _CURRENT_FILE.pop()
    _TEMPLATES[code] = template
    return template


class _RewriteError(Exception):
    pass


def _source_lines(code):
    """(lines, first line number, exact) of `code`'s `def`: its file's lines from the def's
    first line on (exact False: the block is still to be cut, see _parse), read as
    inspect.getsourcelines reads them but without its search of sys.modules for the module that
    holds `code` (inspect.getmodule: a realpath of every imported module's file, ~9 ms of a
    process's first trace), which only matters for sources linecache cannot read from the file
    itself (a zip import's loader): those go the slow way, cut already (exact True)."""
    filename = code.co_filename
    if not (filename.startswith("<") and filename.endswith(">")):
        linecache.checkcache(filename)  # an edited file is read again, as inspect does
    lines = linecache.getlines(filename)
    first = code.co_firstlineno
    if not lines or first < 1 or first > len(lines):
        return (*inspect.getsourcelines(code), True)
    return lines[first - 1:], first, False


def _indent(line):
    return len(line) - len(line.lstrip())


def _block_by_indentation(lines):
    """The leading `def` block of `lines` (decorators first) cut by indentation: up to the
    first line after the `def` line, neither blank nor a comment, indented no deeper than it.
    A guess, checked by parsing it: a string, bracket or continuation that crosses the cut
    leaves it unparsable. None without a `def` line at the first line's indentation.

    Why: inspect.getblock runs the tokenize module over the block, and its first use in a
    process compiles tokenize's regular expressions (~1.3 ms) before a line is read; the
    tokenizer itself is Python code run per token (a fresh process's first jit of a small
    function spent ~3 ms in getblock)."""
    base = _indent(lines[0])
    i = 0
    while i < len(lines) and not lines[i].lstrip().startswith(("def ", "async def ")):
        i += 1
    if i == len(lines) or _indent(lines[i]) != base:
        return None
    for j in range(i + 1, len(lines)):
        text = lines[j].strip()
        if text and not text.startswith("#") and _indent(lines[j]) <= base:
            return lines[:j]
    return lines


def _parse(fun):
    """The `def` (or lambda, as a `def`) of `fun` as an AST located at the user's lines."""
    code = fun.__code__
    if code.co_name == "<lambda>":
        return _parse_lambda(fun)
    try:
        # the code object, not the function: `inspect` follows `__wrapped__` from a function,
        # which would give a decorator's wrapper the source of the function it wraps
        lines, first, exact = _source_lines(code)
    except (OSError, TypeError) as e:
        raise _NoSource(f"its source is not available ({e})") from None
    if not exact:
        guess = _block_by_indentation(lines)
        fndef = _parse_block(guess, first, code, checked=False) if guess else None
        if fndef is not None:
            return fndef
        lines = inspect.getblock(lines)
    return _parse_block(lines, first, code)


def _parse_block(lines, first, code, checked=True):
    """The FunctionDef of `code` parsed from its source `lines` (first: the first one's line
    number); when it does not parse as that `def`: _NoSource raised, or None if not `checked`."""
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    try:
        tree = ast_threads.parse(dedented)
    except SyntaxError as e:
        if not checked:
            return None
        raise _NoSource(f"its source does not parse on its own ({e.msg})") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != code.co_name:
        if not checked:
            return None
        raise _NoSource("its source is not a single `def` statement")
    ast.increment_lineno(tree, first - 1)
    if indent:
        for node in walk(tree):
            if hasattr(node, "col_offset") and node.col_offset is not None:
                node.col_offset += indent
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += indent
    return tree.body[0]


# --- lambdas: found in their file's AST by line, parameters and columns -----------------------

_FILE_LAMBDAS = {}  # filename -> (hash of its text, {line: [ast.Lambda]})


def _parse_lambda(fun):
    code = fun.__code__
    params = _code_params(code)
    found = [n for n in _lambdas_of(code.co_filename, fun.__globals__).get(code.co_firstlineno, ())
             if _lambda_params(n) == params]
    if len(found) > 1:
        found = _holding(found, code)
    if len(found) != 1:
        raise _NoSource(f"its source is not available (line {code.co_firstlineno} has "
                        f"{len(found) or 'no'} lambdas that could be it)")
    lam = copy.deepcopy(found[0])
    fndef = _function("lambda_", [], [ast.copy_location(ast.Return(lam.body), lam.body)], [])
    fndef.args = lam.args
    return ast.copy_location(fndef, lam)


def _lambdas_of(filename, module_globals):
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        raise _NoSource(f"its source is not available (no source lines for {filename})")
    text = "".join(lines)
    cached = _FILE_LAMBDAS.get(filename)
    if cached is not None and cached[0] == hash(text):
        return cached[1]
    try:
        tree = ast_threads.parse(text)
    except SyntaxError as e:
        raise _NoSource(f"its file does not parse ({e.msg})") from None
    by_line = {}
    for node in walk(tree):
        if isinstance(node, ast.Lambda):
            by_line.setdefault(node.lineno, []).append(node)
    _FILE_LAMBDAS[filename] = (hash(text), by_line)
    return by_line


def _code_params(code):
    """Parameter names in the order CPython lays them out: positional, keyword-only, *, **."""
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:n])


def _lambda_params(node):
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    return names + [x.arg for x in (a.vararg, a.kwarg) if x is not None]


def _holding(lambdas, code):
    """The lambdas (of one line) whose span holds every position `code` has: the innermost
    one when lambdas nest. Python < 3.11 has no positions: every candidate stays."""
    if not hasattr(code, "co_positions"):
        return lambdas
    # (zero-width positions, such as the RESUME at column 0 that starts every code object, say nothing)
    spots = [(l, c, el, ec) for l, el, c, ec in code.co_positions()
             if None not in (l, el, c, ec) and (l, c) != (el, ec)]
    if not spots:
        return lambdas
    held = [n for n in lambdas if all(
        (n.lineno, n.col_offset) <= (l, c) and (el, ec) <= (n.end_lineno, n.end_col_offset)
        for l, c, el, ec in spots)]
    if len(held) > 1:  # nested lambdas hold the same spots: the innermost starts last
        last = max((n.lineno, n.col_offset) for n in held)
        held = [n for n in held if (n.lineno, n.col_offset) == last]
    return held


# --- the rewritten function ---------------------------------------------------------------------


def _rewrite(fun, fndef):
    fndef.decorator_list = []
    names = all_names(fndef) | set(fun.__code__.co_freevars) | set(fun.__globals__)
    namer = _Namer(names, _bound_names(fndef) | set(fun.__code__.co_freevars))
    _ScopeConverter(fun, namer, fndef).convert_function(fndef)
    ast.fix_missing_locations(fndef)
    display = copy.copy(fndef)  # (under the user's name; nothing below edits its body)
    runtime = Runtime(fun.__code__.co_filename, namer.return_vars)
    # Compiled under a name the user never uses: a `def f` inside the maker would make `f` a
    # local of the maker, so a recursive call would look for a closure cell that is not there.
    fndef.name = namer.fresh_plain("_omnistage_function")
    return _Template(_compile(fun, fndef), runtime, display, fun)


def _enclosing_class(fun):
    parts = fun.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None


def _compile(fun, fndef):
    """Compile `fndef` as `fun`'s replacement code: the same free variables (closure cells)
    plus one holding the runtime (`_omni`)."""
    freevars = [v for v in fun.__code__.co_freevars if v != "__class__"]
    inner = fndef
    cls = _enclosing_class(fun)
    if cls is not None or "__class__" in fun.__code__.co_freevars:
        # A class body keeps private-name mangling and the implicit `__class__` cell.
        inner = ast.ClassDef(cls or "_omnistage_class", [], [], [fndef], [])
        if sys.version_info >= (3, 12):
            inner.type_params = []
    maker = ast.FunctionDef(
        "_omnistage_make",
        ast.arguments(posonlyargs=[], args=[ast.arg(v) for v in freevars + [RUNTIME_NAME]], vararg=None,
                      kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        [inner, ast.Return(ast.Constant(None))], [], None,
        **({"type_params": []} if sys.version_info >= (3, 12) else {}),
    )
    for node in (maker, inner, *maker.body[1:]):
        ast.copy_location(node, fndef)
    module = ast.Module([maker], [])
    # locations for the maker's own nodes only: `fndef`'s are complete (_rewrite), and a
    # second walk over it cost as much as the first
    holder = maker.body if inner is fndef else inner.body
    holder[0] = ast.copy_location(ast.Pass(), fndef)
    ast.fix_missing_locations(module)
    holder[0] = fndef
    code = ast_threads.compile_tree(module, fun.__code__.co_filename, "exec")
    _mark_rewritten(code)
    fcode = _find_code(code, fndef.name, fndef.lineno)
    unknown = set(fcode.co_freevars) - set(fun.__code__.co_freevars) - {RUNTIME_NAME}
    if unknown:
        raise _RewriteError(f"free variables {sorted(unknown)} have no closure cell")
    fcode = fcode.replace(co_name=fun.__code__.co_name)
    if hasattr(fcode, "co_qualname"):
        fcode = fcode.replace(co_qualname=fun.__code__.co_qualname)
    _REWRITTEN_CODE.add(fcode)
    return fcode


def _mark_rewritten(code):
    """Remember every function code object the rewrite compiled: functions nested in a
    converted function are converted already and must not be rewritten again."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _REWRITTEN_CODE.add(const)
            _mark_rewritten(const)


def _find_code(code, name, lineno):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == lineno:
                return const
            found = _find_code_or_none(const, name, lineno)
            if found is not None:
                return found
    raise _NoSource("the rewritten function could not be found after compiling")


def _find_code_or_none(code, name, lineno):
    try:
        return _find_code(code, name, lineno)
    except _NoSource:
        return None


# --- names ----------------------------------------------------------------------------------


class _Namer:
    """Fresh names for generated functions and variables, never clashing with the user's."""

    def __init__(self, taken, bound=()):
        self.taken = set(taken) | {RUNTIME_NAME}
        self.bound = set(bound)  # names the user binds in the function (args, locals, closure)
        self.generated = set()
        self.return_vars = set()

    def fresh(self, base):
        i = 1
        while f"{base}_{i}" in self.taken:
            i += 1
        name = f"{base}_{i}"
        self.taken.add(name)
        self.generated.add(name)
        return name

    def fresh_plain(self, base):
        name = base
        i = 0
        while name in self.taken:
            i += 1
            name = f"{base}_{i}"
        self.taken.add(name)  # a variable of the user's program, not a generated helper
        return name


def _bound_names(tree):
    """Names bound anywhere in `tree`: arguments, assignment targets, defs, imports."""
    names = set()
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def all_names(tree):
    """Every identifier bound or used in `tree` (names, arguments, defined functions)."""
    names = set()
    for node in walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _walk_scope(nodes):
    """Nodes of the current function scope (not inside nested defs, classes or lambdas)."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _target_names(target, out):
    if isinstance(target, ast.Name):
        out.append(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            _target_names(e, out)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, out)


def assigned_names(stmts, generated=()):
    """Names a block binds in the enclosing function's scope, in first-binding order."""
    out = []
    for node in _walk_scope(stmts):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _target_names(t, out)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and (not isinstance(node, ast.AnnAssign) or node.value):
            _target_names(node.target, out)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _target_names(node.target, out)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            _target_names(node.optional_vars, out)
        elif isinstance(node, ast.NamedExpr):
            _target_names(node.target, out)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.append(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.extend((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(node.name)
    seen, ordered = set(), []
    for n in out:
        if n not in seen and n not in generated and n != RUNTIME_NAME:
            seen.add(n)
            ordered.append(n)
    return ordered


def _declared(stmts, kind):
    names = set()
    for node in _walk_scope(stmts):
        if isinstance(node, kind):
            names.update(node.names)
    return names


# --- exits: what keeps a block from becoming a function -------------------------------------


def _block_exits(stmts, in_loop_ok):
    """The first statement kind that cannot move into a body function: `break`/`continue`
    not inside a nested loop, `return`, `raise`, `del`, `global`/`nonlocal`, `yield`."""
    stack = [(s, False) for s in reversed(stmts)]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            return "break" if isinstance(node, ast.Break) else "continue"
        if isinstance(node, ast.Return):
            return "return"
        if isinstance(node, ast.Raise):
            return "raise"
        if isinstance(node, ast.Delete):
            return "del"
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)):
            return "raise"
        nested_loop = in_loop or isinstance(node, (ast.For, ast.While, ast.AsyncFor))
        for child in reversed(list(ast.iter_child_nodes(node))):
            # a loop's own `else` block is not inside the loop for break/continue
            stack.append((child, nested_loop and not _is_loop_else(node, child)))
    return None


def _is_loop_else(loop, child):
    return isinstance(loop, (ast.For, ast.While)) and any(child is s for s in loop.orelse)


# --- return inside if: one exit ---------------------------------------------------------------


def _contains(node_or_list, kinds):
    nodes = node_or_list if isinstance(node_or_list, list) else [node_or_list]
    return any(isinstance(n, kinds) for n in _walk_scope(nodes))


def _returns_only_in_ifs(stmts):
    """True when every `return` sits in a chain of `if`s (no loop, with or try around it)."""
    for s in stmts:
        if isinstance(s, ast.If):
            if not _returns_only_in_ifs(s.body) or not _returns_only_in_ifs(s.orelse):
                return False
        elif not isinstance(s, ast.Return) and _contains(s, ast.Return):
            return False
    return True


def _falls_through(block):
    if not block:
        return True
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return False
    if isinstance(last, ast.If):
        return _falls_through(last.body) or _falls_through(last.orelse)
    return True


def _lift(block):
    """Move the statements after an `if` that returns into its branches that fall through."""
    for i, s in enumerate(block):
        if isinstance(s, ast.If) and _contains(s, ast.Return):
            rest = block[i + 1:]
            s.body = _lift(s.body + (copy.deepcopy(rest) if _falls_through(s.body) else []))
            s.orelse = _lift(s.orelse + (copy.deepcopy(rest) if _falls_through(s.orelse) else []))
            return block[:i] + [s]
        if isinstance(s, (ast.Return, ast.Raise)):
            return block[:i + 1]  # unreachable code after an exit is dropped
    return block


def _assign_returns(block, var):
    out = []
    for s in block:
        if isinstance(s, ast.Return):
            value = s.value if s.value is not None else ast.Constant(None)
            out.append(ast.copy_location(ast.Assign([ast.Name(var, ast.Store())], value), s))
        elif isinstance(s, ast.If) and _contains(s, ast.Return):
            s.body = _assign_returns(s.body, var)
            s.orelse = _assign_returns(s.orelse, var)
            out.append(s)
        else:
            out.append(s)
    return out


def _single_exit(fndef, namer):
    """Rewrite `return` inside `if`s to one exit; returns the result variable's name, or None
    when the function needs no rewrite (or cannot have one: a return inside a loop)."""
    body = fndef.body
    if not any(isinstance(s, ast.If) and _contains(s, ast.Return) for s in body):
        return None
    if not _returns_only_in_ifs(body):
        return None
    body = _lift(body)
    if _falls_through(body):
        body.append(ast.copy_location(ast.Return(None), body[-1]))
    var = namer.fresh_plain("return_value")
    namer.return_vars.add(var)
    last = body[-1]
    fndef.body = _assign_returns(body, var) + [ast.copy_location(ast.Return(ast.Name(var, ast.Load())), last)]
    return var


# --- the rewrite ------------------------------------------------------------------------------


def _rt(attr):
    return ast.Attribute(ast.Name(RUNTIME_NAME, ast.Load()), attr, ast.Load())


def _rt_call(attr, args):
    return ast.Call(_rt(attr), args, [])


def _names_tuple(names, ctx):
    return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())


def _str_tuple(names):
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _locals_call():
    return ast.Call(ast.Name("locals", ast.Load()), [], [])


def _function(name, params, body, decls):
    return ast.FunctionDef(
        name,
        ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                      kw_defaults=[], kwarg=None, defaults=[]),
        decls + (body or [ast.Pass()]), [], None,
        **({"type_params": []} if sys.version_info >= (3, 12) else {}),
    )


def _located(nodes, where):
    """Give generated nodes (those without a location) the first line of the user's
    statement `where`. One line only: CPython attributes a method call to the line its
    attribute ends on, so a span covering the whole construct would report its last line."""
    line = linecache.getline(_CURRENT_FILE[-1], where.lineno) if _CURRENT_FILE else ""
    end_col = max(len(line.rstrip()), where.col_offset + 1)
    for n in nodes:
        for child in walk(n):
            if "lineno" in child._attributes and getattr(child, "lineno", None) is None:
                child.lineno, child.col_offset = where.lineno, where.col_offset
                child.end_lineno, child.end_col_offset = where.lineno, end_col
    return nodes


_CURRENT_FILE = ThreadLocalStack()  # the file this thread is converting (column spans of generated nodes)


class _ScopeConverter:
    """Rewrites one function scope's statements (nested scopes get their own converter)."""

    def __init__(self, fun, namer, fndef):
        self.fun = fun
        self.namer = namer
        self.globals_ = _declared(fndef.body, ast.Global)
        self.nonlocals = _declared(fndef.body, ast.Nonlocal)
        self.exprs = _ExprRewriter(self)

    def convert_function(self, fndef):
        _single_exit(fndef, self.namer)
        fndef.body = self.block(fndef.body)
        for d in fndef.args.defaults + [d for d in fndef.args.kw_defaults if d is not None]:
            self.exprs.visit(d)

    # --- statements ----------------------------------------------------------------

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, ast.FunctionDef):
            s.decorator_list = [self.exprs.visit(d) for d in s.decorator_list]
            _ScopeConverter(self.fun, self.namer, s).convert_function(s)
            return [s]
        if isinstance(s, (ast.AsyncFunctionDef, ast.ClassDef)):
            return [s]
        if isinstance(s, ast.If):
            return self.if_stmt(s)
        if isinstance(s, ast.While):
            return self.while_stmt(s)
        if isinstance(s, ast.For):
            return self.for_stmt(s)
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and getattr(s, field) and isinstance(getattr(s, field)[0], ast.stmt):
                setattr(s, field, self.block(getattr(s, field)))
        if isinstance(s, ast.Try):
            for h in s.handlers:
                h.body = self.block(h.body)
        for field, value in ast.iter_fields(s):
            if isinstance(value, ast.expr):
                setattr(s, field, self.exprs.visit(value))
            elif isinstance(value, list) and value and isinstance(value[0], (ast.expr, ast.withitem)):
                setattr(s, field, [self.exprs.visit(v) for v in value])
        return [s]

    def _state(self, stmts, extra=()):
        skip = self.globals_ | self.nonlocals
        names = [n for n in list(extra) + assigned_names(stmts, self.namer.generated) if n not in skip]
        return list(dict.fromkeys(names))

    def _decls(self, stmts):
        assigned = set(assigned_names(stmts))
        decls = []
        if assigned & self.globals_:
            decls.append(ast.Global(sorted(assigned & self.globals_)))
        if assigned & self.nonlocals:
            decls.append(ast.Nonlocal(sorted(assigned & self.nonlocals)))
        return decls

    def _assign_state(self, names, call, where):
        if names:
            node = ast.Assign([_names_tuple(names, ast.Store)], call)
        else:
            node = ast.Expr(call)
        return _located([node], where)

    def if_stmt(self, s):
        test = self.exprs.visit(s.test)
        body, orelse = self.block(s.body), self.block(s.orelse)
        exit_kind = _block_exits(body + orelse, False)
        if exit_kind is not None:
            s.test = _rt_call("static_test", [test, ast.Constant(f"if:{exit_kind}"), ast.Constant(s.lineno)])
            s.body, s.orelse = body, orelse
            _located([s.test], s)
            return [s]
        names = self._state(body + orelse)
        ret = ast.Return(_names_tuple(names, ast.Load))
        true_name, false_name = self.namer.fresh("if_true"), self.namer.fresh("if_false")
        true_fn = _function(true_name, names, body + [ret], self._decls(body))
        false_fn = _function(false_name, names, orelse + [copy.deepcopy(ret)], self._decls(orelse))
        call = _rt_call("if_stmt", [
            test, ast.Name(true_name, ast.Load()), ast.Name(false_name, ast.Load()), _locals_call(),
            _str_tuple(names), ast.Constant(s.lineno),
        ])
        return _located([true_fn, false_fn], s) + self._assign_state(names, call, s)

    def while_stmt(self, s):
        test = self.exprs.visit(s.test)
        body, orelse = self.block(s.body), self.block(s.orelse)
        exit_kind = _block_exits(body, False)
        if exit_kind is not None:
            s.test = _rt_call("static_test", [test, ast.Constant(f"while:{exit_kind}"), ast.Constant(s.lineno)])
            s.body, s.orelse = body, orelse
            _located([s.test], s)
            return [s]
        names = self._state(body)
        test_name, body_name = self.namer.fresh("while_test"), self.namer.fresh("while_body")
        test_fn = _function(test_name, names, [ast.Return(test)], [])
        body_fn = _function(body_name, names, body + [ast.Return(_names_tuple(names, ast.Load))], self._decls(body))
        call = _rt_call("while_stmt", [
            ast.Name(test_name, ast.Load()), ast.Name(body_name, ast.Load()), _locals_call(),
            _str_tuple(names), ast.Constant(s.lineno),
        ])
        # without `break`, a loop's `else` always runs after it
        return _located([test_fn, body_fn], s) + self._assign_state(names, call, s) + orelse

    def for_stmt(self, s):
        s.iter = self.exprs.visit(s.iter)
        body, orelse = self.block(s.body), self.block(s.orelse)
        s.body, s.orelse = body, orelse
        if not _is_range_loop(s):
            return [s]
        range_fn, args = s.iter.func, ast.Tuple(s.iter.args, ast.Load())
        exit_kind = _block_exits(body, False)
        if exit_kind is not None:
            s.iter = _rt_call("static_range", [range_fn, args, ast.Constant(f"for:{exit_kind}"), ast.Constant(s.lineno)])
            _located([s.iter], s)
            return [s]
        target = s.target.id
        names = self._state(body, extra=[target])
        if target in self.globals_ | self.nonlocals:
            return [s]
        body_name = self.namer.fresh("for_body")
        body_fn = _function(body_name, names, body + [ast.Return(_names_tuple(names, ast.Load))], self._decls(body))
        call = _rt_call("for_stmt", [
            range_fn, args, ast.Name(body_name, ast.Load()), _locals_call(), _str_tuple(names),
            ast.Constant(s.lineno),
        ])
        return _located([body_fn], s) + self._assign_state(names, call, s) + orelse


def _is_range_loop(s):
    it = s.iter
    return (
        isinstance(s.target, ast.Name)
        and isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and 1 <= len(it.args) <= 3
        and not it.keywords
        and not any(isinstance(a, ast.Starred) for a in it.args)
    )


# --- expressions ----------------------------------------------------------------------------

_NO_THUNK = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)
_FRAME_BUILTINS = {"super", "locals", "globals", "vars", "eval", "exec", "dir"}


def _thunk(expr):
    return ast.Lambda(
        ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        expr,
    )


def _thunkable(*exprs):
    return not any(isinstance(n, _NO_THUNK) for e in exprs for n in walk(e))


class _ExprRewriter(ast.NodeTransformer):
    """Conditional expressions, `and`/`or`/`not` and calls, anywhere in an expression."""

    def __init__(self, scope):
        self.scope = scope

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not _thunkable(node.body, node.orelse):
            return node
        call = _rt_call("if_exp", [node.test, _thunk(node.body), _thunk(node.orelse), ast.Constant(node.lineno)])
        return _located([call], node)[0]

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if not _thunkable(*node.values[1:]):
            return node
        attr = "and_" if isinstance(node.op, ast.And) else "or_"
        call = _rt_call(attr, [node.values[0]] + [_thunk(v) for v in node.values[1:]])
        return _located([call], node)[0]

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _located([_rt_call("not_", [node.operand])], node)[0]
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if self._leave_call(node.func):
            return node
        node.func = _located([_rt_call("call", [node.func])], node.func)[0]
        return node

    def _leave_call(self, func):
        """Calls that need no recursive conversion: frame-sensitive builtins, builtins the
        user does not rebind, the runtime, and functions of modules never converted."""
        fun_globals = self.scope.fun.__globals__
        if isinstance(func, ast.Name):
            name = func.id
            if name in _FRAME_BUILTINS or name == RUNTIME_NAME:
                return True
            return hasattr(builtins, name) and name not in fun_globals and name not in self.scope.namer.bound
        if isinstance(func, ast.Attribute):
            base = func.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                if base.id == RUNTIME_NAME:
                    return True
                module = fun_globals.get(base.id)
                if isinstance(module, types.ModuleType) and base.id not in self.scope.namer.bound:
                    return module.__name__.split(".")[0] in _SKIP_MODULES or module.__name__ in sys.builtin_module_names
        return False


__all__ = ["convert", "converted_source", "assigned_names", "call_unconverted", "conversion_is_off",
           "why_not_converted"]
