"""The generated Numba module translated to C, for the native tier (c_tier.py).

emit_cpu writes a small, regular subset of Python: loop nests over `range`, scalar arithmetic on
NumPy-typed values, element reads and writes of arrays whose shapes are all static, calls of
`support` (`_rt`), `kernels` (`_kn`) and `vmath` functions, and helper functions for
control-flow bodies. This module reads that module's AST and writes the same statements as C
(runtime in c_runtime.py, vmath in c_vmath.py), typing every value as Numba would: integer
arithmetic widened to 64 bits, the emitter's casts back to each result's width, NumPy's
promotion between floats.

Whatever it does not recognize raises `Unsupported`, and the program keeps the Numba path: an
unknown construct is never guessed at. Arrays are C pointers with a static layout (dtype, shape
and strides known here), so an element access is a constant-stride address computation and the C
compiler sees fixed trip counts. A translated function allocates from the call's arena
(c_runtime.SOURCE explains the memory scheme); a loop whose body allocates releases the
iteration's memory at its end, after copying the array values that live on into slots.
"""
import ast
import collections
import re
import threading

import numpy as np

from .aot import OBJECT_CALL, OBJECT_LAYOUT
from . import c_calls, c_complex, c_conv, c_copy, c_in_place, c_lapack, c_linalg, c_runtime, c_sgemm, c_vmath, c_windows
from .c_calls import dotted, index_elts, is_call_to, static_int
from .c_types import (C_TYPES, COMPLEX_PART, COMPLEX_SUFFIX, FLOAT_NAME, NP_TYPES, Arr, Scalar, Tup, Unsupported,
                      arith_type, c_literal, convert_code, copy_lines, is_int, same_type, wide)
from ..staging.ast_walk import walk


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


_memo = threading.local()  # {id(node): the nodes under it} while a module is translated (translate)


def _nodes(node):
    """The nodes under `node` (walk's list), kept while one module is translated: the loop
    rules look at each loop's body several times, and each enclosing loop's rules again
    (a walk per rule, per loop and per nesting level was most of the translator's time). The
    module's AST is not edited meanwhile."""
    memo = getattr(_memo, "nodes", None)
    if memo is None:
        return list(walk(node))
    found = memo.get(id(node))
    if found is None:
        found = memo[id(node)] = (node, list(walk(node)))  # (the node kept: its id stays its own)
    return found[1]


def names_in(nodes):
    return {n.id for node in nodes for n in _nodes(node) if isinstance(n, ast.Name)}


