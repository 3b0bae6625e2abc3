"""The Numba CPU emitter: one `@numba.njit` function per Program, with every materialized
statement as a loop nest whose fused producers are inlined as scalar expressions.

The module it returns is plain Python a person can read: program variable names, typed
constants (`np.float32(1.67)`), and the user's `file:line` as comments.
"""
import ast
import re

import numpy as np

from ..core import ast_threads
from ..staging import literals
from . import fusable_forms, index_maps, narrow_floats, numba_flags, parallel, provenance, row_passes, scalar_rules
from ..staging.program import eqn
from . import blas_threads, contraction_layout, profile
from .control_flow_emit import CONTROL_FLOW, ControlFlowEmitter
from .plan import ELEMENTWISE, INDEX, OPAQUE, REDUCE, SOURCE, Plan
from .loop_thresholds import FEW_COLUMNS, KEPT_OUTER_MAX, SMALL_PRODUCT_WORK, SUM_BLOCK, VECTOR_MIN

# FMA contraction only: keeps NaN/inf semantics (no nnan/ninf)
FLOAT_OPTIONS = numba_flags.decorator_text(numba_flags.CONTRACTED)

# Parallel loops: `parallel.py` turns big, independent top-level loops of the entry function
# into prange loops after the body is written (thresholds and measurements there).


def kind_of(prim):
    if prim in scalar_rules.RULES:
        return ELEMENTWISE
    if prim in index_maps.INDEX_MAPS:
        return INDEX
    if prim == "iota":
        return SOURCE
    if prim in REDUCTIONS or prim in ("argmax", "argmin"):
        return REDUCE
    return OPAQUE


class Unsupported(Exception):
    """A primitive has no Numba lowering yet; the caller falls back to the interpreter."""


class _Ctx:
    """What a scalar rule may ask about the statement it lowers."""

    __slots__ = ("in_dtypes", "out_dtype", "_vmath")

    def __init__(self, in_dtypes, out_dtype, vmath):
        self.in_dtypes, self.out_dtype, self._vmath = in_dtypes, out_dtype, vmath

    def vmath(self, name, dtype):
        return self._vmath(name, dtype)


def _is_call_of(expr, func):
    """Whether `expr` is exactly one call of `func` (e.g. already `np.int32(...)`)."""
    if not (expr.startswith(func + "(") and expr.endswith(")")):
        return False
    try:
        node = ast_threads.parse(expr, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Call) and ast.unparse(node.func) == func


# the CUDA emitters import this name too
_loc_comment = provenance.loc_comment


def dtype_expr(dt):
    """`dt` as generated code spells it: `np.float32`."""
    return f"np.{np.dtype(dt).name}"


def zeros_expr(shape, dt):
    """A fresh array of zeros in generated code (support's intrinsic, not Numba's np.zeros
    overload, which is compiled again in every process)."""
    return f"_rt.full({tuple(int(n) for n in shape)!r}, {dtype_expr(dt)}(0), {dtype_expr(dt)})"


def _reduction_init(prim, dt, empty=False):
    """The accumulator's initial value; `empty`: the reduction has no elements (complex max/min
    then give the interpreter's identity, -inf+0j / inf+0j, which is not lexicographically
    below/above every value, so a non-empty reduction starts from -inf-infj / inf+infj)."""
    dt = np.dtype(dt)
    if prim == "reduce_sum" or prim == "reduce_or" or prim == "reduce_xor":
        return f"{dtype_expr(dt)}(0)" if dt.kind != "b" else "False"
    if prim == "reduce_prod":
        return f"{dtype_expr(dt)}(1)"
    if prim == "reduce_and":
        return "True" if dt.kind == "b" else f"{dtype_expr(dt)}(-1)"
    if prim in ("reduce_max", "reduce_min"):
        big = prim == "reduce_min"
        if dt.kind == "f":
            return f"{dtype_expr(dt)}({'np.inf' if big else '-np.inf'})"
        if dt.kind == "c":
            inf = "np.inf" if big else "-np.inf"
            return f"{dtype_expr(dt)}(complex({inf}, {'0.0' if empty else inf}))"
        if dt.kind == "b":
            return "True" if big else "False"
        info = np.iinfo(dt)
        return f"{dtype_expr(dt)}({info.max if big else info.min})"
    raise Unsupported(prim)


def _combine(prim, dt, acc, v):
    dt = np.dtype(dt)
    floaty = dt.kind in "fc"
    nan_max, nan_min = ("_rt.cmax", "_rt.cmin") if dt.kind == "c" else ("_rt.fmax", "_rt.fmin")
    table = {
        "reduce_sum": f"{acc} + {v}",
        "reduce_prod": f"{acc} * {v}",
        "reduce_max": f"{nan_max}({acc}, {v})" if floaty else f"max({acc}, {v})",
        "reduce_min": f"{nan_min}({acc}, {v})" if floaty else f"min({acc}, {v})",
        "reduce_and": f"{acc} & {v}",
        "reduce_or": f"{acc} | {v}",
        "reduce_xor": f"{acc} ^ {v}",
    }
    expr = table[prim]
    return expr if (floaty or dt.kind == "b") else f"{dtype_expr(dt)}({expr})"


_WIDE_SUM = {"float32": "float64", "complex64": "complex128"}  # the interpreter's accumulators

# float reduction steps the loop vectorizer reduces in SIMD registers (see support.radd)
VECTOR_STEP = {"reduce_sum": "radd", "reduce_prod": "rmul", "reduce_max": "kmax", "reduce_min": "kmin"}


def _float_key(value, dtype):
    """The integer key of a float (support.kmax's order-preserving map), for initial values."""
    dt = np.dtype(dtype)
    width = dt.itemsize * 8
    bits = int(np.array(value, dt).view(f"int{width}"))
    return bits ^ ((bits >> (width - 1)) & ((1 << (width - 1)) - 1))


def reduction_parts(em, e):
    """(operand, axes, operand aval, output name, output aval, output dtype) of a reduction."""
    (operand,) = e.ins
    out = e.outs[0]
    aval = em.program.avals[out]
    return operand, tuple(e.params["axes"]), em.aval(operand), out, aval, aval.dtype


def _vectorizable(prim, dt, size):
    return np.dtype(dt).kind == "f" and prim in VECTOR_STEP and size >= VECTOR_MIN


REDUCTIONS = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor")


_LOOP_VAR = re.compile(r"\b(_i\d+|_j(?:_\d+)?|_t(?:_\d+)?|_b)\b")

_NONFINITE = {"nan": "np.nan", "inf": "np.inf", "-inf": "-np.inf"}


class _NumbaLiterals(ast.NodeTransformer):
    """Typed literals Numba can compile: `np.float32('inf')` becomes `np.float32(np.inf)`."""

    def visit_Call(self, node):
        self.generic_visit(node)
        if literals.is_literal(node) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            text = node.args[0].value.strip()
            if text not in _NONFINITE:
                raise Unsupported(f"literal {ast.unparse(node)}")
            node.args = [ast_threads.parse(_NONFINITE[text], mode="eval").body]
        return node


def _numba_ready(program):
    """A copy of `program` whose literals Numba accepts."""
    from ..staging.program import Program, copy_tree

    fn = _NumbaLiterals().visit(copy_tree(program.fn))
    return Program(fn, program.avals, program.consts, program.debug_name)


