"""Scalar helpers that generated Numba code calls (`_rt.<name>(...)`), for operations whose
NumPy/XLA semantics differ from a bare Python operator in Numba: truncating integer
division, saturating float->int casts, NaN-propagating max/min, shifts past the bit width.

Imports Numba: only the code generator imports this module, lazily.
"""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .numba_flags import ROUNDED
from .vmath._intrinsics import fma as _llvm_fma

# Compiled once per signature and cached on disk, not inlined into Numba's IR (inline='always'
# re-ran Numba's untyped pipeline at every call site: a normal sampler's 33 fma calls and
# threefry's 20 rotations were a third of its compile). forceinline marks the LLVM function
# alwaysinline, so LLVM inlines it into the caller's loop, which then vectorizes as if the
# statements were written there. Without it LLVM's inliner decides by cost, and in a big
# program it left threefry2x32 a call in the loop of a 100x784 bernoulli draw: a scalar loop,
# 1.97 ms instead of 0.13 ms.
_jit = numba.njit(nogil=True, cache=True, forceinline=True, **ROUNDED)


def debug_print(*values, **params):
    """`omnistage.debug.print` in compiled code, called from a `numba.objmode` block (so this
    is plain Python): the primitive's own implementation formats and prints."""
    from ..core.primitive import registry

    registry["debug_print"].impl(*values, **params)


def pure_callback(*values, **params):
    """`omnistage.pure_callback` in compiled code, called from a `numba.objmode` block: the
    primitive's implementation calls the host function; its results as flat C-contiguous
    arrays (codegen/callback_lowering.py reshapes them)."""
    from ..core.primitive import registry

    return tuple(np.ascontiguousarray(r).reshape(-1) for r in registry["pure_callback"].impl(*values, **params))


@_jit
def prefetch_row(a, i):
    """A hint that row `i` of `a` is read soon (row_passes.prefetch_rows): the native
    tier prefetches it into the cache (c_calls); here, nothing (LLVM's loops are left alone)."""
    return None


@_jit
def idiv(a, b):
    """Signed integer division as XLA does it (lax.div): rounds toward zero; x / 0 is -1 and
    INT_MIN / -1 wraps to INT_MIN (the caller casts the result back to the operands' width).
    The b == -1 case never reaches the hardware divide, which traps on INT64_MIN / -1."""
    if b == 0:
        return (a - a) - 1
    if b == -1:
        return -a
    q = a // b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q += 1
    return q


@_jit
def udiv(a, b):
    """Unsigned integer division (lax.div): x / 0 has all bits set (the dtype's maximum)."""
    if b == 0:
        return ~(a - a)
    return a // b


@_jit
def irem(a, b):
    """Signed integer remainder with the sign of the dividend (lax.rem): x % 0 is x and
    INT_MIN % -1 is 0."""
    if b == 0:
        return a
    if b == -1:
        return a - a
    return a - idiv(a, b) * b


@_jit
def urem(a, b):
    """Unsigned integer remainder (lax.rem): x % 0 is x."""
    if b == 0:
        return a
    return a % b


@_jit
def fmax(a, b):
    """max propagating NaN (lax.max); of two zeros +0.0 unless both are -0.0, whatever their
    order, as XLA (a + b is exactly that; NumPy's np.maximum keeps an operand)."""
    if a > b or a != a:
        return a
    if a == b and a == 0:
        return a + b
    return b


@_jit
def fmin(a, b):
    """min propagating NaN; of two zeros -0.0 unless both are +0.0 (-(-a - b)), as XLA."""
    if a < b or a != a:
        return a
    if a == b and a == 0:
        return -(-a - b)
    return b


@_jit
def _complex_ge(a, b):
    # NumPy's CGE: lexicographic (real, then imaginary part); a NaN imaginary part only counts
    # when the real parts tie
    return (a.real > b.real and a.imag == a.imag and b.imag == b.imag) or (a.real == b.real and a.imag >= b.imag)


@_jit
def _complex_le(a, b):
    return (a.real < b.real and a.imag == a.imag and b.imag == b.imag) or (a.real == b.real and a.imag <= b.imag)


@_jit
def cmax(a, b):
    """np.maximum on complex numbers: lexicographic order, a NaN in either operand propagates."""
    if a.real != a.real or a.imag != a.imag or _complex_ge(a, b):
        return a
    return b