def _assigned_in(nodes):
    out = set()
    for node in nodes:
        for n in _nodes(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


def _allocates(nodes, helpers):
    for node in nodes:
        for n in _nodes(node):
            if isinstance(n, ast.Call):
                name = dotted(n.func)
                if name in _ALLOCATING or name in helpers:
                    return True
    return False


# (np.empty: a parallel loop's row temporary, "one row, per thread": released at the end of its
# iteration, the next one gets the same memory, still in cache; kept, softmax's 4096 rows walked
# 8 MB of fresh arena per call)
_ALLOCATING = {"_rt.empty", "np.empty", "_rt.full", "_rt.copy", "_rt.astype", "_rt.contiguous", "_rt.reshape",
               "_kn.matmul"}  # a product copies an operand that is not contiguous


class Translation(tuple):
    """(C source, whether it calls BLAS, whether it calls LAPACK), and `numba_kernels`: the
    (name, signature) entries of its table of Numba kernels, in slot order."""

    def __new__(cls, items, numba_kernels):
        self = super().__new__(cls, items)
        self.numba_kernels = numba_kernels
        return self


class Module:
    """The translation of one generated module: its constants and, on demand, each function
    specialized to the types it is called with."""

    def __init__(self, source, vmath_names):
        self.tree = ast.parse(source)
        self.vmath = set(vmath_names)
        self.consts = {}  # name -> (c name, type, value)
        self.functions = {}
        self.specs = {}  # (name, arg types) -> (c name, result types)
        self.decls = []  # C definitions, callees first
        self.uses_gemm = False
        self.sections = set()  # optional runtime parts prepended: "lapack" (c_lapack), "linalg" (c_linalg), "sgemm" (c_sgemm), "conv" (c_conv), "windows" (c_windows), "copy" (c_copy)
        self.threads = False  # a loop runs on the GEMM pool's threads (`omnistage_threads` switches them on)
        self.sorts = set()  # key dtypes whose c_sort function is in decls
        self.numba_kernels = []  # (kernel name, argument signature) called in their Numba build (numba_kernel_table)
        self.entry = None  # the entry function's name (translate)
        self.pool_loops = 0  # parallel loops, outlined for the GEMM pool
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self._constant(node.targets[0].id, node.value)
            else:
                raise Unsupported(f"module statement {ast.dump(node)[:60]}")

    def _constant(self, name, node):
        # the module's constants are our own emitter's typed literals, evaluated here with NumPy
        text = ast.unparse(node)
        try:
            value = eval(compile(text, "<constant>", "eval"), {"np": np, "__builtins__": {}})  # noqa: S307
        except Exception as e:  # noqa: BLE001
            raise Unsupported(f"constant {name} = {text[:40]} ({e})") from None
        if isinstance(value, np.ndarray):
            dtype = value.dtype.name
            if dtype not in C_TYPES:
                raise Unsupported(f"constant array of {dtype}")
            c_name = f"os_k_{name.lstrip('_')}"
            items = ", ".join(c_literal(v, dtype) for v in value.ravel()) or "0"
            self.decls.append(f"static const {C_TYPES[dtype]} {c_name}[{max(value.size, 1)}] = {{{items}}};")
            self.consts[name] = (c_name, Arr(dtype, value.shape), value)
        elif isinstance(value, np.generic) and value.dtype.name in C_TYPES:
            dtype = value.dtype.name
            self.consts[name] = (c_literal(value, dtype), Scalar(dtype), value)
        else:
            raise Unsupported(f"constant {name} of type {type(value).__name__}")

    def numba_kernel(self, name, signature):
        """The slot of runtime kernel `name`'s Numba build for `signature` in the library's table."""
        entry = (name, [list(a) for a in signature])
        if entry not in self.numba_kernels:
            self.numba_kernels.append(entry)
        return self.numba_kernels.index(entry)

    def function(self, name, arg_types):
        """The C name and result types of `name` specialized to `arg_types` (translated once).
        A caller may pass an array result's destination in its result pointer (else NULL): a
        result the function allocates once and returns as it is is built there, uncopied (the
        entry's results in their output buffers, a loop body's carries in their slots)."""
        key = (name, tuple(arg_types))
        if key not in self.specs:
            node = self.functions.get(name)
            if node is None:
                raise Unsupported(f"call of {name}")
            c_name = f"os_fn_{name}_{len(self.specs)}"
            self.specs[key] = None  # recursion guard
            body, results = FunctionTranslator(self, node, arg_types, c_name).translate()
            self.specs[key] = (c_name, results)
            self.decls.append(body)
        spec = self.specs[key]
        if spec is None:
            raise Unsupported(f"recursive call of {name}")
        return spec


def translate(source, entry, in_types, out_types, vmath_names):
    """C source of the library for `entry` of the generated module `source`: the runtime, the
    vmath kernels, the translated functions and `int32_t omnistage_aot_main(void **buffers)`
    (aot's ABI: inputs, then constants, then outputs, each a pointer to C-ordered data; rank-0
    values are read from and written to their buffer). `in_types`/`out_types` are
    (shape, dtype name) pairs. Returns (source, whether it calls BLAS, whether it calls
    LAPACK). Raises Unsupported."""
    outer, _memo.nodes = getattr(_memo, "nodes", None), {}
    try:
        return _translate(source, entry, in_types, out_types, vmath_names)
    finally:
        _memo.nodes = outer


def _translate(source, entry, in_types, out_types, vmath_names):
    module = Module(source, vmath_names)
    module.entry = entry
    arg_types = [Scalar(dt) if len(shape) == 0 else Arr(dt, shape) for shape, dt in in_types]
    c_name, results = module.function(entry, arg_types)
    if len(results) != len(out_types):
        raise Unsupported("result count")
    lines = ["int32_t omnistage_aot_main(void **buffers) {", "    os_arena arena = os_arena_open();"]
    args = []
    for k, t in enumerate(arg_types):
        ct = C_TYPES[t.dtype]
        args.append(f"*({ct} *)buffers[{k}]" if isinstance(t, Scalar) else f"({ct} *)buffers[{k}]")
    outs = []
    for k, (t, (shape, dt)) in enumerate(zip(results, out_types)):
        if t.dtype != dt or (isinstance(t, Arr) and t.shape != tuple(shape)) or (isinstance(t, Scalar) and len(shape)):
            raise Unsupported(f"result {k} is {t}, expected {dt}{list(shape)}")
        ct = C_TYPES[t.dtype]
        # an array result starts as its output buffer: the entry builds its destinations there
        lines.append(f"    {ct} *r{k} = ({ct} *)buffers[{len(arg_types) + k}];" if isinstance(t, Arr) else f"    {ct} r{k};")
        outs.append(f"&r{k}")
    lines.append(f"    if ({c_name}(&arena{''.join(', ' + a for a in args + outs)})) {{ os_release(&arena); return 1; }}")
    for k, t in enumerate(results):
        slot = f"buffers[{len(arg_types) + k}]"
        ct = C_TYPES[t.dtype]
        if isinstance(t, Scalar):
            lines.append(f"    *({ct} *){slot} = r{k};")
        else:
            copy = copy_lines(f"({ct} *){slot}", Arr(t.dtype, t.shape), f"r{k}", t)
            if copy:
                lines.append(f"    if (r{k} != ({ct} *){slot}) {{")
                lines.extend(f"        {line}" for line in copy)
                lines.append("    }")
    lines += ["    os_release(&arena);", "    return 0;", "}"]
    lines += object_call_lines(len(arg_types) + len(results))
    sections = (("lapack", c_lapack.SOURCE), ("linalg", c_linalg.SOURCE), ("sgemm", c_sgemm.STUB), ("conv", c_conv.STUB),
                ("windows", c_windows.STUB), ("copy", c_copy.STUB))
    optional = [source for name, source in sections if name in module.sections]
    if module.numba_kernels:
        optional.append(f"/* the native entries of the Numba kernels it calls, set when it is loaded (numba_kernel_table) */\n"
                        f"int64_t omnistage_numba_kernels[{len(module.numba_kernels)}];")
    if module.threads:
        optional.append("/* set by the process (aot.AotProgram): 1 runs the parallel loops on the GEMM pool's threads */\n"
                        "int32_t omnistage_threads = 0;")
    parts = [c_runtime.SOURCE, c_complex.SOURCE, *optional, c_vmath.SOURCE, *module.decls, "\n".join(lines)]
    return Translation(("\n\n".join(parts) + "\n", module.uses_gemm, "lapack" in module.sections), module.numba_kernels)


def object_call_lines(buffers):
    """`int32_t omnistage_aot_call(const char *objects)`: omnistage_aot_main on the data of
    the `buffers` ndarrays of the tuple `objects` (inputs, constants, outputs), read where
    OBJECT_LAYOUT says the process keeps a tuple's items and an ndarray's data pointer (set
    when the library is loaded: aot.object_layout). A cached call then passes one tuple instead
    of building an array of pointers in Python (~3 us of a 16 us call with seven buffers).
    The caller holds the tuple, so reading it without the GIL is safe."""
    return ["", "/* set by the process when it loads the library (aot.object_layout) */",
            f"int64_t {OBJECT_LAYOUT}[2];",
            f"int32_t {OBJECT_CALL}(const char *objects) {{",
            f"    void *b[{buffers + 1}];",
            f"    for (int k = 0; k < {buffers}; k++) {{",
            f"        const char *item = *(const char *const *)(objects + {OBJECT_LAYOUT}[0] + k * (int64_t)sizeof(void *));",
            f"        b[k] = *(void *const *)(item + {OBJECT_LAYOUT}[1]);",
            "    }",
            "    return omnistage_aot_main(b);",
            "}"]


class FunctionTranslator:
    """One function of the module, specialized to its argument types."""

    def __init__(self, module, node, arg_types, c_name):
        self.m, self.node, self.c_name = module, node, c_name
        self.destinations = _destinations(node)  # name -> its result slot (Module.function)
        self.loop_destinations = (None, {})  # (body depth, {name: where the loop keeps it}) (_loop)
        params = node.args
        if params.vararg or params.kwarg or params.kwonlyargs or params.defaults or params.posonlyargs:
            raise Unsupported(f"signature of {node.name}")
        if len(params.args) != len(arg_types):
            raise Unsupported(f"arity of {node.name}")
        self.temps = set()
        self.lanes = {}  # reduction accumulator -> its partial sum (lane_reduction)
        self.types = {}  # C name of a local -> its type
        self.versions = {}  # Python name -> the C name of its current binding
        self.scopes = []  # ("loop", node) / ("if", node) around the statement being translated
        self._outside = {}  # loop node -> names used outside it
        self._typed_loops = set()  # allocating loops whose body was translated once for its types (_loop)
        self.params = [a.arg for a in params.args]
        for name, t in zip(self.params, arg_types):
            self.types[self.c(name)] = t
        self.lines = []
        self.tmp = 0
        self.results = None

    # --- helpers --------------------------------------------------------------------------

    def fresh(self, prefix="t"):
        self.tmp += 1
        name = f"os_{prefix.lstrip('_')}{self.tmp}"
        self.temps.add(name)
        return name

    def c(self, name):
        """The C name of local `name`'s current binding (a reduction's accumulator is its
        partial result inside lane_reduction)."""
        return self.lanes.get(name) or self.c_outer(name)

    def declare(self, name, t):
        """Give `name` type `t` from here on. A name bound again with another type outside
        every loop and branch (`_acc = np.float32(_acc)`) is a new C variable, as Numba's
        SSA makes it; inside one the types would have to merge, which is not translated."""
        if name in self.lanes:
            if not same_type(self.types[self.c_outer(name)], t):
                raise Unsupported(f"reduction step of {name} changes its type")
            return
        cname = self.c(name)
        old = self.types.get(cname)
        if old is None:
            self.types[cname] = t
        elif not same_type(old, t):
            if name in self.temps or not self._rebindable(name):
                raise Unsupported(f"{name} is {old} and {t}")
            fresh = f"v_{name}__{len(self.versions) + 1}"
            while fresh in self.types:
                fresh += "_"
            self.versions[name] = fresh
            self.types[fresh] = t

    def c_outer(self, name):
        """The C variable of `name` (Python names get a prefix no temporary has)."""
        return name if name in self.temps else self.versions.get(name, f"v_{name}")

    def _rebindable(self, name):
        """Whether `name` may get a new type here: outside every loop and branch, or at the top
        of a loop body when no statement outside the loop uses it (`_acc` of a row reduction:
        bound afresh before it is read in every iteration, so nothing merges at the back edge)."""
        if not self.scopes:
            return True
        if self.scopes[-1][0] != "loop":
            return False
        for kind, node in self.scopes:
            if kind == "loop" and name in self.outside(node):
                return False
        return True

    def outside(self, loop):
        """Names the function uses outside `loop`'s body: in every statement not containing
        it, in the tests and ranges of the statements around it, and in its own test."""
        if loop not in self._outside:
            names = names_in([loop.test]) if isinstance(loop, ast.While) else set()

            def visit(stmts):
                for s in stmts:
                    if s is loop:
                        continue
                    if not _contains(s, loop):
                        names.update(names_in([s]))
                        continue
                    for field in ("body", "orelse"):
                        visit(getattr(s, field, None) or [])
                    if isinstance(s, (ast.While, ast.If)):
                        names.update(names_in([s.test]))
                    if isinstance(s, ast.For):
                        names.update(names_in([s.iter]))

            visit(self.node.body)
            self._outside[loop] = names
        return self._outside[loop]

    def emit(self, line, depth):
        self.lines.append("    " * depth + line)

    # --- functions ------------------------------------------------------------------------

    def translate(self):
        body = self.node.body
        if not body or not isinstance(body[-1], ast.Return):
            raise Unsupported(f"{self.node.name} does not end with its return")
        for stmt in body[:-1]:
            self.stmt(stmt, 1)
        self.ret(body[-1], 1)
        return self.assemble(), self.results

    def assemble(self):
        params = ["os_arena *A"]
        for name in self.params:
            t = self.types[f"v_{name}"]
            params.append(f"{C_TYPES[t.dtype]} {'*' if isinstance(t, Arr) else ''}v_{name}")
        for k, t in enumerate(self.results):
            params.append(f"{C_TYPES[t.dtype]} {'**' if isinstance(t, Arr) else '*'}os_out{k}")
        decls = []
        param_names = {f"v_{p}" for p in self.params}
        for cname, t in self.types.items():
            if cname in param_names or isinstance(t, Tup):
                continue
            decls.append(f"    {C_TYPES[t.dtype]} {'*' if isinstance(t, Arr) else ''}{cname};")
        return "\n".join([f"static int {self.c_name}({', '.join(params)}) {{", *decls, *self.lines,
                          "    return 0;", "os_fail:", "    return 1;", "}"])

    def ret(self, node, depth):
        value = node.value
        items = value.elts if isinstance(value, ast.Tuple) else [value]
        self.results = []
        codes = []
        for item in items:
            code, t = self.expr(item)
            if isinstance(t, Tup):
                raise Unsupported("tuple in a result")
            self.results.append(t)
            codes.append(code)
        for k, code in enumerate(codes):
            self.emit(f"*os_out{k} = {code};", depth)

    # --- statements -----------------------------------------------------------------------

    def stmt(self, node, depth):
        kind = type(node).__name__
        handler = getattr(self, f"s_{kind}", None)
        if handler is None:
            raise Unsupported(f"statement {kind}")
        handler(node, depth)

    def s_Pass(self, node, depth):
        pass

    def s_Expr(self, node, depth):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        if isinstance(node.value, ast.Call) and dotted(node.value.func) in c_calls.KERNEL_STATEMENTS:
            c_calls.KERNEL_STATEMENTS[dotted(node.value.func)](self, node.value, depth)
            return
        if isinstance(node.value, ast.Call) and dotted(node.value.func).startswith("_kn."):
            c_calls.numba_kernel_call(self, node.value, depth)
            return
        raise Unsupported(f"expression statement {ast.unparse(node)[:60]}")

    def s_Assign(self, node, depth):
        if len(node.targets) != 1:
            raise Unsupported("chained assignment")
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Tuple):
            self.assign_tuple(target.elts, value, depth)
            return
        if isinstance(target, ast.Subscript):
            self.store(target, value, depth)
            return
        if not isinstance(target, ast.Name):
            raise Unsupported("assignment target")
        if isinstance(value, ast.Call) and dotted(value.func) in self.m.functions:
            self.call_helper([target], value, depth)
            return
        if isinstance(value, ast.Call) and dotted(value.func) in c_calls.KERNEL_RESULTS:
            self.bind_kernel_results([target], value, depth)
            return
        k = self.destinations.get(target.id)
        if k is not None and not self.scopes and is_call_to(value, *_ALLOCATIONS):
            t = c_calls.empty_layout(value)
            self.declare(target.id, t)
            v, ct = self.c(target.id), C_TYPES[t.dtype]
            self.emit(f"{v} = *os_out{k} ? *os_out{k} : ({ct} *)os_alloc(A, {max(t.size, 1)} * sizeof({ct})); "
                      f"if (!{v}) goto os_fail;", depth)
            return
        code, t = self.expr(value, depth)
        if isinstance(t, Tup):
            raise Unsupported("tuple value assigned to a name")
        self.declare(target.id, t)
        self.emit(f"{self.c(target.id)} = {code};", depth)

    def assign_tuple(self, targets, value, depth):
        if not all(isinstance(t, ast.Name) for t in targets):
            raise Unsupported("tuple target")
        if isinstance(value, ast.Call) and dotted(value.func) in self.m.functions:
            self.call_helper(targets, value, depth)
            return
        if isinstance(value, ast.Call) and dotted(value.func) in c_calls.KERNEL_RESULTS:
            self.bind_kernel_results(targets, value, depth)
            return
        if isinstance(value, ast.Call) and dotted(value.func) == "_rt.threefry2x32" and len(targets) == 2:
            args = [self.expr(a, depth) for a in value.args]
            if len(args) != 4 or any(t != Scalar("uint32") for _, t in args):
                raise Unsupported("threefry2x32 operands")
            words = self.fresh("_tf")
            self.emit(f"{{ os_u32x2 {words} = os_threefry2x32({', '.join(c for c, _ in args)});", depth)
            for k, t in enumerate(targets):
                self.declare(t.id, Scalar("uint32"))
                self.emit(f"  {self.c(t.id)} = {words}.w{k};", depth)
            self.emit("}", depth)
            return
        if not isinstance(value, ast.Tuple) or len(value.elts) != len(targets):
            raise Unsupported("tuple assignment")
        # all right-hand sides first: `a, b = b, a`
        temps = []
        for elt in value.elts:
            code, t = self.expr(elt, depth)
            if isinstance(t, Tup):
                raise Unsupported("nested tuple")
            tmp = self.fresh()
            self.declare(tmp, t)
            self.emit(f"{tmp} = {code};", depth)
            temps.append((tmp, t))
        for target, (tmp, t) in zip(targets, temps):
            self.declare(target.id, t)
            self.emit(f"{self.c(target.id)} = {tmp};", depth)

    def helper_results(self, call, depth, destinations=()):
        """Call a helper function of the module; its results, each in a temporary.
        `destinations`: where the caller wants each array result (None: anywhere)."""
        if call.keywords:
            raise Unsupported("keyword arguments")
        args = [self.expr(a, depth) for a in call.args]
        if any(isinstance(t, Tup) for _, t in args):
            raise Unsupported("tuple argument")
        c_name, results = self.m.function(dotted(call.func), [t for _, t in args])
        temps = []
        for k, t in enumerate(results):
            tmp = self.fresh()
            self.declare(tmp, t)
            temps.append((tmp, t))
            if isinstance(t, Arr):
                dst = destinations[k] if k < len(destinations) else None
                self.emit(f"{tmp} = {dst or 'NULL'};", depth)
        outs = "".join(f", &{tmp}" for tmp, _ in temps)
        self.emit(f"if ({c_name}(A{''.join(', ' + c for c, _ in args)}{outs})) goto os_fail;", depth)
        return temps

    def bind_kernel_results(self, targets, call, depth):
        """`a, b = _kn.f(...)`: the kernel's rule writes fresh arrays, bound to the targets."""
        results = c_calls.KERNEL_RESULTS[dotted(call.func)](self, call, depth)
        if len(results) != len(targets):
            raise Unsupported(f"{dotted(call.func)} result count")
        for target, (code, t) in zip(targets, results):
            self.declare(target.id, t)
            self.emit(f"{self.c(target.id)} = {code};", depth)

    def call_helper(self, targets, call, depth):
        at, kept = self.loop_destinations
        temps = self.helper_results(call, depth, [kept.get(t.id) if depth == at else None for t in targets])
        if len(temps) != len(targets):
            raise Unsupported("helper result count")
        for target, (tmp, t) in zip(targets, temps):
            self.declare(target.id, t)
            self.emit(f"{self.c(target.id)} = {tmp};", depth)

    def store(self, target, value, depth):
        base, t = self.expr(target.value, depth)
        if not isinstance(t, Arr):
            raise Unsupported("store into a non-array")
        index = index_elts(target.slice)
        if len(index) != len(t.shape) or any(isinstance(i, ast.Slice) for i in index):
            self.store_window(target, base, t, index, value, depth)
            return
        at = self.offset(index, t, depth)
        code, vt = self.expr(value, depth)
        if not isinstance(vt, Scalar):
            raise Unsupported("array stored into an element")
        self.emit(f"{base}[{at}] = {self.convert(code, vt.dtype, t.dtype)};", depth)

    def store_window(self, target, base, t, index, value, depth):
        """`x[a:a + n, ...] = update` (dynamic_update_slice, pad): the array copied into the
        view, element by element; its source must be another name (no overlap to order)."""
        if not isinstance(value, ast.Name) or value.id in names_in([target.value]):
            raise Unsupported("window store source")
        if any(isinstance(i, ast.Slice) for i in index):
            dst, dt = self.view(base, t, index, depth)
        else:
            dst = f"({base} + ({self.offset(index, t, depth)}))"
            dt = Arr(t.dtype, t.shape[len(index):], t.strides[len(index):])
        src, st = self.expr(value, depth)
        if not isinstance(st, Arr) or st.shape != dt.shape:
            raise Unsupported("window store shapes")
        for line in copy_lines(dst, dt, src, st, cast=None if st.dtype == dt.dtype else dt.dtype):
            self.emit(line, depth)

    def s_AugAssign(self, node, depth):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise Unsupported("augmented operator")
        # the target read as an operand (expressions do not look at a node's ctx)
        load = ast.copy_location(ast.BinOp(left=node.target, op=node.op, right=node.value), node)
        self.s_Assign(ast.Assign(targets=[node.target], value=load), depth)

    def s_If(self, node, depth):
        code, t = self.expr(node.test, depth)
        if not isinstance(t, Scalar):
            raise Unsupported("array condition")
        self.emit(f"if ({code}) {{", depth)
        self.scopes.append(("if", node))
        for s in node.body:
            self.stmt(s, depth + 1)
        if node.orelse:
            self.emit("} else {", depth)
            for s in node.orelse:
                self.stmt(s, depth + 1)
        self.scopes.pop()
        self.emit("}", depth)

    def s_For(self, node, depth):
        if is_call_to(node.iter, "numba.prange") and not node.orelse and isinstance(node.target, ast.Name):
            self.parallel_loop(node, depth)
            return
        if node.orelse or not isinstance(node.target, ast.Name) or not is_call_to(node.iter, "range"):
            raise Unsupported(f"for loop {ast.unparse(node.iter)[:40]}")
        args = node.iter.args
        if node.iter.keywords or not 1 <= len(args) <= 3:
            raise Unsupported("range arguments")
        bounds = [self.int_expr(a, depth) for a in args]
        start, stop = ("0", bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
        step = 1
        if len(args) == 3:
            step = static_int(args[2])
            if step is None or step == 0:
                raise Unsupported("range step")
        var = self.c(node.target.id)
        self.declare(node.target.id, Scalar("int64"))
        cmp = "<" if step > 0 else ">"
        # Python evaluates range's bounds once
        lo, hi = self.fresh("_lo"), self.fresh("_hi")
        self.declare(lo, Scalar("int64"))
        self.declare(hi, Scalar("int64"))
        self.emit(f"{lo} = {start}; {hi} = {stop};", depth)
        header = f"for ({var} = {lo}; {var} {cmp} {hi}; {var} += {step})"
        reductions = _simd_reductions(node.body) if step == 1 else None
        if reductions and all(isinstance(self.types.get(self.c(n)), Scalar) and
                              self.types[self.c(n)].dtype in _LANE_TYPES[op] for n, op in reductions):
            self.lane_reduction(node, reductions, var, lo, hi, depth)
            return
        self.loop(header, node, depth)

    def parallel_loop(self, node, depth):
        """`for i in numba.prange(n)` (parallel.parallelize: iterations share nothing, no local
        lives on after the loop) on the GEMM pool's threads: the body outlined into a function
        of a range of iterations, every C variable it uses copied in through a structure (each
        thread its own copy), each range allocating from an arena of its own; the pool splits
        [0, n) among its threads and the calling one (gemm_pool.omnistage_pool_for). Iterations
        share nothing, so the bits do not depend on who runs which. Serial (one call over the
        whole range) while `omnistage_threads` is off (aot.AotProgram, by parallel.BuildChoice)
        or the pool is not loaded. A failure sets a flag and skips the rest of its iteration
        (no jump leaves the outlined function), and the function fails after the loop.

        Why the pool and not OpenMP: OpenMP's threads took turns on the cores with the pool's
        (which runs the products' blocks), each spinning after its work while the other waited
        (mnist_vae's epoch 1.9x slower); and `-fopenmp` cost every threaded program ~10 ms more
        of its compile."""
        if self.scopes or depth != 1 or len(node.iter.args) != 1 or node.iter.keywords:
            raise Unsupported("nested or irregular parallel loop")
        var = self.c(node.target.id)
        self.declare(node.target.id, Scalar("int64"))
        hi, failed, skip = self.fresh("_hi"), self.fresh("_pfail"), self.fresh("_pnext")
        self.declare(hi, Scalar("int64"))
        self.declare(failed, Scalar("int32"))
        self.emit(f"{hi} = {self.int_expr(node.iter.args[0], depth)}; {failed} = 0;", depth)
        outer, self.lines = self.lines, []
        header = f"for ({var} = 0; {var} < {hi}; {var}++)"
        self.loop(header, node, depth + 1)
        body, self.lines = self.lines, outer
        at = next((k for k, line in enumerate(body) if line.lstrip().startswith(header)), None)
        if at is None or body[-1].strip() != "}" or any("os_alloc" in line for line in body[:at]):
            raise Unsupported("a parallel loop with values carried between iterations")
        self.m.threads = True
        k = self.m.pool_loops = self.m.pool_loops + 1
        fn, struct = f"os_pfor_{k}", f"os_pctx_{k}"
        used = self._used_in(body, (failed, var, hi))

        def decl(c):
            t = self.types[c]
            return f"{C_TYPES[t.dtype]} {'*' if isinstance(t, Arr) else ''}{c}"
        lines = _skipping_failures(body, "os_c->os_failed", skip, depth)
        lines[at] = lines[at].replace(header, f"for ({var} = os_lo; {var} < os_hi; {var}++)")
        self.m.decls.append("\n".join([
            f"struct {struct} {{ {''.join(decl(c) + '; ' for c in used)}int32_t *os_failed; }};",
            f"static void {fn}(void *os_cv, int64_t os_lo, int64_t os_hi) {{",
            f"    struct {struct} *os_c = (struct {struct} *)os_cv;",
            *(f"    {decl(c)} = os_c->{c};" for c in used),
            f"    int64_t {var};",
            "    os_arena os_thread_arena = os_arena_open();",
            "    os_arena *A = &os_thread_arena;",
            *lines,
            "    os_release(&os_thread_arena);",
            "}"]))
        fields = "".join(f"{c}, " for c in used)
        self.emit(f"{{ struct {struct} os_c = {{{fields}&{failed}}};", depth)
        self.emit(f"  if (omnistage_threads && omnistage_blas_gemm[OS_LOOP_SLOT] != 0 && {hi} > 1)", depth)
        self.emit(f"    ((os_pool_for_t)(intptr_t)omnistage_blas_gemm[OS_LOOP_SLOT])({fn}, &os_c, {hi});", depth)
        self.emit(f"  else {fn}(&os_c, 0, {hi}); }}", depth)
        self.emit(f"if ({failed}) goto os_fail;", depth)

    def _used_in(self, lines, exclude):
        """The C variables (sorted) that `lines` use, other than `exclude`: what each thread of a
        parallel loop gets its own copy of."""
        text = "\n".join(lines)
        words = set(re.findall(r"\w+", text))  # a name is used where it is a whole word (one pass, not one per name)
        return sorted(c for c, t in self.types.items()
                      if not isinstance(t, Tup) and c not in exclude
                      and (c in words if c.isidentifier() else re.search(rf"\b{re.escape(c)}\b", text)))

    def lane_reduction(self, node, reductions, var, lo, hi, depth):
        """A reduction loop (`acc = _rt.radd(acc, x)`, whose step may be reassociated:
        support.py; or a max/min of keys, exact in any order) as LANES partial results,
        element i into partial result i % LANES, combined pairwise at the end: the C compiler
        vectorizes the independent partial results without reassociating anything, the result
        does not depend on the vector width, and a sum is as accurate as XLA's tree (a sequential float32 row sum was 8 ulp off on mnist's
        7.8M-term sum, the test's bound is 2)."""
        lanes, j, base, full = {}, self.fresh("_j"), self.fresh("_b"), self.fresh("_full")
        for name in (j, base, full):
            self.declare(name, Scalar("int64"))
        for n, op in reductions:
            t = self.types[self.c(n)]
            lanes[n] = (self.fresh("_lanes"), op, t)
            identity = _lane_identity(op, t.dtype)
            self.emit(f"{C_TYPES[t.dtype]} {lanes[n][0]}[{LANES}];", depth)
            self.emit(f"for (int os_k = 0; os_k < {LANES}; os_k++) {lanes[n][0]}[os_k] = {identity};", depth)
        self.emit(f"{full} = {hi} > {lo} ? {lo} + ({hi} - {lo}) / {LANES} * {LANES} : {lo};", depth)
        saved = dict(self.lanes)
        self.lanes.update({n: f"{c}[{j}]" for n, (c, _, _) in lanes.items()})
        self.scopes.append(("loop", node))
        try:
            for start, stop, header in ((base, full, f"for ({base} = {lo}; {base} < {full}; {base} += {LANES}) "
                                                      f"for ({j} = 0; {j} < {LANES}; {j}++)"),
                                        (full, hi, f"for ({j} = 0; {j} < {hi} - {full}; {j}++)")):
                self.emit(header + " {", depth)
                self.emit(f"{var} = {start} + {j};", depth + 1)
                for stmt in node.body:
                    self.stmt(stmt, depth + 1)
                self.emit("}", depth)
        finally:
            self.scopes.pop()
            self.lanes = saved
        for n, (c, op, t) in lanes.items():
            self.emit(f"for (int os_w = {LANES // 2}; os_w >= 1; os_w /= 2) for (int os_k = 0; os_k < os_w; os_k++) "
                      f"{c}[os_k] = {_combine(op, f'{c}[os_k]', f'{c}[os_k + os_w]')};", depth)
            self.emit(f"{self.c(n)} = {_combine(op, self.c(n), f'{c}[0]')};", depth)

    def s_While(self, node, depth):
        if node.orelse:
            raise Unsupported("while-else")
        if _calls_in(node.test):
            self.loop("for (;;)", node, depth, test=node.test)
            return
        code, t = self.expr(node.test, depth)
        if not isinstance(t, Scalar):
            raise Unsupported("array condition")
        self.loop(f"while ({code})", node, depth)

    def loop(self, header, node, depth, test=None):
        body = node.body
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for s in body for n in _nodes(s)):
            raise Unsupported("break, continue or return in a loop")
        self.scopes.append(("loop", node))
        try:
            self._loop(header, node, body, depth, test)
        finally:
            self.scopes.pop()

    def _outer_trips(self):
        """Iterations of the loop around the current one: its static trip count, a large
        number when it is not static, 0 outside every loop."""
        for kind, node in reversed(self.scopes[:-1]):
            if kind == "loop":
                trips = _static_trips(node)
                return (1 << 30) if trips is None else trips
        return 0

    def _test(self, test, depth):
        """A while loop's condition that calls a helper, evaluated at the top of each iteration."""
        if test is not None:
            code, t = self.expr(test, depth)
            if not isinstance(t, Scalar):
                raise Unsupported("array condition")
            self.emit(f"if (!({code})) break;", depth)

    def _loop(self, header, node, body, depth, test):
        if not _allocates(body + ([test] if test is not None else []), self.m.functions):
            if _small_trip_count(node) and self._outer_trips() >= UNROLL_MIN_OUTER_TRIPS:
                # unrolled before vectorization, so the loop around it can vectorize (threefry's
                # two words of a key inside the loop over keys: gamma 167 -> 142 us, as LLVM does);
                # around a few trips that gains nothing and costs compile time (the seeds'
                # normal((2, 3)): its 3 erf_inv copies)
                self.emit(f"#pragma GCC unroll {SMALL_TRIPS}", depth)
            self.emit(header + " {", depth)
            self._test(test, depth + 1)
            for s in body:
                self.stmt(s, depth + 1)
            self.emit("}", depth)
            return
        # the body allocates: its iteration's memory is released at the end of the iteration,
        # after the arrays that live on (read after the loop or in the next iteration) are
        # copied into slots allocated here, two per value, used in turn
        # types of values first assigned in the body are known only after translating it once
        # (once per loop: a loop inside another allocating loop is translated again with it,
        # and its types are known by then; two passes at every level of a nest cost 2^depth)
        if node not in self._typed_loops:
            saved = (list(self.lines), self.tmp, dict(self.versions))
            self._test(test, depth + 1)
            for s in body:
                self.stmt(s, depth + 1)
            self.lines, self.tmp, self.versions = saved
            self._typed_loops.add(node)
        inside = _assigned_in(body)
        carried = sorted(n for n in inside & self.outside(node) if isinstance(self.types.get(self.c(n)), Arr))
        if carried and _may_alias_written(body, inside) & set(carried):
            # a copy taken at the end of an iteration would miss a later write Python would see
            raise Unsupported("a loop-carried array may view an array the loop writes")
        for n in carried:
            t = self.types[self.c(n)]
            if not t.contiguous:
                raise Unsupported(f"loop-carried view {n}")
        slots, parity, mark = {}, self.fresh("_par"), self.fresh("_mark")
        self.declare(parity, Scalar("int64"))
        self.emit(f"{parity} = 0;", depth)
        for n in carried:
            t = self.types[self.c(n)]
            slots[n] = (self.fresh("_slot"), self.fresh("_slot"))
            for s in slots[n]:
                self.declare(s, t)
                self.emit(f"{s} = ({C_TYPES[t.dtype]} *)os_alloc(A, {max(t.size, 1)} * sizeof({C_TYPES[t.dtype]})); if (!{s}) goto os_fail;", depth)
        self.emit(header + " {", depth)
        self.emit(f"os_mark {mark} = os_mark_get(A);", depth + 1)
        dsts = {}
        for n in carried:
            t, (s0, s1) = self.types[self.c(n)], slots[n]
            dsts[n] = self.fresh("_dst")
            self.declare(dsts[n], t)
            self.emit(f"{dsts[n]} = {parity} ? {s1} : {s0};", depth + 1)
        for n in self._carried_in_place(body, carried):
            # built over the value it replaces once that is the loop's own slot (c_in_place);
            # the first iteration's value is the caller's and is never written
            (s0, s1), cur = slots[n], self.c(n)
            self.emit(f"if ({cur} == {s0} || {cur} == {s1}) {dsts[n]} = {cur};", depth + 1)
        self._test(test, depth + 1)
        outer = self.loop_destinations
        # a carry a helper returns is built in this iteration's slot (the other slot holds
        # the carries it reads), so the copy below finds it in place
        self.loop_destinations = (depth + 1, {n: dsts[n] for n in _bound_by_one_helper_call(body, carried, self.m.functions)})
        for s in body:
            self.stmt(s, depth + 1)
        self.loop_destinations = outer
        for n in carried:
            t, dst = self.types[self.c(n)], dsts[n]
            for line in copy_lines(dst, t, self.c(n), t):
                self.emit(line, depth + 1)
            self.emit(f"{self.c(n)} = {dst};", depth + 1)
        self.emit(f"{parity} ^= 1;", depth + 1)
        self.emit(f"os_reset(A, {mark});", depth + 1)
        self.emit("}", depth)

    def _carried_in_place(self, body, carried):
        """The carried arrays that the helper call opening loop `body` (a fori_loop's or scan's
        body function) may build over their current value: the result has the carry's type and
        is built where its caller wants it (_destinations), the carried name is passed as it is
        and once, and the function reads it element by element before it writes the same
        element, and never after (c_in_place.may_build_over)."""
        if not body or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
            return []
        call, target = body[0].value, body[0].targets[0]
        if not isinstance(call, ast.Call) or dotted(call.func) not in self.m.functions or call.keywords:
            return []
        targets = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(t, ast.Name) for t in targets) or not all(isinstance(a, ast.Name) for a in call.args):
            return []
        args = [a.id for a in call.args]
        arg_types = [self.expr(a)[1] for a in call.args]
        if any(isinstance(t, Tup) for t in arg_types):
            return []
        fn = self.m.functions[dotted(call.func)]
        _, results = self.m.function(dotted(call.func), arg_types)
        returned = {k: name for name, k in _destinations(fn).items()}
        bound = _bound_by_one_helper_call(body, carried, self.m.functions)
        facts, found = None, []
        for k, t in enumerate(targets):
            n, t_carry = t.id, self.types.get(self.c(t.id))
            if n not in bound or args.count(n) != 1 or k not in returned or k >= len(results):
                continue
            if not (isinstance(t_carry, Arr) and t_carry.contiguous and same_type(results[k], t_carry)):
                continue
            facts = facts or c_in_place.BodyFacts(fn)
            if c_in_place.may_build_over(facts, returned[k], facts.params[args.index(n)], len(t_carry.shape)):
                found.append(n)
        return found

    # --- expressions ----------------------------------------------------------------------

    def int_expr(self, node, depth):
        code, t = self.expr(node, depth)
        if not isinstance(t, Scalar) or not (is_int(t.dtype) or t.dtype == "bool"):
            raise Unsupported("non-integer bound")
        return f"(int64_t)({code})"

    def expr(self, node, depth=0):
        kind = type(node).__name__
        handler = getattr(self, f"e_{kind}", None)
        if handler is None:
            raise Unsupported(f"expression {kind}: {ast.unparse(node)[:60]}")
        return handler(node, depth)

    def e_Constant(self, node, depth):
        v = node.value
        if isinstance(v, bool):
            return ("true" if v else "false"), Scalar("bool")
        if isinstance(v, int):
            if not -(1 << 63) <= v < (1 << 63):
                raise Unsupported("integer literal range")
            return c_literal(v, "int64"), Scalar("int64")
        if isinstance(v, float):
            return c_literal(v, "float64"), Scalar("float64")
        if isinstance(v, complex):
            return c_literal(v, "complex128"), Scalar("complex128")
        raise Unsupported(f"literal {v!r}")

    def e_Name(self, node, depth):
        if node.id in self.lanes:
            return self.lanes[node.id], self.types[self.c_outer(node.id)]
        if self.c(node.id) in self.types:
            t = self.types[self.c(node.id)]
            if isinstance(t, Tup):
                raise Unsupported("tuple value")
            return self.c(node.id), t
        if node.id in self.m.consts:
            code, t, _ = self.m.consts[node.id]
            return code, t
        raise Unsupported(f"name {node.id}")

    def e_Tuple(self, node, depth):
        items = [self.expr(e, depth) for e in node.elts]
        return None, Tup(items)

    def e_BinOp(self, node, depth):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise Unsupported(f"operator {type(node.op).__name__}")
        a, ta = self.expr(node.left, depth)
        b, tb = self.expr(node.right, depth)
        if not (isinstance(ta, Scalar) and isinstance(tb, Scalar)):
            raise Unsupported("arithmetic on arrays")
        out = arith_type(ta.dtype, tb.dtype, op)
        if out in COMPLEX_PART:  # Numba's complex operators, as c_complex computes them
            fn = {"+": "os_cadd", "-": "os_csub", "*": "os_cmul", "/": "os_cdiv"}[op]
            ca, cb = self.convert(a, ta.dtype, out), self.convert(b, tb.dtype, out)
            return f"{fn}_{COMPLEX_SUFFIX[out]}({ca}, {cb})", Scalar(out)
        if op in ("<<", ">>"):
            if out in FLOAT_NAME:
                raise Unsupported("float shift")
            # Numba shifts in 64 bits; a count outside [0, 64) is undefined there too
            return f"(({C_TYPES[out]})({a}) {op} ({C_TYPES[out]})({b}))", Scalar(out)
        if op in ("&", "|", "^") and out in FLOAT_NAME:
            raise Unsupported("bitwise operator on floats")
        ca, cb = self.convert(a, ta.dtype, out), self.convert(b, tb.dtype, out)
        if op == "//":
            if out in FLOAT_NAME:  # Python's is divmod-based, not floor(a / b): not guessed at
                raise Unsupported("float floor division")
            if out != "int64":
                raise Unsupported("unsigned floor division")
            return f"os_floordiv({ca}, {cb})", Scalar(out)
        if op == "%":
            if out in FLOAT_NAME or out != "int64":
                raise Unsupported("float or unsigned %")
            return f"os_floormod({ca}, {cb})", Scalar(out)
        if out in ("int64",) and op in ("+", "-", "*"):
            # wrapping, as LLVM's integer arithmetic (C's signed overflow is undefined)
            return f"((int64_t)((uint64_t)({ca}) {op} (uint64_t)({cb})))", Scalar(out)
        return f"({ca} {op} {cb})", Scalar(out)

    def e_UnaryOp(self, node, depth):
        a, t = self.expr(node.operand, depth)
        if not isinstance(t, Scalar):
            raise Unsupported("unary operator on an array")
        if isinstance(node.op, ast.Not):
            return f"(!({a}))", Scalar("bool")
        if isinstance(node.op, ast.USub):
            if t.dtype in FLOAT_NAME:
                return f"(-({a}))", t
            if t.dtype in COMPLEX_PART:
                return f"os_cneg_{COMPLEX_SUFFIX[t.dtype]}({a})", t
            out = wide(t.dtype)
            return f"(({C_TYPES[out]})(0 - (uint64_t)({a})))", Scalar(out)
        if isinstance(node.op, ast.UAdd):
            return a, t
        if isinstance(node.op, ast.Invert) and is_int(t.dtype):
            out = wide(t.dtype)
            return f"(~({C_TYPES[out]})({a}))", Scalar(out)
        raise Unsupported("unary operator")

    def e_Compare(self, node, depth):
        """`a < b`, and Python's chained `a <= b < c` as `a <= b && b < c` (operands are pure:
        a middle operand evaluated twice gives the same value)."""
        terms, left = [], self.expr(node.left, depth)
        for op_node, right_node in zip(node.ops, node.comparators):
            op = _CMPOPS.get(type(op_node))
            if op is None:
                raise Unsupported("comparison operator")
            right = self.expr(right_node, depth)
            (a, ta), (b, tb) = left, right
            if not (isinstance(ta, Scalar) and isinstance(tb, Scalar)):
                raise Unsupported("comparison of arrays")
            both = arith_type(ta.dtype, tb.dtype, "+") if not (ta.dtype == tb.dtype == "bool") else "bool"
            ca, cb = self.convert(a, ta.dtype, both), self.convert(b, tb.dtype, both)
            if both in COMPLEX_PART:
                if op not in ("==", "!="):
                    raise Unsupported("ordering of complex numbers")
                terms.append(f"os_c{'eq' if op == '==' else 'ne'}_{COMPLEX_SUFFIX[both]}({ca}, {cb})")
            else:
                terms.append(f"({ca} {op} {cb})")
            left = right
        return (terms[0] if len(terms) == 1 else "(" + " && ".join(terms) + ")"), Scalar("bool")

    def e_BoolOp(self, node, depth):
        op = "&&" if isinstance(node.op, ast.And) else "||"
        parts = []
        for v in node.values:
            code, t = self.expr(v, depth)
            if t != Scalar("bool"):
                raise Unsupported("and/or of non-booleans")
            parts.append(code)
        return "(" + f" {op} ".join(parts) + ")", Scalar("bool")

    def e_IfExp(self, node, depth):
        c, tc = self.expr(node.test, depth)
        a, ta = self.expr(node.body, depth)
        b, tb = self.expr(node.orelse, depth)
        if tc != Scalar("bool") or not (isinstance(ta, Scalar) and isinstance(tb, Scalar)):
            raise Unsupported("conditional expression")
        out = ta.dtype if ta == tb else arith_type(ta.dtype, tb.dtype, "+")
        return f"(({c}) ? {self.convert(a, ta.dtype, out)} : {self.convert(b, tb.dtype, out)})", Scalar(out)

    def e_Subscript(self, node, depth):
        if is_call_to(node.value, "_rt.threefry2x32"):
            word = static_int(node.slice)
            args = self.scalars(node.value, depth, 4)
            if word not in (0, 1) or any(t != Scalar("uint32") for _, t in args):
                raise Unsupported("threefry2x32 operands")
            return f"os_threefry2x32({', '.join(c for c, _ in args)}).w{word}", Scalar("uint32")
        if isinstance(node.value, ast.Call) and dotted(node.value.func) in self.m.functions:
            k = static_int(node.slice)
            results = self.helper_results(node.value, depth)
            if k is None or not 0 <= k < len(results):
                raise Unsupported("helper result index")
            return results[k]
        base, t = self.expr(node.value, depth)
        if isinstance(t, Tup):
            k = static_int(node.slice)
            if k is None or not -len(t.items) <= k < len(t.items):
                raise Unsupported("tuple index")
            return t.items[k]
        if not isinstance(t, Arr):
            raise Unsupported("subscript of a scalar")
        index = index_elts(node.slice)
        if len(index) > len(t.shape):
            raise Unsupported("too many indices")
        if any(isinstance(i, ast.Slice) for i in index):
            return self.view(base, t, index, depth)
        at = self.offset(index, t, depth)
        if len(index) == len(t.shape):
            if t.dtype == "bool" and self._small_loop_body():
                # GCC has no vector type for _Bool: its bytes load as uint8_t (0 or 1) and the
                # loop vectorizes (mnist_vae's Bernoulli log-density: 110 -> 8.8 ms)
                return f"((const uint8_t *){base})[{at}]", Scalar(t.dtype)
            return f"{base}[{at}]", Scalar(t.dtype)
        rest = Arr(t.dtype, t.shape[len(index):], t.strides[len(index):])
        return f"({base} + ({at}))", rest

    def _small_loop_body(self):
        """Whether the innermost loop around here is small enough to vectorize for its boolean
        reads: at most VECTOR_BOOL_BODY statements, a vmath function counting 8 and a
        threefry2x32 16 (what they inline into). A big one (a sampler's threefry rounds, pow and
        rejection tests) stays scalar: vectorized for AVX-512 it took 4x the compile
        (random.gamma's first call 0.65 -> 2.2 s) for a loop of a few thousand iterations."""
        loop = next((node for kind, node in reversed(self.scopes) if kind == "loop"), None)
        if loop is None:
            return False
        weight = 0
        for n in _nodes(loop):
            if isinstance(n, ast.stmt):
                weight += 1
            elif isinstance(n, ast.Call):
                name = dotted(n.func)
                weight += 16 if name == "_rt.threefry2x32" else 8 if name in self.m.vmath else 0
        return weight <= VECTOR_BOOL_BODY

    def view(self, base, t, index, depth):
        """A basic-slice view with static bounds: a pointer and a static layout."""
        offsets, shape, strides = [], [], []
        for k, (d, s) in enumerate(zip(t.shape, t.strides)):
            if k >= len(index):
                shape.append(d)
                strides.append(s)
                continue
            i = index[k]
            if isinstance(i, ast.Slice) and _dynamic_window(i) is not None:
                # x[s:s + n] with s a start the emitter clamped into [0, d - n] (dynamic_slice)
                code, it = self.expr(i.lower, depth)
                if not isinstance(it, Scalar) or not is_int(it.dtype):
                    raise Unsupported("slice start type")
                n = _dynamic_window(i)
                if not 0 <= n <= d:
                    raise Unsupported("slice length")
                offsets.append(f"(int64_t)({code}) * {s}")
                shape.append(n)
                strides.append(s)
                continue
            if isinstance(i, ast.Slice):
                lo, hi, step = (None if v is None else static_int(v) for v in (i.lower, i.upper, i.step))
                if any(v is None and w is not None for v, w in zip((lo, hi, step), (i.lower, i.upper, i.step))):
                    raise Unsupported("dynamic slice bounds")
                start, stop, stride = slice(lo, hi, step).indices(d)
                n = len(range(start, stop, stride))
                offsets.append(f"{start * s}")
                shape.append(n)
                strides.append(s * stride)
            else:
                code, it = self.expr(i, depth)
                if not isinstance(it, Scalar) or not is_int(it.dtype):
                    raise Unsupported("index type")
                offsets.append(f"(int64_t)({code}) * {s}")
        return f"({base} + ({' + '.join(offsets) or '0'}))", Arr(t.dtype, shape, strides)

    def offset(self, index, t, depth):
        terms = []
        for i, s in zip(index, t.strides):
            k = static_int(i)
            if k is not None:
                if k < 0:
                    raise Unsupported("negative static index")
                if k * s:
                    terms.append(str(k * s))
                continue
            code, it = self.expr(i, depth)
            if not isinstance(it, Scalar) or not is_int(it.dtype):
                raise Unsupported("index type")
            if it.dtype in ("int64", "uint64"):
                terms.append(f"({code}) * {s}" if s != 1 else f"({code})")
            else:
                terms.append(f"(int64_t)({code}) * {s}")
        return " + ".join(terms) or "0"

    def e_Attribute(self, node, depth):
        name = dotted(node)
        if name in ("np.inf", "np.nan"):
            return c_literal(np.inf if name == "np.inf" else np.nan, "float64"), Scalar("float64")
        if node.attr in ("real", "imag") and not (name or "").startswith("np."):
            code, t = self.expr(node.value, depth)
            if isinstance(t, Scalar) and t.dtype in COMPLEX_PART:
                return f"({code}).{node.attr[:2]}", Scalar(COMPLEX_PART[t.dtype])
            if isinstance(t, Scalar) and t.dtype in FLOAT_NAME:
                return (code if node.attr == "real" else c_literal(0.0, t.dtype)), t
        raise Unsupported(f"attribute {name or node.attr}")

    def e_Call(self, node, depth):
        name = dotted(node.func)
        if node.keywords:
            raise Unsupported(f"keyword arguments to {name}")
        if name is None:
            raise Unsupported("call of an expression")
        if name.startswith("np.") and name[3:] in NP_TYPES:
            if len(node.args) != 1:
                raise Unsupported(f"{name} arguments")
            code, t = self.expr(node.args[0], depth)
            if not isinstance(t, Scalar):
                raise Unsupported(f"{name} of an array")
            dtype = NP_TYPES[name[3:]]
            return self.convert(code, t.dtype, dtype), Scalar(dtype)
        if name in self.m.vmath:
            args = [self.expr(a, depth) for a in node.args]
            dtype = name.rsplit("_", 1)[1]
            if any(t != Scalar(dtype) for _, t in args):
                raise Unsupported(f"{name} operand types")
            return f"{name}({', '.join(c for c, _ in args)})", Scalar(dtype)
        if name in c_calls.KERNEL_RESULTS:  # a kernel's one result used in place (`_rt.reshape(_kn.take_along(...))`)
            results = c_calls.KERNEL_RESULTS[name](self, node, depth)
            if len(results) != 1:
                raise Unsupported(f"{name} results in an expression")
            return results[0]
        rule = c_calls.rule_for(name)
        if rule is None:
            raise Unsupported(f"call of {name}")
        return rule(self, node, depth)

    def convert(self, code, src, dst):
        return convert_code(code, src, dst)

    def scalars(self, node, depth, count=None):
        args = [self.expr(a, depth) for a in node.args]
        if count is not None and len(args) != count:
            raise Unsupported(f"{dotted(node.func)} arity")
        if not all(isinstance(t, Scalar) for _, t in args):
            raise Unsupported(f"{dotted(node.func)} of arrays")
        return args

    def allocate(self, t, depth):
        """A fresh array of layout `t` from the arena, in a temporary."""
        tmp = self.fresh()
        self.declare(tmp, t)
        ct = C_TYPES[t.dtype]
        self.emit(f"{tmp} = ({ct} *)os_alloc(A, {max(t.size, 1)} * sizeof({ct})); if (!{tmp}) goto os_fail;", depth)
        return tmp


