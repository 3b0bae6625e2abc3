"""How the native tier (c_translate.py) translates calls in generated modules: one rule per
function of `support` (`_rt`), `kernels` (`_kn`) and NumPy's scalar functions, each computing
what its namesake computes (c_runtime.py holds the C they call). A rule is
`rule(translator, call node, depth) -> (C expression, type)`; a kernel statement's rule emits
statements. A call without a rule is Unsupported, and the program keeps the Numba path."""
import ast
import math

import numpy as np

from . import c_complex, c_conv, c_sort, c_windows
from .c_types import (COMPLEX_PART, COMPLEX_SUFFIX, C_TYPES, FLOAT_NAME, Arr, Scalar, Unsupported, arith_type, c_literal,
                      c_strides, copy_lines, is_int, wide)


LIBM = {"sqrt": "sqrt", "exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "exp2": "exp2",
         "log2": "log2", "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin",
         "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
         "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "floor": "floor", "ceil": "ceil",
         "trunc": "trunc", "rint": "rint", "cbrt": "cbrt", "fabs": "fabs"}
LIBM2 = {"arctan2": "atan2", "fmod": "fmod", "nextafter": "nextafter", "copysign": "copysign",
          "power": "pow", "hypot": "hypot"}


def is_call_to(node, *names):
    return isinstance(node, ast.Call) and dotted(node.func) in names


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base and f"{base}.{node.attr}"
    return None


def index_elts(slice_node):
    return list(slice_node.elts) if isinstance(slice_node, ast.Tuple) else [slice_node]


