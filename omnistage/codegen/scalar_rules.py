"""Scalar lowering of elementwise primitives: each rule turns operand expressions into the
expression computing one output element, in Numba-compilable Python.

A rule is `rule(ctx, *args, **params) -> str`; `ctx` gives the operand and result dtypes
(`ctx.in_dtypes`, `ctx.out_dtype`). Integer results are wrapped in a cast to their dtype by the
emitter, because Numba widens integer arithmetic to 64 bits; float results keep their dtype
because lax operands always share one. Operations whose NumPy semantics differ from a bare
operator call `_rt.<helper>` (see `support.py`); transcendental functions call the vectorizable
implementations in `vmath` when one exists for the dtype.
"""
import numpy as np


def _np(fn):
    return lambda ctx, *a, **p: f"np.{fn}({', '.join(a)})"


def _binop(op):
    return lambda ctx, a, b, **p: f"{a} {op} {b}"


def _by_kind(**rules):
    """A rule chosen by the first operand's dtype kind: keys are kind letters ('f', 'c', 'i',
    'u', 'b'; several at once like fc=...)."""
    table = {k: r for kinds, r in rules.items() for k in kinds}

    def rule(ctx, *a, **p):
        return table[ctx.in_dtypes[0].kind](ctx, *a, **p)

    return rule


_NUMPY_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
               "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}


# (primitive, dtype kind) -> the support helper the CPU emitter calls instead of the operator or
# NumPy function (`ctx.vmath` answers with it; CUDA's context answers None, keeping the
# operator): Numba compiles its own implementation of these in every process (see support.py).
CPU_HELPERS = {
    **{(prim, "c"): f"complex_{_NUMPY_NAME.get(prim, prim)}" for prim in (
        "mul", "div", "abs", "exp", "log", "sqrt", "sign", "sin", "cos", "tan", "sinh", "cosh", "tanh",
        "asin", "acos", "atan", "asinh", "acosh", "atanh")},
    **{(prim, kind): f"i{prim}" for prim in ("max", "min") for kind in "iu"},
}


def _helper_or(name, rule):
    """`rule`, unless the context has a compiled-once helper for `name` on this dtype."""

    def wrapped(ctx, *a, **p):
        fn = ctx.vmath(name, ctx.in_dtypes[0])
        return f"{fn}({', '.join(a)})" if fn else rule(ctx, *a, **p)

    return wrapped


def _call(helper):
    return lambda ctx, *a, **p: f"_rt.{helper}({', '.join(a)})"


def _math(name):
    """A transcendental: vmath's vectorizable version when available, else NumPy's."""

    def rule(ctx, *a, **p):
        fn = ctx.vmath(name, ctx.in_dtypes[0])
        if fn is not None:
            return f"{fn}({', '.join(a)})"
        return f"np.{_NUMPY_NAME.get(name, name)}({', '.join(a)})"

    return rule


def _typed_one(ctx):
    return f"np.{ctx.out_dtype.name}(1)"


def _rsqrt(ctx, a):
    return f"{_typed_one(ctx)} / np.sqrt({a})"


def _logistic(ctx, a):
    fn = ctx.vmath("logistic", ctx.in_dtypes[0])
    if fn is not None:
        return f"{fn}({a})"
    exp = ctx.vmath("exp", ctx.in_dtypes[0])
    e = f"{exp}(-{a})" if exp else f"np.exp(-{a})"
    return f"{_typed_one(ctx)} / ({_typed_one(ctx)} + {e})"


def _not(ctx, a):
    return f"(not {a})" if ctx.in_dtypes[0].kind == "b" else f"~{a}"


def _shift(helper):
    return lambda ctx, a, b: f"_rt.{helper}({a}, {b})"


def _shift_right_logical(ctx, a, b):
    dt = ctx.in_dtypes[0]
    if dt.kind == "u":
        return f"_rt.shift_right_logical({a}, {b})"
    u = f"np.uint{dt.itemsize * 8}"  # shifts the bits of the unsigned view
    return f"np.{dt.name}(_rt.shift_right_logical({u}({a}), {u}({b})))"


def _integer_pow(ctx, a, *, y):
    if y == 0:
        return f"np.{ctx.out_dtype.name}(1)"
    base = " * ".join([a] * abs(y)) if abs(y) <= 4 else f"{a} ** {abs(y)}"
    return f"{_typed_one(ctx)} / ({base})" if y < 0 else f"({base})"


def _convert(ctx, a, *, new_dtype, weak_type=False):
    src, dst = ctx.in_dtypes[0], np.dtype(new_dtype)
    if src.kind == "c" and dst.kind != "c":
        a = f"{a}.real"  # complex -> real (bool and int included) keeps the real part only
    if dst.kind == "b":
        return f"({a} != 0)"
    if src.kind in "fc" and dst.kind in "iu":
        return f"_rt.f2i_{dst.name}({a})"
    return f"np.{dst.name}({a})"


def _select_n(ctx, which, *cases):
    # LLVM selects, not conditional expressions: no branches for Numba's passes to analyse
    if len(cases) == 1:
        return cases[0]
    if ctx.in_dtypes[0].kind == "b":
        return f"_rt.select({which}, {cases[1]}, {cases[0]})"
    expr = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        expr = f"_rt.select({which} <= {i}, {cases[i]}, {expr})"
    return expr


