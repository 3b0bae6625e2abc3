"""The op-by-op tier: a program's calls answered statement by statement, on kernels compiled
once per machine, while its fused library compiles in the background.

Why: a fused library's first compile has a floor the program does not set. selu on 1e5 floats
is one loop, yet `cc` takes ~60 ms on its C and the link ~11 ms, more than JAX's whole first
call (71 ms): no optimization level compiles a 1,600-line file faster here (issue 17). A
program made only of elementwise statements and data movement needs no compile of its own:
each statement runs on a kernel this machine compiled once (op_kernels), or on NumPy where
NumPy's operation is the same IEEE operation the fused code performs, and the fused library is
compiled meanwhile by c_tier, on a thread, exactly as it would have been; calls switch to it
once it is loaded.

Bits: results do not depend on which tier ran a call, nor on when the fused build arrived
(a NaN is a NaN in both; its sign and payload are not values: IEEE 754 leaves them open, and
GCC commutes `a + b` as freely, in one build or another).
An op kernel is the scalar code the fused loop runs for its primitive (op_kernels); NumPy runs
only what rounds once by IEEE 754 in any implementation (NUMPY_EXACT: +, -, *, / and sqrt of
floats, comparisons, selects, logic on booleans); data movement moves values unchanged.
tests/codegen/test_op_tier.py compares the two tiers' bits on NaNs, infinities, subnormals and
signed zeros.

A float `dot_general` of one dtype runs as the fused code runs it (Product): a product of at
most emit_cpu.SMALL_PRODUCT_WORK multiply-adds as its loop nest does, one rounded multiply and
one rounded add per term in k order (NumPy's `*` and `+`, exact), a bigger one on the product
kernel (op_kernels.MATMUL: the same os_matmul call on the same operand layouts). The program is
first rewritten as the emitter rewrites it (contraction_layout.fold_transposes), so each
product reads the operands the fused one reads.

A float `reduce_sum` over trailing axes of at most emit_cpu.SUM_BLOCK terms per result runs as
the fused loop sums (Sum): left to right from +0 when the last axis is shorter than
emit_cpu.VECTOR_MIN, else each run of the last axis as c_translate's lane reduction (LANES
partial sums from -0, element j of a run into partial j mod LANES, combined pairwise) added
to the result. A longer one runs as emit_cpu._blocked_sum runs it: blocks of at most SUM_BLOCK
elements of the last axis, each summed that way from +0, added up in double (float32) or with
Neumaier's compensation (float64, at most _COMPENSATED_BLOCKS blocks: that loop is Python's).
The block sums are computed all at once: padding a block with -0 changes no partial sum (x + -0
is x for every x, NaN and the zeros included). A sum the fused code reads in memory order (the
last axis kept: column sums) adds each term in that order into its result (ColumnSum): in
double for float32 where emit_cpu does (its register columns, its wide row), else in the
dtype; at most _COLUMN_TERMS terms (a step of NumPy's each). A float max or min is one value
whatever the order (Extremum): each of the fused code's ways (support.fmax's fold, kmax's keys)
orders -0 below +0 and lets a NaN win. Other reductions are left to the fused build.

Which programs: every top-level statement elementwise (scalar_rules.RULES), a float product, a
float sum, max or min (_RUNNERS), an argmax or argmin, data movement (a gather, a dynamic
slice) or an iota (index_maps.INDEX_MAPS, _BY_IMPL), no control flow, no float16/bfloat16
values. Complex arithmetic runs only on op kernels (NumPy's complex products and quotients are
not C's). A sampler is in that form once rewritten as the emitter rewrites it (fusable_forms:
threefry2x32's two words, same-width bitcasts), so the seeds' `split` + `normal` answers op
by op. A program needing a kernel this machine has not compiled yet compiles as before, and
the missing kernels are requested (c_background's helper builds them for later programs).

`OMNISTAGE_OP_TIER=0` turns the tier off; so do `OMNISTAGE_C_TIER=0` (its fused build would not
be the native tier's) and `OMNISTAGE_C_BACKGROUND=0` (the test suite tests the code a program
runs at steady state).
"""
import ast
import atexit
import os
import threading
import warnings

import numpy as np