@_jit
def cmin(a, b):
    """np.minimum on complex numbers (see `cmax`)."""
    if a.real != a.real or a.imag != a.imag or _complex_le(a, b):
        return a
    return b


# --- Numba's own scalar implementations, compiled once per machine -------------------------
# Numba lowers complex *, /, abs, exp, log, sqrt and the integer max/min builtins by compiling
# a Python implementation as a subroutine of the function being compiled: in every process,
# never cached (complex * and / are ~0.1 s each, a cold complex64 `normal` paid 0.2 s for
# them). Wrapped in cached functions, they are compiled once per machine and LLVM inlines
# them into the caller as before. The CPU emitter calls these for the operations listed in
# `scalar_rules.CPU_HELPERS`.


@_jit
def complex_mul(a, b):
    return a * b


@_jit
def complex_div(a, b):
    return a / b


@_jit
def complex_abs(z):
    return np.abs(z)


@_jit
def complex_exp(z):
    return np.exp(z)


@_jit
def complex_log(z):
    return np.log(z)


@_jit
def complex_sqrt(z):
    return np.sqrt(z)


@_jit
def complex_sin(z):
    return np.sin(z)


@_jit
def complex_cos(z):
    return np.cos(z)


@_jit
def complex_tan(z):
    return np.tan(z)


@_jit
def complex_sinh(z):
    return np.sinh(z)


@_jit
def complex_cosh(z):
    return np.cosh(z)


@_jit
def complex_tanh(z):
    return np.tanh(z)


@_jit
def complex_arcsin(z):
    return np.arcsin(z)


@_jit
def complex_arccos(z):
    return np.arccos(z)


@_jit
def complex_arctan(z):
    return np.arctan(z)


@_jit
def complex_arcsinh(z):
    return np.arcsinh(z)


@_jit
def complex_arccosh(z):
    return np.arccosh(z)


@_jit
def complex_arctanh(z):
    return np.arctanh(z)


@_jit
def complex_sign(z):
    return np.sign(z)


@_jit
def imax(a, b):
    return max(a, b)


@_jit
def imin(a, b):
    return min(a, b)


@_jit
def round_half_away(x, half):
    """lax.round's default (half away from zero), computed in x's own precision like the NumPy
    implementation: `half` is 0.5 typed as x (a float64 literal would widen float32 math).
    From the truncation, not floor(x + 0.5): x + 0.5 rounds up to 1 for the float just below
    0.5 (0.49999997), and floor(-0.0 + 0.5) loses the sign of -0.0. inf - inf is NaN, so
    infinities and NaN come back as they are."""
    t = np.trunc(x)
    return t + np.copysign(half + half, x) if abs(x - t) >= half else t


@_jit
def sign(x, one):
    """np.sign of a float: NaN stays NaN, +-0 stays, +-inf gives +-1; `one` is 1 typed as x."""
    if x > 0:
        return one
    if x < 0:
        return -one
    return x


def _make_float_to_int(np_int):
    """Float -> int conversion as XLA does it: NaN gives 0, out-of-range values saturate."""
    info = np.iinfo(np_int)
    cast = getattr(np, np.dtype(np_int).name)
    lowest, highest = cast(info.min), cast(info.max)  # typed constants Numba can freeze
    lo, hi = float(info.min), float(info.max)

    @_jit
    def f2i(x):
        if x != x:
            return cast(0)
        if x <= lo:
            return lowest
        if x >= hi:
            return highest
        return cast(x)

    return f2i


f2i_int8 = _make_float_to_int(np.int8)
f2i_int16 = _make_float_to_int(np.int16)
f2i_int32 = _make_float_to_int(np.int32)
f2i_int64 = _make_float_to_int(np.int64)
f2i_uint8 = _make_float_to_int(np.uint8)
f2i_uint16 = _make_float_to_int(np.uint16)
f2i_uint32 = _make_float_to_int(np.uint32)
f2i_uint64 = _make_float_to_int(np.uint64)


# --- branch-free steps ------------------------------------------------------------------------
# Intrinsics, not njit functions: a helper Numba inlines into the caller's IR brings its branches
# (blocks) with it, and Numba's SSA and liveness passes cost about blocks x variables, which made
# big programs (random.gamma's nested loops of threefry rounds) compile for a minute; a called
# helper is a compilation of its own in a cold process. These are single LLVM instructions.


