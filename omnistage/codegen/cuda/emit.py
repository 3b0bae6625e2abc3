"""The Numba CUDA emitter: one module per Program holding a `@cuda.jit` kernel per materialized
loop nest and a host driver function (plain Python) that allocates device arrays and launches
the kernels in program order.

Fusion and the scalar/index lowering are the CPU backend's (`plan.py`, `scalar_rules.py`,
`index_maps.py`, reused through `emit_cpu.Emitter`): a kernel computes one element of its
output per grid-stride iteration, with fused producers inlined as scalar expressions. NumPy
math in those expressions becomes libdevice calls (`_cd.expf`), since CUDA kernels have no
NumPy. Reductions are deterministic block reductions in shared memory (a fixed tree, no
atomics) with a second pass over per-block partials when one output is split over several
blocks. `dot_general` calls cuBLAS through CuPy on a GPU with CuPy, else runs a generated
kernel. Control flow runs on the host, reading back only the scalar a branch needs.
Sorting, convolution, the triangular solve, the small-matrix factorizations and eig have
kernels in modules of their own (`sort_emit`, `conv_emit`, `solve_emit`, `decomp_emit`,
`eig_emit`). float16/bfloat16 programs are computed in float32, rounded onto the narrow value set
after each operation (`narrow_floats`, in `emit_module`). A statement with no kernel would run
its NumPy implementation on a host copy, marked in the source.
Every rank-0 value lives in a 1-element device array (`x[0]` in kernels).

Must not import numba.cuda (the generated module does); imports `runtime` only for its
launch constants, which do not touch the driver.
"""
import ast

import numpy as np

from ...core import ast_threads
from ...staging import literals
from ...staging.program import eqn, is_eqn
from .. import emit_cpu, index_maps, narrow_floats, scalar_rules
from ..emit_cpu import (REDUCTIONS, Emitter, Unsupported, _combine, _loc_comment, dtype_expr,
                        _numba_ready, _reduction_init)
from ..control_flow_emit import CONTROL_FLOW, ControlFlowEmitter
from ..plan import ELEMENTWISE, INDEX, OPAQUE, REDUCE, SOURCE, Plan
from . import device_support, runtime

_CASTS = {f"np.{n}" for n in ("float32", "float64", "complex64", "complex128", "bool_", "int8", "int16",
                              "int32", "int64", "uint8", "uint16", "uint32", "uint64")}


# --- scalar expressions: the CPU rules, NumPy math turned into libdevice calls -------------------


class _ToCuda(ast.NodeTransformer):
    """Rewrites one scalar expression of the CPU rules for CUDA kernels."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def visit_Call(self, node):
        self.generic_visit(node)
        func = ast.unparse(node.func)
        if func in ("max", "min") and len(node.args) == 2:
            # the builtins compile as separate device functions: a conditional expression
            a, b = (ast.unparse(x) for x in node.args)
            return ast_threads.parse(f"({a} if {a} {'>=' if func == 'max' else '<='} {b} else {b})", mode="eval").body
        if func.startswith("_rt."):
            # every support helper is reached through _cd: CUDA versions where the CPU one
            # uses NumPy math, integer-width-keeping wrappers under the simulator
            node.func = ast_threads.parse("_cd." + func[4:], mode="eval").body
            return node
        if not func.startswith("np.") or func in _CASTS:
            return node
        return self._numpy_call(func[3:], node)

    def _numpy_call(self, name, node):
        kind = self.dtype.kind
        args = [ast.unparse(a) for a in node.args]
        if name == "abs" and kind in "iu":
            text = f"abs({args[0]})"
        elif name == "isfinite":
            text = "True" if kind in "iub" else f"(_cd.{'finitef' if self.dtype.itemsize == 4 else 'finite'}({args[0]}) != 0)"
        elif name == "sign" and kind in "iu":
            text = f"_cd.isign({args[0]})"
        elif name == "conj" and kind != "c":
            text = args[0]
        elif name == "conj":
            text = f"_cd.conj({args[0]})"
        else:
            fn = device_support.libdevice_name(name, self.dtype)
            if fn is None:
                raise Unsupported(f"np.{name} on {self.dtype.name} in CUDA kernels")
            text = f"_cd.{fn}({', '.join(args)})"
        return ast_threads.parse(text, mode="eval").body


def _math_dtype(dtypes):
    """The dtype NumPy math in an expression works in: the first inexact operand's."""
    return next((d for d in dtypes if np.dtype(d).kind in "fc"), dtypes[0])


def cuda_expression(expr, dtypes):
    return ast.unparse(_ToCuda(_math_dtype(dtypes)).visit(ast_threads.parse(expr, mode="eval")))


class _Ctx(emit_cpu._Ctx):
    """No vectorized CPU math in kernels: rules write NumPy calls, which become libdevice."""

    def vmath(self, name, dtype):
        return None