def static_int(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = static_int(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        a, b = static_int(node.left), static_int(node.right)
        if a is None or b is None:
            return None
        return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
    return None


def static_shape(node):
    if isinstance(node, ast.Tuple):
        dims = [static_int(e) for e in node.elts]
        if any(d is None or d < 0 for d in dims):
            raise Unsupported("dynamic shape")
        return tuple(dims)
    d = static_int(node)
    if d is None or d < 0:
        raise Unsupported("dynamic shape")
    return (d,)


def dtype_arg(node):
    name = dotted(node)
    if not name or not name.startswith("np.") or name[3:] not in C_TYPES:
        raise Unsupported(f"dtype {ast.unparse(node)[:30]}")
    return name[3:]


# --- calls ------------------------------------------------------------------------------------


def _same_type_call(dtypes, c_name, what, result=lambda dtype: dtype):
    """A call whose operands share one dtype of `dtypes`: C function `c_name(dtype)` on them,
    of type `result(dtype)`."""
    def rule(tr, node, depth):
        args = tr.scalars(node, depth)
        found = {t.dtype for _, t in args}
        if len(found) != 1 or not found <= set(dtypes):
            raise Unsupported(f"{what} on {found}")
        (dtype,) = found
        return f"{c_name(dtype)}({', '.join(c for c, _ in args)})", Scalar(result(dtype))

    return rule


def _float_call(c_name, what):
    return _same_type_call(FLOAT_NAME, c_name, what)


def _libm(fn):
    """NumPy's scalar function as Numba calls it: libm's, `f`-suffixed for float32."""
    return _float_call(lambda dtype: fn + ("f" if dtype == "float32" else ""), fn)


def _np_abs(tr, node, depth):
    ((a, t),) = tr.scalars(node, depth, 1)
    if t.dtype in COMPLEX_PART:
        raise Unsupported("np.abs of a complex number")  # the emitter calls support.complex_abs
    if t.dtype in FLOAT_NAME:
        return f"{'fabsf' if t.dtype == 'float32' else 'fabs'}({a})", t
    if t.dtype.startswith("int"):
        # np.abs keeps an integer's width (abs(INT_MIN) wraps to INT_MIN)
        return f"(({C_TYPES[t.dtype]})(({a}) < 0 ? 0 - (uint64_t)({a}) : (uint64_t)({a})))", t
    return a, t


def _np_isfinite(tr, node, depth):
    ((a, t),) = tr.scalars(node, depth, 1)
    if t.dtype in COMPLEX_PART:
        raise Unsupported("np.isfinite of a complex number")
    if t.dtype not in FLOAT_NAME:
        return "true", Scalar("bool")
    return f"(isfinite({a}) != 0)", Scalar("bool")


def _int_helper(signed_fn, unsigned_fn):
    def rule(tr, node, depth):
        args = tr.scalars(node, depth, 2)
        dtypes = {wide(t.dtype) for _, t in args}
        if dtypes == {"int64"}:
            return f"{signed_fn}({args[0][0]}, {args[1][0]})", Scalar("int64")
        if dtypes == {"uint64"} and unsigned_fn:
            return f"{unsigned_fn}({args[0][0]}, {args[1][0]})", Scalar("uint64")
        raise Unsupported(f"{signed_fn} operands")

    return rule


def _minmax(op):
    def rule(tr, node, depth):
        args = tr.scalars(node, depth, 2)
        (a, ta), (b, tb) = args
        if not (is_int(ta.dtype) or ta.dtype == "bool") or not (is_int(tb.dtype) or tb.dtype == "bool"):
            raise Unsupported("builtin max/min of non-integers")
        out = arith_type(ta.dtype, tb.dtype, "+")
        x, y = tr.convert(a, ta.dtype, out), tr.convert(b, tb.dtype, out)
        # Python's max keeps the first of equals; for integers that is the same value
        return f"(({x}) {op} ({y}) ? ({x}) : ({y}))", Scalar(out)

    return rule


def _select(tr, node, depth):
    (c, tc), (a, ta), (b, tb) = tr.scalars(node, depth, 3)
    if tc != Scalar("bool"):
        raise Unsupported("select condition")
    out = ta.dtype if ta == tb else arith_type(ta.dtype, tb.dtype, "+")
    # both operands evaluated first, as support.select's LLVM select of two values: a C `?:`
    # over two array reads is two conditional loads, which gcc 12 does not vectorize
    t, x, y = C_TYPES[out], tr.fresh("_sa"), tr.fresh("_sb")
    return (f"({{ {t} {x} = {tr.convert(a, ta.dtype, out)}; {t} {y} = {tr.convert(b, tb.dtype, out)}; "
            f"({c}) ? {x} : {y}; }})"), Scalar(out)


def _shift(kind):
    def rule(tr, node, depth):
        (a, ta), (b, tb) = tr.scalars(node, depth, 2)
        if not is_int(ta.dtype) or not is_int(tb.dtype):
            raise Unsupported("shift operands")
        ct, width = C_TYPES[ta.dtype], np.dtype(ta.dtype).itemsize * 8
        ut = f"uint{width}_t"
        n = f"((uint64_t)({ut})({tr.convert(b, tb.dtype, ta.dtype)}))"  # the count in a's type, read unsigned
        if kind == "shl":
            code = f"({n} < {width} ? ({ct})(({ut})({a}) << {n}) : ({ct})0)"
        elif kind == "lshr" or ta.dtype.startswith("u"):
            code = f"({n} < {width} ? ({ct})(({ut})({a}) >> {n}) : ({ct})0)"
        else:
            code = f"({ct})(({a}) >> ({n} < {width} ? {n} : {width - 1}))"
        return f"({code})", ta

    return rule


def _reinterpret(tr, node, depth):
    if len(node.args) != 2:
        raise Unsupported("reinterpret arity")
    a, ta = tr.expr(node.args[0], depth)
    target = dtype_arg(node.args[1])
    if not isinstance(ta, Scalar) or np.dtype(ta.dtype).itemsize != np.dtype(target).itemsize or "bool" in (ta.dtype, target):
        raise Unsupported("reinterpret types")
    src, dst = tr.fresh("_bits"), tr.fresh("_bits")
    # a statement expression keeps it one expression (GNU C, as gcc and clang accept)
    return f"({{ {C_TYPES[ta.dtype]} {src}_v = {a}; {C_TYPES[target]} {dst}_v; memcpy(&{dst}_v, &{src}_v, sizeof {dst}_v); {dst}_v; }})", Scalar(target)


def _typed_float_helper(prefix):
    """A c_runtime helper per float type (`os_fmax_float`, `os_fmax_double`)."""
    return _float_call(lambda dtype: f"{prefix}_{FLOAT_NAME[dtype]}", prefix)


def _f2i(target):
    def rule(tr, node, depth):
        ((a, t),) = tr.scalars(node, depth, 1)
        if t.dtype not in FLOAT_NAME:
            raise Unsupported("f2i operand")
        return f"os_f2i_{target}_{FLOAT_NAME[t.dtype]}({a})", Scalar(target)

    return rule


def _fma(dtype):
    def rule(tr, node, depth):
        args = tr.scalars(node, depth, 3)
        if any(t.dtype != dtype for _, t in args):
            raise Unsupported("fma operands")
        return f"os_fma_{dtype}({', '.join(c for c, _ in args)})", Scalar(dtype)

    return rule


def _radd(op):
    def rule(tr, node, depth):
        (a, ta), (b, tb) = tr.scalars(node, depth, 2)
        if ta != tb or ta.dtype not in FLOAT_NAME:
            raise Unsupported("reduction step operands")
        return f"({a} {op} {b})", ta

    return rule


def _key_step(kind):
    def rule(tr, node, depth):
        (a, ta), (b, tb) = tr.scalars(node, depth, 2)
        width = {"float32": "32", "float64": "64"}.get(tb.dtype)
        if width is None or ta.dtype != f"int{width}":
            raise Unsupported("key step operands")
        return f"os_k{kind}{width}({a}, {b})", ta

    return rule


def _unkey(tr, node, depth):
    ((a, t),) = tr.scalars(node, depth, 1)
    out = {"int32": "float32", "int64": "float64"}.get(t.dtype)
    if out is None:
        raise Unsupported("unkey operand")
    return f"os_unkey{t.dtype[3:]}({a})", Scalar(out)


def _clamp_index(tr, node, depth):
    (a, ta), (b, tb) = tr.scalars(node, depth, 2)
    if wide(ta.dtype) != "int64" or wide(tb.dtype) != "int64":
        raise Unsupported("clamp_index operands")
    return f"os_clamp_index({a}, {b})", Scalar("int64")


def _popcount(tr, node, depth):
    ((a, t),) = tr.scalars(node, depth, 1)
    if not is_int(t.dtype):
        raise Unsupported("popcount operand")
    width = np.dtype(t.dtype).itemsize * 8
    return f"(({C_TYPES[t.dtype]})__builtin_popcountll((uint64_t)(uint{width}_t)({a})))", t


def empty_layout(node):
    """The layout of the array `np.empty(shape, dtype)` (or `_rt.empty`) allocates."""
    if len(node.args) != 2:
        raise Unsupported("empty arity")
    return Arr(dtype_arg(node.args[1]), static_shape(node.args[0]))


def _empty(tr, node, depth):
    t = empty_layout(node)
    return tr.allocate(t, depth), t


def _full(tr, node, depth):
    if len(node.args) != 3:
        raise Unsupported("full arity")
    t = Arr(dtype_arg(node.args[2]), static_shape(node.args[0]))
    value, vt = tr.expr(node.args[1], depth)
    if not isinstance(vt, Scalar):
        raise Unsupported("full value")
    out = tr.allocate(t, depth)
    tr.emit(f"for (int64_t _f = 0; _f < {t.size}; _f++) {out}[_f] = {tr.convert(value, vt.dtype, t.dtype)};", depth)
    return out, t


def _copied(tr, node, depth, dtype=None, always=True):
    src, t = tr.expr(node.args[0], depth)
    if isinstance(t, Scalar):
        if dtype is not None or always:
            raise Unsupported("copy of a scalar")
        out_t = Arr(t.dtype, ())
        out = tr.allocate(out_t, depth)
        tr.emit(f"{out}[0] = {src};", depth)
        return out, out_t
    if not isinstance(t, Arr):
        raise Unsupported("copy operand")
    if not always and dtype is None:
        return _dense(tr, src, t, depth)
    return _copy_of(tr, src, t, dtype or t.dtype, depth)


def _copy_of(tr, src, t, dtype, depth):
    """A new C-ordered array of `dtype` from the arena holding array `src` (layout `t`)."""
    out_t = Arr(dtype, t.shape)
    out = tr.allocate(out_t, depth)
    for line in copy_lines(out, out_t, src, t, cast=None if dtype == t.dtype else dtype):
        tr.emit(line, depth)
    return out, out_t


def _dense(tr, src, t, depth):
    """Array `src` (layout `t`) itself when it is C-contiguous, else a C-ordered copy of it."""
    return (src, Arr(t.dtype, t.shape)) if t.contiguous else _copy_of(tr, src, t, t.dtype, depth)


def _copy(tr, node, depth):
    if len(node.args) != 1:
        raise Unsupported("copy arity")
    return _copied(tr, node, depth)


def _astype(tr, node, depth):
    if len(node.args) != 2:
        raise Unsupported("astype arity")
    return _copied(tr, node, depth, dtype=dtype_arg(node.args[1]))


def _contiguous(tr, node, depth):
    if len(node.args) != 1:
        raise Unsupported("contiguous arity")
    return _copied(tr, node, depth, always=False)


def _reshape(tr, node, depth):
    if len(node.args) != 2:
        raise Unsupported("reshape arity")
    src, t = tr.expr(node.args[0], depth)
    if not isinstance(t, Arr):
        raise Unsupported("reshape of a scalar")
    shape = static_shape(node.args[1])
    if int(np.prod(shape, dtype=np.int64)) != t.size:
        raise Unsupported("reshape size")
    src, t = _dense(tr, src, t, depth)
    return src, Arr(t.dtype, shape)


def _matmul(tr, node, depth):
    """kernels.matmul(a, b, out, params): one BLAS gemm per batch element (c_runtime.os_matmul)."""
    if len(node.args) != 4 or not isinstance(node.args[3], ast.Name) or node.args[3].id not in tr.m.consts:
        raise Unsupported("matmul arguments")
    params = [int(v) for v in tr.m.consts[node.args[3].id][2]]
    if len(params) != 8:
        raise Unsupported("matmul parameters")
    (a, ta), (b, tb), (out, to) = (tr.expr(x, depth) for x in node.args[:3])
    if not all(isinstance(t, Arr) for t in (ta, tb, to)) or len(to.shape) != 3:
        raise Unsupported("matmul operands")
    slot = {"float32": 0, "float64": 1, "complex64": 2, "complex128": 3}.get(to.dtype)  # blas_table.KINDS
    if slot is None or ta.dtype != to.dtype or tb.dtype != to.dtype or not to.contiguous:
        raise Unsupported(f"matmul of {to.dtype}")
    if params[0] * params[1] * params[2] != ta.size or params[3] * params[4] * params[5] != tb.size:
        raise Unsupported("matmul parameters do not match the operands")
    (a, ta), (b, tb) = _dense(tr, a, ta, depth), _dense(tr, b, tb, depth)
    tr.m.uses_gemm = True
    if slot == 0:
        tr.m.sections.add("sgemm")
    ct = C_TYPES[to.dtype]
    one, zero = tr.fresh("_one"), tr.fresh("_zero")
    unit, nil = (c_literal(1, to.dtype), c_literal(0, to.dtype)) if to.dtype in COMPLEX_PART else ("1", "0")
    tr.emit(f"{{ const {ct} {one} = {unit}, {zero} = {nil};", depth)
    tr.emit(f"  os_matmul({slot}, &{one}, &{zero}, sizeof({ct}), (const char *)({a}), (const char *)({b}), (char *)({out}), "
            f"{params[0]}, {params[1]}, {params[2]}, {params[3]}, {params[4]}, {params[5]}, {params[6]}, {params[7]}, "
            f"{to.shape[0]}, {to.shape[1]}, {to.shape[2]}); }}", depth)


# scalar arguments a Numba kernel takes as they are (a C value of the same LLVM type); bool
# (an i1 in registers) and complex (a structure) are not passed
_NUMBA_SCALARS = ("int32", "int64", "uint32", "uint64", "float32", "float64")


def numba_kernel_call(tr, node, depth):
    """`_kn.f(...)` of a runtime kernel no rule here knows (convolutions, windowed reductions
    and their gradients, qr): a call of its Numba build through the library's table
    (numba_kernel_table), every array C-contiguous and flattened as Numba passes it; a status
    other than 0 fails the call (the Numba path then raises the kernel's error)."""
    name = dotted(node.func)[len("_kn."):]
    if node.keywords or not name.isidentifier():
        raise Unsupported(f"_kn.{name} call")
    params, args, signature = [], [], []
    for a in node.args:
        code, t = tr.expr(a, depth)
        if isinstance(t, Arr):
            code, t = _dense(tr, code, t, depth)
            item = np.dtype(t.dtype).itemsize
            strides = [s * item for s in c_strides(t.shape)]  # in bytes, as Numba's arrays hold them
            params += ["void *", "void *", "int64_t", "int64_t", "void *"] + ["int64_t"] * (2 * len(t.shape))
            args += ["NULL", "NULL", f"{t.size}LL", f"{item}LL", f"(void *)({code})",
                     *(f"{d}LL" for d in t.shape), *(f"{s}LL" for s in strides)]
            signature.append([t.dtype, len(t.shape)])
        elif isinstance(t, Scalar) and t.dtype in _NUMBA_SCALARS:
            params.append(C_TYPES[t.dtype])
            args.append(f"({C_TYPES[t.dtype]})({code})")
            signature.append([t.dtype])
        else:
            raise Unsupported(f"_kn.{name} argument of type {t}")
    k = tr.m.numba_kernel(name, signature)
    fn, ret, exc, status = tr.fresh("_nk"), tr.fresh("_nkret"), tr.fresh("_nkexc"), tr.fresh("_nkst")
    tr.emit(f"{{ typedef int32_t (*{fn})(void *, void *, {', '.join(params)});", depth)
    tr.emit(f"  uint64_t {ret}[8] = {{0}}; void *{exc} = NULL;", depth)
    tr.emit(f"  int32_t {status} = (({fn})(intptr_t)omnistage_numba_kernels[{k}])({ret}, &{exc}, {', '.join(args)});", depth)
    tr.emit(f"  if ({status} != 0) goto os_fail; }}", depth)


def _shape_literal(t):
    """Array type `t`'s shape as a C compound literal of int64s."""
    return "(const int64_t[]){" + ", ".join(f"{d}LL" for d in t.shape) + "}"


def _conv_in_layout(tr, node, depth):
    """kernels.conv_in_layout(lhs, rhs, out, params) with float32 or float64 operands of one dtype:
    c_conv's function of that dtype (compiled once per machine, no Numba in the process); other
    dtypes call the kernel's Numba build."""
    if len(node.args) != 4 or not isinstance(node.args[3], ast.Name) or node.args[3].id not in tr.m.consts:
        return numba_kernel_call(tr, node, depth)
    operands = [tr.expr(a, depth) for a in node.args[:3]]
    if not all(isinstance(t, Arr) for _, t in operands) or len({t.dtype for _, t in operands}) != 1 \
            or c_conv.function(operands[0][1].dtype) is None:
        return numba_kernel_call(tr, node, depth)
    (lhs, tl), (rhs, tk), (out, to) = (_dense(tr, code, t, depth) for code, t in operands)
    c_params, _, params = tr.m.consts[node.args[3].id]
    if int(params[0]) != len(tl.shape) or len(tk.shape) != len(tl.shape) or to.size != int(np.prod(params[1 + 3 * len(tl.shape):1 + 4 * len(tl.shape)])):
        raise Unsupported("conv_in_layout operands do not match its params")
    tr.m.sections.add("conv")
    tr.m.uses_gemm = True

    tr.emit(f"if ({c_conv.function(to.dtype)}({lhs}, {_shape_literal(tl)}, {rhs}, {_shape_literal(tk)}, {out}, {c_params})) goto os_fail;",
            depth)


def _window_kernel(tr, node, depth):
    """kernels.reduce_window_chooser / select_and_gather_add / select_and_scatter_add(arrays..., out,
    params, identity) with operands of one dtype c_windows has: its C function; other dtypes call
    the kernels' Numba builds."""
    name = dotted(node.func)[len("_kn."):]
    *arrays, params_node, identity_node = node.args
    if node.keywords or not isinstance(params_node, ast.Name) or params_node.id not in tr.m.consts:
        return numba_kernel_call(tr, node, depth)
    operands = [tr.expr(a, depth) for a in arrays]
    identity, ti = tr.expr(identity_node, depth)
    if not all(isinstance(t, Arr) for _, t in operands) or len({t.dtype for _, t in operands}) != 1 \
            or not isinstance(ti, Scalar) or ti.dtype != operands[0][1].dtype \
            or c_windows.function(name, ti.dtype) is None:
        return numba_kernel_call(tr, node, depth)
    dense = [_dense(tr, code, t, depth) for code, t in operands]
    c_params = tr.m.consts[params_node.id][0]
    tr.m.sections.add("windows")

    (out, to), (x, tx) = dense[-1], dense[-2]
    nd = len(tx.shape)
    if name == "select_and_scatter_add":  # (source, x, out): the windows are the source's positions
        (source, ts) = dense[0]
        args = [source, _shape_literal(ts), x, _shape_literal(tx), f"{nd}LL", out]
    else:  # (x, out) or (t, x, out): the windows are out's positions
        args = [*(code for code, _ in dense[:-2]), x, _shape_literal(tx), f"{nd}LL", out, _shape_literal(to)]
    tr.emit(f"if ({c_windows.function(name, ti.dtype)}({', '.join(args)}, {c_params}, {identity})) goto os_fail;", depth)


def _strided_copy(tr, node, depth):
    """kernels.strided_copy(src, dst, params): c_copy's os_strided_copy on the module's
    constant params; positions are flat C-order ones, which are memory offsets for the
    contiguous arrays accepted here. A copy of at most a few pieces, each one contiguous run in
    both arrays (a reshape), is a memmove per piece instead."""
    if len(node.args) != 3 or not isinstance(node.args[2], ast.Name) or node.args[2].id not in tr.m.consts:
        raise Unsupported("strided_copy arguments")
    c_params, _, params = tr.m.consts[node.args[2].id]
    (src, ts), (dst, td) = (tr.expr(x, depth) for x in node.args[:2])
    if not (isinstance(ts, Arr) and isinstance(td, Arr) and ts.contiguous and td.contiguous and ts.dtype == td.dtype):
        raise Unsupported("strided_copy operands")
    at, runs = 0, []
    while at < len(params):  # every piece inside both arrays, or the Numba path
        nd, piece = int(params[at]), [int(v) for v in params[at:at + 3 + 3 * int(params[at])]]
        shape, s_str, d_str = piece[1:1 + nd], piece[2 + nd:2 + 2 * nd], piece[3 + 2 * nd:]
        if nd > 64 or any(v < 0 for v in shape):
            raise Unsupported("strided_copy piece")
        if all(shape):
            for pos, strides, size in ((piece[1 + nd], s_str, ts.size), (piece[2 + 2 * nd], d_str, td.size)):
                lo = pos + sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
                hi = pos + sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
                if lo < 0 or hi >= size:
                    raise Unsupported("strided_copy piece outside its array")
        at += 3 + 3 * nd
        runs.append(_run(shape, piece[1 + nd], s_str, piece[2 + 2 * nd], d_str))
    ct = C_TYPES[ts.dtype]
    if all(run is not None for run in runs) and len(runs) <= _MEMMOVE_PIECES:
        for s_at, d_at, count in filter(None, runs):  # (an empty piece: nothing)
            tr.emit(f"memmove(({ct} *)({dst}) + {d_at}, (const {ct} *)({src}) + {s_at}, {count} * sizeof({ct}));", depth)
        return
    tr.m.sections.add("copy")
    tr.emit(f"os_strided_copy((const char *)({src}), (char *)({dst}), {c_params}, {len(params)}, sizeof({ct}));", depth)


_MEMMOVE_PIECES = 4  # more pieces than this: one call of the linked copy, not a memmove each


def _run(shape, s_at, s_str, d_at, d_str):
    """(src offset, dst offset, element count) of a piece that is one contiguous run in both
    arrays; () for an empty piece; None otherwise."""
    count = math.prod(shape)
    if count == 0:
        return ()
    dense = c_strides(shape)
    if any(d != 1 and st != c for strides in (s_str, d_str) for d, st, c in zip(shape, strides, dense)):
        return None
    return (s_at, d_at, count)


def _np_sign(tr, node, depth):
    ((a, t),) = tr.scalars(node, depth, 1)
    if not is_int(t.dtype):
        raise Unsupported(f"np.sign of {t.dtype}")
    return f"(({C_TYPES[t.dtype]})((({a}) > 0) - (({a}) < 0)))", t


def _complex_helper(stem):
    """support.complex_<name> / cmax / cmin: c_complex's function of the operands' type."""
    return _same_type_call(COMPLEX_SUFFIX, lambda dtype: f"{stem}_{COMPLEX_SUFFIX[dtype]}", stem,
                           result=lambda dtype: COMPLEX_PART[dtype] if stem == "os_cabs" else dtype)


def _np_conj(tr, node, depth):
    if len(node.args) != 1:
        raise Unsupported("np.conj arity")
    a, t = tr.expr(node.args[0], depth)
    if isinstance(t, Arr):  # triangular_solve's conjugate_a: a new C-ordered array, conjugated
        a, t = _copy_of(tr, a, t, t.dtype, depth)
        if t.dtype in COMPLEX_SUFFIX:
            tr.emit(f"for (int64_t _c = 0; _c < {t.size}; _c++) {a}[_c] = os_cconj_{COMPLEX_SUFFIX[t.dtype]}({a}[_c]);",
                    depth)
        return a, t
    if not isinstance(t, Scalar):
        raise Unsupported("np.conj operand")
    if t.dtype in COMPLEX_SUFFIX:
        return f"os_cconj_{COMPLEX_SUFFIX[t.dtype]}({a})", t
    return a, t  # a real number is its own conjugate


def _complex(tr, node, depth):
    """Python's complex(re, im): a complex128 (the emitter casts it to its dtype)."""
    args = tr.scalars(node, depth, 2)
    if any(t.dtype in COMPLEX_PART for _, t in args):
        raise Unsupported("complex() of complex parts")
    re, im = (tr.convert(c, t.dtype, "float64") for c, t in args)
    return f"os_c128_make({re}, {im})", Scalar("complex128")


_LA_SUFFIX = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}  # c_linalg's instances
_LAPACK_DTYPES = ("float64", "complex128")  # the LAPACK kernels' operands (widened by the emitter)


def _stack_operand(tr, node, depth, what, dtypes=_LA_SUFFIX):
    """A (b, m, n) array operand of a linear-algebra kernel, contiguous (copied if not)."""
    code, t = tr.expr(node, depth)
    if not isinstance(t, Arr) or len(t.shape) != 3 or t.dtype not in dtypes:
        raise Unsupported(f"{what} operand {t}")
    return _dense(tr, code, t, depth)


def _eig(tr, node, depth):
    """kernels.eig(a, w, vl, vr) on a (b, n, n) float64/complex128 stack (c_lapack.os_eig):
    vl and vr have a batch entry per matrix when their vectors are wanted, else none."""
    if len(node.args) != 4:
        raise Unsupported("eig arguments")
    a, ta = _stack_operand(tr, node.args[0], depth, "eig", _LAPACK_DTYPES)
    (w, tw), (vl, tvl), (vr, tvr) = (tr.expr(x, depth) for x in node.args[1:])
    b, n, n2 = ta.shape
    if n != n2 or n >= 2 ** 15:
        raise Unsupported(f"eig of {ta.dtype}{list(ta.shape)}")
    for t, shapes in ((tw, [(b, n)]), (tvl, [(b, n, n), (0, n, n)]), (tvr, [(b, n, n), (0, n, n)])):
        if not isinstance(t, Arr) or t.dtype != "complex128" or t.shape not in shapes or not t.contiguous:
            raise Unsupported("eig outputs")
    tr.m.sections.add("lapack")
    left, vectors = int(tvl.shape[0] == b and b > 0), int(tvr.shape[0] == b and b > 0)
    tr.emit(f"if (os_eig({a}, {int(ta.dtype == 'float64')}, {b}, {n}, {w}, {vl}, {left}, {vr}, {vectors}) < 0) goto os_fail;",
            depth)


def _lu(tr, node, depth):
    """kernels.lu(a) -> (lu, pivots, permutation): c_linalg.os_lu_<dtype>."""
    if len(node.args) != 1:
        raise Unsupported("lu arguments")
    a, ta = _stack_operand(tr, node.args[0], depth, "lu")
    nb, m, n = ta.shape
    results = [Arr(ta.dtype, ta.shape), Arr("int32", (nb, min(m, n))), Arr("int32", (nb, m))]
    return _linalg_call(tr, f"os_lu_{_LA_SUFFIX[ta.dtype]}", [a, nb, m, n], results, depth)


def _forward_substitution(tr, node, depth):
    """kernels.forward_substitution(m, rhs, unit_diagonal) -> x: c_linalg's instance for the dtype."""
    if len(node.args) != 3:
        raise Unsupported("forward_substitution arguments")
    m, tm = _stack_operand(tr, node.args[0], depth, "forward_substitution")
    rhs, tr_ = _stack_operand(tr, node.args[1], depth, "forward_substitution")
    unit, tu = tr.expr(node.args[2], depth)
    nb, n, k = tr_.shape
    if tm.dtype != tr_.dtype or tm.shape != (nb, n, n) or tu != Scalar("bool"):
        raise Unsupported("forward_substitution operands")
    return _linalg_call(tr, f"os_forward_substitution_{_LA_SUFFIX[tr_.dtype]}", [m, rhs, unit, nb, n, k],
                        [Arr(tr_.dtype, tr_.shape)], depth)


def _lu_pivots_to_permutation(tr, node, depth):
    """kernels.lu_pivots_to_permutation(pivots, size) -> permutation (b, size) int32."""
    if len(node.args) != 2:
        raise Unsupported("lu_pivots_to_permutation arguments")
    pivots, tp = tr.expr(node.args[0], depth)
    if not isinstance(tp, Arr) or tp.dtype != "int32" or len(tp.shape) != 2:
        raise Unsupported("lu_pivots_to_permutation operands")
    size_value = _kernel_int_arg(tr, node.args[1])
    if size_value is None or size_value < 0:
        raise Unsupported("lu_pivots_to_permutation size")
    pivots, tp = _dense(tr, pivots, tp, depth)
    return _linalg_call(tr, "os_lu_pivots_to_permutation", [pivots, tp.shape[0], tp.shape[1], size_value],
                        [Arr("int32", (tp.shape[0], size_value))], depth)


def _linalg_call(tr, function, args, results, depth):
    """c_linalg's `function(args..., result arrays...)` on fresh arrays of the `results` layouts."""
    outs = [tr.allocate(t, depth) for t in results]
    tr.m.sections.add("linalg")
    tr.emit(f"{function}({', '.join(str(a) for a in args + outs)});", depth)
    return list(zip(outs, results))


def _cholesky(tr, node, depth):
    """kernels.cholesky(a, out) on a (b, n, n) float64/complex128 stack (c_lapack.os_cholesky)."""
    if len(node.args) != 2:
        raise Unsupported("cholesky arguments")
    a, ta = _stack_operand(tr, node.args[0], depth, "cholesky", _LAPACK_DTYPES)
    out, to = tr.expr(node.args[1], depth)
    b, n, n2 = ta.shape
    if n != n2 or not isinstance(to, Arr) or to.dtype != ta.dtype or to.shape != ta.shape or not to.contiguous:
        raise Unsupported("cholesky operands")
    tr.m.sections.add("lapack")
    tr.emit(f"os_cholesky({a}, {int(ta.dtype == 'float64')}, {b}, {n}, {out});", depth)


def _eigh(tr, node, depth):
    """kernels.eigh(a, lower, v, w) on a (b, n, n) float64/complex128 stack (c_lapack.os_eigh)."""
    if len(node.args) != 4:
        raise Unsupported("eigh arguments")
    a, ta = _stack_operand(tr, node.args[0], depth, "eigh", _LAPACK_DTYPES)
    lower, tl = tr.expr(node.args[1], depth)
    (v, tv), (w, tw) = (tr.expr(x, depth) for x in node.args[2:])
    b, n, n2 = ta.shape
    if (n != n2 or tl != Scalar("bool") or not isinstance(tv, Arr) or tv.dtype != ta.dtype or tv.shape != ta.shape
            or not isinstance(tw, Arr) or tw.dtype != "float64" or tw.shape != (b, n) or not tv.contiguous
            or not tw.contiguous):
        raise Unsupported("eigh operands")
    tr.m.sections.add("lapack")
    tr.emit(f"if (os_eigh({a}, {int(ta.dtype == 'float64')}, (int)({lower}), {b}, {n}, {v}, {w}) < 0) goto os_fail;",
            depth)


def _kernel_int_arg(tr, node):
    """A static int argument of a `_kn` kernel (`np.int64(3)`, opaque_rules._kernel_int, or a
    hoisted module constant), or None."""
    if isinstance(node, ast.Call) and dotted(node.func) == "np.int64" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Name) and node.id in tr.m.consts and isinstance(tr.m.consts[node.id][1], Scalar):
        return int(tr.m.consts[node.id][2])
    return static_int(node)


