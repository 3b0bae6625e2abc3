"""Whole-array `@numba.njit` kernels that generated code calls for the bigger opaque
primitives: sorting, linear algebra, convolution. Generated modules import this module as
`_kn` and call `_kn.<name>(...)`.

Conventions: every kernel works on C-contiguous arrays whose batch dimensions the caller has
flattened into one leading axis (the emitter reshapes before and after; the LAPACK-based ones
get float64/complex128 operands, as NumPy's linalg computes in double precision), and static
parameters arrive as ints or tuples of ints, so Numba compiles one specialization per dtype
and rank. Semantics are those of the primitives' NumPy implementations in `omnistage.lax`
(the interpreter), including their conventions for bad values: a failed factorization gives
NaNs, never an exception. Built with `numba_flags.ROUNDED` (the LU kernels: CONTRACTED).

Imports Numba (and Numba's LAPACK bindings for the real eigenproblem): only the code generator
imports this module, lazily.
"""
import ctypes
import threading

import numba
import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload
from numba.np import linalg as _nb_linalg

from . import blas_table, gemm_pool, kernel_calls, table_mirrors
from .numba_flags import CONTRACTED, ROUNDED

llvm.add_symbol(blas_table.SYMBOL, blas_table.address())
blas_table.fill()  # before any product runs: cached machine code reads the table without typing

_kernel = numba.njit(nogil=True, cache=True, **ROUNDED)


def _entry_reading(*positions, flags=ROUNDED):
    """What generated code calls: through a function pointer, never linked into the program;
    `positions` are the array arguments it only reads (kernel_calls.EntryKernel.read_only)."""
    return kernel_calls.entry_kernel(nogil=True, read_only=positions, **flags)


_entry = _entry_reading()
_contracted_entry = _entry_reading(flags=CONTRACTED)
_contracted_kernel = numba.njit(nogil=True, cache=True, **CONTRACTED)


# --- contractions ---------------------------------------------------------------------------


GEMM_SPLIT_WORK = 1 << 21  # multiply-adds from which a product is cut into blocks (~20 us of BLAS)
GEMM_BLOCK_ALIGN = 16  # block edges at multiples of this (BLAS micro-tiles stay whole)
GEMM_MAX_BLOCKS = 4
GEMM_MIN_BLOCK = 64


@_kernel
def gemm_blocks(m, n, k):
    """(blocks, along rows?) of the (m, k) @ (k, n) product: how `matmul` cuts it, by its shape
    alone. The larger of m and n is cut into up to GEMM_MAX_BLOCKS blocks of at least
    GEMM_MIN_BLOCK, aligned to GEMM_BLOCK_ALIGN; a product under GEMM_SPLIT_WORK is one block.
    The serial and the parallel kernel compute the same blocks with the same single-threaded
    BLAS calls, so a result never depends on how many threads ran them."""
    if m * n * k < GEMM_SPLIT_WORK:
        return 1, True
    rows = m >= n
    extent = m if rows else n
    blocks = min(GEMM_MAX_BLOCKS, extent // GEMM_MIN_BLOCK)
    return max(blocks, 1), rows


@_kernel
def _block_edges(extent, blocks, j):
    step = -(-extent // blocks)
    step = -(-step // GEMM_BLOCK_ALIGN) * GEMM_BLOCK_ALIGN
    return min(extent, j * step), min(extent, (j + 1) * step)


_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_VOID_P = _I8.as_pointer()
# Fortran gemm: (transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), all by reference
_GEMM_T = ir.FunctionType(ir.VoidType(), [_VOID_P, _VOID_P, _I32.as_pointer(), _I32.as_pointer(), _I32.as_pointer(),
                                          _VOID_P, _VOID_P, _I32.as_pointer(), _VOID_P, _I32.as_pointer(),
                                          _VOID_P, _VOID_P, _I32.as_pointer()])
_GEMM_DTYPES = (types.float32, types.float64, types.complex64, types.complex128)


def _table_entry(builder, slot):
    table = table_mirrors.declare(builder, blas_table.SYMBOL, blas_table.LENGTH)
    return builder.load(builder.gep(table, [_I32(0), _I32(slot)]))


def _gemm_address(builder, dtype):
    """The gemm of `dtype` from the BLAS table (an int64)."""
    address = _table_entry(builder, blas_table.KINDS.index(_nb_linalg.get_blas_kind(dtype)))
    with builder.if_then(builder.icmp_unsigned("==", address, _I64(0)), likely=False):
        # cached machine code in a process whose SciPy has no BLAS: stop, never a wrong product
        builder.call(builder.module.declare_intrinsic("llvm.trap", fnty=ir.FunctionType(ir.VoidType(), [])), ())
    return address


@intrinsic
def _xxgemm(typingctx, transa, transb, m, n, k, a, a_at, lda, b, b_at, ldb, c, c_at, ldc):
    """BLAS gemm, column-major: c[c_at:] (m x n, ld ldc) = op(a[a_at:]) @ op(b[b_at:]), calling
    the Fortran gemm that Numba's np.dot reaches (SciPy's BLAS) through `blas_table`;
    transa/transb are 0 or 1, positions are in elements. Unlike np.dot it takes leading
    dimensions, so a block of a matrix is a pointer and a stride, never a copy."""
    dtype = c.dtype
    if not all(isinstance(x, types.Array) and x.dtype == dtype for x in (a, b, c)) or dtype not in _GEMM_DTYPES:
        return None
    if not blas_table.fill():
        raise numba.core.errors.TypingError("no BLAS found: omnistage multiplies matrices with SciPy's "
                                            "(pip install scipy)")
    sig = types.void(transa, transb, m, n, k, a, a_at, lda, b, b_at, ldb, c, c_at, ldc)

    def codegen(context, builder, sig, args):
        ta, tb, m_, n_, k_, av, a_at_, lda_, bv, b_at_, ldb_, cv, c_at_, ldc_ = args
        intp = context.get_value_type(types.intp)

        def data(arr, arrty, at):
            ptr = context.make_array(arrty)(context, builder, arr).data
            return builder.bitcast(builder.gep(ptr, [at]), _VOID_P)

        def by_reference(value):  # Fortran takes every argument by reference
            slot = cgutils.alloca_once(builder, value.type)
            builder.store(value, slot)
            return slot

        def flag(t):
            is_t = builder.icmp_signed("!=", builder.sext(t, intp) if t.type.width < intp.width else t, ir.Constant(intp, 0))
            return by_reference(builder.select(is_t, _I8(ord("t")), _I8(ord("n"))))

        def int32(v):  # what Numba's numba_xxgemm passes: the sizes as C ints
            return by_reference(builder.trunc(v, _I32) if v.type.width > 32 else builder.sext(v, _I32))

        gemm = builder.inttoptr(_gemm_address(builder, dtype), _GEMM_T.as_pointer())
        alpha = _nb_linalg.make_constant_slot(context, builder, dtype, 1.0)
        beta = _nb_linalg.make_constant_slot(context, builder, dtype, 0.0)
        builder.call(gemm, (flag(ta), flag(tb), int32(m_), int32(n_), int32(k_), builder.bitcast(alpha, _VOID_P),
                            data(av, sig.args[5], a_at_), int32(lda_), data(bv, sig.args[8], b_at_), int32(ldb_),
                            builder.bitcast(beta, _VOID_P), data(cv, sig.args[11], c_at_), int32(ldc_)))
        return context.get_dummy_value()

    return sig, codegen


_POOL_T = ir.FunctionType(ir.VoidType(), [_VOID_P, _I64, _VOID_P, _VOID_P, _VOID_P])
_CALL_WORDS = gemm_pool.CALL_WORDS


@intrinsic
def _pool_ready(typingctx):
    """Whether the GEMM pool (gemm_pool) is loaded in this process: its table slot is set."""
    def codegen(context, builder, sig, args):
        return builder.icmp_unsigned("!=", _table_entry(builder, blas_table.POOL_SLOT), _I64(0))

    return types.boolean(), codegen


@intrinsic
def _pool_gemm_calls(typingctx, calls, count, c):
    """Run `count` BLAS gemm calls (rows of the int64 array `calls`, gemm_pool.CALL_WORDS each)
    of `c`'s dtype on the GEMM pool; the caller checked `_pool_ready()`."""
    if not (isinstance(calls, types.Array) and calls.dtype == types.int64 and isinstance(c, types.Array)
            and c.dtype in _GEMM_DTYPES):
        return None
    sig = types.void(calls, count, c)

    def codegen(context, builder, sig, args):
        calls_v, count_v, _ = args
        dtype = sig.args[2].dtype
        gemm = _gemm_address(builder, dtype)
        pool = builder.inttoptr(_table_entry(builder, blas_table.POOL_SLOT), _POOL_T.as_pointer())
        data = builder.bitcast(context.make_array(sig.args[0])(context, builder, calls_v).data, _VOID_P)
        alpha = _nb_linalg.make_constant_slot(context, builder, dtype, 1.0)
        beta = _nb_linalg.make_constant_slot(context, builder, dtype, 0.0)
        builder.call(pool, (builder.inttoptr(gemm, _VOID_P), builder.sext(count_v, _I64) if count_v.type.width < 64 else count_v,
                            data, builder.bitcast(alpha, _VOID_P), builder.bitcast(beta, _VOID_P)))
        return context.get_dummy_value()

    return sig, codegen


# Kernels' independent tasks on the GEMM pool's threads: the pool runs fn(ctx, lo, hi) over
# ranges of [0, n) (gemm_pool.LOOP_FUNCTION), fn a C callable. Each kind of task has a Numba
# cfunc per dtype whose address the process keeps in the table TASKS_SYMBOL (as the BLAS
# table: machine code holds no address of this process). The table is declared weak: a
# library built without it (aot) reads a null address and runs its tasks itself.
TASKS_SYMBOL = "omnistage_kernel_tasks"
TASK_DTYPES = (types.float32, types.float64)  # slot order; complex tasks run on the caller
_task_table = (ctypes.c_int64 * len(TASK_DTYPES))()
llvm.add_symbol(TASKS_SYMBOL, ctypes.addressof(_task_table))


@intrinsic
def _tasks_on_pool(typingctx, ctx, count, like):
    """Run the tasks `ctx` (an int64 array) describes, [0, count), on the GEMM pool with the
    task function of `like`'s dtype; whether they ran (False: no pool, no such function, or
    fewer than two tasks: the caller runs them)."""
    if not (isinstance(ctx, types.Array) and ctx.dtype == types.int64 and isinstance(like, types.Array)):
        return None
    sig = types.boolean(ctx, count, like)
    slot = TASK_DTYPES.index(like.dtype) if like.dtype in TASK_DTYPES else None

    def codegen(context, builder, sig, args):
        if slot is None:
            return ir.Constant(ir.IntType(1), 0)
        ctx_v, count_v, _ = args
        count_v = builder.sext(count_v, _I64) if count_v.type.width < 64 else count_v
        gv = builder.module.globals.get(TASKS_SYMBOL)
        if gv is None:
            gv = ir.GlobalVariable(builder.module, ir.ArrayType(_I64, len(TASK_DTYPES)), TASKS_SYMBOL)
            gv.linkage = "extern_weak"
        ran = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(1), 0))
        table_there = builder.icmp_unsigned("!=", builder.ptrtoint(gv, _I64), _I64(0))
        with builder.if_then(builder.and_(table_there, builder.icmp_signed(">=", count_v, _I64(2)))):
            fn = builder.load(builder.gep(gv, [_I32(0), _I32(slot)]))
            loop = _table_entry(builder, blas_table.LOOP_SLOT)
            ready = builder.and_(builder.icmp_unsigned("!=", fn, _I64(0)), builder.icmp_unsigned("!=", loop, _I64(0)))
            with builder.if_then(ready):
                fnty = ir.FunctionType(ir.VoidType(), [_VOID_P, _I64, _I64])
                loop_t = ir.FunctionType(ir.VoidType(), [fnty.as_pointer(), _VOID_P, _I64])
                data = context.make_array(sig.args[0])(context, builder, ctx_v).data
                builder.call(builder.inttoptr(loop, loop_t.as_pointer()),
                             (builder.inttoptr(fn, fnty.as_pointer()), builder.bitcast(data, _VOID_P), count_v))
                builder.store(ir.Constant(ir.IntType(1), 1), ran)
        return builder.load(ran)

    return sig, codegen


@intrinsic
def _typed_pointer(typingctx, address, like):
    """The int64 `address` as a pointer to elements of the scalar `like`'s type (for
    numba.carray)."""
    if not (isinstance(address, types.Integer) and isinstance(like, (types.Integer, types.Float, types.Complex))):
        return None

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(like).as_pointer())

    return types.CPointer(like)(address, like), codegen