VECTOR_BOOL_BODY = 48  # weighed statements of a loop whose boolean reads are made vectorizable (_small_loop_body)
_ALLOCATIONS = ("np.empty", "_rt.empty")


def _skipping_failures(body, flag, skip, depth):
    """A parallel loop's `body` lines with each failure setting `*flag` and skipping to the end
    of its iteration (label `skip`), as no jump may leave a thread's share of the loop."""
    lines = [line.replace("goto os_fail;", f"{{ __atomic_store_n({flag}, 1, __ATOMIC_RELAXED); goto {skip}; }}")
             for line in body]
    lines.insert(len(lines) - 1, "    " * (depth + 2) + f"{skip}: ;")
    return lines


def _store_counts(node):
    """{name: how many times the statements under `node` bind it}."""
    return collections.Counter(n.id for n in _nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


def _bound_by_one_helper_call(body, names, functions):
    """Those of `names` that loop `body` binds once in all, in a top-level `... = helper(...)`."""
    stores = _store_counts(ast.Module(body=body, type_ignores=[]))
    found = set()
    for s in body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.value, ast.Call) \
                and dotted(s.value.func) in functions:
            targets = s.targets[0].elts if isinstance(s.targets[0], ast.Tuple) else [s.targets[0]]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if n in found and stores.get(n) == 1}