def _shift_step(kind):
    @intrinsic
    def shift(typingctx, a, b):
        """a shifted by b bits, with NumPy's result for b outside [0, bits): 0, or the sign
        fill for an arithmetic right shift (LLVM would give poison)."""
        if not (isinstance(a, types.Integer) and isinstance(b, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            x = args[0]
            n = context.cast(builder, args[1], sig.args[1], sig.args[0])
            ity = x.type
            width = ir.Constant(ity, ity.width)
            in_range = builder.icmp_unsigned("<", n, width)  # a negative b is out of range too
            zero = ir.Constant(ity, 0)
            if kind == "shl":
                return builder.select(in_range, builder.shl(x, builder.select(in_range, n, zero)), zero)
            if kind == "lshr" or not sig.args[0].signed:
                return builder.select(in_range, builder.lshr(x, builder.select(in_range, n, zero)), zero)
            return builder.ashr(x, builder.select(in_range, n, ir.Constant(ity, ity.width - 1)))

        return a(a, b), codegen

    return shift


shift_left = _shift_step("shl")
shift_right_arithmetic = _shift_step("ashr")
shift_right_logical = _shift_step("lshr")  # a's bits as unsigned: the caller passes the unsigned view


@intrinsic
def select(typingctx, c, a, b):
    """`a if c else b` as one LLVM select (both operands are already computed, pure values)."""
    if not isinstance(c, types.Boolean):
        return None
    out = typingctx.unify_types(a, b)
    if out is None:
        return None

    def codegen(context, builder, sig, args):
        cv, av, bv = args
        av = context.cast(builder, av, sig.args[1], sig.return_type)
        bv = context.cast(builder, bv, sig.args[2], sig.return_type)
        return builder.select(cv, av, bv)

    return out(c, a, b), codegen


@intrinsic
def reinterpret(typingctx, x, to):
    """The bits of number `x` read as the same-width number type `to` (a NumPy scalar type):
    one LLVM bitcast, elementwise (a same-width lax.bitcast_convert_type)."""
    target = getattr(to, "instance_type", None)
    ok = (types.Integer, types.Float)
    if not (isinstance(x, ok) and isinstance(target, ok)) or x.bitwidth != target.bitwidth:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(target))

    return target(x, to), codegen


@intrinsic
def popcount(typingctx, x):
    """Set bits of an integer's two's-complement representation in its own width
    (llvm.ctpop; lax.population_count)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        (v,) = args
        return builder.call(builder.module.declare_intrinsic("llvm.ctpop", [v.type]), [v])

    return x(x), codegen


def _make_fma(np_float):
    """fma(a, b, c) exactly as `omnistage.lax.fused_multiply_add.fma` computes it: one rounding (llvm.fma)
    where the product neither overflows nor falls near the subnormals, else `a * b + c`."""
    finfo = np.finfo(np_float)
    tiny = np_float(float(finfo.tiny) * 2.0 ** (finfo.nmant + 2))

    @_jit
    def fma(a, b, c):
        prod = a * b
        naive = prod + c
        big = np.abs(prod)
        if np.isfinite(naive) and np.isfinite(prod) and (big == 0 or big > tiny):
            return _llvm_fma(a, b, c)
        return naive

    return fma


fma_float32 = _make_fma(np.float32)
fma_float64 = _make_fma(np.float64)


@_jit
def logaddexp(x, y, log2):
    """np.logaddexp in x's precision (NumPy's formula); `log2` is ln(2) typed as x."""
    if x == y:
        return x + log2  # handles infinities of the same sign
    d = x - y
    if d > 0:
        return x + np.log1p(np.exp(-d))
    if d <= 0:
        return y + np.log1p(np.exp(d))
    return d  # NaN


@_jit
def clamp_index(i, n):
    """`i` clamped into [0, n - 1] (gather/dynamic_slice rule); n >= 1."""
    if i < 0:
        return 0
    if i > n - 1:
        return n - 1
    return i


# --- reduction steps the loop vectorizer turns into packed SIMD reductions -------------------
# Numba runs LLVM's loop vectorizer but not the SLP vectorizer (NUMBA_SLP_VECTORIZE=0), and a
# plain `acc = acc + v` loop is a strict left-to-right chain the loop vectorizer must keep.
# These steps are single LLVM instructions carrying their own fast-math flags into the caller's
# loop: only the reduction's own add/multiply may be reassociated (vectorized with 16-64
# partial sums, then combined); NaN/inf semantics are untouched (no nnan/ninf). Measured on a
# float32 4096x512 row sum: 281 us with 8 scalar accumulators, 111 us with `radd`.
# (Intrinsics rather than njit functions: nothing extra for Numba to compile in a cold process.)


def _reassociable(opname):
    @intrinsic
    def step(typingctx, acc, v):
        if not (acc in (types.float32, types.float64) and acc == v):
            return None

        def codegen(context, builder, sig, args):
            inst = getattr(builder, opname)(*args)
            inst.flags = ["reassoc", "contract"]
            return inst

        return acc(acc, v), codegen

    return step


radd = _reassociable("fadd")  # acc + v, reassociable (a float sum reduction's step)
rmul = _reassociable("fmul")  # acc * v, reassociable (a float product reduction's step)


# Float max/min reductions run on order-preserving integer keys: key(x) is x's bit pattern
# with the magnitude bits flipped for negative x, so signed-integer order equals float order
# (-0.0 just below +0.0), and a NaN becomes the largest key (max) or the smallest (min), whose
# bit pattern is itself a NaN. The loop vectorizer reduces llvm.smax/smin with no fast-math
# flag at about one instruction per vector (a select-based float max is only vectorized under
# nnan; llvm.maximum is, but expands to several instructions per vector). Measured, float32
# 4096x512 row softmax: 1254 us with 8 scalar accumulators, 1006 us with llvm.maximum, 920 us
# with keys. Equal zeros: max(-0.0, 0.0) is +0.0 and min is -0.0 whatever their order (NumPy
# keeps the first of equals); every other result, NaN included, is NumPy's.


def _flip(builder, bits):
    """bits ^ (sign ? 0x7fff... : 0): float order <-> signed-integer order (an involution)."""
    ity = bits.type
    sign = builder.ashr(bits, ir.Constant(ity, ity.width - 1))
    return builder.xor(bits, builder.and_(sign, ir.Constant(ity, (1 << (ity.width - 1)) - 1)))


def _key_step(intrinsic_name, nan_key):
    @intrinsic
    def step(typingctx, acc, x):
        """smax/smin(acc, key(x)): one step of a float max/min reduction on keys."""
        width = {types.float32: 32, types.float64: 64}.get(x)
        if width is None or acc != getattr(types, f"int{width}"):
            return None

        def codegen(context, builder, sig, args):
            acc_v, x_v = args
            ity = acc_v.type
            isnan = builder.fcmp_unordered("uno", x_v, x_v)
            key = builder.select(isnan, ir.Constant(ity, nan_key(ity.width)), _flip(builder, builder.bitcast(x_v, ity)))
            fn = builder.module.declare_intrinsic(intrinsic_name, [ity], ir.FunctionType(ity, [ity, ity]))
            return builder.call(fn, [acc_v, key])

        return acc(acc, x), codegen

    return step


kmax = _key_step("llvm.smax", lambda width: (1 << (width - 1)) - 1)
kmin = _key_step("llvm.smin", lambda width: -(1 << (width - 1)))


@intrinsic
def unkey(typingctx, k):
    """The float whose key is `k` (int32 -> float32, int64 -> float64)."""
    fty = {types.int32: types.float32, types.int64: types.float64}.get(k)
    if fty is None:
        return None

    def codegen(context, builder, sig, args):
        (kv,) = args
        return builder.bitcast(_flip(builder, kv), ir.FloatType() if kv.type.width == 32 else ir.DoubleType())

    return fty(k), codegen


# --- allocation ----------------------------------------------------------------------------


def _allocate(context, builder, arrtype, dims):
    """A fresh C-ordered `arrtype` array of extents `dims` (intp values): an aligned NRT
    MemInfo, as np.empty allocates."""
    from numba.core import cgutils
    from numba.np.arrayobj import get_itemsize, make_array, populate_array

    intp = context.get_value_type(types.intp)
    itemsize = context.get_constant(types.intp, get_itemsize(context, arrtype))
    strides = [itemsize]
    for d in reversed(dims[1:]):
        strides.append(builder.mul(strides[-1], d))
    strides.reverse()
    nbytes = itemsize
    for d in dims:
        nbytes = builder.mul(nbytes, d)
    align = context.get_constant(types.uint32, context.get_preferred_array_alignment(arrtype.dtype))
    meminfo = context.nrt.meminfo_alloc_aligned(builder, nbytes, align)
    data = builder.bitcast(context.nrt.meminfo_data(builder, meminfo), context.get_data_type(arrtype.dtype).as_pointer())
    ary = make_array(arrtype)(context, builder)
    populate_array(ary, data=data, shape=cgutils.pack_array(builder, dims, ty=intp),
                   strides=cgutils.pack_array(builder, strides[:arrtype.ndim], ty=intp), itemsize=itemsize, meminfo=meminfo)
    return ary


def _extents(context, builder, shape_type, shape):
    from numba.core import cgutils

    return [context.cast(builder, d, t, types.intp) for d, t in zip(cgutils.unpack_tuple(builder, shape, len(shape_type)), shape_type)]


def _is_shape(shape):
    return isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape)


@intrinsic
def empty(typingctx, shape, dtype):
    """np.empty(shape, dtype) (C order) for a tuple of ints and a NumPy scalar type.

    Generated code allocates through this instead of `np.empty`: Numba implements np.empty as
    an overload whose implementation, and the allocator method it calls, Numba compiles as
    separate functions in every cold process (~15% of a cold `jit(selu)` compile). This emits
    the same allocation (an aligned NRT MemInfo, C strides) directly. Sizes come from static
    avals, which the interpreter allocates too, so there is no overflow check."""
    if not _is_shape(shape) or not isinstance(dtype, types.NumberClass):
        return None
    arrtype = types.Array(dtype.instance_type, len(shape), "C")

    def codegen(context, builder, sig, args):
        return _allocate(context, builder, arrtype, _extents(context, builder, sig.args[0], args[0]))._getvalue()

    return arrtype(shape, dtype), codegen


@intrinsic
def full(typingctx, shape, value, dtype):
    """np.full(shape, value, dtype) (C order; np.zeros with value 0), without the Numba
    overloads of np.full/np.zeros, which (with the np.empty they call) are ~0.2 s of compile
    in every process that compiles a program using them."""
    if not _is_shape(shape) or not isinstance(dtype, types.NumberClass):
        return None
    if not isinstance(value, (types.Number, types.Boolean)):
        return None
    arrtype = types.Array(dtype.instance_type, len(shape), "C")

    def codegen(context, builder, sig, args):
        from numba.core import cgutils

        ary = _allocate(context, builder, arrtype, _extents(context, builder, sig.args[0], args[0]))
        fill = context.cast(builder, args[1], sig.args[1], arrtype.dtype)
        fill = context.get_value_as_data(builder, arrtype.dtype, fill)
        with cgutils.for_range(builder, ary.nitems) as loop:
            builder.store(fill, builder.gep(ary.data, [loop.index]))
        return ary._getvalue()

    return arrtype(shape, value, dtype), codegen


def _copied(context, builder, src_type, src, dst_type):
    """A fresh C-ordered `dst_type` array holding `src` (any layout) cast element by element
    (memory order for a C source, which LLVM turns into a memcpy for an equal dtype)."""
    from numba.core import cgutils
    from numba.np.arrayobj import make_array

    ary = make_array(src_type)(context, builder, value=src)
    shape = cgutils.unpack_tuple(builder, ary.shape, src_type.ndim)
    out = _allocate(context, builder, dst_type, shape)

    def put(dst_ptr, src_ptr):
        value = context.cast(builder, context.unpack_value(builder, src_type.dtype, src_ptr), src_type.dtype, dst_type.dtype)
        context.pack_value(builder, dst_type.dtype, value, dst_ptr)

    if src_type.layout == "C":
        with cgutils.for_range(builder, ary.nitems) as loop:
            put(builder.gep(out.data, [loop.index]), builder.gep(ary.data, [loop.index]))
    else:
        strides = cgutils.unpack_tuple(builder, ary.strides, src_type.ndim)
        out_strides = cgutils.unpack_tuple(builder, out.strides, src_type.ndim)
        with cgutils.loop_nest(builder, shape, context.get_value_type(types.intp)) as indices:
            src_ptr = cgutils.get_item_pointer2(context, builder, ary.data, shape, strides, src_type.layout, indices)
            dst_ptr = cgutils.get_item_pointer2(context, builder, out.data, shape, out_strides, "C", indices)
            put(dst_ptr, src_ptr)
    return out._getvalue()


@intrinsic
def contiguous(typingctx, x):
    """np.ascontiguousarray(x) for an array (a 0-d array for a scalar): the array itself
    when its type is C-contiguous, else a C-ordered copy, lowered in place (Numba's
    np.ascontiguousarray is an overload compiled in every process, ~70 ms)."""
    if isinstance(x, (types.Number, types.Boolean)):
        arrtype = types.Array(x, 0, "C")

        def codegen(context, builder, sig, args):
            ary = _allocate(context, builder, arrtype, [])
            context.pack_value(builder, x, args[0], ary.data)
            return ary._getvalue()

        return arrtype(x), codegen
    if not isinstance(x, types.Array):
        return None
    arrtype = x if x.layout == "C" else x.copy(layout="C", readonly=False)

    def codegen(context, builder, sig, args):
        from numba.core.imputils import impl_ret_borrowed

        if x.layout == "C":
            return impl_ret_borrowed(context, builder, sig.return_type, args[0])
        return _copied(context, builder, x, args[0], arrtype)

    return arrtype(x), codegen


@intrinsic
def reshape(typingctx, x, shape):
    """x.reshape(shape) for a C-contiguous array (a view sharing x's memory; any other layout
    is copied first), lowered in place: Numba's reshape compiles its shape normalization as a
    subroutine in every process (~65 ms). Sizes are static and equal (the emitter's avals)."""
    if not isinstance(x, types.Array):
        return None
    if isinstance(shape, types.Integer):
        ndim = 1
    elif _is_shape(shape):
        ndim = len(shape)
    else:
        return None
    arrtype = types.Array(x.dtype, ndim, "C", readonly=not x.mutable)

    def codegen(context, builder, sig, args):
        from numba.core import cgutils
        from numba.core.imputils import impl_ret_borrowed
        from numba.np.arrayobj import make_array, populate_array

        if x.layout == "C":
            src = make_array(x)(context, builder, value=args[0])
        else:
            c_type = x.copy(layout="C", readonly=False)
            src = make_array(c_type)(context, builder, value=_copied(context, builder, x, args[0], c_type))
        if isinstance(sig.args[1], types.Integer):
            dims = [context.cast(builder, args[1], sig.args[1], types.intp)]
        else:
            dims = _extents(context, builder, sig.args[1], args[1])
        strides = [src.itemsize]
        for d in reversed(dims[1:]):
            strides.append(builder.mul(strides[-1], d))
        strides.reverse()
        out = make_array(arrtype)(context, builder)
        intp = context.get_value_type(types.intp)
        populate_array(out, data=src.data, shape=cgutils.pack_array(builder, dims, ty=intp),
                       strides=cgutils.pack_array(builder, strides[:ndim], ty=intp), itemsize=src.itemsize,
                       meminfo=src.meminfo, parent=src.parent)
        if x.layout == "C":
            return impl_ret_borrowed(context, builder, arrtype, out._getvalue())
        return out._getvalue()  # the copy's reference passes to the view

    return arrtype(x, shape), codegen


@intrinsic
def copy(typingctx, x):
    """x.copy() (C order) without Numba's allocator overload (compiled in every process)."""
    if not isinstance(x, types.Array):
        return None
    arrtype = x.copy(layout="C", readonly=False)
    return arrtype(x), lambda context, builder, sig, args: _copied(context, builder, x, args[0], arrtype)


@intrinsic
def astype(typingctx, x, dtype):
    """x.astype(dtype) (a C-ordered copy) without Numba's allocator overload."""
    if not isinstance(x, types.Array) or not isinstance(dtype, types.NumberClass):
        return None
    arrtype = types.Array(dtype.instance_type, x.ndim, "C")
    return arrtype(x, dtype), lambda context, builder, sig, args: _copied(context, builder, x, args[0], arrtype)


# --- threefry2x32: one compiled function, not a hundred inlined statements ------------------


@_jit
def _rotate_left32(x, d):
    return np.uint32(np.uint32(x << np.uint32(d)) | np.uint32(x >> np.uint32(32 - d)))


@_jit
def _four_rounds(x0, x1, r0, r1, r2, r3):
    x0 = np.uint32(x0 + x1)
    x1 = np.uint32(x0 ^ _rotate_left32(x1, r0))
    x0 = np.uint32(x0 + x1)
    x1 = np.uint32(x0 ^ _rotate_left32(x1, r1))
    x0 = np.uint32(x0 + x1)
    x1 = np.uint32(x0 ^ _rotate_left32(x1, r2))
    x0 = np.uint32(x0 + x1)
    x1 = np.uint32(x0 ^ _rotate_left32(x1, r3))
    return x0, x1


@numba.njit(nogil=True, cache=True, forceinline=True, **ROUNDED)
def threefry2x32(k1, k2, x1, x2):
    """The threefry2x32 primitive on uint32 scalars: (y1, y2), as `random._threefry`'s
    NumPy implementation. Compiled once and cached, not inlined into Numba's IR: each call
    site costs one call to type, and LLVM still inlines it into the loop."""
    k1, k2 = np.uint32(k1), np.uint32(k2)
    k3 = np.uint32(k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    x0, x1 = np.uint32(x1 + k1), np.uint32(x2 + k2)
    x0, x1 = _four_rounds(x0, x1, 13, 15, 26, 6)
    x0, x1 = np.uint32(x0 + k2), np.uint32(x1 + k3 + np.uint32(1))
    x0, x1 = _four_rounds(x0, x1, 17, 29, 16, 24)
    x0, x1 = np.uint32(x0 + k3), np.uint32(x1 + k1 + np.uint32(2))
    x0, x1 = _four_rounds(x0, x1, 13, 15, 26, 6)
    x0, x1 = np.uint32(x0 + k1), np.uint32(x1 + k2 + np.uint32(3))
    x0, x1 = _four_rounds(x0, x1, 17, 29, 16, 24)
    x0, x1 = np.uint32(x0 + k2), np.uint32(x1 + k3 + np.uint32(4))
    x0, x1 = _four_rounds(x0, x1, 13, 15, 26, 6)
    x0, x1 = np.uint32(x0 + k3), np.uint32(x1 + k1 + np.uint32(5))
    return x0, x1


# --- float16 / bfloat16 values computed in float32 (codegen/narrow_floats.py) ---------------------
# One LLVM intrinsic each (integer work in the float's own width, so the loop vectorizer keeps
# float32 lanes): round to nearest even onto the narrow type's value set, result in float32.


def _fabs(builder, v):
    return builder.call(builder.module.declare_intrinsic("llvm.fabs", [v.type]), [v])


def _round_float16(builder, x):
    """float16(x) as a float32, rounded once from x's own precision as NumPy's
    float->half conversions do: normal results keep 11 significant bits, subnormal ones are
    multiples of 2**-24, |x| past the largest half (65504) rounds to inf, NaN stays NaN."""
    fty = x.type
    ity = ir.IntType(32 if fty == ir.FloatType() else 64)
    shift = 13 if ity.width == 32 else 42  # mantissa bits dropped
    ax = _fabs(builder, x)
    bits = builder.bitcast(ax, ity)
    lsb = builder.and_(builder.lshr(bits, ir.Constant(ity, shift)), ir.Constant(ity, 1))
    up = builder.add(builder.add(bits, ir.Constant(ity, (1 << (shift - 1)) - 1)), lsb)
    normal = builder.bitcast(builder.and_(up, ir.Constant(ity, -(1 << shift))), fty)
    scaled = builder.fmul(ax, ir.Constant(fty, 2.0 ** 24))  # exact
    rint = builder.call(builder.module.declare_intrinsic("llvm.rint", [fty]), [scaled])
    sub = builder.fmul(rint, ir.Constant(fty, 2.0 ** -24))
    r = builder.select(builder.fcmp_ordered("<", ax, ir.Constant(fty, 2.0 ** -14)), sub, normal)
    r = builder.select(builder.fcmp_ordered(">", r, ir.Constant(fty, 65504.0)), ir.Constant(fty, float("inf")), r)
    copysign = builder.module.declare_intrinsic("llvm.copysign", [fty], ir.FunctionType(fty, [fty, fty]))
    r = builder.call(copysign, [r, x])
    r = builder.select(builder.fcmp_unordered("uno", x, x), x, r)
    return r if fty == ir.FloatType() else builder.fptrunc(r, ir.FloatType())


def _round_bfloat16(builder, x):
    """bfloat16(x) as a float32 (float64 goes through float32 first, as ml_dtypes does)."""
    if x.type != ir.FloatType():
        x = builder.fptrunc(x, ir.FloatType())
    i32 = ir.IntType(32)
    bits = builder.bitcast(x, i32)
    lsb = builder.and_(builder.lshr(bits, ir.Constant(i32, 16)), ir.Constant(i32, 1))
    up = builder.add(builder.add(bits, ir.Constant(i32, 0x7FFF)), lsb)
    r = builder.bitcast(builder.and_(up, ir.Constant(i32, -(1 << 16))), ir.FloatType())
    return builder.select(builder.fcmp_unordered("uno", x, x), x, r)


def _narrow_rounding(round_ir):
    @intrinsic
    def step(typingctx, x):
        if x not in (types.float32, types.float64):
            return None

        def codegen(context, builder, sig, args):
            return round_ir(builder, args[0])

        return types.float32(x), codegen

    return step


round_to_float16 = _narrow_rounding(_round_float16)
round_to_bfloat16 = _narrow_rounding(_round_bfloat16)


# --- float16 arrays at the boundary of a widened program (codegen/executable.py) -------------------
# NumPy's float16<->float32 casts are scalar loops (~1.5 ns an element each way); these vectorize.


@intrinsic
def _f32_from_bits(typingctx, u):
    if not isinstance(u, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        v = args[0]
        v = builder.trunc(v, ir.IntType(32)) if v.type.width > 32 else v
        return builder.bitcast(v, ir.FloatType())

    return types.float32(u), codegen


@intrinsic
def _f32_bits(typingctx, x):
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.zext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))

    return types.uint64(x), codegen


@_jit
def float16_from_bits(h):
    """The float32 value of the float16 bit pattern in the low 16 bits of integer `h`, as
    NumPy's cast gives it (NaN payloads shifted into the float32 significand)."""
    u = np.uint64(h) & np.uint64(0xFFFF)
    em = u & np.uint64(0x7FFF)
    normal = _f32_from_bits((em << np.uint64(13)) + np.uint64(0x38000000))
    special = _f32_from_bits((em << np.uint64(13)) | np.uint64(0x7F800000))  # inf, NaN
    sub = np.float32(em) * np.float32(2.0 ** -24)  # exact: em < 1024 there
    r = sub if em < np.uint64(0x400) else (special if em >= np.uint64(0x7C00) else normal)
    return _f32_from_bits(_f32_bits(r) | ((u & np.uint64(0x8000)) << np.uint64(16)))


@_jit
def float16_to_bits(x):
    """The float16 bit pattern (uint16) of a float32 `x` on float16's value set, as NumPy's cast
    gives it (exact: nothing to round)."""
    b = _f32_bits(x)
    a = b & np.uint64(0x7FFFFFFF)
    normal = (a - np.uint64(0x38000000)) >> np.uint64(13)
    special = np.uint64(0x7C00) + ((a >> np.uint64(13)) & np.uint64(0x3FF))
    special += np.uint64((a > np.uint64(0x7F800000)) & (special == np.uint64(0x7C00)))  # a NaN stays a NaN
    sub = np.uint64(abs(x) * np.float32(2.0 ** 24))
    h = sub if a < np.uint64(0x38800000) else (special if a >= np.uint64(0x7F800000) else normal)
    return np.uint16(h | ((b >> np.uint64(16)) & np.uint64(0x8000)))


@_jit
def bfloat16_from_bits(h):
    """The float32 value of the bfloat16 bit pattern in the low 16 bits of integer `h`."""
    return _f32_from_bits((np.uint64(h) & np.uint64(0xFFFF)) << np.uint64(16))


@_jit
def bfloat16_to_bits(x):
    """The bfloat16 bit pattern (uint16) of a float32 `x` on bfloat16's value set."""
    return np.uint16(_f32_bits(x) >> np.uint64(16))


@numba.njit(nogil=True, cache=True, **ROUNDED)
def float16_bits_to_float32(h):
    """float32 values of the float16 bit patterns `h` (uint16, 1-D), as NumPy's cast gives them."""
    out = np.empty(h.size, np.float32)
    for i in range(h.size):
        out[i] = float16_from_bits(h[i])
    return out


@numba.njit(nogil=True, cache=True, **ROUNDED)
def float32_to_float16_bits(x):
    """float16 bit patterns (uint16) of float32 values `x` (1-D) that lie on float16's value set."""
    out = np.empty(x.size, np.uint16)
    for i in range(x.size):
        out[i] = float16_to_bits(x[i])
    return out
