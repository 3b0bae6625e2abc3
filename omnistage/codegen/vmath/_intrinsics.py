"""LLVM-level building blocks for `vmath`: bit-exact float <-> integer reinterpretation,
exponent manipulation, round-to-nearest and fused multiply-add, each a `numba.extending.intrinsic`
that emits a handful of LLVM instructions the loop vectorizer understands.

Why intrinsics instead of Numba integer arithmetic: Numba widens int32 arithmetic to int64, so a
float32 kernel doing its exponent math on int32 in Python would mix 32- and 64-bit lanes and halve
the vector width. Here all integer work happens in the float's own width, inside LLVM IR.

Every intrinsic is generic over float32/float64 (the LLVM type of its argument decides).
Imports Numba and llvmlite: only the code generator imports this, lazily.
"""
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

# float LLVM type -> (integer type, mantissa bits, exponent bias)
_F32, _F64 = ir.FloatType(), ir.DoubleType()
_LAYOUT = {
    str(_F32): (ir.IntType(32), 23, 127),
    str(_F64): (ir.IntType(64), 52, 1023),
}
# bit pattern of sqrt(1/2): the mantissa of `frexp_sqrt2` lies in [sqrt(1/2), sqrt(2))
_SQRT_HALF_BITS = {str(_F32): 0x3F3504F3, str(_F64): 0x3FE6A09E667F3BCD}


def _layout(fty):
    return _LAYOUT[str(fty)]


def _llvm_intrinsic(builder, name, ty, args):
    fnty = ir.FunctionType(ty, [ty] * len(args))
    return builder.call(builder.module.declare_intrinsic(name, [ty], fnty), args)


def _is_float(t):
    return t in (types.float32, types.float64)


@intrinsic
def fmuladd(typingctx, a, b, c):
    """a * b + c, fused where the target has FMA (llvm.fmuladd): one rounding on this machine,
    mul+add elsewhere; the kernels' error budget holds either way."""
    if not (_is_float(a) and a == b == c):
        return None

    def codegen(context, builder, sig, args):
        return _llvm_intrinsic(builder, "llvm.fmuladd", args[0].type, args)

    return a(a, b, c), codegen


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c with one rounding (llvm.fma), for the few places that need the exact error of a
    product (e.g. x*x = hi + lo); a libm call on targets without FMA hardware."""
    if not (_is_float(a) and a == b == c):
        return None

    def codegen(context, builder, sig, args):
        return _llvm_intrinsic(builder, "llvm.fma", args[0].type, args)

    return a(a, b, c), codegen


@intrinsic
def floor(typingctx, x):
    """Largest integer-valued float <= x (llvm.floor); Numba's math.floor returns an int."""
    if not _is_float(x):
        return None

    def codegen(context, builder, sig, args):
        return _llvm_intrinsic(builder, "llvm.floor", args[0].type, args)

    return x(x), codegen


@intrinsic
def rint(typingctx, x):
    """Round to nearest integer, ties to even (llvm.rint; vroundps/vrndscaleps when vectorized).
    Used instead of the `(x + 1.5*2**23) - 1.5*2**23` trick, which 'reassoc' would fold away."""
    if not _is_float(x):
        return None

    def codegen(context, builder, sig, args):
        return _llvm_intrinsic(builder, "llvm.rint", args[0].type, args)

    return x(x), codegen


def _native_ldexp():
    """Whether the target lowers llvm.ldexp to one instruction (AVX-512's vscalefps/pd: x * 2**n
    rounded once, overflow to inf, gradual underflow), where the two-multiply form below costs
    six. Without AVX-512, x86 LLVM lowers llvm.ldexp to a libm call, which would stop the loop
    vectorizer. Measured, float32 exp over 32k elements on Zen 5: 11.8 -> 8.4 us, results
    bit-identical on every 97th float32 bit pattern."""
    global _NATIVE_LDEXP
    if _NATIVE_LDEXP is None:
        from llvmlite import binding as llvm
        from numba.core import config

        features = config.CPU_FEATURES if config.CPU_FEATURES is not None else llvm.get_host_cpu_features().flatten()
        _NATIVE_LDEXP = "+avx512f" in features.split(",")
    return _NATIVE_LDEXP