def _destinations(node):
    """{name: result slot} of the arrays function `node` may build in its caller's buffers:
    returned once, as they are, and bound once in the whole function, by an allocation among
    its top-level statements (so no loop's release and no other binding touches them)."""
    ret = node.body[-1] if node.body else None
    if not isinstance(ret, ast.Return) or ret.value is None:
        return {}
    items = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
    names = [item.id if isinstance(item, ast.Name) else None for item in items]
    stores = _store_counts(node)
    allocated = {s.targets[0].id for s in node.body[:-1]
                 if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                 and is_call_to(s.value, *_ALLOCATIONS)}
    return {name: k for k, name in enumerate(names)
            if name is not None and names.count(name) == 1 and stores.get(name) == 1 and name in allocated}


# reduction steps lane_reduction splits into partial results: radd/rmul may be reassociated
# (support.py), and the max/min of order-preserving keys is exact in any order
_REDUCTION_STEPS = {"_rt.radd": "+", "_rt.rmul": "*", "_rt.kmax": "max", "_rt.kmin": "min"}
_LANE_TYPES = {"+": FLOAT_NAME, "*": FLOAT_NAME, "max": ("int32", "int64"), "min": ("int32", "int64")}


def _lane_identity(op, dtype):
    if op in ("max", "min"):  # the smallest / largest key
        return {("max", "int32"): "INT32_MIN", ("max", "int64"): "INT64_MIN",
                ("min", "int32"): "INT32_MAX", ("min", "int64"): "INT64_MAX"}[op, dtype]
    return c_literal(-0.0 if op == "+" else 1.0, dtype)  # -0.0: a sum of -0.0s stays -0.0