class ModuleEmitter:
    """Collects the functions of one generated module: the entry function and one njit
    function per control-flow body (bodies are closure-free Programs)."""

    def __init__(self, program, vmath_lookup, threads=True):
        program = _numba_ready(fusable_forms.rewrite(contraction_layout.fold_transposes(narrow_floats.widen(program))))
        # True: parallel loops and threaded products; "blas": threaded products only (the
        # Numba serial build of a parallel program); False: no threads (a native library)
        self.threads = threads
        self.program = program
        self.vmath_lookup = vmath_lookup
        self.vmath_used = set()
        self.functions = []  # source blocks, callees before callers
        self._emitted = set()
        self.const_names = list(program.consts)
        self.calls_python = False  # set by debug.print's lowering (object mode)
        self._param_arrays = {}  # int64 parameter tuple -> placeholder of its module constant

    def param_array(self, values):
        """The name of a module-level int64 array constant holding `values` (a kernel's static
        parameters): Numba freezes a global array into the machine code, where an
        `np.array((...))` in the function costs a compiled overload per tuple length, and a
        literal argument a kernel specialization per value. Named when the module is done."""
        values = tuple(int(v) for v in values)
        if values not in self._param_arrays:
            self._param_arrays[values] = f"\x00params{len(self._param_arrays)}\x00"
        return self._param_arrays[values]

    def _name_param_arrays(self, functions):
        """(functions with the placeholders named, the constants' definitions): names no program
        variable has."""
        if not self._param_arrays:
            return functions, []
        taken = set(re.findall(r"\w+", "\n".join(functions)))
        names, k = {}, 0
        for placeholder in self._param_arrays.values():
            while f"_params{k}" in taken:
                k += 1
            names[placeholder] = f"_params{k}"
            k += 1
        marker = re.compile("\x00params\\d+\x00")
        functions = [marker.sub(lambda m: names[m.group(0)], f) for f in functions]
        return functions, [f"{names[p]} = np.array({list(v)!r}, dtype=np.int64)" for v, p in self._param_arrays.items()]

    def body_function(self, ref):
        """Emit the body named `ref` (once); returns its function name."""
        name = str(ref)
        if name not in self._emitted:
            self._emitted.add(name)
            sub = self.program.subprogram(ref)
            self.functions.append(Emitter(sub, self, entry=False).emit())
        return name

    def emit(self):
        entry = Emitter(self.program, self, entry=True).emit()
        head = [
            f"# Numba CPU kernel for the omnistage program {self.program.name!r}.",
            "import numpy as np",
            "import numba",
            "from omnistage.codegen import support as _rt",
        ]
        if any(f"pipeline_class={PIPELINE_NAME}" in f for f in self.functions + [entry]):
            head.append(PIPELINE_IMPORT)
        if any(f"@{SUBFUNCTION_DECORATOR}(" in f for f in self.functions):
            head.append(SUBFUNCTION_IMPORT)
        if any("_kn." in f for f in self.functions + [entry]):
            head.append("from omnistage.codegen import kernels as _kn")
        if any("_mpi." in f for f in self.functions + [entry]):
            head.append(mpi_lowering.MODULE_IMPORT)  # multi-process collectives
        if self.vmath_used:
            head.append(f"from omnistage.codegen.vmath import {', '.join(sorted(self.vmath_used))}")
        functions, params = self._name_param_arrays(self.functions + [entry])
        if not any("numba.prange(" in f for f in functions):
            # no parallel loops whose threads (Numba's, spinning after a loop) would fight the
            # GEMM pool's: products run on the pool (robust to a preempted thread), else on Numba's
            functions = [f.replace("_kn.matmul_threads(", "_kn.matmul_pool_threads(") for f in functions]
        functions, constants = hoist_constants(functions)
        blocks = ["\n".join(head + constants + params)] + functions
        return "\n\n\n".join(blocks) + "\n"


# How big control-flow bodies and other non-entry functions are compiled (kernel_calls.entry_kernel)
# ... "big": at least this many lines. Linked into its caller, a body is optimized and compiled
# once more per caller (random.gamma's ~150-line bodies nest three deep); called by pointer, it
# costs one indirect call per iteration, which a body this long does not notice.
POINTER_CALL_MIN_LINES = 40
SUBFUNCTION_DECORATOR = "called_by_pointer"
SUBFUNCTION_IMPORT = "from omnistage.codegen.kernel_calls import entry_kernel as called_by_pointer"
# Numba's pipeline less the passes generated code has no use for (numba_pipeline)
PIPELINE_NAME = "GeneratedCodeCompiler"
PIPELINE_IMPORT = "from omnistage.codegen.numba_pipeline import GeneratedCodeCompiler"


# A typed numeric literal in generated code: `np.float32(0.5)`, `np.uint32(9)`, `np.float32(-np.inf)`.
_TYPED_LITERAL = re.compile(
    r"\bnp\.((?:float|int|uint)\d+|bool_)\((-?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|np\.(?:inf|nan)))\)")


def hoist_constants(functions):
    """(functions, constant definitions): each distinct typed literal of the functions' code
    becomes one module-level constant (`_c3_float32 = np.float32(0.5)`), which Numba freezes
    as a typed constant. Inline, every `np.float32(0.5)` is a global lookup, an attribute and a
    call for Numba to type and lower: a sampler's ~80 literals were a fifth of its compile.
    Lines holding string literals (format strings) are left alone."""
    names = {}
    taken = set(re.findall(r"\b_c\d+_\w+", "\n".join(functions)))  # program variables' names
    count = iter(range(1 << 30))

    def name(m):
        text = m.group(0)
        while text not in names:
            candidate = f"_c{next(count)}_{m.group(1).rstrip('_')}"
            if candidate not in taken:
                names[text] = candidate
        return names[text]

    out = []
    for block in functions:
        lines = block.split("\n")
        out.append("\n".join(ln if ("'" in ln or '"' in ln) else _TYPED_LITERAL.sub(name, ln) for ln in lines))
    return out, [f"{n} = {text}" for text, n in names.items()]


def _loop_order(shape):
    """The order of an elementwise loop nest's loops (axes, outermost first): C order, except
    that a tiny last axis (at most TINY_ROW) goes outermost, so the innermost loop runs long
    and vectorizes (a (1000, 3) normal sample: 96 -> 24 us), unless the nest is big enough to
    run on threads, whose parallel loop is the outermost."""
    order = list(range(len(shape)))
    rows = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 0
    if rows >= 2 * TINY_ROW and shape[-1] <= TINY_ROW and rows * shape[-1] * 8 < parallel.PARALLEL_MIN_WORK:
        order = order[-1:] + order[:-1]
    return order