def _elementwise_expr(e, args, in_dtypes, out_dtype):
    ctx = _Ctx(list(in_dtypes), np.dtype(out_dtype), None)
    expr = scalar_rules.RULES[e.prim](ctx, *args, **e.params)
    if e.prim in scalar_rules.NEEDS_CAST and np.dtype(out_dtype).kind in "iu":
        expr = f"{dtype_expr(out_dtype)}({expr})"
    return cuda_expression(expr, in_dtypes)


def kernel_kind(program, e):
    """The loop-nest kind of statement `e` in CUDA code (OPAQUE: no kernel template)."""
    if e.prim in scalar_rules.RULES:
        try:
            dts = [program.atom_aval(a).dtype for a in e.ins]
            _elementwise_expr(e, [f"_a{k}" for k in range(len(e.ins))], dts, program.avals[e.outs[0]].dtype)
        except (Unsupported, KeyError):
            return OPAQUE
        return ELEMENTWISE
    if e.prim in index_maps.INDEX_MAPS:
        return OPAQUE if e.prim == "reshape" and e.params.get("dimensions") is not None else INDEX
    if e.prim == "iota":
        return SOURCE
    if e.prim in REDUCTIONS or e.prim in ("argmax", "argmin"):
        return REDUCE
    return OPAQUE


class CudaPlan(Plan):
    """The CPU fusion plan with kinds decided per statement (dtype-dependent in CUDA)."""

    def __init__(self, program):
        self._kinds = {}
        for stmt in program.body:
            if is_eqn(stmt):
                e = eqn(stmt)
                self._kinds[id(stmt)] = kernel_kind(program, e)
        super().__init__(program, lambda prim: OPAQUE)

    def kind_of(self, e):
        return self._kinds[id(e.stmt)]


# --- kernel bodies --------------------------------------------------------------------------------


class KernelBody(Emitter):
    """Writes one kernel's body with the CPU emitter's element machinery: `value(atom, idx)`
    inlines fused producers; every materialized array read becomes a kernel parameter."""

    def __init__(self, program, plan, names):
        self.program = program
        self.plan = plan
        self._names = names
        self.lines, self.indent, self._memo, self._loops, self.params = [], 1, {}, [], []

    def vmath(self, name, dtype):
        return None

    def _use(self, var):
        if var not in self.params:
            self.params.append(var)

    def read(self, var, idx):
        self._use(var)
        return f"{var}[{', '.join(map(str, idx))}]"

    def value(self, atom, idx):
        if not literals.is_literal(atom) and self.plan.materialized(atom.id) and self.aval(atom).ndim == 0:
            self._use(atom.id)
            return f"{atom.id}[0]"
        return super().value(atom, idx)

    def _element(self, e, idx):
        if self.plan.kind_of(e) != ELEMENTWISE:
            return super()._element(e, idx)
        out_aval = self.program.avals[e.outs[0]]
        args = [self.value(a, [] if self.aval(a).ndim == 0 else idx) for a in e.ins]
        return _elementwise_expr(e, args, [self.aval(a).dtype for a in e.ins], out_aval.dtype)

    def unflatten(self, flat, shape, names):
        """Lines splitting flat index `flat` into `names` over `shape` (C order)."""
        if not shape:
            return
        rest = flat
        for k in range(len(shape) - 1, 0, -1):
            if shape[k] == 1:
                self.line(f"{names[k]} = 0")
                continue
            self.line(f"{names[k]} = {rest} % {shape[k]}")
            q = self.fresh("_q")
            self.line(f"{q} = {rest} // {shape[k]}")
            rest = q
        self.line(f"{names[0]} = {rest}")

    def target(self, var, idx):
        return f"{var}[{', '.join(idx)}]" if idx else f"{var}[0]"

    def block_reduce(self, shared, combine):
        """The fixed-order tree over the block's shared values (the result lands in [0])."""
        self.line("cuda.syncthreads()")
        self.line("_w = _TPB // 2")
        self.line("while _w > 0:")
        self.line("    if _t < _w:")
        self.line(f"        {shared}[_t] = {combine(f'{shared}[_t]', f'{shared}[_t + _w]')}")
        self.line("    cuda.syncthreads()")
        self.line("    _w //= 2")


# --- the module -------------------------------------------------------------------------------------