@_kernel
def _block_args(a3, b3, out, i, ta, tb, j, blocks, rows):
    """Block `j` of `out[i] = op(a3[i]) @ op(b3[i])` as its one column-major BLAS call:
    (transa, transb, m, n, k, BLAS A's offset in b3, lda, BLAS B's offset in a3, ldb, C's
    offset in out), offsets in elements, m or n 0 for an empty block. Row-major C (M x N) is
    column-major C^T = op(B)^T @ op(A)^T, so BLAS's "A" is our b and its "B" our a; a block of
    rows of C is a block of columns of C^T, and a block of columns one of its rows."""
    M, N = out.shape[1], out.shape[2]
    K = a3.shape[1] if ta else a3.shape[2]
    lo, hi = _block_edges(M if rows else N, blocks, j)
    size = max(hi - lo, 0)
    a_at, b_at, c_at = i * a3.shape[1] * a3.shape[2], i * b3.shape[1] * b3.shape[2], i * M * N
    lda, ldb = (M if ta else K), (K if tb else N)  # leading dims of op(A)^T and op(B)^T, column-major
    if rows:
        return tb, ta, N, size, K, b_at, ldb, a_at + (lo if ta else lo * K), lda, c_at + lo * N
    return tb, ta, size, M, K, b_at + (lo * K if tb else lo), ldb, a_at, lda, c_at + lo


@_kernel
def _block_call(a3, b3, out, i, ta, tb, j, blocks, rows, call):
    """`_block_args` as gemm_pool's row of one call (addresses instead of offsets)."""
    transa, transb, m, n, k, at_a, lda, at_b, ldb, at_c = _block_args(a3, b3, out, i, ta, tb, j, blocks, rows)
    size = out.itemsize
    call[0], call[1], call[2], call[3], call[4] = transa, transb, m, n, k
    call[5], call[6], call[7] = lda, ldb, out.shape[2]
    call[8] = b3.ctypes.data + at_a * size
    call[9] = a3.ctypes.data + at_b * size
    call[10] = out.ctypes.data + at_c * size