def _combine(op, a, b):
    if op == "max":
        return f"({a} > {b} ? {a} : {b})"
    if op == "min":
        return f"({a} < {b} ? {a} : {b})"
    return f"{a} {op} {b}"
LANES = 64  # partial sums of a reduction loop (lane_reduction): four AVX-512 registers of float32


def _simd_reductions(body):
    """[(accumulator, operator)] when `body` is a reduction loop the C compiler may vectorize
    with partial sums: straight-line assignments to names, each accumulator updated only by its
    `acc = _rt.radd(acc, x)` step, every other name written before it is read in the
    iteration (no value flows from one iteration to the next but the accumulators')."""
    steps, written, assigned = {}, set(), _assigned_in(body)
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return None
        if isinstance(stmt.targets[0], ast.Subscript):
            # an element stored (the row a merged reduction reads, row_passes): the
            # iterations still run in order, so only what the store reads is checked
            target = stmt.targets[0]
            if not isinstance(target.value, ast.Name) or target.value.id in steps:
                return None
            reads = names_in([stmt.value, target.slice])
            if reads & set(steps) or _calls_helpers(stmt.value) or (reads - written - set(steps)) & assigned:
                return None
            continue
        if not isinstance(stmt.targets[0], ast.Name):
            return None
        name, value = stmt.targets[0].id, stmt.value
        if (isinstance(value, ast.Call) and dotted(value.func) in _REDUCTION_STEPS and len(value.args) == 2
                and isinstance(value.args[0], ast.Name) and value.args[0].id == name):
            if name in steps or name in names_in([value.args[1]]):
                return None
            steps[name] = _REDUCTION_STEPS[dotted(value.func)]
            reads = names_in([value.args[1]])
        else:
            if name in steps:
                return None
            reads = names_in([value])
            written.add(name)
        if any(n in steps and n != name for n in reads) or _calls_helpers(value):
            return None
        if (reads - written - set(steps)) & assigned:
            return None  # read before it is written: it flows from the last iteration
    return sorted(steps.items()) or None