def _round_away(ctx, a):
    return f"_rt.round_half_away({a}, np.{ctx.in_dtypes[0].name}(0.5))"


def _complex(ctx, re, im):
    # builds the parts directly: re + 1j * im would turn an infinite im into a NaN real part
    return f"np.{ctx.out_dtype.name}(complex({re}, {im}))"


def _fma(ctx, a, b, c):
    return f"_rt.fma_{ctx.in_dtypes[0].name}({a}, {b}, {c})"


def _abs(ctx, a):
    return f"np.abs({a})"


def _is_finite(ctx, a):
    return f"np.isfinite({a})"


RULES = {
    "add": _binop("+"),
    "sub": _binop("-"),
    "mul": _binop("*"),
    # integer division and remainder follow XLA: x / 0 == -1, x % 0 == x, INT_MIN / -1 == INT_MIN
    "div": _by_kind(fc=_binop("/"), i=_call("idiv"), u=_call("udiv")),
    "rem": _by_kind(f=_np("fmod"), i=_call("irem"), u=_call("urem")),
    "pow": _math("pow"),
    # NaN-propagating; complex numbers compare lexicographically (np.maximum / np.minimum)
    "max": _by_kind(f=_call("fmax"), c=_call("cmax"), iu=lambda ctx, a, b: f"max({a}, {b})", b=_binop("|")),
    "min": _by_kind(f=_call("fmin"), c=_call("cmin"), iu=lambda ctx, a, b: f"min({a}, {b})", b=_binop("&")),
    "atan2": _math("atan2"),
    "nextafter": _np("nextafter"),
    "neg": lambda ctx, a: f"-{a}",
    "sign": _by_kind(f=lambda ctx, a: f"_rt.sign({a}, {_typed_one(ctx)})", ci=_np("sign"),
                     u=lambda ctx, a: f"({a} != 0)"),  # Numba's np.sign reads uint8 255 as -1
    "abs": _abs,
    "floor": _np("floor"),
    "ceil": _np("ceil"),
    "round": _np("rint"),
    "round_away": _round_away,
    "is_finite": _is_finite,
    "exp": _math("exp"), "exp2": _math("exp2"), "log": _math("log"), "expm1": _math("expm1"),
    "log1p": _math("log1p"), "tanh": _math("tanh"), "sin": _math("sin"), "cos": _math("cos"),
    "tan": _math("tan"), "asin": _math("asin"), "acos": _math("acos"), "atan": _math("atan"),
    "sinh": _math("sinh"), "cosh": _math("cosh"), "asinh": _math("asinh"),
    "acosh": _math("acosh"), "atanh": _math("atanh"), "cbrt": _math("cbrt"), "erf": _math("erf"),
    # lax.erf_inv: on CPU its XLA expansion emitted once (vmath/xla_expansions.py), on CUDA libdevice
    "erf_inv": _math("erf_inv"),
    "sqrt": _np("sqrt"),
    "rsqrt": _rsqrt,
    "logistic": _logistic,
    "real": lambda ctx, a: f"{a}.real",
    "imag": lambda ctx, a: f"{a}.imag",
    "conj": _np("conj"),
    "eq": _binop("=="), "ne": _binop("!="), "lt": _binop("<"), "le": _binop("<="),
    "gt": _binop(">"), "ge": _binop(">="),
    "and_": _binop("&"), "or_": _binop("|"), "xor": _binop("^"),
    "not_": _not,
    "shift_left": _shift("shift_left"),
    "shift_right_arithmetic": _shift("shift_right_arithmetic"),
    "shift_right_logical": _shift_right_logical,
    "integer_pow": _integer_pow,
    "convert_element_type": _convert,
    "select_n": _select_n,
    "complex": _complex,
    "fma": _fma,
    "population_count": _call("popcount"),
    # float16/bfloat16 computed in float32 (narrow_floats.py): round onto the narrow value set
    "round_to_narrow": lambda ctx, a, dtype: f"_rt.round_to_{dtype}({a})",
    # same-width bitcasts of float16/bfloat16 (their float32 values <-> their 16 bits)
    "narrow_from_bits": lambda ctx, a, dtype: f"_rt.{dtype}_from_bits({a})",
    "narrow_to_bits": lambda ctx, a, dtype: f"np.{ctx.out_dtype.name}(_rt.{dtype}_to_bits({a}))",
    # the CPU emitter's fusable forms of threefry2x32 and same-width bitcasts (fusable_forms.py)
    "threefry2x32_word": lambda ctx, k1, k2, x1, x2, word: f"_rt.threefry2x32({k1}, {k2}, {x1}, {x2})[{word}]",
    "bitcast_same_width": lambda ctx, a, new_dtype: f"_rt.reinterpret({a}, np.{np.dtype(new_dtype).name})",
}

for _prim in {prim for prim, _ in CPU_HELPERS}:
    RULES[_prim] = _helper_or(_prim, RULES[_prim])

# results that Numba may widen, so the emitter casts them back to the result dtype
NEEDS_CAST = {"add", "sub", "mul", "neg", "abs", "div", "rem", "max", "min", "and_", "or_", "xor",
              "not_", "shift_left", "shift_right_arithmetic", "shift_right_logical", "integer_pow", "sign", "pow",
              "population_count"}