class Emitter(ControlFlowEmitter):
    """Builds one njit function: the Program's statements as loop nests and native control
    flow. Rank-0 values are Numba scalars (never 0-d arrays), so scalar loops stay in
    registers; opaque rules still see 0-d arrays at their boundary."""

    def __init__(self, program, module, entry=True):
        self.program = program
        self.module = module
        self.entry = entry
        self.plan = Plan(program, kind_of, share_elementwise=True, copy_consumers=("concatenate", "pad"))
        self.lines = []
        self.indent = 1
        self._memo = {}
        self._loops = []  # open loops: (variable, header line index, indent)
        self._names = set(program.avals) | set(program.consts) | set(program.in_names)
        for e in self.plan.eqns:
            if kind_of(e.prim) == OPAQUE and e.prim not in OPAQUE_RULES and e.prim not in CONTROL_FLOW:
                raise Unsupported(f"primitive {e.prim!r}")

    # --- small utilities ------------------------------------------------------------

    def line(self, text):
        self.lines.append("    " * self.indent + text)

    def fresh(self, base):
        name, i = base, 1
        while name in self._names:
            name = f"{base}_{i}"
            i += 1
        self._names.add(name)
        return name

    def vmath(self, name, dtype):
        helper = scalar_rules.CPU_HELPERS.get((name, np.dtype(dtype).kind))
        if helper is not None:
            return f"_rt.{helper}"
        fn = self.module.vmath_lookup(name, np.dtype(dtype))
        if fn is not None:
            self.module.vmath_used.add(fn)
        return fn

    def aval(self, node):
        return self.program.atom_aval(node)

    def scalar(self, expr, dtype):
        """`expr` as a Numba scalar of exactly `dtype` (Numba widens ints; casts are free)."""
        dt = np.dtype(dtype)
        cast = "np.bool_" if dt.kind == "b" else dtype_expr(dt)
        if _is_call_of(expr, cast):
            return expr
        return f"{cast}({expr})"

    # --- values at an index -------------------------------------------------------------

    def value(self, atom, idx):
        """Expression for element `idx` (list of index expressions) of `atom`."""
        if literals.is_literal(atom):
            return ast.unparse(atom)
        var = atom.id
        aval = self.aval(atom)
        if self.plan.materialized(var):
            if aval.ndim == 0:
                return var
            return self.read(var, idx)
        key = (var, tuple(map(str, idx)))
        if key in self._memo:
            return self._memo[key]
        e = self.plan.producer[var]
        expr = self._element(e, idx)
        if kind_of(e.prim) == INDEX:
            return expr  # pure address arithmetic: no local of its own
        local = var if not any(k[0] == var for k in self._memo) else self.fresh(var)
        self._names.add(local)
        self.line(f"{local} = {expr}{_loc_comment(e.stmt)}")
        self._memo[key] = local
        return local

    def _element(self, e, idx):
        kind = kind_of(e.prim)
        out_aval = self.program.avals[e.outs[0]]
        if kind == INDEX:
            (operand,) = e.ins
            in_shape = self.aval(operand).shape
            return self.value(operand, index_maps.INDEX_MAPS[e.prim](list(idx), in_shape, **e.params))
        if kind == SOURCE:
            return f"{dtype_expr(out_aval.dtype)}({idx[e.params['dimension']]})"
        args = [self.value(a, [] if self.aval(a).ndim == 0 else idx) for a in e.ins]
        ctx = _Ctx([self.aval(a).dtype for a in e.ins], out_aval.dtype, self.vmath)
        expr = scalar_rules.RULES[e.prim](ctx, *args, **e.params)
        if e.prim in scalar_rules.NEEDS_CAST and out_aval.dtype.kind in "iu":
            expr = f"{dtype_expr(out_aval.dtype)}({expr})"
        return expr

    # --- loop nests ---------------------------------------------------------------------

    def open_loop(self, var, extent):
        """`for var in range(extent):`; remembers where, so invariant reads can be hoisted."""
        self._loops.append((var, len(self.lines), self.indent))
        self.line(f"for {var} in range({extent}):")
        self.indent += 1

    def loops(self, shape, names=None):
        names = names or [f"_i{k}" for k in range(len(shape))]
        for n, d in zip(names, shape):
            self.open_loop(n, d)
        return names

    def close(self, depth):
        self.indent -= depth
        del self._loops[len(self._loops) - depth:]
        self._memo = {}

    def read(self, var, idx):
        """`var[idx]`, hoisted out of the inner loops it does not depend on: LLVM cannot
        prove that the arrays a loop writes do not alias it, so it would reload it on every
        iteration and not vectorize."""
        text = f"{var}[{', '.join(map(str, idx))}]"
        key = ("read", text)
        if key in self._memo:
            return self._memo[key]
        used = set(_LOOP_VAR.findall(text))
        # never above the outermost loop of the nest: in a row group that is where earlier
        # members' results for the current row do not exist yet
        depth = max((i for i, (v, _, _) in enumerate(self._loops) if v in used), default=0)
        if depth >= len(self._loops) - 1:
            return text
        _, at, indent = self._loops[depth + 1]
        local = self.fresh(f"{var}_at")
        self.lines.insert(at, "    " * indent + f"{local} = {text}")
        self._loops = [(v, p + (p >= at), i) for v, p, i in self._loops]
        self._memo[key] = local
        return local

    def cf_store(self, y, t, value):
        """Step `t` of a stacked scan output; rows are copied by a loop nest, since Numba
        compiles `y[t] = row` through its generic broadcasting setitem (seconds)."""
        rest = self.program.avals[y].shape[1:]
        if not rest:
            return f"{y}[{t}] = {value}"
        idx = [f"_i{k}" for k in range(len(rest))]
        lines = ["    " * k + f"for {i} in range({d}):" for k, (i, d) in enumerate(zip(idx, rest))]
        lines.append("    " * len(rest) + f"{y}[{t}, {', '.join(idx)}] = {value}[{', '.join(idx)}]")
        return "\n".join(lines)

    # --- data movement through the runtime copy kernel ---------------------------------------

    def copies_by_kernel(self, size):
        """Whether a copy of `size` elements goes through the copy kernel. Big copies keep
        their loop nests (a parallel build runs them on threads; a serial 1000x1000 float32
        transpose measured 0.65 ms as a nest, 1.3 ms in the kernel), and so do small ones in
        control-flow bodies, which run them once per iteration (a kernel call's ~0.15 us
        made a 100-step scan of 3x3 copies ~50% slower)."""
        return size < parallel.PARALLEL_MIN_WORK and (self.entry or size >= BODY_COPY_MIN)

    def view_of(self, atom):
        """(materialized array, (offset, strides)) that `atom`'s elements are, when it is one
        (index maps over an array compose into a strided view, see `index_maps.VIEW_MAPS`);
        else None (a literal, a scalar, computed elements)."""
        if literals.is_literal(atom) or self.aval(atom).ndim == 0:
            return None
        var = atom.id
        if self.plan.materialized(var):
            return var, (0, index_maps.c_strides(self.aval(atom).shape))
        e = self.plan.producer.get(var)
        return self._view_through(e) if e is not None and kind_of(e.prim) == INDEX else None

    def _view_through(self, e):
        """The view statement `e` (an index map) makes of its operand's view, or None."""
        (operand,) = e.ins
        src = self.view_of(operand)
        if src is None:
            return None
        view = index_maps.VIEW_MAPS[e.prim](src[1], self.aval(operand).shape, **e.params)
        return None if view is None else (src[0], view)

    def copy_views(self, base, pieces, dst):
        """Copy `pieces` ((src view, shape, dst view) each, the source views of array `base`)
        into `dst`: one call of the runtime copy kernel, compiled once per machine, not a loop
        nest per program."""
        params = []
        for (offset, strides), shape, (d_offset, d_strides) in pieces:
            params += [len(shape), *shape, offset, *strides, d_offset, *d_strides]
        self.line(f"_kn.strided_copy({base}, {dst}, {self.module.param_array(params)})")

    def copy_view(self, src, shape, dst, dst_view):
        """`dst`'s view `dst_view` := `src` (a `view_of` result) over `shape`."""
        self.copy_views(src[0], [(src[1], shape, dst_view)], dst)

    def emit_view_copy(self, e):
        """A materialized index map of an array (a transpose, slice, broadcast, ...) as one
        copy-kernel call; False when its elements are not a strided view of an array."""
        src = self._view_through(e) if len(e.ins) == 1 else None
        if src is None:
            return False
        out = e.outs[0]
        aval = self.program.avals[out]
        self.line(f"{out} = _rt.empty({aval.shape!r}, {dtype_expr(aval.dtype)}){_loc_comment(e.stmt)}")
        self.copy_view(src, aval.shape, out, (0, index_maps.c_strides(aval.shape)))
        return True

    def relayout(self, name, shape, dtype, perm=None, flip=(), cast=None):
        """A new C-contiguous array: `name` (of `shape`) with its axes permuted by `perm`,
        the result's axes in `flip` reversed and its elements cast to `cast`, copied by a
        loop nest. Numba compiles `x.transpose(perm)` and reversed slices through generic
        implementations that cost seconds per program."""
        perm = tuple(range(len(shape))) if perm is None else tuple(perm)
        new_shape = tuple(shape[p] for p in perm)
        out = self.fresh(f"{name}_c")
        self.line(f"{out} = _rt.empty({new_shape!r}, {dtype_expr(cast or dtype)})")
        if 0 in new_shape:
            return out
        if (cast is None or np.dtype(cast) == np.dtype(dtype)) and self.copies_by_kernel(int(np.prod(shape))):
            offset, strides = 0, list(index_maps.c_strides(shape)[p] for p in perm)
            for k in flip:
                offset, strides[k] = offset + (new_shape[k] - 1) * strides[k], -strides[k]
            self.copy_view((name, (offset, tuple(strides))), new_shape, out, (0, index_maps.c_strides(new_shape)))
            return out
        idx = self.loops(new_shape, [f"_r{k}" for k in range(len(new_shape))])
        src = [None] * len(shape)
        for k, p in enumerate(perm):
            src[p] = f"{new_shape[k] - 1} - {idx[k]}" if k in flip else idx[k]
        value = f"{name}[{', '.join(src)}]"
        self.line(f"{out}[{', '.join(idx)}] = {self.scalar(value, cast) if cast else value}")
        self.close(len(idx))
        return out

    def emit_materialize(self, e):
        out = e.outs[0]
        aval = self.program.avals[out]
        if not aval.shape:
            v = self._element(e, [])
            self.line(f"{out} = {self.scalar(v, aval.dtype)}{_loc_comment(e.stmt)}")
            self._memo = {}
            return
        self.line(f"{out} = _rt.empty({aval.shape!r}, {dtype_expr(aval.dtype)}){_loc_comment(e.stmt)}")
        target, shape, element = out, aval.shape, lambda idx: self._element(e, idx)
        if self._reshape_of_fused(e):
            # the fused producer runs in its own shape, into the result's memory in the same
            # order: a (100, 784) draw reshaped to (100, 28, 28) stays one long vectorized row
            # per image instead of a nest whose inner loop is 28 long (3x slower)
            (operand,) = e.ins
            shape = self.aval(operand).shape
            target = self.fresh(f"{out}_as_operand")
            self.line(f"{target} = _rt.reshape({out}, {shape!r})")
            element = lambda idx: self.value(operand, idx)  # noqa: E731
        idx = [f"_i{k}" for k in range(len(shape))]
        for k in _loop_order(shape):
            self.open_loop(idx[k], shape[k])
        self.line(f"{target}[{', '.join(idx)}] = {element(idx)}")
        self.close(len(idx))

    def _reshape_of_fused(self, e):
        """Whether `e` is a plain (row-major) reshape of a value computed in its loop nest."""
        if e.prim != "reshape" or e.params.get("dimensions") is not None or len(e.ins) != 1:
            return False
        operand = e.ins[0]
        if not isinstance(operand, ast.Name) or not self.aval(operand).ndim:
            return False
        return self.plan.producer.get(operand.id) is not None and not self.plan.materialized(operand.id)

    def _reduce_target(self, out, aval, kept_names):
        return out if not aval.shape else f"{out}[{', '.join(kept_names)}]"

    def emit_reduce(self, e):
        if e.prim in ("argmax", "argmin"):
            return self.emit_argreduce(e)
        operand, axes, x, out, aval, dt = reduction_parts(self, e)
        init = _reduction_init(e.prim, dt, empty=0 in [x.shape[k] for k in axes])
        n = x.ndim
        kept = [k for k in range(n) if k not in axes]
        # Kept-outer order (a register accumulator per output element, contiguous inner
        # reduction) when the last axis is reduced. When it is kept (column sums of a tall
        # matrix), the operand is read once in memory order: with few outputs into register
        # accumulators (`_column_reduction`), otherwise into the output row (vectorized across
        # the kept axis); both add rows in NumPy's order. The kept-outer order would re-read
        # the whole operand once per output with a stride of a row.
        trailing = (n - 1) in axes and axes == tuple(range(n - len(axes), n))
        if (n - 1) in axes and not trailing and aval.size <= KEPT_OUTER_MAX:
            trailing = True  # e.g. axes (0, 2): few outputs, each a register accumulator
        names = [f"_i{k}" for k in range(n)]
        comment = _loc_comment(e.stmt)
        if not trailing and 0 < aval.size <= FEW_COLUMNS and axes == tuple(range(len(axes))):
            return self._column_reduction(e, operand, names, axes, x, aval, init, comment)
        count = int(np.prod([x.shape[k] for k in axes]))
        if not trailing and e.prim == "reduce_sum" and count > SUM_BLOCK and np.dtype(dt).name in _WIDE_SUM:
            return self._wide_row_sum(e, operand, names, kept, x, aval, comment)
        target = self._reduce_target(out, aval, [names[k] for k in kept])
        if aval.shape and not trailing:
            self.line(f"{out} = _rt.full({aval.shape!r}, {init}, {dtype_expr(dt)}){comment}")
        elif aval.shape:
            self.line(f"{out} = _rt.empty({aval.shape!r}, {dtype_expr(dt)}){comment}")
        if trailing or not aval.shape:
            self.loops([x.shape[k] for k in kept], [names[k] for k in kept])
            if e.prim == "reduce_sum" and dt.kind in "fc" and count > SUM_BLOCK:
                acc = self._blocked_sum(e, operand, names, axes, x, dt, comment)
            elif _vectorizable(e.prim, dt, x.shape[axes[-1]]):
                acc = self._vector_reduction(e, operand, names, axes, x, dt, init, comment)
            else:
                acc = self.fresh("_acc")
                self.line(f"{acc} = {init}" + ("" if aval.shape else comment))
                self.loops([x.shape[k] for k in axes], [names[k] for k in axes])
                v = self.value(operand, names)
                self.line(f"{acc} = {_combine(e.prim, dt, acc, v)}")
                self.close(len(axes))
            self.line(f"{target} = {acc}")
            self.close(len(kept))
        else:
            self.loops(x.shape, names)
            v = self.value(operand, names)
            self.line(f"{target} = {_combine(e.prim, dt, target, v)}")
            self.close(n)

    def _column_reduction(self, e, operand, names, axes, x, aval, init, comment):
        """Leading axes reduced, few trailing outputs (the column sums of a tall matrix): one
        pass in memory order with a register accumulator per output, so each row is a few
        independent scalar steps and nothing goes through memory but the operand. Sums of
        float32/complex64 accumulate in double and round once, in NumPy's order (row after
        row), as the interpreter does (`lax.reductions._np_sum`): the results are identical."""
        out, dt = e.outs[0], aval.dtype
        wide = _WIDE_SUM.get(np.dtype(dt).name) if e.prim == "reduce_sum" else None
        acc_dt = np.dtype(wide or dt)
        if wide:
            init = f"{dtype_expr(acc_dt)}(0)"
        columns = list(np.ndindex(*aval.shape))
        accs = [self.fresh("_acc") for _ in columns]
        for acc in accs:
            self.line(f"{acc} = {init}{comment}")
            comment = ""
        self.loops([x.shape[k] for k in axes], [names[k] for k in axes])
        for acc, col in zip(accs, columns):
            v = self.value(operand, [names[k] for k in axes] + [str(c) for c in col])
            if wide:
                v = f"{dtype_expr(acc_dt)}({v})"
            self.line(f"{acc} = {_combine(e.prim, acc_dt, acc, v)}")
        self.close(len(axes))
        self.line(f"{out} = _rt.empty({aval.shape!r}, {dtype_expr(dt)})")
        for acc, col in zip(accs, columns):
            self.line(f"{out}[{', '.join(map(str, col))}] = {dtype_expr(dt) + '(' + acc + ')' if wide else acc}")

    def _wide_row_sum(self, e, operand, names, kept, x, aval, comment):
        """A long float32/complex64 sum over leading axes into many outputs (the column sums
        of a tall matrix): rows are added in memory order into a double row, rounded once at
        the end; a float32 row would lose ~n*eps over n rows."""
        out, dt = e.outs[0], aval.dtype
        wide_dtype = _WIDE_SUM[np.dtype(dt).name]
        wide = dtype_expr(wide_dtype)
        acc = self.fresh("_acc")
        self.line(f"{acc} = {zeros_expr(aval.shape, wide_dtype)}{comment}")
        self.loops(x.shape, names)
        target = f"{acc}[{', '.join(names[k] for k in kept)}]"
        self.line(f"{target} = {target} + {wide}({self.value(operand, names)})")
        self.close(x.ndim)
        self.line(f"{out} = _rt.empty({aval.shape!r}, {dtype_expr(dt)})")
        self.loops(aval.shape)
        idx = ", ".join(f"_i{k}" for k in range(aval.ndim))
        self.line(f"{out}[{idx}] = {dtype_expr(dt)}({acc}[{idx}])")
        self.close(aval.ndim)

    def _blocked_sum(self, e, operand, names, axes, x, dt, comment):
        """A long float sum over trailing axes, as accurate as NumPy's pairwise summation and
        as fast as one vectorized accumulator: blocks of at most SUM_BLOCK innermost elements
        are each summed by `radd` (the vectorizer's 16-64 partial sums, so a few dozen terms
        per partial sum), and the block sums are added into a double accumulator (float32:
        exact enough to round once) or, for float64, a compensated (Neumaier) one, so the
        error does not grow with the number of blocks. Complex sums: complex64 in complex128,
        complex128 plainly, block by block. Returns the name holding the result."""
        wide = np.dtype(_WIDE_SUM.get(np.dtype(dt).name, dt))
        compensated = wide == np.dtype(dt) and wide.kind == "f"
        acc, blk = self.fresh("_acc"), self.fresh("_blk")
        self.line(f"{acc} = {dtype_expr(wide)}(0){comment}")
        if compensated:
            comp, t = self.fresh("_comp"), self.fresh("_t")
            self.line(f"{comp} = {dtype_expr(wide)}(0)")
        self.loops([x.shape[k] for k in axes[:-1]], [names[k] for k in axes[:-1]])
        m = x.shape[axes[-1]]
        split = m > SUM_BLOCK
        if split:
            start = self.fresh("_blk_start")
            self.open_loop(start, f"0, {m}, {SUM_BLOCK}")
        self.line(f"{blk} = {dtype_expr(dt)}(0)")
        self.open_loop(names[axes[-1]], f"{start}, _rt.imin({start} + {SUM_BLOCK}, {m})" if split else m)
        v = self.value(operand, names)
        # short rows (a few columns) are added left to right, as in _vector_reduction
        step = f"_rt.radd({blk}, {v})" if _vectorizable(e.prim, dt, m) else f"{blk} + {v}"
        self.line(f"{blk} = {step}")
        self.close(1)
        if compensated:
            self.line(f"{t} = {acc} + {blk}")
            self.line(f"if abs({acc}) >= abs({blk}):")
            self.line(f"    {comp} += ({acc} - {t}) + {blk}")
            self.line("else:")
            self.line(f"    {comp} += ({blk} - {t}) + {acc}")
            self.line(f"{acc} = {t}")
        else:
            self.line(f"{acc} += {dtype_expr(wide)}({blk})")
        self.close(len(axes) - 1 + split)
        if compensated:  # an infinite or NaN total has a NaN compensation: keep the total
            self.line(f"if np.isfinite({acc}):")
            self.line(f"    {acc} = {acc} + {comp}")
        else:
            self.line(f"{acc} = {dtype_expr(dt)}({acc})")
        return acc

    def _vector_reduction(self, e, operand, names, axes, x, dt, init, comment):
        """A float reduction over trailing axes as one accumulator whose step is a
        `support` intrinsic the loop vectorizer reduces in packed registers: `radd`/`rmul`
        (reassociation allowed on that one instruction, nothing else) and `kmax`/`kmin`
        (integer max/min on order-preserving keys of the floats; NaN wins, as in NumPy).
        Returns the name holding the result."""
        acc = self.fresh("_acc")
        keyed = e.prim in ("reduce_max", "reduce_min")
        if keyed:  # on order-preserving integer keys (support.kmax)
            bits = np.dtype(dt).itemsize * 8
            init = f"np.int{bits}({_float_key(-np.inf if e.prim == 'reduce_max' else np.inf, dt)})"
        self.line(f"{acc} = {init}{comment}")
        self.loops([x.shape[k] for k in axes], [names[k] for k in axes])
        v = self.value(operand, names)
        self.line(f"{acc} = _rt.{VECTOR_STEP[e.prim]}({acc}, {v})")
        self.close(len(axes))
        if keyed:
            self.line(f"{acc} = _rt.unkey({acc})")
        return acc

    def emit_argreduce(self, e):
        (operand,) = e.ins
        axis = e.params["axis"]
        x = self.aval(operand)
        out = e.outs[0]
        aval = self.program.avals[out]
        n = x.ndim
        names = [f"_i{k}" for k in range(n)]
        kept = [k for k in range(n) if k != axis]
        if aval.shape:
            self.line(f"{out} = _rt.empty({aval.shape!r}, {dtype_expr(aval.dtype)}){_loc_comment(e.stmt)}")
        self.loops([x.shape[k] for k in kept], [names[k] for k in kept])
        best, where = self.fresh("_best"), self.fresh("_where")
        first = list(names)
        first[axis] = "0"
        self.line(f"{best} = {self.value(operand, first)}")
        self.line(f"{where} = 0")
        self._memo = {}
        self.loops([x.shape[axis]], [names[axis]])
        v = self.value(operand, names)
        better = ">" if e.prim == "argmax" else "<"
        nan_first = f" or ({v} != {v} and {best} == {best})" if x.dtype.kind == "f" else ""
        self.line(f"if {v} {better} {best}{nan_first}:")
        self.line(f"    {best} = {v}")
        self.line(f"    {where} = {names[axis]}")
        self.close(1)
        target = self._reduce_target(out, aval, [names[k] for k in kept])
        self.line(f"{target} = {self.scalar(where, aval.dtype)}")
        self.close(len(kept))

    def emit_opaque(self, e):
        """Run an opaque rule; its operands and results of rank 0 are 0-d arrays there."""
        ins = []
        for a in e.ins:
            if not literals.is_literal(a) and self.aval(a).ndim == 0:
                tmp = self.fresh(f"{a.id}_0d")
                self.program.avals[tmp] = self.aval(a)
                self.line(f"{tmp} = _rt.contiguous({a.id})")
                ins.append(ast.Name(tmp, ast.Load()))
            else:
                ins.append(a)
        outs, unwrap = [], []
        for o in e.outs:
            if self.program.avals[o].ndim == 0:
                tmp = self.fresh(f"{o}_0d")
                self.program.avals[tmp] = self.program.avals[o]
                outs.append(tmp)
                unwrap.append((o, tmp))
            else:
                outs.append(o)
        OPAQUE_RULES[e.prim](self, e._replace(ins=ins, outs=outs))
        for o, tmp in unwrap:
            self.line(f"{o} = {tmp}[()]")

    # --- the function -------------------------------------------------------------------

    def emit(self):
        group = _RowGroup(self)
        for stmt in self.program.body:
            if isinstance(stmt, ast.FunctionDef):
                continue  # bodies become module-level functions when a statement uses them
            if isinstance(stmt, ast.Return):
                continue
            e = eqn(stmt)
            if len(e.outs) == 1 and not self.plan.materialized(e.outs[0]):
                continue
            kind = kind_of(e.prim)
            # (a rank-0 result is a scalar in generated code, never a 0-d array to copy into)
            if (kind == INDEX and len(e.outs) == 1 and self.program.avals[e.outs[0]].ndim
                    and self.copies_by_kernel(self.program.avals[e.outs[0]].size)
                    and self._view_through(e) is not None):
                group.flush()
                self.emit_view_copy(e)
                continue
            if group.offer(e, kind):
                continue
            group.flush()
            if e.prim in CONTROL_FLOW:
                CONTROL_FLOW[e.prim](self, e)
            elif kind in (ELEMENTWISE, INDEX, SOURCE):
                self.emit_materialize(e)
            elif kind == REDUCE:
                self.emit_reduce(e)
            else:
                self.emit_opaque(e)
        group.flush()
        outs = ", ".join(ast.unparse(a) for a in self.program.out_atoms)
        self.line(f"return ({outs}{',' if len(self.program.out_atoms) == 1 else ''})")
        p = self.program
        args = ", ".join(p.in_names + self.module.const_names)
        # a function that calls Python (debug.print's object-mode block, here or in a body it
        # calls: those are emitted first) keeps the GIL, which object mode needs anyway
        nogil = "" if self.module.calls_python else "nogil=True, "
        options = "cache=_OMNISTAGE_CACHED, " + nogil + FLOAT_OPTIONS + ", boundscheck=False"
        if self.entry and self.module.threads is True and parallel.enabled():
            self.lines, threaded = parallel.parallelize(self.lines)
            if threaded:
                options += ", " + parallel.NJIT_OPTION
        # a big body called by other generated functions is reached through a pointer, so its
        # callers neither link its IR nor optimize it again (kernel_calls); a small one stays an
        # ordinary call LLVM can inline (a fori_loop summing its index folds to a formula)
        by_pointer = not self.entry and len(self.lines) >= POINTER_CALL_MIN_LINES
        decorator = SUBFUNCTION_DECORATOR if by_pointer else "numba.njit"
        # no C-ABI wrapper (nothing calls these through one); a body is only called from
        # compiled code, so it needs no CPython wrapper either (~10% of its IR each)
        options += ", no_cfunc_wrapper=True" + ("" if self.entry else ", no_cpython_wrapper=True")
        if "parallel=" not in options:  # parfors need Numba's whole pipeline (numba_pipeline)
            options += f", pipeline_class={PIPELINE_NAME}"
        head = [f"@{decorator}({options})", f"def {p.name}({args}):"]
        return "\n".join(head + self.lines)