def _calls_helpers(node):
    """Whether `node` calls anything but support, NumPy scalar functions and vmath kernels."""
    return any(isinstance(n, ast.Call) and not (dotted(n.func) or "").startswith(("_rt.", "np.")) and
               not (dotted(n.func) or "").endswith(("_float32", "_float64")) for n in _nodes(node))


UNROLL_MIN_OUTER_TRIPS = 16  # a small inner loop is unrolled only inside a loop of this many trips
SMALL_TRIPS = 8


def _static_trips(loop):
    """The iterations of `loop` when it is a `for` over a range of literal bounds, else None."""
    if not (isinstance(loop, ast.For) and is_call_to(loop.iter, "range")) or loop.iter.keywords:
        return None
    bounds = [static_int(a) for a in loop.iter.args]
    if any(b is None for b in bounds) or not 1 <= len(bounds) <= 3 or (len(bounds) == 3 and bounds[2] == 0):
        return None
    return len(range(*bounds))


def _small_trip_count(loop):
    """Whether `loop` is an innermost `for` over a static range of at most SMALL_TRIPS
    iterations. (Unrolling a loop around another copies the inner loop, vectorized body and
    epilogue, once per trip: random.normal((10, 3))'s 3 x 10 nest took cc 0.38 s unrolled, 0.19 s not.)"""
    if any(isinstance(n, (ast.For, ast.While)) for s in getattr(loop, "body", []) for n in _nodes(s)):
        return False
    trips = _static_trips(loop)
    return trips is not None and trips <= SMALL_TRIPS


def _dynamic_window(sl):
    """n for a slice `s:s + n` whose start is a name (and no step), else None."""
    if sl.step is not None or not isinstance(sl.lower, ast.Name) or not isinstance(sl.upper, ast.BinOp):
        return None
    up = sl.upper
    if not (isinstance(up.op, ast.Add) and isinstance(up.left, ast.Name) and up.left.id == sl.lower.id):
        return None
    return static_int(up.right)


def _may_alias_written(body, inside):
    """Names in `body` whose value may be (a view of) an array allocated outside the loop and
    written inside it: its stored-into names, then every name assigned from one of those."""
    tainted = {n.value.id for s in body for n in _nodes(s)
               if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)}
    tainted -= inside
    assigns = [n for s in body for n in _nodes(s) if isinstance(n, ast.Assign)]
    changed = bool(tainted)
    while changed:
        changed = False
        for a in assigns:
            if names_in([a.value]) & tainted:
                new = _assigned_in(a.targets) - tainted
                if new:
                    tainted |= new
                    changed = True
    return tainted


def _contains(stmt, node):
    return any(n is node for n in _nodes(stmt))


def _calls_in(node):
    return any(isinstance(n, ast.Call) for n in _nodes(node))