def _identity_permutation(tr, node, depth):
    """kernels.identity_permutation(outer, n, inner) -> perm[o, k, i] = k, int64."""
    dims = [_kernel_int_arg(tr, a) for a in node.args]
    if len(dims) != 3 or any(d is None or d < 0 for d in dims):
        raise Unsupported("identity_permutation arguments")
    t = Arr("int64", tuple(dims))
    perm = tr.allocate(t, depth)
    outer, n, inner = dims
    tr.emit(f"for (int64_t _p = 0; _p < {t.size}; _p++) {perm}[_p] = (_p / {max(inner, 1)}) % {max(n, 1)};", depth)
    return [(perm, t)]


def _refine_sort(tr, node, depth):
    """kernels.refine_sort(perm, key): c_sort's function for the key's type; a complex key's
    `.real` / `.imag` is read in place (every other element of its parts)."""
    if len(node.args) != 2:
        raise Unsupported("refine_sort arguments")
    perm, tp = tr.expr(node.args[0], depth)
    key_node, part = node.args[1], None
    if isinstance(key_node, ast.Attribute) and key_node.attr in ("real", "imag"):
        key_node, part = key_node.value, key_node.attr
    key, tk = tr.expr(key_node, depth)
    if not (isinstance(tp, Arr) and tp.dtype == "int64" and len(tp.shape) == 3 and tp.contiguous
            and isinstance(tk, Arr) and tk.shape == tp.shape):
        raise Unsupported("refine_sort operands")
    key, tk = _dense(tr, key, tk, depth)
    dtype, stride = tk.dtype, 1
    if part is not None:
        if dtype not in COMPLEX_PART:
            raise Unsupported("refine_sort of a real array's parts")
        dtype, stride = COMPLEX_PART[dtype], 2
        key = f"((const {C_TYPES[dtype]} *)({key}) + {int(part == 'imag')})"
    elif dtype in COMPLEX_PART:
        raise Unsupported("refine_sort on a complex key")
    if dtype not in C_TYPES:
        raise Unsupported(f"refine_sort on {dtype}")
    if dtype not in tr.m.sorts:
        tr.m.sorts.add(dtype)
        tr.m.decls.append(c_sort.function(dtype))
    outer, n, inner = tp.shape
    scratch = [tr.allocate(Arr(t, (n,)), depth) for t in (dtype, dtype, "int64", "int64")]
    tr.emit(f"{c_sort.name(dtype)}({perm}, (const {C_TYPES[dtype]} *)({key}), {stride}, {outer}, {n}, {inner}, "
            f"{', '.join(scratch)});", depth)