class _RowGroup:
    """Row fusion: consecutive loop nests over the same leading extent, each reading the
    others' results only at the current leading index (softmax: row max, exp, row sum,
    divide), share one outer loop, so a row is finished while it is still in cache."""

    def __init__(self, em):
        self.em = em
        self.members = []  # (out name, allocation lines, body lines, eqn)
        self.extent = None

    def _candidate(self, e, kind):
        if len(e.outs) != 1:
            return None
        aval = self.em.program.avals[e.outs[0]]
        if aval.ndim == 0 or 0 in aval.shape:
            return None
        if kind in (ELEMENTWISE, INDEX, SOURCE):
            return aval.shape[0]
        if kind == REDUCE and e.prim not in ("argmax", "argmin"):
            x = self.em.aval(e.ins[0])
            n, axes = x.ndim, tuple(e.params["axes"])
            if axes == tuple(range(n - len(axes), n)) and 0 not in axes:
                return aval.shape[0]
        return None

    def offer(self, e, kind):
        extent = self._candidate(e, kind)
        if extent is None or (self.extent is not None and extent != self.extent):
            return False
        em = self.em
        saved, em.lines = em.lines, []
        (em.emit_materialize if kind != REDUCE else em.emit_reduce)(e)
        lines, em.lines = em.lines, saved
        loop = f"{'    ' * em.indent}for _i0 in range({extent}):"
        if loop not in lines:  # not the expected loops (a tiny last axis outermost): as is
            self.flush()
            em.lines.extend(lines)
            return True
        at = lines.index(loop)
        alloc, body = lines[:at], [line[4:] for line in lines[at + 1:]]
        names = [m[0] for m in self.members]
        if not all(_reads_only_row(body, name) for name in names):
            self.flush()
            self.members, self.extent = [(e.outs[0], alloc, body, e)], extent
            return True
        self.members.append((e.outs[0], alloc, body, e))
        self.extent = extent
        return True

    def flush(self):
        if not self.members:
            return
        em = self.em
        pad = "    " * em.indent
        members = [self._row_buffer(m) if len(self.members) > 1 else m for m in self.members]
        members = self._scalar_rows(members)
        for _, alloc, _, _ in members:
            em.lines.extend(alloc)
        em.lines.append(f"{pad}for _i0 in range({self.extent}):")
        body = row_passes.fuse_reductions(["    " + line for _, _, body, _ in members for line in body])
        em.lines.extend(row_passes.prefetch_rows(body))
        self.members, self.extent = [], None

    def _row_buffer(self, member):
        """An intermediate used only inside the group keeps just the current row (it stays in
        L1 instead of going to memory and back): `exp_1[_i0, j]` becomes `exp_1[j]`, and a
        rank-1 one, whose row is one element, becomes a scalar local (`mul_1[_i0]`: `mul_1`)."""
        name, alloc, body, e = member
        aval = self.em.program.avals[name]
        if aval.ndim < 1 or name in self.em.plan.outputs or not self._used_only_here(name):
            return member
        if len(alloc) != 1:
            return member  # written through a view (a reshape of its fused operand): the view is its row
        text = "\n".join(b for _, _, b, _ in self.members for b in b)
        if aval.ndim == 1:
            return self._scalar_element(member, text)
        if len(re.findall(rf"\b{re.escape(name)}\[", text)) != len(re.findall(rf"\b{re.escape(name)}\[_i0, ", text)):
            return member
        pad = "    " * self.em.indent
        new_alloc = [f"{pad}{name} = _rt.empty({aval.shape[1:]!r}, {dtype_expr(aval.dtype)}){_loc_comment(e.stmt)}  # one row"]
        for _, _, b, _ in self.members:
            b[:] = [re.sub(rf"\b{re.escape(name)}\[_i0, ", f"{name}[", line) for line in b]
        return name, new_alloc, body, e

    def _scalar_element(self, member, text):
        name, alloc, body, e = member
        at = re.escape(name) + r"\[_i0\]"
        if len(re.findall(rf"\b{re.escape(name)}\[", text)) != len(re.findall(rf"\b{at}", text)):
            return member
        cast = dtype_expr(self.em.program.avals[name].dtype)  # the store into the array cast to it
        store = re.compile(rf"^(\s*){at} = (.*?)((?:  #.*)?)$")
        for _, _, b, _ in self.members:
            b[:] = [re.sub(rf"\b{at}", name, store.sub(rf"\1{name} = {cast}(\2)\3", line)) for line in b]
        return name, [], body, e

    def _scalar_rows(self, members):
        """Row buffers of at most TINY_ROW elements (a vmapped PRNG key's 2 words) become one
        scalar local per element, and the short loops over them are unrolled: Numba types
        and lowers every array access separately and LLVM's SROA is superlinear in them, so a
        vmapped threefry's dozens of 2-element rows cost seconds of compile time as arrays."""
        tiny = {}
        for name, alloc, _, e in members:
            aval = self.em.program.avals[name]
            if len(alloc) == 1 and alloc[0].endswith("  # one row") and 0 < int(np.prod(aval.shape[1:])) <= TINY_ROW:
                tiny[name] = aval.dtype
        if not tiny:
            return members
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, tiny)) + r")\[")
        bodies = [_unroll_loops_over(body, pattern, self.em.fresh) for _, _, body, _ in members]
        text = "\n".join(line for body in bodies for line in body)
        constant = {n for n in tiny if re.findall(rf"\b{re.escape(n)}\[", text)
                    == re.findall(rf"\b{re.escape(n)}\[(?=[\d, ]+\])", text)}
        scalars = {}

        def local(m):
            key = (m.group(1), m.group(2))
            if key not in scalars:
                digits = re.findall(r"\d+", m.group(2))
                scalars[key] = self.em.fresh(m.group(1) + "_" + "_".join(digits))
            return scalars[key]

        element = re.compile(r"\b(" + "|".join(map(re.escape, constant)) + r")\[([\d, ]+)\]") if constant else None
        out = []
        for (name, alloc, _, e), body in zip(members, bodies):
            if element is not None:
                body = [self._scalar_line(line, element, local, tiny) for line in body]
            out.append((name, [] if name in constant else alloc, body, e))
        return out

    def _scalar_line(self, line, element, local, dtypes):
        store = re.match(r"^(\s*)(\w+)\[([\d, ]+)\] = (.*?)(  # .*)?$", line)
        if store and element.fullmatch(f"{store.group(2)}[{store.group(3)}]"):
            target = element.sub(local, f"{store.group(2)}[{store.group(3)}]")
            value = element.sub(local, store.group(4))
            # an array store converts to the array's dtype; a local keeps the value's (Numba
            # widens small integers), so the conversion is written out
            return f"{store.group(1)}{target} = {self.em.scalar(value, dtypes[store.group(2)])}{store.group(5) or ''}"
        return element.sub(local, line)

    def _used_only_here(self, name):
        inside = {id(m[3].stmt) for m in self.members}
        plan = self.em.plan

        # the statements that finally consume `name`, through chains of fused (unmaterialized)
        # single-output users; each variable is visited once (the chains form a DAG, and
        # walking every path was 1.6M calls for random.gamma's program)
        seen, pending = {name}, [name]
        while pending:
            for user in plan.consumers.get(pending.pop(), []):
                out = user.outs[0] if len(user.outs) == 1 else None
                if out is not None and not plan.materialized(out):
                    if out not in seen:
                        seen.add(out)
                        pending.append(out)
                elif id(user.stmt) not in inside:
                    return False
        return True