from ..core import primitive as core_primitive
from ..staging import literals
from ..staging.interpret import check_sizes
from ..staging.program import eqn, is_eqn
from .loop_thresholds import FEW_COLUMNS, KEPT_OUTER_MAX, SMALL_PRODUCT_WORK, SUM_BLOCK, VECTOR_MIN
from . import aot, c_background, contraction_layout, fusable_forms, index_maps, narrow_floats, op_kernels, parallel, scalar_rules

# (primitive -> NumPy function): operations that round once, by IEEE 754, in NumPy as in C
_ARITHMETIC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "neg": np.negative,
               "sqrt": np.sqrt}
_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                "ge": np.greater_equal}
_LOGIC = {"and_": np.logical_and, "or_": np.logical_or, "not_": np.logical_not}
_FLOATS = ("float32", "float64")
_VALUES = _FLOATS + ("complex64", "complex128", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64")


def _iota_exact(dtype, params):
    """Whether NumPy's iota (an arange) has the fused loop's values, the index converted to
    `dtype`: every index fits (integers), or is exact (floats up to 2**24, float32's last exact
    integer; past that NumPy's float arange adds steps where the loop rounds each index)."""
    last = params["shape"][params["dimension"]] - 1
    if dtype.kind in "iu":
        return last <= np.iinfo(dtype).max
    return dtype.kind == "f" and last <= 2 ** 24


# run by their own NumPy implementations (beside the index maps): data movement (a gather's
# table lookups, dynamic slices: clamped indices in both) copies values unchanged;
# argmax/argmin only compare (the first NaN, else the first of the largest: the fused loop's
# `v > best or (v != v and best == best)`, -0 and +0 equal in both); a primitive with a
# condition only where it holds for the statement's dtype and params
_BY_IMPL = {"concatenate": None, "pad": None, "gather": None, "dynamic_slice": None, "dynamic_update_slice": None,
            "iota": _iota_exact, "argmax": None, "argmin": None}


def _select(which, *cases):
    return np.where(which, cases[1], cases[0])


def _numpy_exact(prim, in_dtypes):
    """The NumPy function computing `prim` on these operand dtypes with the fused code's bits,
    or None."""
    names = {d.name for d in in_dtypes}
    if prim in _ARITHMETIC and names <= set(_FLOATS):
        return _ARITHMETIC[prim]
    if prim in _COMPARISONS and names <= set(_VALUES):
        return _COMPARISONS[prim]
    if prim in _LOGIC and names == {"bool"}:
        return _LOGIC[prim]
    if prim == "select_n" and len(in_dtypes) == 3 and in_dtypes[0].name == "bool":
        return _select
    return None


def enabled():
    return (os.environ.get("OMNISTAGE_OP_TIER", "1").strip().lower() not in ("0", "false", "no", "off")
            and aot.native_tier_enabled() and c_background.enabled() and aot.compiler() is not None)


class Product:
    """`dot_general(lhs, rhs)` of one float dtype with the fused code's bits (emit_cpu's
    _emit_dot_general, its three cases: no terms, the small loop nest, os_matmul)."""

    def __init__(self, la, ra, out_aval, dimension_numbers):
        (lc, rc), (lb, rb) = dimension_numbers
        lfree = [d for d in range(la.ndim) if d not in lc and d not in lb]
        rfree = [d for d in range(ra.ndim) if d not in rc and d not in rb]
        size = lambda shape, axes: int(np.prod([shape[d] for d in axes], dtype=np.int64))  # noqa: E731
        B, M, K, N = size(la.shape, lb), size(la.shape, lfree), size(la.shape, lc), size(ra.shape, rfree)
        self.dims = (B, M, N, K)
        self.shape, self.dtype = tuple(out_aval.shape), np.dtype(out_aval.dtype)
        # each operand as (B, rows, cols) in contraction order: the axes permutation making it so
        self._perms = (tuple(lb) + tuple(lfree) + tuple(lc), tuple(rb) + tuple(rc) + tuple(rfree))

        work = B * M * N * K
        self.kind = "zeros" if K == 0 else "empty" if work == 0 else "loops" if work <= SMALL_PRODUCT_WORK else "blas"
        if self.kind == "blas":  # emit_cpu._blas_operand's layouts: C (itself), F (BLAS transposes), None (a copy)
            self._layouts = [contraction_layout.matrix_layout(batch, rows, cols, ndim)
                             for (batch, rows, cols), ndim in (((lb, lfree, lc), la.ndim), ((rb, rc, rfree), ra.ndim))]
            stored = [(B,) + (m if layout in ("C", None) else m[::-1]) for layout, m in zip(self._layouts, ((M, K), (K, N)))]
            self._params = (*stored[0], *stored[1], *(int(layout == "F") for layout in self._layouts))
        self.kernel = None  # the product kernel (_product sets it)

    def __call__(self, lhs, rhs):
        B, M, N, K = self.dims
        if self.kind == "zeros":
            return np.zeros(self.shape, self.dtype)
        if self.kind == "empty":
            return np.empty(self.shape, self.dtype)
        if self.kind == "loops":  # acc = 0; acc = acc + l * r over k: each rounding once, as in C
            l3 = np.transpose(lhs, self._perms[0]).reshape(B, M, K)
            r3 = np.transpose(rhs, self._perms[1]).reshape(B, K, N)
            acc = np.zeros((B, M, N), self.dtype)
            for k in range(K):
                acc = acc + l3[:, :, k, None] * r3[:, None, k, :]
            return acc.reshape(self.shape)
        a, b = (np.ascontiguousarray(x if layout is not None else np.transpose(x, perm))
                for x, perm, layout in zip((lhs, rhs), self._perms, self._layouts))
        out = np.empty((B, M, N), self.dtype)
        self.kernel(a, b, out, self._params)
        return out.reshape(self.shape)


class Sum:
    """`reduce_sum(x, axes)` of floats over trailing axes with the fused code's bits
    (emit_cpu.emit_reduce's kept-outer order: its plain loop, its vector reduction as
    c_translate.lane_reduction computes it, or its _blocked_sum). Each result is a sequence of
    parts added up in order: the terms themselves (the plain loop), the lane totals of each run
    of the last axis, or the sums of its blocks."""

    def __init__(self, x, axes, out_aval, lanes, blocked=False):
        kept = [k for k in range(x.ndim) if k not in axes]
        self._perm = tuple(kept) + tuple(axes)  # outputs first; the reduced axes in loop order
        self._runs = int(np.prod([x.shape[k] for k in axes[:-1]], dtype=np.int64))
        self._length = x.shape[axes[-1]]
        self._outputs = int(np.prod([x.shape[k] for k in kept], dtype=np.int64))
        self.shape, self.dtype = tuple(out_aval.shape), np.dtype(out_aval.dtype)
        self._lanes = lanes  # 0: terms one by one
        self._blocked = blocked

    def _lane_sums(self, x, block):
        """Each `block` of every run summed in LANES partial sums from -0, combined, added to
        +0. Padding with -0 changes no partial sum (x + -0 is x for every x)."""
        L, n = self._lanes, self._length
        blocks = max(-(-n // block), 1)
        padded = np.full((self._outputs, self._runs, blocks * block), -0.0, self.dtype)
        padded[:, :, :n] = x
        chunks = padded.reshape(self._outputs, self._runs * blocks, block // L, L)
        lanes = np.full((self._outputs, self._runs * blocks, L), -0.0, self.dtype)
        for c in range(block // L):
            lanes = lanes + chunks[:, :, c, :]
        w = L // 2
        while w >= 1:  # lane k += lane k + w, w = L/2 .. 1
            lanes[..., :w] = lanes[..., :w] + lanes[..., w:2 * w]
            w //= 2
        return np.zeros((), self.dtype) + lanes[..., 0]

    def __call__(self, x):
        x = np.transpose(np.asarray(x, self.dtype), self._perm).reshape(self._outputs, self._runs, self._length)
        L, n = self._lanes, self._length
        if L:
            parts = self._lane_sums(x, SUM_BLOCK if self._blocked else -(-n // L) * L)
        elif self._blocked:  # rows shorter than a vector: each row a block, left to right
            parts = np.zeros((self._outputs, self._runs), self.dtype)
            for j in range(n):
                parts = parts + x[:, :, j]
        else:
            parts = x.reshape(self._outputs, self._runs * n)
        if not self._blocked or self.dtype == np.float32:  # acc += part in order (float32 blocks: in double)
            wide = np.float64 if self._blocked else self.dtype
            start = np.zeros((self._outputs, 1), wide)
            acc = np.add.accumulate(np.concatenate([start, parts.astype(wide)], axis=1), axis=1)[:, -1]
            return acc.astype(self.dtype).reshape(self.shape)
        acc, comp = np.zeros(self._outputs), np.zeros(self._outputs)  # float64 blocks: Neumaier's sum
        for b in range(parts.shape[1]):
            blk = parts[:, b]
            t = acc + blk
            comp = comp + np.where(np.abs(acc) >= np.abs(blk), (acc - t) + blk, (blk - t) + acc)
            acc = t
        return np.where(np.isfinite(acc), acc + comp, acc).reshape(self.shape)


class ColumnSum:
    """`reduce_sum(x, axes)` whose fused loop reads `x` in memory order (emit_cpu.emit_reduce
    when the last axis is kept: _column_reduction, _wide_row_sum or the output row): each
    result the sum of its terms in the order of the reduced indices, from 0 in `accumulator`."""

    def __init__(self, x, axes, out_aval, accumulator):
        kept = [k for k in range(x.ndim) if k not in axes]
        self._perm = tuple(sorted(axes)) + tuple(kept)  # memory order: reduced indices as they come
        self._terms = int(np.prod([x.shape[k] for k in axes], dtype=np.int64))
        self.shape, self.dtype, self._acc = tuple(out_aval.shape), np.dtype(out_aval.dtype), np.dtype(accumulator)

    def __call__(self, x):
        x = np.transpose(np.asarray(x, self.dtype), self._perm).reshape((self._terms,) + self.shape)
        acc = np.zeros(self.shape, self._acc)
        for r in range(self._terms):
            acc = acc + x[r].astype(self._acc, copy=False)
        return acc.astype(self.dtype)


class Extremum:
    """`reduce_max`/`reduce_min(x, axes)` of floats: the largest (smallest) integer key of the
    terms (support.kmax's order-preserving keys: -0 below +0, NaN above (below) everything),
    the fused code's value in every order it takes them in; -inf (inf) of no terms."""

    def __init__(self, prim, axes, out_aval):
        self._max = prim == "reduce_max"
        self._axes = tuple(axes)
        self.shape, self.dtype = tuple(out_aval.shape), np.dtype(out_aval.dtype)
        self._int = np.dtype(f"int{8 * self.dtype.itemsize}")

    def _flip(self, k):
        bits = 8 * self.dtype.itemsize
        return k ^ ((k >> (bits - 1)) & np.array((1 << (bits - 1)) - 1, self._int))

    def __call__(self, x):
        x = np.asarray(x, self.dtype)
        info = np.iinfo(self._int)
        keys = np.where(np.isnan(x), info.max if self._max else info.min, self._flip(x.view(self._int)))
        if x.size == 0:
            return np.full(self.shape, -np.inf if self._max else np.inf, self.dtype)
        best = keys.max(axis=self._axes) if self._max else keys.min(axis=self._axes)
        return self._flip(np.asarray(best, self._int)).view(self.dtype).reshape(self.shape)


_COLUMN_TERMS = 4096  # a sum of more terms this way takes longer than the fused build's compile
_COMPENSATED_BLOCKS = 256  # a longer float64 sum's compensated loop would take longer than its compile


def _reduction(program, e, in_dtypes, out_dtype, missing):
    """The Sum, ColumnSum or Extremum for reduction `e`, or None when the tier leaves it to the fused build."""
    from .c_translate import LANES

    x, aval = program.atom_aval(e.ins[0]), program.avals[e.outs[0]]
    axes = tuple(e.params["axes"])
    if in_dtypes[0] != out_dtype or out_dtype.name not in _FLOATS or not x.ndim:
        return None
    if e.prim != "reduce_sum":
        return Extremum(e.prim, axes, aval)
    count = int(np.prod([x.shape[k] for k in axes], dtype=np.int64))
    trailing = (x.ndim - 1) in axes and (axes == tuple(range(x.ndim - len(axes), x.ndim))
                                         or aval.size <= KEPT_OUTER_MAX)  # (as emit_reduce decides)
    if not trailing:
        if count > _COLUMN_TERMS:
            return None
        columns = 0 < aval.size <= FEW_COLUMNS and axes == tuple(range(len(axes)))
        wide = out_dtype == np.float32 and (columns or count > SUM_BLOCK)
        return ColumnSum(x, axes, aval, np.float64 if wide else out_dtype)
    length = x.shape[axes[-1]]
    lanes = LANES if length >= VECTOR_MIN else 0
    if count <= SUM_BLOCK:
        return Sum(x, axes, aval, lanes)
    blocks = count // length * -(-length // SUM_BLOCK)
    if out_dtype == np.float64 and blocks > _COMPENSATED_BLOCKS:
        return None
    return Sum(x, axes, aval, lanes, blocked=True)


def _product(program, e, in_dtypes, out_dtype, missing):
    """A Product for statement `e` (its kernel's Signature added to `missing` when this machine
    lacks it), or None when the tier leaves it to the fused build."""
    la, ra = (program.atom_aval(a) for a in e.ins)
    if not (in_dtypes[0] == in_dtypes[1] == out_dtype and out_dtype.name in _FLOATS and la.ndim and ra.ndim):
        return None
    product = Product(la, ra, program.avals[e.outs[0]], e.params["dimension_numbers"])
    if product.kind == "blas":
        sig = op_kernels.matmul_signature(out_dtype)
        product.kernel = op_kernels.load(sig)
        if product.kernel is None:
            missing.append(sig)
        # before the first product, as the native tier's emission does (emit_cpu): the same BLAS threads
        from . import blas_threads

        blas_threads.configure(parallel.likely_enabled())
    return product


# (primitive -> its runner's maker): statements the fused code computes by a scheme of its own,
# run op by op by a class reproducing that scheme
_RUNNERS = {"dot_general": _product, "reduce_sum": _reduction, "reduce_max": _reduction, "reduce_min": _reduction}


class Plan:
    """How to run a program op by op: `steps` (output name, function, input atoms, params),
    the kernels it needs (`missing`: those this machine has not compiled), and the program the
    steps are of (the input as the emitter rewrites it)."""

    def __init__(self, steps, missing, program):
        self.steps = steps
        self.missing = missing
        self.program = program


def plan(program):
    """The Plan running `program` op by op, or None when the tier does not cover it."""
    if narrow_floats.needs_widening(program):
        return None
    program = fusable_forms.rewrite(contraction_layout.fold_transposes(program))
    steps, missing = [], []
    for stmt in program.fn.body:
        if isinstance(stmt, ast.Return):
            continue
        if not is_eqn(stmt):
            return None  # a nested body: control flow
        e = eqn(stmt)
        if len(e.outs) != 1:
            return None
        in_dtypes = [np.dtype(program.atom_aval(a).dtype) for a in e.ins]
        out_dtype = np.dtype(program.avals[e.outs[0]].dtype)
        if any(d.name not in _VALUES for d in (*in_dtypes, out_dtype)):
            return None
        ins = [literals.literal_value(a) if literals.is_literal(a) else a.id for a in e.ins]
        if e.prim in index_maps.INDEX_MAPS or e.prim in _BY_IMPL:
            exact = _BY_IMPL.get(e.prim)
            if exact is not None and not exact(out_dtype, e.params):
                return None
            impl = core_primitive.registry[e.prim].impl
            steps.append((e.outs[0], getattr(impl, "__wrapped__", impl), ins, e.params))
            continue
        if e.prim in _RUNNERS:
            runner = _RUNNERS[e.prim](program, e, in_dtypes, out_dtype, missing)
            if runner is None:
                return None
            steps.append((e.outs[0], runner, ins, {}))
            continue
        exact = _numpy_exact(e.prim, in_dtypes)
        if exact is not None:
            steps.append((e.outs[0], exact, ins, {}))
            continue
        if e.prim not in scalar_rules.RULES:
            return None
        sig = op_kernels.signature(e.prim, in_dtypes, out_dtype, e.params)
        kernel = op_kernels.load(sig)
        if kernel is None:
            missing.append(sig)
        steps.append((e.outs[0], kernel, ins, {}))
    return Plan(steps, missing, program)


def _with_last_uses(steps, keep):
    """`steps` with, on each, the names no later step reads (nor the program returns)."""
    seen, out = set(keep), []
    for name, fn, ins, params in reversed(steps):
        reads = {a for a in ins if isinstance(a, str)}
        out.append((name, fn, ins, params, tuple(sorted(reads - seen))))
        seen |= reads
    return out[::-1]


_builds = []  # fused builds running in the background, joined at exit
_builds_lock = threading.Lock()


class OpByOpProgram:
    """A program's executable that runs it op by op until its fused library (c_tier) is
    ready, then runs that; both give the same bits."""

    backend = "numba_cpu"
    cache_status = "run op by op on kernels compiled once per machine (its fused library compiles meanwhile)"

    def __init__(self, program, plan_):
        self.program = program  # (what the fused build compiles)
        program = plan_.program  # (what the steps are of: the input as the emitter rewrites it)
        outs = {a.id for a in program.out_atoms if not literals.is_literal(a)}
        self._steps = _with_last_uses(plan_.steps, outs)
        self._consts = dict(program.consts)
        self._outs = [literals.literal_value(a) if literals.is_literal(a) else a.id for a in program.out_atoms]
        self._in_names = program.in_names
        self._in_dtypes = [np.dtype(a.dtype) for a in program.in_avals]
        self._fused = None

    def start_fused_build(self, key):
        """Compile the fused library (c_tier) on a thread; calls switch to it once loaded."""
        thread = threading.Thread(target=self._build, args=(key,), daemon=True, name="omnistage fused build")
        with _builds_lock:
            _builds.append(thread)
        thread.start()

    def _build(self, key):
        from . import c_tier

        with c_background.working():
            try:
                self._fused = c_tier.compile_program(self.program, key=key)
            except Exception as e:  # noqa: BLE001 - this tier answers on; the user's calls lose nothing
                warnings.warn(f"omnistage: compiling {self.program.name!r} failed ({type(e).__name__}: {e}); "
                              f"it runs op by op instead", RuntimeWarning)
            finally:
                with _builds_lock:
                    _builds.remove(threading.current_thread())

    @property
    def fused(self):
        """The fused library's executable, once loaded (None until then, or if c_tier declined:
        this tier then runs every call)."""
        return self._fused

    def __call__(self, *args):
        fused = self._fused
        if fused is not None:
            return fused(*args)
        return self.run_by_ops(*args)

    def run_by_ops(self, *args):
        """One call op by op (what a call runs until the fused library is loaded)."""
        env = dict(self._consts)
        for name, a, dtype in zip(self._in_names, args, self._in_dtypes):
            env[name] = a if getattr(a, "dtype", None) == dtype else np.asarray(a, dtype)  # (as aot._c_buffer converts)
        with np.errstate(all="ignore"):
            for out, fn, ins, params, dead in self._steps:
                env[out] = fn(*[env[a] if isinstance(a, str) else a for a in ins], **params)
                for name in dead:  # a long chain on big arrays holds two or three at a time, as NumPy's would
                    del env[name]
        return tuple(np.asarray(env[o]) if isinstance(o, str) else np.asarray(o) for o in self._outs)

    def as_text(self):
        fused = self._fused
        if fused is not None:
            return fused.as_text()
        return "# run op by op while its fused library compiles\n" + self.program.source()


def compile_program(program, key):
    """An OpByOpProgram for `program`, or None (the caller compiles as before). Kernels the
    plan lacks are requested for later programs."""
    if not enabled() or key is None or aot.published(key) or aot.published(aot.quick_key(key)):
        return None  # (a library c_tier loads: under OMNISTAGE_AOT=0 only c_tier looks; a quick build it re-optimizes)
    plan_ = plan(program)
    if plan_ is None:
        return None
    check_sizes(program)  # an array bigger than the machine: the statement named, as the compilers do
    if plan_.missing:
        op_kernels.request(plan_.missing)
        return None
    by_ops = OpByOpProgram(program, plan_)
    by_ops.start_fused_build(key)
    return by_ops


def wait(timeout=30.0):
    """Let the fused builds running in the background finish (at exit: so the next process
    loads the library instead of running op by op)."""
    with _builds_lock:
        threads = list(_builds)
    for thread in threads:
        thread.join(timeout=timeout)


atexit.register(wait)