def _take_along(tr, node, depth):
    """kernels.take_along(x, perm) -> out[o, k, i] = x[o, perm[o, k, i], i]."""
    if len(node.args) != 2:
        raise Unsupported("take_along arguments")
    (x, tx), (perm, tp) = (tr.expr(a, depth) for a in node.args)
    if not (isinstance(tx, Arr) and isinstance(tp, Arr) and tp.dtype == "int64" and tx.shape == tp.shape
            and len(tx.shape) == 3 and tp.contiguous):
        raise Unsupported("take_along operands")
    x, t = _dense(tr, x, tx, depth)
    out = tr.allocate(t, depth)
    outer, n, inner = t.shape
    tr.emit(f"for (int64_t _p = 0; _p < {t.size}; _p++) {out}[_p] = {x}[(_p / {max(n * inner, 1)}) * {n * inner} + "
            f"{perm}[_p] * {inner} + _p % {max(inner, 1)}];", depth)
    return [(out, t)]


def _svd(tr, node, depth):
    """kernels.svd(a, full_matrices, u, s, vh) on a (b, m, n) float64/complex128 stack (c_lapack.os_svd);
    full_matrices is the emitter's static flag (`np.bool_(True)`), and the outputs' shapes follow it."""
    if len(node.args) != 5:
        raise Unsupported("svd arguments")
    flag = node.args[1]
    if not (is_call_to(flag, "np.bool_") and len(flag.args) == 1 and isinstance(flag.args[0], ast.Constant)
            and isinstance(flag.args[0].value, bool)):
        raise Unsupported("svd flag")
    full = flag.args[0].value
    a, ta = _stack_operand(tr, node.args[0], depth, "svd", _LAPACK_DTYPES)
    (u, tu), (s, ts), (vh, tv) = (tr.expr(x, depth) for x in node.args[2:])
    b, m, n = ta.shape
    k = min(m, n)
    ucol, vrow = (m, n) if full else (k, k)
    if (not all(isinstance(t, Arr) and t.contiguous for t in (tu, ts, tv)) or tu.dtype != ta.dtype
            or tv.dtype != ta.dtype or ts.dtype != "float64" or ts.shape != (b, k) or tu.shape != (b, m, ucol)
            or tv.shape != (b, vrow, n)):
        raise Unsupported("svd outputs")
    tr.m.sections.add("lapack")
    tr.emit(f"if (os_svd({a}, {int(ta.dtype == 'float64')}, {int(full)}, {b}, {m}, {n}, {u}, {s}, {vh}) < 0) goto os_fail;",
            depth)