BODY_COPY_MIN = 1024  # copies in control-flow bodies this big or bigger call the copy kernel
TINY_ROW = 4  # row buffers up to this many elements become scalar locals
# ... when the loops over them are at most this many lines: unrolling copies the body once per
# element, and Numba's compile time grows faster than the function (a normal sampler's ~70
# statements copied per column of a (10, 3) result cost seconds)
UNROLL_MAX_LINES = 12
_ASSIGNED_LOCAL = re.compile(r"^\s*(\w+) = ")
_SHORT_LOOP = re.compile(r"^(\s*)for (_i\d+) in range\((\d+)\):$")


def _unroll_loops_over(lines, touches, fresh):
    """`lines` with every loop of at most TINY_ROW iterations and UNROLL_MAX_LINES lines whose
    body matches `touches` replaced by one copy of its body per iteration (the loop variable a
    constant). Each copy gets its own names (`fresh`) for the locals it assigns: a name
    assigned twice costs Numba an SSA reconstruction that grows with the function's size."""
    out, i = [], 0
    while i < len(lines):
        m = _SHORT_LOOP.match(lines[i])
        if not m or int(m.group(3)) > TINY_ROW or _body_length(lines, i) > UNROLL_MAX_LINES:
            out.append(lines[i])
            i += 1
            continue
        pad, var, n = m.group(1), m.group(2), int(m.group(3))
        j = i + 1
        while j < len(lines) and len(lines[j]) - len(lines[j].lstrip()) > len(pad):
            j += 1
        body = lines[i + 1:j]
        if not any(touches.search(line) for line in body):
            out.extend(lines[i:j])
        else:
            body = [line[4:] for line in body]
            assigned = _defined_before_use(body)
            for k in range(n):
                copy = [re.sub(rf"\b{var}\b", str(k), line) for line in body]
                if assigned and k:
                    names = {a: fresh(a) for a in assigned}
                    local = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
                    copy = [local.sub(lambda m: names[m.group(1)], line) for line in copy]
                out.extend(_unroll_loops_over(copy, touches, fresh))
        i = j
    return out