@_kernel
def _blocks_on_pool(a3, b3, out, ta, tb, blocks, rows, tasks):
    """Run the product's blocks on the GEMM pool when it is loaded (the caller takes blocks
    too); whether they ran. The same calls as `_matmul_block`'s, so the same bits."""
    if tasks < 2 or not _pool_ready():
        return False
    calls = np.empty((tasks, _CALL_WORDS), np.int64)
    for t in range(tasks):
        _block_call(a3, b3, out, t // blocks, ta, tb, t % blocks, blocks, rows, calls[t])
    _pool_gemm_calls(calls, tasks, out)
    return True


@_kernel
def _matmul_block(a3, b3, out, i, ta, tb, j, blocks, rows):
    """Block `j` of `out[i] = op(a3[i]) @ op(b3[i])`, one BLAS call (`_block_args`)."""
    transa, transb, m, n, k, at_a, lda, at_b, ldb, at_c = _block_args(a3, b3, out, i, ta, tb, j, blocks, rows)
    if m > 0 and n > 0:
        _xxgemm(transa, transb, m, n, k, b3, at_a, lda, a3, at_b, ldb, out, at_c, out.shape[2])


@_kernel
def _serial_blocks(a3, b3, out, ta, tb, blocks, rows, tasks):
    for t in range(tasks):
        _matmul_block(a3, b3, out, t // blocks, ta, tb, t % blocks, blocks, rows)


@_kernel
def _blocked(a, b, out, params):
    """(a3, b3, ta, tb, blocks, rows, tasks) of `matmul`'s product: the operands as stacks of
    matrices, their transpose flags, how each product is cut (`gemm_blocks`), and the number of
    BLAS calls, batch x blocks (0 for an empty result)."""
    a3 = np.ascontiguousarray(a).reshape((params[0], params[1], params[2]))
    b3 = np.ascontiguousarray(b).reshape((params[3], params[4], params[5]))
    ta, tb = params[6] != 0, params[7] != 0
    M, N = out.shape[1], out.shape[2]
    blocks, rows = gemm_blocks(M, N, a3.shape[1] if ta else a3.shape[2])
    return a3, b3, ta, tb, blocks, rows, (out.shape[0] * blocks if M and N else 0)


@_entry_reading(0, 1)
def matmul(a, b, out, params):
    """`out[i] = op(a3[i]) @ op(b3[i])` for each batch element `i` of the (B, M, N) array
    `out`, through BLAS, in place. `a` and `b` are any rank and layout; `params` (int64) is
    (B, rows, cols) of `a` as a C-ordered stack of matrices, the same for `b`, then whether each
    is used transposed (a matrix stored C-ordered as (cols, rows): BLAS gets a transpose flag,
    nothing is copied). Operands that are not contiguous are copied first. A big product is cut
    into blocks (`gemm_blocks`), each one single-threaded BLAS call.

    One compiled kernel per dtype, ranks and layouts for every program on the machine: each
    `np.dot` call site of a program used to compile Numba's dot implementation again, once per
    operand layout (~0.1 s each)."""
    a3, b3, ta, tb, blocks, rows, tasks = _blocked(a, b, out, params)
    _serial_blocks(a3, b3, out, ta, tb, blocks, rows, tasks)


@_entry_reading(0, 1)
def matmul_pool(a, b, out, params):
    """`matmul` with its blocks on the GEMM pool when it is loaded (gemm_pool; what native
    libraries call for a big product), else run here: the same blocks and calls either way."""
    a3, b3, ta, tb, blocks, rows, tasks = _blocked(a, b, out, params)
    if not _blocks_on_pool(a3, b3, out, ta, tb, blocks, rows, tasks):
        _serial_blocks(a3, b3, out, ta, tb, blocks, rows, tasks)


@_entry_reading(0, 1)
def matmul_pool_threads(a, b, out, params):
    """`matmul` with its blocks on the GEMM pool, or on Numba's threads while it is not loaded
    (Numba builds with threads but no parallel loops): the same blocks and calls, the same bits."""
    a3, b3, ta, tb, blocks, rows, tasks = _blocked(a, b, out, params)
    if not _blocks_on_pool(a3, b3, out, ta, tb, blocks, rows, tasks):
        _matmul_threads(a3, b3, out, ta, tb, blocks, rows, tasks)


@_entry_reading(0, 1)
def matmul_threads(a, b, out, params):
    """`matmul` with its blocks on Numba's threads (Numba builds with threads call it; not the
    GEMM pool, whose threads would spin against Numba's between a program's loops and its
    products): the same blocks and calls, so the same bits."""
    a3, b3, ta, tb, blocks, rows, tasks = _blocked(a, b, out, params)
    _matmul_threads(a3, b3, out, ta, tb, blocks, rows, tasks)


@numba.njit(nogil=True, cache=True, parallel=True, **ROUNDED)
def _matmul_threads(a3, b3, out, ta, tb, blocks, rows, tasks):
    for t in numba.prange(tasks):
        _matmul_block(a3, b3, out, t // blocks, ta, tb, t % blocks, blocks, rows)


# --- data movement -------------------------------------------------------------------------


@_entry_reading(0)
def strided_copy(src, dst, params):
    """Copy strided views of `src` into strided views of `dst` (both any rank and layout,
    addressed by flat C-order position through `.flat`). `params` (int64) is a sequence of
    pieces, each (ndim, *shape, src offset, *src strides, dst offset, *dst strides), in
    elements.

    Transposes, concatenations, slices, reversals, broadcasts and reshapes of materialized
    arrays are all such copies: generated code calls this one kernel, compiled once per
    machine per dtype and ranks, instead of a loop nest Numba compiles in every program
    (~0.1 s each: an image grid of 100 transposed images was ~110 of them), and one call
    copies every piece a concatenation takes from one array."""
    at = 0
    while at < len(params):
        nd = params[at]
        _copy_piece(src.flat, dst.flat, params[at + 1:at + 1 + nd], params[at + 1 + nd],
                    params[at + 2 + nd:at + 2 + 2 * nd], params[at + 2 + 2 * nd], params[at + 3 + 2 * nd:at + 3 + 3 * nd])
        at += 3 + 3 * nd


COPY_TILE = 32  # strided copies (transposes) go tile by tile: the rows a tile reads stay in L1


@_kernel
def _copy_piece(s, d, shape, s_pos, s_str, d_pos, d_str):
    """One piece of `strided_copy`: an odometer over all but the last two axes, each of
    those planes copied row by row (unit strides: a vectorized copy) or, strided, tile by
    tile. No per-element index arithmetic beyond a multiply-add."""
    nd = len(shape)
    total = 1
    for k in range(nd):
        total *= shape[k]
    if total == 0:
        return
    if nd < 2:
        n, si, di = (shape[0], s_str[0], d_str[0]) if nd == 1 else (1, 0, 0)
        _copy_plane(s, d, 1, n, s_pos, 0, si, d_pos, 0, di)
        return
    n0, n1 = shape[nd - 2], shape[nd - 1]
    idx = np.zeros(nd, np.int64)
    for _ in range(total // (n0 * n1)):
        _copy_plane(s, d, n0, n1, s_pos, s_str[nd - 2], s_str[nd - 1], d_pos, d_str[nd - 2], d_str[nd - 1])
        k = nd - 3
        while k >= 0:  # next index of the outer axes
            idx[k] += 1
            s_pos += s_str[k]
            d_pos += d_str[k]
            if idx[k] < shape[k]:
                break
            s_pos -= idx[k] * s_str[k]
            d_pos -= idx[k] * d_str[k]
            idx[k] = 0
            k -= 1


@_kernel
def _copy_plane(s, d, n0, n1, s_pos, s0, s1, d_pos, d0, d1):
    if s1 == 1 and d1 == 1:
        for i in range(n0):
            a, b = s_pos + i * s0, d_pos + i * d0
            for j in range(n1):
                d[b + j] = s[a + j]
        return
    for i0 in range(0, n0, COPY_TILE):
        for j0 in range(0, n1, COPY_TILE):
            for i in range(i0, min(i0 + COPY_TILE, n0)):
                a, b = s_pos + i * s0, d_pos + i * d0
                for j in range(j0, min(j0 + COPY_TILE, n1)):
                    d[b + j * d1] = s[a + j * s1]


# --- sort --------------------------------------------------------------------------------


@_kernel
def _less(a, b):
    """The sort order of `lax.sort` on one real key: NaNs (either sign) after everything,
    -0.0 equal to 0.0 (stability keeps their order)."""
    return a < b or (b != b and a == a)


_RUN = 16  # insertion-sorted run length before merging


@_kernel
def _insertion_runs(v, o):
    """Sort each run of _RUN elements of the pairs (v, o) by v, stably."""
    n = v.shape[0]
    for lo in range(0, n, _RUN):
        hi = min(lo + _RUN, n)
        for i in range(lo + 1, hi):
            x, xo = v[i], o[i]
            j = i - 1
            while j >= lo and _less(x, v[j]):
                v[j + 1], o[j + 1] = v[j], o[j]
                j -= 1
            v[j + 1], o[j + 1] = x, xo


@_kernel
def _merge_pass(v, o, v2, o2, width):
    """Merge adjacent sorted runs of `width` pairs from (v, o) into (v2, o2); ties take the
    left run first (stable)."""
    n = v.shape[0]
    for lo in range(0, n, 2 * width):
        mid, hi = min(lo + width, n), min(lo + 2 * width, n)
        i, j, k = lo, mid, lo
        while i < mid and j < hi:
            if _less(v[j], v[i]):
                v2[k], o2[k] = v[j], o[j]
                j += 1
            else:
                v2[k], o2[k] = v[i], o[i]
                i += 1
            k += 1
        while i < mid:
            v2[k], o2[k] = v[i], o[i]
            i += 1
            k += 1
        while j < hi:
            v2[k], o2[k] = v[j], o[j]
            j += 1
            k += 1


@_kernel
def _stable_sort_pairs(v, o, v2, o2):
    """Sort the pairs (v, o) by v, stably (insertion-sorted runs, then bottom-up merges
    alternating with the scratch pair (v2, o2))."""
    n = v.shape[0]
    _insertion_runs(v, o)
    width, flips = _RUN, 0
    while width < n:
        if flips % 2 == 0:
            _merge_pass(v, o, v2, o2, width)
        else:
            _merge_pass(v2, o2, v, o, width)
        flips += 1
        width *= 2
    if flips % 2 == 1:
        v[:] = v2
        o[:] = o2


@_entry
def identity_permutation(outer, n, inner):
    """perm[o, k, i] = k: the starting point of `refine_sort`."""
    perm = np.empty((outer, n, inner), np.int64)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                perm[o, k, i] = k
    return perm


@_entry
def refine_sort(perm, key):
    """Reorder each line perm[o, :, i] stably by key[o, perm[o, :, i], i].

    Called once per key from the least to the most significant (an LSD radix of stable
    sorts), this gives the lexicographic order of `lax.sort` with several keys."""
    outer, n, inner = perm.shape
    vals, vals2 = np.empty(n, key.dtype), np.empty(n, key.dtype)
    order, order2 = np.empty(n, np.int64), np.empty(n, np.int64)
    for o in range(outer):
        for i in range(inner):
            for k in range(n):
                order[k] = perm[o, k, i]
                vals[k] = key[o, order[k], i]
            _stable_sort_pairs(vals, order, vals2, order2)
            for k in range(n):
                perm[o, k, i] = order[k]


@_entry
def take_along(x, perm):
    """out[o, k, i] = x[o, perm[o, k, i], i] (perm holds valid positions)."""
    outer, n, inner = x.shape
    out = np.empty_like(x)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, k, i] = x[o, perm[o, k, i], i]
    return out


# --- linear algebra: shared pieces -----------------------------------------------------------
# Each kernel takes a (b, m, n) float64/complex128 operand and writes into 64-bit outputs the
# emitter allocated (and rounds to the primitive's result dtypes afterwards).


@_kernel
def _eye_into(out):
    """out (b, m, n) := the m x n identity in every batch entry."""
    out[:] = 0
    for b in range(out.shape[0]):
        for i in range(min(out.shape[1], out.shape[2])):
            out[b, i, i] = 1


# --- cholesky ------------------------------------------------------------------------------


@_entry
def cholesky(a, out):
    """Lower Cholesky factors of a (b, n, n); a matrix that is not positive definite gets NaN
    in its lower triangle and zeros above (JAX)."""
    out[:] = 0
    n = a.shape[1]
    for b in range(a.shape[0] if n else 0):
        try:
            out[b] = np.linalg.cholesky(a[b])
        except Exception:  # noqa: BLE001 - LinAlgError: not positive definite
            for i in range(n):
                for j in range(i + 1):
                    out[b, i, j] = np.nan


# --- eigh ----------------------------------------------------------------------------------


@_entry
def eigh(a, lower, v, w):
    """v, w of Hermitian a (b, n, n) from its lower (or upper) triangle; w ascending, real.

    Numba's eigh reads the lower triangle only, so the upper one is passed as the lower
    triangle of the conjugate transpose (the same Hermitian matrix)."""
    n = a.shape[1]
    for b in range(a.shape[0] if n else 0):
        m = np.ascontiguousarray(a[b]) if lower else np.ascontiguousarray(np.conj(a[b]).T)
        try:
            wb, vb = np.linalg.eigh(m)
            w[b] = wb
            v[b] = vb
        except Exception:  # noqa: BLE001 - NaN/inf input or no convergence: NaN results
            w[b] = np.nan
            v[b] = np.nan


# --- eig -------------------------------------------------------------------------------------


def _geev(a, w, v, vectors):
    """Eigenvalues of a square matrix into complex `w` (n,) and, when `vectors`, the right
    eigenvectors into `v` (n, n) (columns), assembled as NumPy's eig does from LAPACK ?geev;
    False where LAPACK fails or `a` holds inf/NaN (Numba's bindings refuse those)."""
    raise NotImplementedError  # compiled only: see the overload below


@overload(_geev)
def _geev_overload(a, w, v, vectors):
    if isinstance(a.dtype, numba.types.Complex):

        def complex_impl(a, w, v, vectors):
            if not np.all(np.isfinite(a)):
                return False
            if not vectors:  # LAPACK skips the eigenvectors: most of the work for small n
                w[:] = np.linalg.eigvals(a)
                return True
            wb, vb = np.linalg.eig(a)
            w[:] = wb
            v[:] = vb
            return True

        return complex_impl
    # Numba's own eig refuses real matrices with complex eigenvalues (before NumPy 2.5), so
    # the real case calls the same LAPACK binding and unpacks conjugate pairs like NumPy does.
    rgeev = _nb_linalg._LAPACK().numba_ez_rgeev(a.dtype)
    kind = ord(_nb_linalg.get_blas_kind(a.dtype, "eig"))
    real_dtype = numba.np.numpy_support.as_dtype(a.dtype)

    def real_impl(a, w, v, vectors):
        n = a.shape[-1]
        if not np.all(np.isfinite(a)):
            return False
        acpy = _nb_linalg._copy_to_fortran_order(a)
        wr, wi = np.empty(n, dtype=real_dtype), np.empty(n, dtype=real_dtype)
        nv = n if vectors else 1
        vl, vr = np.empty((n, 1), dtype=real_dtype), np.empty((n, nv), dtype=real_dtype)
        jobvr = ord("V") if vectors else ord("N")
        r = rgeev(kind, ord("N"), jobvr, n, acpy.ctypes, n, wr.ctypes, wi.ctypes, vl.ctypes, 1, vr.ctypes, nv)
        _nb_linalg._dummy_liveness_func([acpy.size, vl.size, vr.size, wr.size, wi.size])
        if r != 0:
            return False
        # LAPACK writes column-major: row i of `vr` (C view) is eigenvector i; a complex pair
        # (i, i + 1) stores the real part in vector i and the imaginary part in vector i + 1.
        i = 0
        while i < n:
            if wi[i] == 0:
                w[i] = wr[i]
                for j in range(n if vectors else 0):
                    v[j, i] = vr[i, j]
                i += 1
            else:
                w[i] = wr[i] + 1j * wi[i]
                w[i + 1] = wr[i + 1] + 1j * wi[i + 1]
                for j in range(n if vectors else 0):
                    v[j, i] = vr[i, j] + 1j * vr[i + 1, j]
                    v[j, i + 1] = vr[i, j] - 1j * vr[i + 1, j]
                i += 2
        return True

    return real_impl


@_kernel
def _normalized_columns(v, out):
    """out := v with unit 2-norm columns whose largest component (the first of equals) is
    real and positive, as LAPACK returns eigenvectors."""
    for j in range(v.shape[1]):
        norm = np.sqrt(np.sum(np.abs(v[:, j]) ** 2))
        best, big = -1.0, v[0, j] - v[0, j]
        for i in range(v.shape[0]):
            mag = np.abs(v[i, j] / norm)
            if mag > best:
                best, big = mag, v[i, j] / norm
        phase = np.conj(big) / np.abs(big) if big != 0 else big - big + 1
        for i in range(v.shape[0]):
            out[i, j] = v[i, j] / norm * phase


_NAN_NAN = complex(np.nan, np.nan)


@_entry
def eig(a, w, vl, vr):
    """w (b, n), vr (b, n, n) (when it has a batch entry per matrix) and, when vl has one, the left eigenvectors
    (the conjugate transpose of inv(vr), normalized) of a (b, n, n) float64/complex128, all
    complex128."""
    n = a.shape[1]
    want_left = vl.shape[0] == a.shape[0]
    vectors = vr.shape[0] == a.shape[0]  # a (0, n, n) buffer: eigenvalues only
    wb, vb, lb = np.empty(n, np.complex128), np.empty((n, n), np.complex128), np.empty((n, n), np.complex128)
    for b in range(a.shape[0] if n else 0):
        # The LAPACK this environment's SciPy bundles does not undo ?geev's own scaling of
        # matrices with norm below sqrt(safmin)/eps (scipy.linalg.eigvals(A * 1e-150) is ~3e11x
        # too large): far-from-1 matrices are scaled by a power of two here (exact) instead.
        m = np.max(np.abs(a[b]))
        scale = 2.0 ** -np.round(np.log2(m)) if (m < 1e-100 or m > 1e100) and 0 < m < np.inf else 1.0
        if not _geev(np.ascontiguousarray(a[b] * scale), wb, vb, vectors):
            w[b] = _NAN_NAN  # JAX's value for a matrix holding inf or NaN
            if vectors:
                vr[b] = _NAN_NAN
            if want_left:
                vl[b] = _NAN_NAN
            continue
        w[b] = wb / scale
        if vectors:
            vr[b] = vb
        if want_left:
            try:
                _normalized_columns(np.ascontiguousarray(np.conj(np.linalg.inv(vb)).T), lb)
                vl[b] = lb
            except Exception:  # noqa: BLE001 - singular eigenvector matrix
                vl[b] = _NAN_NAN


# --- svd -------------------------------------------------------------------------------------


@_entry
def svd(a, full_matrices, u, s, vh):
    """u (b, m, m or k), s (b, k) real descending, vh (b, n or k, n) of a (b, m, n)."""
    if s.shape[1] == 0:  # NumPy: identities for the non-empty side, nothing to decompose
        _eye_into(u)
        _eye_into(vh)
        return
    for b in range(a.shape[0]):
        try:
            ub, sb, vhb = np.linalg.svd(np.ascontiguousarray(a[b]), full_matrices=full_matrices)
            u[b] = ub
            s[b] = sb
            vh[b] = vhb
        except Exception:  # noqa: BLE001 - NaN/inf input or no convergence: NaN results
            u[b] = np.nan
            s[b] = np.nan
            vh[b] = np.nan


# --- qr --------------------------------------------------------------------------------------


@_entry
def qr(a, q, r):
    """q (b, m, m or k), r (b, m or k, n) of a (b, m, n), LAPACK's Householder signs.

    Numba's qr is the reduced one; for the complete Q of a tall matrix, [a | 0] (square) is
    factored instead: its first n reflectors are a's, the rest are identities (tau = 0)."""
    nb, m, n = a.shape
    r[:] = 0
    if min(m, n) == 0:
        _eye_into(q)
        return
    for b in range(nb):
        if q.shape[2] > n:
            square = np.zeros((m, m), a.dtype)
            square[:, :n] = a[b]
        else:
            square = np.ascontiguousarray(a[b])
        if not np.all(np.isfinite(square)):
            q[b] = np.nan
            r[b] = np.nan
            continue
        qb, rb = np.linalg.qr(square)
        q[b] = qb
        r[b] = rb[:, :n]


# --- lu ----------------------------------------------------------------------------------------


@_contracted_kernel
def _pivot_magnitude(x):
    # LAPACK's i?amax: |re| + |im| for complex (not the modulus)
    return np.abs(x.real) + np.abs(x.imag)


@_contracted_entry
def lu(a):
    """Partial-pivoting LU of a (b, m, n): (lu, pivots int32 (b, k), permutation int32 (b, m)),
    the unblocked getrf algorithm of `lax.linalg`'s implementation, step for step."""
    nb, m, n = a.shape
    k = min(m, n)
    out = a.copy()
    pivots = np.zeros((nb, k), np.int32)
    perm = np.empty((nb, m), np.int32)
    for b in range(nb):
        for i in range(m):
            perm[b, i] = i
        for j in range(k):
            p, best = j, _pivot_magnitude(out[b, j, j])
            for i in range(j + 1, m):  # first largest; a NaN wins over numbers (np.argmax)
                mag = _pivot_magnitude(out[b, i, j])
                if mag > best or (mag != mag and best == best):
                    p, best = i, mag
            pivots[b, j] = p
            if p != j:
                for c in range(n):
                    out[b, j, c], out[b, p, c] = out[b, p, c], out[b, j, c]
                perm[b, j], perm[b, p] = perm[b, p], perm[b, j]
            piv = out[b, j, j]
            if piv != 0:  # getrf leaves a zero column unscaled
                for i in range(j + 1, m):
                    out[b, i, j] = out[b, i, j] / piv
            for i in range(j + 1, m):
                lij = out[b, i, j]
                for c in range(j + 1, n):
                    out[b, i, c] -= lij * out[b, j, c]
    return out, pivots, perm


@_entry
def lu_pivots_to_permutation(pivots, permutation_size):
    """Apply the row swaps i <-> pivots[b, i] in order to the identity permutation of each
    batch entry; a pivot outside [0, permutation_size) swaps nothing (never reads out of
    bounds)."""
    nb, k = pivots.shape
    perm = np.empty((nb, permutation_size), np.int32)
    for b in range(nb):
        for i in range(permutation_size):
            perm[b, i] = i
        for i in range(k):
            p = pivots[b, i]
            if 0 <= p < permutation_size:
                perm[b, i], perm[b, p] = perm[b, p], perm[b, i]
    return perm


# --- triangular_solve --------------------------------------------------------------------------


@_contracted_entry
def forward_substitution(m, rhs, unit_diagonal):
    """x with m x = rhs for lower-triangular m (b, n, n) and rhs (b, n, k), row by row (only
    m's lower triangle is read)."""
    nb, n, k = rhs.shape
    x = np.zeros_like(rhs)
    for b in range(nb):
        for i in range(n):
            for c in range(k):
                dot = rhs[b, i, c] - rhs[b, i, c]
                for j in range(i):
                    dot += m[b, i, j] * x[b, j, c]
                acc = rhs[b, i, c] - dot
                x[b, i, c] = acc if unit_diagonal else acc / m[b, i, i]
    return x


# --- conv_general_dilated ------------------------------------------------------------------------


@_kernel
def _unravel(flat, shape, out):
    for d in range(len(shape) - 1, -1, -1):
        out[d] = flat % shape[d]
        flat //= shape[d]


@_kernel
def _taps(in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil):
    """taps[s, t] = flat input position read by output position s at kernel tap t, or -1
    where the tap lands in padding or between lhs-dilated elements."""
    nsp = len(in_sp)
    n_out, n_k = 1, 1
    for d in range(nsp):
        n_out *= out_sp[d]
        n_k *= k_sp[d]
    taps = np.empty((n_out, n_k), np.int64)
    oi, ki = np.empty(nsp, np.int64), np.empty(nsp, np.int64)
    for s in range(n_out):
        _unravel(s, out_sp, oi)
        for t in range(n_k):
            _unravel(t, k_sp, ki)
            flat = 0
            for d in range(nsp):
                p = oi[d] * strides[d] + ki[d] * rhs_dil[d] - pad_lo[d]  # in the dilated input
                dilated = (in_sp[d] - 1) * lhs_dil[d] + 1 if in_sp[d] > 0 else 0
                if p < 0 or p >= dilated or p % lhs_dil[d] != 0:
                    flat = -1
                    break
                flat = flat * in_sp[d] + p // lhs_dil[d]
            taps[s, t] = flat
    return taps


@_entry
def permuted_copy(src, src_shape, perm, dst):
    """dst (flat, C order) = the C-ordered `src` (flat, of shape `src_shape`) with its axes
    permuted: dst axis k is src axis perm[k]; elements are cast to dst's dtype. Shapes and
    permutations are int64 arrays, so one specialization serves every rank. An odometer over
    dst's outer axes, a strided inner loop: no per-element index arithmetic."""
    nd = src_shape.shape[0]
    if dst.size == 0:
        return
    src_stride = np.empty(nd, np.int64)
    step = 1
    for d in range(nd - 1, -1, -1):
        src_stride[d] = step
        step *= src_shape[d]
    dims, strides = np.empty(nd, np.int64), np.empty(nd, np.int64)
    for k in range(nd):
        dims[k], strides[k] = src_shape[perm[k]], src_stride[perm[k]]
    inner, inner_stride = dims[nd - 1], strides[nd - 1]
    idx = np.zeros(nd, np.int64)
    base, j = 0, 0
    while j < dst.size:
        for i in range(inner):
            dst[j + i] = src[base + i * inner_stride]
        j += inner
        k = nd - 2
        while k >= 0:  # next index of the outer axes
            idx[k] += 1
            base += strides[k]
            if idx[k] < dims[k]:
                break
            base -= idx[k] * strides[k]
            idx[k] = 0
            k -= 1


@_kernel
def _as_array(values):
    out = np.empty(len(values), np.int64)
    for k in range(len(values)):
        out[k] = values[k]
    return out


@_kernel
def _spec_ordered(x, spec, dtype_like):
    """`x` (any rank, C order) as a C-contiguous (batch or out-feature, feature, spatial
    flattened) array of `dtype_like`'s dtype, its axes taken in `spec` order (int64s)."""
    n0, n1 = x.shape[spec[0]], x.shape[spec[1]]
    rest = x.size // max(n0 * n1, 1)
    out = np.empty(n0 * n1 * rest, dtype_like.dtype)
    permuted_copy(x.reshape(x.size), _as_array(x.shape), spec, out)
    return out.reshape((n0, n1, rest))


@_kernel
def _is_identity(perm):
    for k in range(len(perm)):
        if perm[k] != k:
            return False
    return True


@_entry
def conv_in_layout(lhs, rhs, out, params):
    """`conv` on operands in their own layouts into `out` in its own; `params` (int64) holds,
    for rank n and s = max(n - 2, 1) spatial entries: n, lhs_spec, rhs_spec (dimension
    numbers), out_perm (out axis a is axis out_perm[a] of the spec-ordered result),
    spec_shape (that result's shape: batch, out-feature, spatial...), in_sp, k_sp, out_sp,
    strides, pad_lo, lhs_dil, rhs_dil (s entries each), feature_groups, batch_groups.

    One array instead of tuples and ints: a call from generated code with literal arguments
    makes Numba compile a specialization per distinct value (per convolution of every
    program); with an array, one per rank and dtypes serves them all. The relayouts happen
    here, instead of as three loop nests per convolution in the program."""
    nd = params[0]
    ns = max(nd - 2, 1)
    lhs_spec, rhs_spec = params[1:1 + nd], params[1 + nd:1 + 2 * nd]
    out_perm, spec_shape = params[1 + 2 * nd:1 + 3 * nd], params[1 + 3 * nd:1 + 4 * nd]
    at = 1 + 4 * nd
    in_sp, k_sp, out_sp = params[at:at + ns], params[at + ns:at + 2 * ns], params[at + 2 * ns:at + 3 * ns]
    strides, pad_lo = params[at + 3 * ns:at + 4 * ns], params[at + 4 * ns:at + 5 * ns]
    lhs_dil, rhs_dil = params[at + 5 * ns:at + 6 * ns], params[at + 6 * ns:at + 7 * ns]
    feature_groups, batch_groups = params[at + 7 * ns], params[at + 7 * ns + 1]
    x = _spec_ordered(lhs, lhs_spec, out)
    k = _spec_ordered(rhs, rhs_spec, out)
    n, o = spec_shape[0], spec_shape[1]
    spatial = out.size // max(n * o, 1)
    if _is_identity(out_perm):
        _conv_compute(x, k, out.reshape((n, o, spatial)), in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil,
                      feature_groups, batch_groups)
        return
    buf = np.empty((n, o, spatial), out.dtype)
    _conv_compute(x, k, buf, in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil, feature_groups, batch_groups)
    permuted_copy(buf.reshape(buf.size), spec_shape, out_perm, out.reshape(out.size))


conv_in_layout.on_overload = lambda argtypes: prepare_conv_tasks(argtypes[2].dtype)


@_entry
def conv(lhs, rhs, out, in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil, feature_groups, batch_groups):
    """Direct convolution into `out` (N', O, S_out) of lhs (N, C, S_in) with rhs (O, I, K), all
    in the output dtype with spatial dimensions flattened (their shapes passed as tuples).

    feature groups: output feature o reads lhs channels [g*I, (g+1)*I) with g = o // (O/G);
    batch groups: output feature o reads lhs batch entry g*N' + n with g = o // (O/G)."""
    n_out, o_feats = out.shape[0], out.shape[1]
    in_ch = rhs.shape[1]
    groups = max(feature_groups, batch_groups)
    per_group = o_feats // groups
    taps = _taps(in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil)
    out[:] = 0
    for n in range(n_out):
        for o in range(o_feats):
            g = o // per_group
            src_n = g * n_out + n if batch_groups > 1 else n
            ch0 = g * in_ch if feature_groups > 1 else 0
            for t in range(taps.shape[1]):
                for c in range(in_ch):
                    w = rhs[o, c, t]
                    for s in range(taps.shape[0]):
                        p = taps[s, t]
                        if p >= 0:
                            out[n, o, s] += lhs[src_n, ch0 + c, p] * w


_COLS_BUDGET = 1 << 16  # elements of one im2col block: a thread's share of L2 (256 KiB in float32)


@_kernel
def _phases(in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil):
    """(phase of each output position, reads[phase, tap]): output positions whose windows start
    at the same residues modulo the lhs dilation read the same taps; the others land between
    dilated elements for every one of them. One phase without lhs dilation."""
    nsp = len(in_sp)
    n_out, n_k, n_ph = 1, 1, 1
    for d in range(nsp):
        n_out *= out_sp[d]
        n_k *= k_sp[d]
        n_ph *= lhs_dil[d]
    phase = np.empty(n_out, np.int64)
    oi, ki, pi = np.empty(nsp, np.int64), np.empty(nsp, np.int64), np.empty(nsp, np.int64)
    for s in range(n_out):
        _unravel(s, out_sp, oi)
        ph = 0
        for d in range(nsp):
            ph = ph * lhs_dil[d] + (oi[d] * strides[d] - pad_lo[d]) % lhs_dil[d]
        phase[s] = ph
    reads = np.zeros((n_ph, n_k), np.bool_)
    for p in range(n_ph):
        _unravel(p, lhs_dil, pi)
        for t in range(n_k):
            _unravel(t, k_sp, ki)
            hit = True
            for d in range(nsp):
                if (pi[d] + ki[d] * rhs_dil[d]) % lhs_dil[d] != 0:
                    hit = False
            reads[p, t] = hit
    return phase, reads


@_kernel
def _where(mask):
    out = np.empty(mask.sum(), np.int64)
    k = 0
    for i in range(mask.shape[0]):
        if mask[i]:
            out[k] = i
            k += 1
    return out


@_kernel
def _conv_gemm(lhs, rhs, out, in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil, feature_groups, batch_groups):
    """`conv` for float and complex outputs as GEMMs (BLAS through `_xxgemm`): per phase of the
    output positions (see `_phases`; a transposed convolution's lhs dilation leaves each
    phase a fraction of the taps, so the zeros between dilated elements are never
    multiplied), per group and per cache-sized block of batch entries, the windows are
    gathered into columns (im2col, zeros for taps in padding) and multiplied by the group's
    kernel matrix restricted to the phase's taps. The direct loop's gathered inner loop ran
    at ~0.4 GMAC/s; the DP-SGD step's convolutions are GEMMs of a few hundred MFLOP.

    Each (group, block) of a phase is a task writing its own part of `out` (`_conv_tasks`);
    a phase's tasks run on the GEMM pool's threads when it is loaded (`_tasks_on_pool`), else
    here, one after another. A task computes the same products in either case, so the bits
    never depend on the threads."""
    n_out, o_feats, n_s = out.shape
    in_ch, n_t = rhs.shape[1], rhs.shape[2]
    groups = max(feature_groups, batch_groups)
    out[:] = 0
    if in_ch * n_t == 0 or n_s == 0 or n_out == 0 or o_feats == 0:
        return
    taps = _taps(in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil)
    phase, reads = _phases(in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil)
    for ph in range(reads.shape[0]):
        s_at, t_at = _where(phase == ph), _where(reads[ph])
        ns, nt = s_at.shape[0], t_at.shape[0]
        if ns == 0 or nt == 0:
            continue  # no outputs, or outputs that read only holes: zeros
        # this phase's taps, tap-major: the gather reads them in order (taps[s_at[q], t]
        # strode through the table, a cache miss per column element)
        reads_at = np.empty((nt, ns), np.int64)
        for i in range(nt):
            for q in range(ns):
                reads_at[i, q] = taps[s_at[q], t_at[i]]
        chunk = max(1, min(n_out, _COLS_BUDGET // (in_ch * nt * ns)))
        tasks = groups * (-(-n_out // chunk))
        ctx = np.empty(_CONV_WORDS, np.int64)
        ctx[0], ctx[1], ctx[2], ctx[3] = lhs.ctypes.data, lhs.shape[0], lhs.shape[1], lhs.shape[2]
        ctx[4], ctx[5], ctx[6], ctx[7] = rhs.ctypes.data, rhs.shape[0], rhs.shape[1], rhs.shape[2]
        ctx[8], ctx[9], ctx[10], ctx[11] = out.ctypes.data, n_out, o_feats, n_s
        ctx[12], ctx[13], ctx[14] = reads_at.ctypes.data, nt, ns
        ctx[15], ctx[16] = s_at.ctypes.data, t_at.ctypes.data
        ctx[17], ctx[18], ctx[19] = feature_groups, batch_groups, chunk
        if not _tasks_on_pool(ctx, tasks, out):
            _conv_tasks(lhs, rhs, out, reads_at, s_at, t_at, feature_groups, batch_groups, chunk, 0, tasks)


_CONV_WORDS = 20  # the int64 words of a phase's tasks (`_conv_gemm`'s ctx, `_conv_range`)


@_kernel
def _conv_tasks(lhs, rhs, out, reads_at, s_at, t_at, feature_groups, batch_groups, chunk, lo, hi):
    """Tasks [lo, hi) of one phase of `_conv_gemm`: task t is group t // blocks and the block
    of `chunk` batch entries t % blocks; it gathers the block's columns, multiplies them by
    the group's kernel rows and writes the block's outputs of the group's features."""
    n_out, o_feats, n_s = out.shape
    in_ch = rhs.shape[1]
    groups = max(feature_groups, batch_groups)
    per_group = o_feats // groups
    nt, ns = reads_at.shape
    kdim = in_ch * nt
    blocks = -(-n_out // chunk)
    zero = out.dtype.type(0)
    w = np.empty((per_group, kdim), out.dtype)
    # one columns and one product buffer for a range of tasks (a per-example gradient has a
    # group per example: 256 pairs of allocations a convolution); flat arrays and offsets:
    # a view per row (lhs[n, c], out[n, o]) and a slice assignment per output row cost more
    # than the rows' copies (a per-example gradient has 131k rows of 16)
    cols_buf = np.empty(kdim * chunk * ns, out.dtype)
    res_buf = np.empty(per_group * chunk * ns, out.dtype)
    lhs_f, out_f = lhs.reshape(lhs.size), out.reshape(out.size)
    in_sz = lhs.shape[2]
    w_of = -1
    for task in range(lo, hi):
        g, n0 = task // blocks, (task % blocks) * chunk
        if g != w_of:
            for o in range(per_group):
                for c in range(in_ch):
                    for i in range(nt):
                        w[o, c * nt + i] = rhs[g * per_group + o, c, t_at[i]]
            w_of = g
        ch0 = g * in_ch if feature_groups > 1 else 0
        nb = min(chunk, n_out - n0)
        width = nb * ns
        for c in range(in_ch):
            for i in range(nt):
                row_at = (c * nt + i) * width
                for j in range(nb):
                    src_n = g * n_out + n0 + j if batch_groups > 1 else n0 + j
                    src_at, at = (src_n * lhs.shape[1] + ch0 + c) * in_sz, row_at + j * ns
                    for q in range(ns):
                        p = reads_at[i, q]
                        cols_buf[at + q] = lhs_f[src_at + p] if p >= 0 else zero
        cols = cols_buf[:kdim * width].reshape((kdim, width))
        res = res_buf[:per_group * width].reshape((per_group, width))
        # res = w @ cols, as column-major res^T = cols^T @ w^T: one gemm through the BLAS
        # table, so a program with a convolution can still become a native library
        _xxgemm(0, 0, width, per_group, kdim, cols, 0, width, w, 0, kdim, res, 0, width)
        for o in range(per_group):
            for j in range(nb):
                dst_at, src_at = ((n0 + j) * o_feats + g * per_group + o) * n_s, o * width + j * ns
                if ns == n_s:  # one phase: every output position, in order
                    for q in range(ns):
                        out_f[dst_at + q] = res_buf[src_at + q]
                else:
                    for q in range(ns):
                        out_f[dst_at + s_at[q]] = res_buf[src_at + q]


@_kernel
def _conv_range(ctx, lo, hi, zero):
    """`_conv_tasks` [lo, hi) of the phase `ctx` (int64 words) describes (`_conv_gemm`), its
    operands of `zero`'s dtype."""
    lhs = numba.carray(_typed_pointer(ctx[0], zero), (ctx[1], ctx[2], ctx[3]))
    rhs = numba.carray(_typed_pointer(ctx[4], zero), (ctx[5], ctx[6], ctx[7]))
    out = numba.carray(_typed_pointer(ctx[8], zero), (ctx[9], ctx[10], ctx[11]))
    reads_at = numba.carray(_typed_pointer(ctx[12], ctx[13]), (ctx[13], ctx[14]))  # int64s, as ctx
    s_at = numba.carray(_typed_pointer(ctx[15], ctx[13]), ctx[14])
    t_at = numba.carray(_typed_pointer(ctx[16], ctx[13]), ctx[13])
    _conv_tasks(lhs, rhs, out, reads_at, s_at, t_at, ctx[17], ctx[18], ctx[19], lo, hi)


_TASK_SIGNATURE = types.void(types.voidptr, types.int64, types.int64)


def _conv_range_float32(ctx, lo, hi):  # made a cfunc by prepare_conv_tasks
    _conv_range(numba.carray(ctx, _CONV_WORDS, np.int64), lo, hi, np.float32(0))


def _conv_range_float64(ctx, lo, hi):
    _conv_range(numba.carray(ctx, _CONV_WORDS, np.int64), lo, hi, np.float64(0))


_CONV_TASK_FUNCTIONS = {types.float32: _conv_range_float32, types.float64: _conv_range_float64}
_task_cfuncs = {}  # dtype -> the compiled cfunc (kept alive: the table holds its address)
_task_lock = threading.Lock()


def prepare_conv_tasks(dtype):
    """Compile (or load from Numba's cache) the convolution task function of `dtype` (a Numba
    or NumPy dtype) and enter its address in the task table, once per process. Called when a
    convolution kernel of that dtype is first compiled or loaded in a process (conv_in_layout's
    `on_overload`, whether a library or a Numba build calls it), so a process, or a fresh
    machine (2.6 s for float32 after the convolution kernel's own 9.4 s), pays for no dtype it
    does not convolve. Until then that dtype's tasks run on the caller: the same bits."""
    nb_dtype = dtype if isinstance(dtype, types.Type) else numba.from_dtype(np.dtype(dtype))
    if nb_dtype not in _CONV_TASK_FUNCTIONS:
        return
    with _task_lock:
        if nb_dtype not in _task_cfuncs:
            compiled = numba.cfunc(_TASK_SIGNATURE, nopython=True, cache=True)(_CONV_TASK_FUNCTIONS[nb_dtype])
            _task_cfuncs[nb_dtype] = compiled
            _task_table[TASK_DTYPES.index(nb_dtype)] = compiled.address


def _conv_compute(lhs, rhs, out, in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil, feature_groups,
                  batch_groups):
    raise NotImplementedError  # compiled only: see the overload below


@overload(_conv_compute)
def _conv_compute_overload(lhs, rhs, out, in_sp, k_sp, out_sp, strides, pad_lo, lhs_dil, rhs_dil, feature_groups,
                           batch_groups):
    """BLAS for float and complex results, the direct loop for integers (BLAS has none)."""
    if isinstance(out.dtype, (types.Float, types.Complex)):
        return _conv_gemm.py_func
    return conv.py_func


# --- reduce_window_max/min, select_and_gather_add, select_and_scatter_add ----------------------


@_kernel
def _window_choices(x, out_shape, params, identity):
    """Flat index into `x` of the element each window (C order over `out_shape`) chooses, -1
    where it chooses padding or a dilation hole (which hold `identity`). Each window is
    scanned in row-major order, the running choice kept unless the next element is greater
    (`take_max`; lesser otherwise) or the running one is NaN: the first NaN, else the first
    extremum, as lax.reduce_window's composition and XLA choose. The trailing axes that no
    window touches form a contiguous inner block, scanned by a unit-stride inner loop.

    The windows' offsets are tabled once and the output positions counted by an odometer: an
    integer division per axis, per window and per output (DP-SGD's 2x2 max pool over
    256x14x14x16 took 10 ms) was most of the work. Past a window's first element the inner
    block's choices are selects in a loop whose loads do not depend on a test (padding has a
    loop of its own): a branch per element mispredicted half the time on random data (that
    pool: 14 -> 4 ms on an AMD EPYC, the same choices)."""
    nd = x.ndim
    window, strides, pad_lo = params[0:nd], params[nd:2 * nd], params[2 * nd:3 * nd]
    base_dil, win_dil, take_max = params[3 * nd:4 * nd], params[4 * nd:5 * nd], params[5 * nd] == 1
    in_stride = np.empty(nd, np.int64)
    step = 1
    for d in range(nd - 1, -1, -1):
        in_stride[d] = step
        step *= x.shape[d]
    split = nd  # axes split: and beyond form the inner block
    while split > 0 and window[split - 1] == 1 and strides[split - 1] == 1 and pad_lo[split - 1] == 0 \
            and base_dil[split - 1] == 1 and out_shape[split - 1] == x.shape[split - 1]:
        split -= 1
    inner = 1
    for d in range(split, nd):
        inner *= x.shape[d]
    n_outer, n_win = 1, 1
    for d in range(split):
        n_outer *= out_shape[d]
        n_win *= window[d]
    ns = max(split, 1)
    # woff[w, d]: window element w's position along axis d, relative to the window's start
    woff = np.zeros((n_win, ns), np.int64)
    wi = np.zeros(ns, np.int64)
    for w in range(n_win):
        flat = w
        for d in range(split - 1, -1, -1):
            wi[d] = flat % window[d]
            flat //= window[d]
            woff[w, d] = wi[d] * win_dil[d]
    undilated = True
    for d in range(split):
        if base_dil[d] != 1:
            undilated = False
    extent = np.empty(ns, np.int64)  # the last position of the dilated operand along each axis
    for d in range(split):
        extent[d] = (x.shape[d] - 1) * base_dil[d]
    xf = x.reshape(x.size)
    choice = np.empty(n_outer * inner, np.int64)
    acc = np.empty(inner, x.dtype)
    oi, start = np.zeros(ns, np.int64), np.zeros(ns, np.int64)
    for d in range(split):
        start[d] = -pad_lo[d]
    for j in range(n_outer):
        at = j * inner
        for w in range(n_win):
            off = 0
            for d in range(split):
                p = start[d] + woff[w, d]  # in the dilated operand
                if p < 0 or p > extent[d]:
                    off = -1
                    break
                if undilated:
                    off += p * in_stride[d]
                elif p % base_dil[d] != 0:
                    off = -1
                    break
                else:
                    off += (p // base_dil[d]) * in_stride[d]
            if w == 0:
                for c in range(inner):
                    acc[c] = xf[off + c] if off >= 0 else identity
                    choice[at + c] = off + c if off >= 0 else -1
            elif off >= 0:
                # selects, not branches: the choice of random data is unpredictable, and the
                # loop over the inner block vectorizes
                for c in range(inner):
                    a, v = acc[c], xf[off + c]
                    keep = ((a >= v) if take_max else (a <= v)) | (a != a)
                    acc[c] = a if keep else v
                    choice[at + c] = choice[at + c] if keep else off + c
            else:
                for c in range(inner):
                    a = acc[c]
                    keep = ((a >= identity) if take_max else (a <= identity)) | (a != a)
                    acc[c] = a if keep else identity
                    choice[at + c] = choice[at + c] if keep else -1
        for d in range(split - 1, -1, -1):  # the next output position (C order)
            oi[d] += 1
            start[d] += strides[d]
            if oi[d] < out_shape[d]:
                break
            oi[d] = 0
            start[d] = -pad_lo[d]
    return choice


@_entry
def reduce_window_chooser(x, out, params, identity):
    """A max or min window reduction of `x` into `out`. `params` (int64, n = x's rank): the
    window dimensions, strides, low padding, base dilation, window dilation (n each), then 1
    for max, 0 for min; an array, so one specialization serves every window (a literal
    tuple per call would be compiled per value)."""
    choice = _window_choices(x, out.shape, params, identity)
    xf, of = x.reshape(x.size), out.reshape(out.size)
    for j in range(of.size):
        of[j] = xf[choice[j]] if choice[j] >= 0 else identity


@_entry
def select_and_gather_add(t, x, out, params, identity):
    """out (pooled) = `t` at the element of `x` each window chooses (0 where padding wins)."""
    choice = _window_choices(x, out.shape, params, identity)
    tf, of = t.reshape(t.size), out.reshape(out.size)
    for j in range(of.size):
        of[j] = tf[choice[j]] if choice[j] >= 0 else 0


@_entry
def select_and_scatter_add(source, x, out, params, identity):
    """out (x's shape) = the sum of `source` over the windows choosing each element, added in
    window order (as the NumPy implementation's np.add.at)."""
    choice = _window_choices(x, source.shape, params, identity)
    sf, of = source.reshape(source.size), out.reshape(out.size)
    of[:] = 0
    for j in range(sf.size):
        if choice[j] >= 0:
            of[choice[j]] += sf[j]