PREFETCH_MAX_ROW = 16 << 10  # bytes: a longer row would not stay in the cache until it is read


def _prefetch_row(tr, node, depth):
    """`_rt.prefetch_row(a, i)` (row_passes.prefetch_rows): row `i` of the contiguous
    2-d array `a` prefetched, a line at a time, when it exists; nothing for a row too short to
    gain (under 1 KB) or too long to stay in the cache, or a row that is not contiguous."""
    if len(node.args) != 2:
        raise Unsupported("prefetch_row arguments")
    (base, t), (i, it) = (tr.expr(x, depth) for x in node.args)
    if not isinstance(t, Arr) or not isinstance(it, Scalar) or not is_int(it.dtype) or len(t.shape) != 2:
        raise Unsupported("prefetch_row operands")
    row = t.shape[1] * np.dtype(t.dtype).itemsize
    if t.strides[1] != 1 or not 1024 <= row <= PREFETCH_MAX_ROW:
        return
    tr.emit(f"if ((int64_t)({i}) < {t.shape[0]}) for (int64_t os_q = 0; os_q < {row}; os_q += 64) "
            f"__builtin_prefetch((const char *)({base} + (int64_t)({i}) * {t.strides[0]}) + os_q);", depth)


KERNEL_STATEMENTS = {"_kn.matmul": _matmul, "_kn.strided_copy": _strided_copy, "_kn.eig": _eig,
                     "_kn.cholesky": _cholesky, "_kn.eigh": _eigh, "_kn.refine_sort": _refine_sort,
                     "_rt.prefetch_row": _prefetch_row, "_kn.svd": _svd, "_kn.conv_in_layout": _conv_in_layout,
                     **{f"_kn.{name}": _window_kernel for name in c_windows.FUNCTIONS}}