def _body_length(lines, i):
    """How many lines the block opened at `lines[i]` holds."""
    pad = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines) and len(lines[j]) - len(lines[j].lstrip()) > pad:
        j += 1
    return j - i - 1


def _defined_before_use(body):
    """Locals `body` assigns before any read of them: not carried from one iteration to the
    next (a reduction's `_acc = _acc + ...` is), so each unrolled copy may rename them."""
    first = {}
    for i, line in enumerate(body):
        m = _ASSIGNED_LOCAL.match(line)
        if m and m.group(1) not in first:
            first[m.group(1)] = i
    ok = set()
    for name, at in first.items():
        word = re.compile(rf"\b{re.escape(name)}\b")
        if not any(word.search(line) for line in body[:at]) and not word.search(body[at].split(" = ", 1)[1]):
            ok.add(name)
    return ok


def _reads_only_row(body, name):
    """Whether every read of array `name` in `body` indexes its leading axis with `_i0`."""
    for m in re.finditer(rf"\b{re.escape(name)}\[([^],]*)", "\n".join(body)):
        if m.group(1).strip() != "_i0":
            return False
    return True




# --- opaque statements: one emitter each --------------------------------------------------


def _emit_dot_general(em, e):
    lhs, rhs = e.ins
    la, ra = em.aval(lhs), em.aval(rhs)
    out = e.outs[0]
    aval = em.program.avals[out]
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    lfree = [d for d in range(la.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(ra.ndim) if d not in rc and d not in rb]
    B = int(np.prod([la.shape[d] for d in lb], dtype=np.int64))
    M = int(np.prod([la.shape[d] for d in lfree], dtype=np.int64))
    K = int(np.prod([la.shape[d] for d in lc], dtype=np.int64))
    N = int(np.prod([ra.shape[d] for d in rfree], dtype=np.int64))
    comment = _loc_comment(e.stmt)
    lname, rname = ast.unparse(lhs), ast.unparse(rhs)
    dt = dtype_expr(aval.dtype)
    if (aval.dtype.kind in "fc" and 0 < B * M * N * K <= SMALL_PRODUCT_WORK and la.ndim and ra.ndim
            and la.dtype == ra.dtype == aval.dtype):
        _small_product(em, e, (lb, lfree, lc), (rb, rc, rfree), dt, comment)
        return
    if aval.dtype.kind in "fc" and K > 0:
        # once per process, before the first program that calls BLAS runs (the native tier's
        # emission, threads=None, asks without importing Numba)
        blas_threads.configure(parallel.likely_enabled() if em.module.threads is None else None)
        # BLAS on each batch element's matrices, in the compiled-once kernel `_kn.matmul`
        # (called through a pointer: nothing of Numba's dot implementation is compiled into
        # the program). An operand is a reshape of itself, or of its transposed matrices (BLAS
        # gets a transpose flag); else it is copied to the contraction's axis order first.
        la_src, la_mat, la_t = _blas_operand(em, lname, la, (lb, lfree, lc), B, (M, K))
        ra_src, ra_mat, ra_t = _blas_operand(em, rname, ra, (rb, rc, rfree), B, (K, N))
        o3 = out if aval.shape == (B, M, N) else em.fresh(f"{out}_3d")
        params = la_mat + ra_mat + (int(la_t), int(ra_t))
        em.line(f"{o3} = _rt.empty(({B}, {M}, {N}), {dt}){comment}")
        em.line(f"_kn.{_matmul_kernel(em, B, M, N, K)}({la_src}, {ra_src}, {o3}, {em.module.param_array(params)})  # BLAS")
        if o3 != out:
            em.line(f"{out} = _rt.reshape({o3}, {aval.shape!r})")
        return
    lperm = tuple(lb) + tuple(lfree) + tuple(lc)
    rperm = tuple(rb) + tuple(rc) + tuple(rfree)
    l3, r3, o3 = em.fresh(f"{out}_lhs"), em.fresh(f"{out}_rhs"), em.fresh(f"{out}_3d")
    em.line(f"{l3} = _rt.reshape({_contiguous(em, lname, la, lperm)}, ({B}, {M}, {K})){comment}")
    em.line(f"{r3} = _rt.reshape({_contiguous(em, rname, ra, rperm)}, ({B}, {K}, {N}))")
    em.line(f"{o3} = _rt.empty(({B}, {M}, {N}), {dt})")
    em.line(f"for _b in range({B}):")
    em.line(f"    for _m in range({M}):")
    em.line(f"        for _n in range({N}):")
    em.line(f"            _s = {dt}(0)" if aval.dtype.kind != "b" else "            _s = False")
    em.line(f"            for _k in range({K}):")
    if aval.dtype.kind == "b":
        em.line(f"                _s = _s | ({l3}[_b, _m, _k] & {r3}[_b, _k, _n])")
    else:
        em.line(f"                _s = {dt}(_s + {l3}[_b, _m, _k] * {r3}[_b, _k, _n])")
    em.line(f"            {o3}[_b, _m, _n] = _s")
    em.line(f"{out} = _rt.reshape({o3}, {aval.shape!r})")


def _small_product(em, e, lhs_axes, rhs_axes, dt, comment):
    """`dot_general` as loops: one over each output axis (batch, lhs free, rhs free, as
    dot_general orders them), an accumulator, one over each contracted axis."""
    lhs, rhs = e.ins
    la, ra = em.aval(lhs), em.aval(rhs)
    out = e.outs[0]
    aval = em.program.avals[out]
    (lb, lfree, lc), (rb, rc, rfree) = lhs_axes, rhs_axes
    em.line(f"{out} = _rt.empty({aval.shape!r}, {dt}){comment}")
    o_idx = em.loops(aval.shape)
    k_idx = [f"_i{aval.ndim + k}" for k in range(len(lc))]  # loop names em.read knows
    b_idx, m_idx, n_idx = o_idx[:len(lb)], o_idx[len(lb):len(lb) + len(lfree)], o_idx[len(lb) + len(lfree):]
    l_pos, r_pos = [None] * la.ndim, [None] * ra.ndim
    for axes, names in ((lb, b_idx), (lfree, m_idx), (lc, k_idx)):
        for d, n in zip(axes, names):
            l_pos[d] = n
    for axes, names in ((rb, b_idx), (rfree, n_idx), (rc, k_idx)):
        for d, n in zip(axes, names):
            r_pos[d] = n
    acc = em.fresh("_acc")
    em.line(f"{acc} = {dt}(0)")
    em.loops([la.shape[d] for d in lc], k_idx)
    em.line(f"{acc} = {dt}({acc} + {em.value(lhs, l_pos)} * {em.value(rhs, r_pos)})")
    em.close(len(k_idx))
    em.line(f"{out}[{', '.join(o_idx) or '()'}] = {acc}")  # a 0-d result (vector . vector) too
    em.close(len(o_idx))


def _matmul_kernel(em, B, M, N, K):
    """For a product big enough to cut into blocks (kernels.gemm_blocks decides by shape):
    `matmul_threads` in a build with threads (Numba's threads; `matmul_pool_threads`, the GEMM
    pool first, once the module turns out to have no parallel loops: ModuleEmitter.emit),
    `matmul_pool` in one without (what native libraries are built from: the GEMM pool, else
    serial); else `matmul`. All compute the same blocks with the same calls: the same bits."""
    if em.module.threads is None:
        return "matmul"  # the native tier (c_tier): one gemm per matrix, in C
    from . import kernels

    if not parallel.enabled() or B * M * N * K < kernels.GEMM_SPLIT_WORK:
        return "matmul"
    blocks, _ = kernels.gemm_blocks.py_func(M, N, K)
    if B * blocks < 2:
        return "matmul"
    return "matmul_threads" if em.module.threads else "matmul_pool"


def _blas_operand(em, name, aval, axes, batch_size, shape):
    """(array, (batch, rows, cols) it is stored as, transposed?) for `name` as a stack of BLAS
    matrices of `shape`: itself where its axes are those matrices, C-ordered or transposed
    (`.T` of the stored ones), else a copy with the axes permuted. `axes` are its (batch, row,
    column) axes."""
    batch, rows, cols = axes
    layout = contraction_layout.matrix_layout(batch, rows, cols, aval.ndim) if aval.ndim else None
    src = name
    if layout is None:
        src, layout = _contiguous(em, name, aval, tuple(batch) + tuple(rows) + tuple(cols)), "C"
    matrix = tuple(shape) if layout == "C" else tuple(shape)[::-1]
    return src, (batch_size,) + matrix, layout == "F"


def _contiguous(em, name, aval, perm):
    """A C-contiguous array of `name` with axes permuted by `perm` (no copy when the identity)."""
    if not aval.ndim:
        return f"_rt.contiguous({name})"
    if tuple(perm) == tuple(range(aval.ndim)):
        return f"_rt.contiguous({name})"
    return em.relayout(name, aval.shape, aval.dtype, perm)


def _emit_concatenate(em, e):
    # one copy-kernel call per operand that is a view of an array, else a copy loop nest:
    # Numba compiles a slice assignment `out[:, 0:1] = x` through its generic broadcasting
    # setitem, about a second of compile time each
    out = e.outs[0]
    aval = em.program.avals[out]
    dim = e.params["dimension"]
    em.line(f"{out} = _rt.empty({aval.shape!r}, {dtype_expr(aval.dtype)}){_loc_comment(e.stmt)}")
    offset = 0
    out_strides = index_maps.c_strides(aval.shape)
    pieces = []  # consecutive views of one array: one copy-kernel call (Emitter.copy_views)
    computed = []  # consecutive computed operands of one shape: (operand, offset), one loop nest
    for a in e.ins:
        shape = em.aval(a).shape
        src = em.view_of(a) if 0 not in shape and em.copies_by_kernel(int(np.prod(shape))) else None
        if pieces and (src is None or src[0] != pieces[0][0]):
            em.copy_views(pieces[0][0], [p[1:] for p in pieces], out)
            pieces = []
        if computed and (src is not None or em.aval(computed[0][0]).shape != shape):
            _concatenated_loops(em, out, dim, computed)
            computed = []
        if src is not None:
            pieces.append((src[0], src[1], shape, (offset * out_strides[dim], out_strides)))
        elif 0 not in shape:
            computed.append((a, offset))
        offset += shape[dim]
    if pieces:
        em.copy_views(pieces[0][0], [p[1:] for p in pieces], out)
    if computed:
        _concatenated_loops(em, out, dim, computed)


def _concatenated_loops(em, out, dim, operands):
    """One loop nest writing every (operand, offset) of one shape into `out`: operands that
    share work (the two halves of a threefry2x32, a sampler's two bit streams) compute it once
    per element, where a nest each computed it twice and LLVM compiled it twice."""
    idx = em.loops(em.aval(operands[0][0]).shape)
    for a, offset in operands:
        dst = [f"{i} + {offset}" if k == dim and offset else i for k, i in enumerate(idx)]
        em.line(f"{out}[{', '.join(dst)}] = {em.value(a, idx)}")
    em.close(len(idx))


OPAQUE_RULES = {
    "dot_general": _emit_dot_general,
    "concatenate": _emit_concatenate,
}


def emit_module(program, vmath_lookup=lambda name, dtype: None, threads=True):
    """(module source, function name) for `program`; raises Unsupported if a primitive has
    no lowering yet. Rank-0 inputs and outputs of the entry function are scalars.
    `threads="blas"` emits no parallel loops but cuts big products into blocks for Numba's
    threads (`matmul_threads`: the serial build of a parallel program, run with one thread
    when it stands for the serial build); `threads=False` uses no threads at all (what a native
    library is built from); `threads=None` is the native tier's module (c_tier): no threads,
    one BLAS call per matrix, nothing asked of Numba."""
    source = ModuleEmitter(program, vmath_lookup, threads).emit()
    return (profile.instrument(source, program.name) if profile.enabled() else source), program.name
from . import opaque_rules  # noqa: F401
from . import mpi_lowering  # noqa: E402 - registers the cross-process collectives' rules
from . import fft_lowering  # noqa: E402,F401 - registers fft's rule (numpy.fft via rocket-fft)
from . import callback_lowering  # noqa: E402,F401 - registers pure_callback's rule (object mode)