class CudaModule:
    """The generated module: kernels, then host functions (bodies before their callers)."""

    def __init__(self, program):
        self.program = _numba_ready(program)
        self.const_names = list(self.program.consts)
        self.kernels = []  # (name, source)
        self.kernel_params = {}  # kernel name -> [(dtype name, ndim)] for PTX checks
        self.functions = []
        self.imports = []  # extra import lines kernels asked for (`require`)
        self._emitted = set()
        self._kernel_names = set()

    def kernel_name(self, base):
        name, i = f"k_{base}", 1
        while name in self._kernel_names:
            name, i = f"k_{base}_{i}", i + 1
        self._kernel_names.add(name)
        return name

    def add_kernel(self, name, params, param_avals, body_lines, comment):
        # cache: compiled kernels are kept next to the module on disk, as the CPU backend's are
        head = [f"@cuda.jit(cache=_OMNISTAGE_CACHED){comment}", f"def {name}({', '.join(params)}):"]
        self.kernels.append((name, "\n".join(head + body_lines)))
        self.kernel_params[name] = [(np.dtype(a.dtype).name, max(a.ndim, 1)) for a in param_avals]

    def require(self, import_line):
        """Have the module header import something a kernel calls (device routines)."""
        if import_line not in self.imports:
            self.imports.append(import_line)

    def body_function(self, ref):
        name = str(ref)
        if name not in self._emitted:
            self._emitted.add(name)
            self.functions.append(HostDriver(self.program.subprogram(ref), self).emit())
        return name

    def emit(self):
        entry = HostDriver(self.program, self).emit()
        head = [
            f"# Numba CUDA kernels and host driver for the omnistage program {self.program.name!r}.",
            "import numpy as np",
            "from numba import cuda",
            "from omnistage.codegen.cuda import device_support as _cd",
            "from omnistage.codegen.cuda import runtime as _cu",
            *self.imports,
            "",
            "_TPB = _cu.THREADS_PER_BLOCK  # threads per block (a power of two)",
        ]
        blocks = ["\n".join(head)] + [src for _, src in self.kernels] + self.functions + [entry]
        return "\n\n\n".join(blocks) + "\n"