_NATIVE_LDEXP = None


@intrinsic
def ldexp(typingctx, p, n):
    """p * 2**n for an integer-valued float n with |n| <= 2 * (max exponent + 1).

    With AVX-512: llvm.ldexp (one vscalef). Otherwise 2**n is split into two powers 2**(n//2)
    and 2**(n - n//2), each a normal number built by placing the biased exponent in the bit
    field, so results in the subnormal range are rounded once (the first product is exact) and
    overflow gives inf like the true product would.
    """
    if not (_is_float(p) and p == n):
        return None

    def codegen(context, builder, sig, args):
        x, k = args
        ity, mant, bias = _layout(x.type)
        if _native_ldexp():
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(x.type, [x.type, i32])
            fn = builder.module.declare_intrinsic("llvm.ldexp", [x.type, i32], fnty)
            return builder.call(fn, [x, builder.fptosi(k, i32)])
        ki = builder.fptosi(k, ity)
        k1 = builder.ashr(ki, ir.Constant(ity, 1))
        k2 = builder.sub(ki, k1)

        def pow2(e):
            biased = builder.add(e, ir.Constant(ity, bias))
            return builder.bitcast(builder.shl(biased, ir.Constant(ity, mant)), x.type)

        return builder.fmul(builder.fmul(x, pow2(k1)), pow2(k2))

    return p(p, n), codegen


@intrinsic
def pow2(typingctx, n):
    """2**n for an integer-valued float n in the normal exponent range (no checks)."""
    if not _is_float(n):
        return None

    def codegen(context, builder, sig, args):
        ity, mant, bias = _layout(args[0].type)
        biased = builder.add(builder.fptosi(args[0], ity), ir.Constant(ity, bias))
        return builder.bitcast(builder.shl(biased, ir.Constant(ity, mant)), args[0].type)

    return n(n), codegen


@intrinsic
def frexp_sqrt2(typingctx, x):
    """(m, e) with x == m * 2**e, m in [sqrt(1/2), sqrt(2)), e an integer-valued float, for a
    positive normal finite x (callers scale subnormals up first and select specials after)."""
    if not _is_float(x):
        return None

    def codegen(context, builder, sig, args):
        (v,) = args
        ity, mant, _ = _layout(v.type)
        bits = builder.bitcast(v, ity)
        offset = builder.sub(bits, ir.Constant(ity, _SQRT_HALF_BITS[str(v.type)]))
        k = builder.ashr(offset, ir.Constant(ity, mant))
        m = builder.bitcast(builder.sub(bits, builder.shl(k, ir.Constant(ity, mant))), v.type)
        e = builder.sitofp(k, v.type)
        return context.make_tuple(builder, sig.return_type, [m, e])

    return types.UniTuple(x, 2)(x), codegen


@intrinsic
def exponent_field(typingctx, x):
    """The biased exponent bits of x as an intp (0 for zero/subnormals, max for inf/nan)."""
    if not _is_float(x):
        return None

    def codegen(context, builder, sig, args):
        (v,) = args
        ity, mant, bias = _layout(v.type)
        field = builder.and_(builder.lshr(builder.bitcast(v, ity), ir.Constant(ity, mant)),
                             ir.Constant(ity, 2 * bias + 1))
        intp = context.get_value_type(types.intp)
        return builder.zext(field, intp) if ity.width < intp.width else field

    return types.intp(x), codegen


@intrinsic
def bits_of(typingctx, x):
    """Reinterpret a float's bits as the signed integer of the same width."""
    if not _is_float(x):
        return None
    rt = types.int32 if x == types.float32 else types.int64

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(rt))

    return rt(x), codegen


@intrinsic
def float_of(typingctx, i):
    """Reinterpret a signed integer's bits as the float of the same width (int32 -> float32)."""
    if i not in (types.int32, types.int64):
        return None
    rt = types.float32 if i == types.int32 else types.float64

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(rt))

    return rt(i), codegen