# kernels called for their results (`x = _kn.f(...)`, `a, b = _kn.f(...)`): [(C array, type)]
KERNEL_RESULTS = {"_kn.lu": _lu, "_kn.forward_substitution": _forward_substitution,
                  "_kn.lu_pivots_to_permutation": _lu_pivots_to_permutation,
                  "_kn.identity_permutation": _identity_permutation, "_kn.take_along": _take_along}

CALLS = {
    "_rt.empty": _empty, "np.empty": _empty, "_rt.full": _full, "_rt.copy": _copy, "_rt.astype": _astype,
    "_rt.contiguous": _contiguous, "_rt.reshape": _reshape,
    "_rt.select": _select,
    "_rt.fmax": _typed_float_helper("os_fmax"), "_rt.fmin": _typed_float_helper("os_fmin"),
    "_rt.imax": _minmax(">="), "_rt.imin": _minmax("<="), "max": _minmax(">="), "min": _minmax("<="),
    "_rt.idiv": _int_helper("os_idiv", "os_udiv"), "_rt.udiv": _int_helper("os_idiv", "os_udiv"),
    "_rt.irem": _int_helper("os_irem", "os_urem"), "_rt.urem": _int_helper("os_irem", "os_urem"),
    "_rt.clamp_index": _clamp_index,
    "_rt.sign": _typed_float_helper("os_sign"),
    "_rt.round_half_away": _typed_float_helper("os_round_half_away"),
    "_rt.logaddexp": _typed_float_helper("os_logaddexp"),
    "_rt.fma_float32": _fma("float32"), "_rt.fma_float64": _fma("float64"),
    "_rt.radd": _radd("+"), "_rt.rmul": _radd("*"),
    "_rt.kmax": _key_step("max"), "_rt.kmin": _key_step("min"), "_rt.unkey": _unkey,
    "_rt.shift_left": _shift("shl"), "_rt.shift_right_arithmetic": _shift("ashr"),
    "_rt.shift_right_logical": _shift("lshr"),
    "_rt.reinterpret": _reinterpret, "_rt.popcount": _popcount,
    **{f"_rt.f2i_{t}": _f2i(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
    "np.abs": _np_abs, "abs": _np_abs, "np.isfinite": _np_isfinite, "np.sign": _np_sign,
    **{f"_rt.{name}": _complex_helper(stem) for name, stem in c_complex.NAMES.items()},
    "np.conj": _np_conj, "complex": _complex,
}


def rule_for(name):
    """The rule translating a call of `name` (a dotted name), or None."""
    rule = CALLS.get(name)
    if rule is None and name.startswith("np."):
        fn = LIBM.get(name[3:]) or LIBM2.get(name[3:])
        rule = fn and _libm(fn)
    return rule