class HostDriver(ControlFlowEmitter):
    """One host function: allocations, kernel launches and host control flow, in program
    order, over device arrays."""

    def __init__(self, program, module):
        self.program = program
        self.module = module
        self.plan = CudaPlan(program)
        self.lines = []
        self._names = set(program.avals) | set(program.consts) | set(program.in_names)

    def line(self, text, depth=1):
        self.lines.append("    " * depth + text)

    def aval(self, atom):
        return self.program.atom_aval(atom)

    def body(self):
        return KernelBody(self.program, self.plan, self._names)

    def grid_body(self, out, shape, idx, kernel_base=None):
        """(kernel name, body) of a kernel writing `out`, opened with a grid-stride loop over
        the elements of `shape` whose indices are the locals `idx`."""
        kernel = self.module.kernel_name(kernel_base or out)
        kb = self.body()
        kb._use(out)
        kb.line(f"for _f in range(cuda.grid(1), {int(np.prod(shape, dtype=np.int64))}, cuda.gridsize(1)):")
        kb.indent += 1
        kb.unflatten("_f", list(shape), idx)
        return kernel, kb

    def alloc(self, name, aval, comment=""):
        self.line(f"{name} = _cu.empty({_shape(aval)!r}, {dtype_expr(aval.dtype)}){comment}")

    def operand(self, atom):
        """A device-array operand for a host call: literals become 1-element arrays."""
        if literals.is_literal(atom):
            return f"_cu.scalar({ast.unparse(atom)}, {dtype_expr(self.aval(atom).dtype)})"
        return atom.id

    def launch(self, kernel, config, kb, comment=""):
        self.line(f"{kernel}[{config}]({', '.join(kb.params)}){comment}")

    def finish_kernel(self, kernel, kb, e, extra_params=()):
        params = list(extra_params) + [p for p in kb.params if p not in extra_params]
        kb.params = params
        avals = [self._param_aval(p) for p in params]
        self.module.add_kernel(kernel, params, avals, kb.lines, _loc_comment(e.stmt))

    def _param_aval(self, name):
        if name in self.program.avals:
            return self.program.avals[name]
        if name in self.program.consts:
            c = np.asarray(self.program.consts[name])
            from ...core.aval import ShapedArray

            return ShapedArray(c.shape, c.dtype)
        return self._extra_avals[name]

    # --- statements ---------------------------------------------------------------------

    def emit_map(self, e):
        """An elementwise/index/source statement: one grid-stride kernel over its output."""
        _map_kernel(self, e, self.program.avals[e.outs[0]], lambda kb, idx: kb._element(e, idx))

    def emit_reduce(self, e):
        if e.prim in ("argmax", "argmin"):
            return self.emit_argreduce(e)
        operand, axes, x, out, aval, dt = emit_cpu.reduction_parts(self, e)
        comment = _loc_comment(e.stmt)
        kept = [k for k in range(x.ndim) if k not in axes]
        M = int(np.prod([x.shape[k] for k in kept], dtype=np.int64))
        K = int(np.prod([x.shape[k] for k in axes], dtype=np.int64))
        init = _reduction_init(e.prim, dt)
        if M == 0 or K == 0:
            self.line(f"{out} = _cu.to_device(np.full({_shape(aval)!r}, {init}, dtype={dtype_expr(dt)})){comment}")
            return
        self.alloc(out, aval, comment)
        P = runtime.partials(M, K)
        partial = self.fresh(f"{out}_partials") if P > 1 else None
        if partial:
            self.line(f"{partial} = _cu.empty(({M * P},), {dtype_expr(dt)})  # per-block partial results")
            self._extra(partial, (M * P,), dt)
        combine = lambda a, b: cuda_expression(_combine(e.prim, dt, a, b), [dt])  # noqa: E731
        # pass 1: block b reduces chunk b % P of output b // P
        kernel = self.module.kernel_name(out)
        kb = self.body()
        dest = partial or out
        kb._use(dest)
        names = [f"_i{k}" for k in range(x.ndim)]
        self._reduction_head(kb, dt, M * P)
        if P > 1:
            kb.line(f"_o = _blk // {P}")
            kb.line(f"_c = _blk % {P}")
        else:
            kb.line("_o = _blk")
        kb.unflatten("_o", [x.shape[k] for k in kept], [names[k] for k in kept])
        kb.line(f"_acc = {init}")
        # chunk c's threads take elements c*TPB + t, then every P*TPB-th one: a fixed order
        kb.line(f"for _r in range(_c * _TPB + _t, {K}, {P} * _TPB):" if P > 1 else f"for _r in range(_t, {K}, _TPB):")
        kb.indent += 1
        kb.unflatten("_r", [x.shape[k] for k in axes], [names[k] for k in axes])
        v = kb.value(operand, names)
        kb.line(f"_acc = {combine('_acc', v)}")
        kb.indent -= 1
        kb._memo = {}
        kb.line("_s[_t] = _acc")
        kb.block_reduce("_s", combine)
        kb.line("if _t == 0:")
        kb.line(f"    {kb.target(out, [names[k] for k in kept]) if not partial else f'{partial}[_blk]'} = _s[0]")
        kb.line("cuda.syncthreads()  # _s is reused by the block's next output")
        self.finish_kernel(kernel, kb, e, [dest])
        self.launch(kernel, f"_cu.blocks({M * P})", kb, "  # pass 1: block reductions")
        if partial:
            self._second_pass(e, out, aval, partial, M, P, init, combine, x, kept)

    def _reduction_head(self, kb, dt, n_blocks):
        kb.line(f"_s = cuda.shared.array(_TPB, dtype={_shared_dtype(dt)})")
        kb.line("_t = cuda.threadIdx.x")
        kb.line(f"for _blk in range(cuda.blockIdx.x, {n_blocks}, cuda.gridDim.x):")
        kb.indent += 1

    def _second_pass(self, e, out, aval, partial, M, P, init, combine, x, kept):
        kernel = self.module.kernel_name(f"{out}_final")
        kb = self.body()
        kb._use(out)
        kb._use(partial)
        self._reduction_head(kb, aval.dtype, M)
        kept_names = [f"_i{k}" for k in kept]
        kb.line("_o = _blk")
        kb.unflatten("_o", [x.shape[k] for k in kept], kept_names)
        kb.line(f"_acc = {init}")
        kb.line(f"for _r in range(_t, {P}, _TPB):")
        kb.line(f"    _acc = {combine('_acc', f'{partial}[_o * {P} + _r]')}")
        kb.line("_s[_t] = _acc")
        kb.block_reduce("_s", combine)
        kb.line("if _t == 0:")
        kb.line(f"    {kb.target(out, kept_names)} = _s[0]")
        kb.line("cuda.syncthreads()")
        self.finish_kernel(kernel, kb, e, [out, partial])
        self.launch(kernel, f"_cu.blocks({M})", kb, "  # pass 2: the partials of each output")

    def emit_argreduce(self, e):
        """argmax/argmin: one block per output; (value, index) pairs reduced in shared memory
        with NumPy's rule (first NaN, then first extremum)."""
        (operand,) = e.ins
        axis = e.params["axis"]
        x = self.aval(operand)
        out = e.outs[0]
        aval = self.program.avals[out]
        comment = _loc_comment(e.stmt)
        kept = [k for k in range(x.ndim) if k != axis]
        M = int(np.prod([x.shape[k] for k in kept], dtype=np.int64))
        K = x.shape[axis]
        self.alloc(out, aval, comment)
        if M == 0 or K == 0:
            return
        better = f"_cd.{e.prim}_better"
        kernel = self.module.kernel_name(out)
        kb = self.body()
        kb._use(out)
        names = [f"_i{k}" for k in range(x.ndim)]
        kb.line(f"_sv = cuda.shared.array(_TPB, dtype={_shared_dtype(x.dtype)})")
        kb.line("_si = cuda.shared.array(_TPB, dtype=np.int64)")
        kb.line("_t = cuda.threadIdx.x")
        kb.line(f"for _blk in range(cuda.blockIdx.x, {M}, cuda.gridDim.x):")
        kb.indent += 1
        kb.unflatten("_blk", [x.shape[k] for k in kept], [names[k] for k in kept])
        first = list(names)
        first[axis] = "0"
        kb.line(f"_best = {kb.value(operand, first)}")
        kb.line(f"_at = {K}")
        kb._memo = {}
        kb.line(f"for {names[axis]} in range(_t, {K}, _TPB):")
        kb.indent += 1
        v = kb.value(operand, names)
        kb.line(f"if {better}({v}, {names[axis]}, _best, _at, {K}):")
        kb.line(f"    _best = {v}")
        kb.line(f"    _at = {names[axis]}")
        kb.indent -= 1
        kb._memo = {}
        kb.line("_sv[_t] = _best")
        kb.line("_si[_t] = _at")
        kb.line("cuda.syncthreads()")
        kb.line("_w = _TPB // 2")
        kb.line("while _w > 0:")
        kb.line(f"    if _t < _w and {better}(_sv[_t + _w], _si[_t + _w], _sv[_t], _si[_t], {K}):")
        kb.line("        _sv[_t] = _sv[_t + _w]")
        kb.line("        _si[_t] = _si[_t + _w]")
        kb.line("    cuda.syncthreads()")
        kb.line("    _w //= 2")
        kb.line("if _t == 0:")
        kb.line(f"    {kb.target(out, [names[k] for k in kept])} = {dtype_expr(aval.dtype)}(_si[0])")
        kb.line("cuda.syncthreads()")
        self.finish_kernel(kernel, kb, e, [out])
        self.launch(kernel, f"_cu.blocks({M})", kb)

    def emit_dot_general(self, e):
        lhs, rhs = e.ins
        la, ra = self.aval(lhs), self.aval(rhs)
        out = e.outs[0]
        aval = self.program.avals[out]
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        lfree = [d for d in range(la.ndim) if d not in lc and d not in lb]
        rfree = [d for d in range(ra.ndim) if d not in rc and d not in rb]
        size = lambda shape, dims: int(np.prod([shape[d] for d in dims], dtype=np.int64))  # noqa: E731
        B, M, K, N = size(la.shape, lb), size(la.shape, lfree), size(la.shape, lc), size(ra.shape, rfree)
        comment = _loc_comment(e.stmt)
        n = aval.size
        dt = aval.dtype
        cublas = dt.kind in "fc" and K > 0 and n > 0 and la.ndim and ra.ndim and all(not literals.is_literal(a) for a in e.ins)
        depth = 1
        if cublas:
            lperm, rperm = tuple(lb) + tuple(lfree) + tuple(lc), tuple(rb) + tuple(rc) + tuple(rfree)
            self.line(f"if _cu.have_cublas():{comment}")
            self.line(f"{out} = _cu.dot_general_cublas({lhs.id}, {rhs.id}, {lperm!r}, {rperm!r}, "
                      f"{(B, M, K, N)!r}, {_shape(aval)!r}, {dtype_expr(dt)})  # cuBLAS", 2)
            self.line("else:")
            depth = 2
        self.lines.append("    " * depth + f"{out} = _cu.empty({_shape(aval)!r}, {dtype_expr(dt)}){comment}")
        if n == 0:
            return
        oidx = [f"_i{k}" for k in range(aval.ndim)]
        kernel, kb = self.grid_body(out, aval.shape, oidx)
        cidx = [f"_c{j}" for j in range(len(lc))]
        nb, nl = len(lb), len(lfree)
        lidx = [oidx[lb.index(d)] if d in lb else oidx[nb + lfree.index(d)] if d in lfree else cidx[lc.index(d)] for d in range(la.ndim)]
        ridx = [oidx[rb.index(d)] if d in rb else oidx[nb + nl + rfree.index(d)] if d in rfree else cidx[rc.index(d)] for d in range(ra.ndim)]
        kb.line("_acc = False" if dt.kind == "b" else f"_acc = {dtype_expr(dt)}(0)")
        kb.line(f"for _k in range({K}):")
        kb.indent += 1
        kb.unflatten("_k", [la.shape[d] for d in lc], cidx)
        a, b = kb.value(lhs, lidx), kb.value(rhs, ridx)
        if dt.kind == "b":
            kb.line(f"_acc = _acc | ({a} & {b})")
        elif dt.kind in "iu":
            kb.line(f"_acc = {dtype_expr(dt)}(_acc + {dtype_expr(dt)}({a} * {b}))")
        else:
            kb.line(f"_acc = _acc + {a} * {b}")
        kb.indent -= 1
        kb.line(f"{kb.target(out, oidx)} = _acc")
        self.finish_kernel(kernel, kb, e, [out])
        self.lines.append("    " * depth + f"{kernel}[_cu.grid({n})]({', '.join(kb.params)})  # generated kernel")

    def emit_concatenate(self, e):
        out = e.outs[0]
        aval = self.program.avals[out]
        dim = e.params["dimension"]
        self.alloc(out, aval, _loc_comment(e.stmt))
        offset = 0
        for j, a in enumerate(e.ins):
            piece = self.aval(a)
            n = piece.size
            if n:
                idx = [f"_i{k}" for k in range(piece.ndim)]
                kernel, kb = self.grid_body(out, piece.shape, idx, f"{out}_part{j}")
                target = [f"{i} + {offset}" if k == dim and offset else i for k, i in enumerate(idx)]
                kb.line(f"{kb.target(out, target)} = {kb.value(a, idx)}")
                self.finish_kernel(kernel, kb, e, [out])
                self.launch(kernel, f"_cu.grid({n})", kb)
            offset += piece.shape[dim]

    def emit_host_call(self, e):
        """No kernel for this statement yet: its NumPy implementation runs on a host copy."""
        in_shapes = tuple(tuple(self.aval(a).shape) for a in e.ins)
        out_avals = tuple((tuple(self.program.avals[o].shape), self.program.avals[o].dtype.name) for o in e.outs)
        args = ", ".join(ast.unparse(a) for a in e.ins)
        targets = ", ".join(e.outs) + ("," if len(e.outs) == 1 else "")
        self.line(f"# no CUDA kernel for {e.prim!r} yet: it runs on the host (a round trip){_loc_comment(e.stmt)}")
        self.line(f"{targets} = _cu.host_call({e.prim!r}, {dict(e.params)!r}, {in_shapes!r}, {out_avals!r}"
                  f"{', ' + args if args else ''})")

    # --- control flow on the host -----------------------------------------------------------

    # --- control flow: on the host (ControlFlowEmitter), values read back only here --------

    def cf_operand(self, atom):
        return self.operand(atom)

    def cf_truth(self, expr):
        return f"_cu.truth({expr})"

    cf_truth_note = "  # reads the predicate back"

    def cf_index(self, expr):
        return f"_cu.index({expr})"

    def cf_clamp(self, expr, n):
        return f"min(max({expr}, 0), {n - 1})"  # host Python

    def cf_alloc(self, name, aval):
        self.alloc(name, aval)

    def cf_step(self, x, t):
        return f"_cu.step({x}, {t})"

    def cf_store(self, y, t, value):
        return f"_cu.store_step({y}, {t}, {value})"

    # --- the function -------------------------------------------------------------------------

    def fresh(self, base):
        name, i = base, 1
        while name in self._names:
            name, i = f"{base}_{i}", i + 1
        self._names.add(name)
        return name

    def _extra(self, name, shape, dtype):
        from ...core.aval import ShapedArray

        if not hasattr(self, "_extra_avals"):
            self._extra_avals = {}
        self._extra_avals[name] = ShapedArray(shape, dtype)

    def emit(self):
        for stmt in self.program.body:
            if isinstance(stmt, (ast.FunctionDef, ast.Return)):
                continue
            e = eqn(stmt)
            if len(e.outs) == 1 and not self.plan.materialized(e.outs[0]):
                continue
            self._emit_statement(e)
        outs = [self.operand(a) for a in self.program.out_atoms]
        self.line(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        p = self.program
        head = [f"def {p.name}({', '.join(p.in_names + self.module.const_names)}):"]
        return "\n".join(head + self.lines)

    def _emit_statement(self, e):
        if e.prim in CONTROL_FLOW:
            return CONTROL_FLOW[e.prim](self, e)
        kind = self.plan.kind_of(e)
        if kind in (ELEMENTWISE, INDEX, SOURCE):
            return self.emit_map(e)
        if kind == REDUCE:
            return self.emit_reduce(e)
        rule = OPAQUE_KERNELS.get(e.prim)
        if rule is not None:
            return rule(self, e)
        return self.emit_host_call(e)


# --- opaque statements with kernels: indexing, padding, cumulative reductions, bitcasts ------------


def _map_kernel(driver, e, out_aval, element):
    """A grid-stride kernel over the output of `e`; `element(kb, idx)` writes the lines that
    compute one element and returns its expression."""
    out = e.outs[0]
    driver.alloc(out, out_aval, _loc_comment(e.stmt))
    n = out_aval.size
    if n == 0:
        return
    idx = [f"_i{k}" for k in range(out_aval.ndim)]
    kernel, kb = driver.grid_body(out, out_aval.shape, idx)
    v = element(kb, idx)
    kb.line(f"{kb.target(out, idx)} = {v}")
    driver.finish_kernel(kernel, kb, e, [out])
    driver.launch(kernel, f"_cu.grid({n})", kb)


def _clamped_starts(kb, starts, shape, sizes):
    """Locals holding each start index clamped into [0, dim - size] (XLA's rule)."""
    names = []
    for d, (s, dim, z) in enumerate(zip(starts, shape, sizes)):
        v = kb.fresh(f"_s{d}")
        kb.line(f"{v} = _cd.clamp_index(np.int64({kb.value(s, [])}), {dim - z + 1})")
        names.append(v)
    return names


def _emit_dynamic_slice(driver, e):
    x, *starts = e.ins
    xa, oa = driver.aval(x), driver.program.avals[e.outs[0]]
    sizes = e.params["slice_sizes"]

    def element(kb, idx):
        if not xa.ndim:
            return kb.value(x, [])
        lo = _clamped_starts(kb, starts, xa.shape, sizes)
        return kb.value(x, [f"{s} + {i}" for s, i in zip(lo, idx)])

    _map_kernel(driver, e, oa, element)


def _emit_dynamic_update_slice(driver, e):
    x, update, *starts = e.ins
    xa, ua, oa = driver.aval(x), driver.aval(update), driver.program.avals[e.outs[0]]

    def element(kb, idx):
        if not xa.ndim:
            return kb.value(update, [])
        lo = _clamped_starts(kb, starts, xa.shape, ua.shape)
        inside = " and ".join(f"{s} <= {i} < {s} + {z}" for s, i, z in zip(lo, idx, ua.shape)) or "True"
        new = kb.value(update, [f"{i} - {s}" for s, i in zip(lo, idx)]) if ua.size else "0"
        return f"({new} if {inside} else {kb.value(x, idx)})"

    _map_kernel(driver, e, oa, element)


def _emit_gather(driver, e):
    x, indices = e.ins
    axes = tuple(e.params["axes"])
    xa, ia, oa = driver.aval(x), driver.aval(indices), driver.program.avals[e.outs[0]]
    if any(xa.shape[a] == 0 for a in axes):
        return _emit_zeros(driver, e, oa)
    nb = ia.ndim - 1

    def element(kb, idx):
        batch, rest = idx[:nb], iter(idx[nb:])
        coords = {}
        for j, a in enumerate(axes):
            c = kb.fresh(f"_c{j}")
            kb.line(f"{c} = _cd.clamp_index(np.int64({kb.value(indices, batch + [str(j)])}), {xa.shape[a]})")
            coords[a] = c
        return kb.value(x, [coords[d] if d in coords else next(rest) for d in range(xa.ndim)])

    _map_kernel(driver, e, oa, element)


def _emit_scatter(driver, e):
    """A copy of the operand, then one thread per window element (the dimensions not indexed)
    applying every update row to it in order: no two threads touch one element, so repeated
    indices combine deterministically, in the CPU backend's order. Out-of-bounds rows drop."""
    from ..opaque_rules import _SCATTER_COMBINE

    x, indices, updates = e.ins
    out = e.outs[0]
    axes = tuple(e.params["axes"])
    xa, ia, ua, oa = driver.aval(x), driver.aval(indices), driver.aval(updates), driver.program.avals[out]
    _map_kernel(driver, e, oa, lambda kb, idx: kb.value(x, idx))
    rest_axes = [d for d in range(xa.ndim) if d not in axes]
    rest_shape = [xa.shape[d] for d in rest_axes]
    rows = int(np.prod(ia.shape[:-1], dtype=np.int64))
    n = int(np.prod(rest_shape, dtype=np.int64))
    if ua.size == 0 or n == 0 or rows == 0:
        return
    rest = [f"_r{k}" for k in range(len(rest_shape))]
    batch = [f"_b{k}" for k in range(ia.ndim - 1)]
    kernel, kb = driver.grid_body(out, rest_shape, rest, f"{out}_updates")
    kb.line(f"for _g in range({rows}):")
    kb.indent += 1
    kb.unflatten("_g", list(ia.shape[:-1]), batch)
    coords, it = {}, iter(rest)
    for j, a in enumerate(axes):
        c = kb.fresh(f"_c{j}")
        kb.line(f"{c} = np.int64({kb.value(indices, batch + [str(j)])})")
        coords[a] = c
    if coords:
        kb.line("if " + " and ".join(f"0 <= {c} < {xa.shape[a]}" for a, c in coords.items()) + ":")
        kb.indent += 1
    target = kb.target(out, [coords[d] if d in coords else next(it) for d in range(xa.ndim)])
    upd = kb.value(updates, batch + rest if ua.ndim else [])
    kb.line(f"{target} = {cuda_expression(_SCATTER_COMBINE[e.prim](xa.dtype, target, upd), [xa.dtype])}")
    driver.finish_kernel(kernel, kb, e, [out])
    driver.launch(kernel, f"_cu.grid({n})", kb, "  # rows applied in order by each thread")


def _emit_zeros(driver, e, aval):
    driver.line(f"{e.outs[0]} = _cu.to_device(np.zeros({_shape(aval)!r}, dtype={dtype_expr(aval.dtype)})){_loc_comment(e.stmt)}")


def _emit_pad(driver, e):
    x, fill = e.ins
    xa, oa = driver.aval(x), driver.program.avals[e.outs[0]]
    config = e.params["padding_config"]

    def element(kb, idx):
        if not xa.ndim:
            return kb.value(x, [])
        conds, src = [], []
        for i, n, (lo, _, interior) in zip(idx, xa.shape, config):
            t = kb.fresh("_p")
            kb.line(f"{t} = {i} - {lo}" if lo >= 0 else f"{t} = {i} + {-lo}")
            step = interior + 1
            conds.append(f"{t} >= 0" + (f" and {t} % {step} == 0" if step > 1 else "") + f" and {t} // {step} < {n}")
            src.append(f"{t} // {step}" if step > 1 else t)
        inside = " and ".join(f"({c})" for c in conds)
        return f"({kb.value(x, src)} if {inside} else {kb.value(fill, [])})"

    _map_kernel(driver, e, oa, element)


def _emit_cumulative(driver, e):
    """One thread per line along `axis`, which it scans in order (deterministic)."""
    from ..opaque_rules import _CUMULATIVE_COMBINE

    (x,) = e.ins
    out = e.outs[0]
    axis, reverse = e.params["axis"], e.params["reverse"]
    xa, oa = driver.aval(x), driver.program.avals[out]
    driver.alloc(out, oa, _loc_comment(e.stmt))
    n = xa.shape[axis]
    lines = xa.size // n if n else 0
    if not lines:
        return
    others = [d for d in range(xa.ndim) if d != axis]
    idx = [f"_i{d}" for d in range(xa.ndim)]
    kernel, kb = driver.grid_body(out, [xa.shape[d] for d in others], [idx[d] for d in others])
    first, steps = (n - 1, f"range({n - 2}, -1, -1)") if reverse else (0, f"range(1, {n})")
    at = lambda k: [k if d == axis else idx[d] for d in range(xa.ndim)]  # noqa: E731
    kb.line(f"_acc = {kb.value(x, at(str(first)))}")
    kb.line(f"{kb.target(out, at(str(first)))} = _acc")
    kb._memo = {}
    kb.line(f"for _k in {steps}:")
    combine = cuda_expression(_CUMULATIVE_COMBINE[e.prim](oa.dtype, "_acc", kb.value(x, at("_k"))), [oa.dtype])
    kb.line(f"    _acc = {combine}")
    kb.line(f"    {kb.target(out, at('_k'))} = _acc")
    driver.finish_kernel(kernel, kb, e, [out])
    driver.launch(kernel, f"_cu.grid({lines})", kb, "  # one thread per line")


def _emit_bitcast(driver, e):
    """A device-side view with the new dtype: lax's shapes come from the view's rescaled last
    axis, reshaped (a narrower type adds a trailing axis of the width ratio, a wider one
    removes it); literals are uploaded first, like any host-call operand."""
    (x,) = e.ins
    xa, oa = driver.aval(x), driver.program.avals[e.outs[0]]
    note = "same bits" if xa.dtype.itemsize == oa.dtype.itemsize else "same bytes, regrouped"
    driver.line(f"{e.outs[0]} = _cu.bitcast({driver.operand(x)}, {dtype_expr(oa.dtype)}, {_shape(oa)!r})"
                f"  # a view: {note}{_loc_comment(e.stmt)}")


def _emit_threefry(driver, e):
    """One thread per element computing both output words (rank-0 operands broadcast)."""
    o0, o1 = e.outs
    aval = driver.program.avals[o0]
    comment = _loc_comment(e.stmt)
    driver.alloc(o0, aval, comment)
    driver.alloc(o1, aval, comment)
    if aval.size == 0:
        return
    idx = [f"_i{k}" for k in range(aval.ndim)]
    kernel, kb = driver.grid_body(o0, aval.shape, idx)
    kb._use(o1)
    args = [kb.value(a, idx if driver.aval(a).ndim else []) for a in e.ins]
    kb.line(f"{kb.target(o0, idx)}, {kb.target(o1, idx)} = _cd.threefry2x32({', '.join(args)})")
    driver.finish_kernel(kernel, kb, e, [o0, o1])
    driver.launch(kernel, f"_cu.grid({aval.size})", kb)


def _emit_debug_print(driver, e):
    """debug.print: its operands are copied to the host (a read-back JAX's GPU callbacks make
    too) and printed by the primitive's implementation, in program order."""
    shapes = tuple(tuple(driver.aval(a).shape) for a in e.ins)
    args = [ast.unparse(a) for a in e.ins] + [f"{k}={v!r}" for k, v in e.params.items()]
    driver.line(f"{e.outs[0]} = _cu.debug_print({shapes!r}, {', '.join(args)})  # reads the values back{_loc_comment(e.stmt)}")


def _shape(aval):
    """Device shape of a value: rank 0 lives in a 1-element array."""
    return tuple(aval.shape) if aval.ndim else (1,)


def _shared_dtype(dt):
    return "np.bool_" if np.dtype(dt).kind == "b" else dtype_expr(dt)



OPAQUE_KERNELS = {
    "dot_general": HostDriver.emit_dot_general,
    "concatenate": HostDriver.emit_concatenate,
    "dynamic_slice": _emit_dynamic_slice,
    "dynamic_update_slice": _emit_dynamic_update_slice,
    "gather": _emit_gather,
    "pad": _emit_pad,
    **{prim: _emit_scatter for prim in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")},
    "bitcast_convert_type": _emit_bitcast,
    "threefry2x32": _emit_threefry,
    "debug_print": _emit_debug_print,
    **{prim: _emit_cumulative for prim in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")},
}

# kernels kept in modules of their own (they use the driver above, so they load after it)
from . import collective_emit, conv_emit, decomp_emit, eig_emit, fft_emit, solve_emit, sort_emit, window_emit  # noqa: E402

for _rules in (sort_emit, conv_emit, solve_emit, decomp_emit, eig_emit, fft_emit, window_emit, collective_emit):
    OPAQUE_KERNELS.update(_rules.KERNELS)


def emit_module(program):
    """(module source, entry function name, {kernel: [(dtype, ndim)] of its parameters})."""
    program = narrow_floats.widen(program)  # a no-op if the caller widened it already
    module = CudaModule(program)
    source = module.emit()
    return source, module.program.name, module.kernel_params


__all__ = ["emit_module", "Unsupported"]
