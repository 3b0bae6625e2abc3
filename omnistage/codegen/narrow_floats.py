"""float16 and bfloat16 in compiled code: `widen(program)` rewrites a Program so that Numba,
which has no arithmetic on either type, can compile it, as XLA's float normalization does.

Every float16/bfloat16 value becomes a float32 value that lies on the narrow type's value set:
each statement that produced a narrow result now produces float32, and a `round_to_narrow`
statement after it rounds that to the nearest narrow value (ties to even, overflow to inf,
float16 subnormals exact; `support.round_to_float16/bfloat16`) and keeps it in float32. NumPy and
ml_dtypes compute each float16/bfloat16 operation in float32 and round the result, so
elementwise results equal the eager path's exactly. Reductions and contractions accumulate in
float32 and round once (XLA does the same; NumPy's own float16 sums round along the way), and a
conversion from float64 rounds once, directly from float64, as NumPy's does.

Statements whose results are copies of operand values (reshapes, selects, max/min, sorts,
control flow whose bodies round for themselves) need no rounding. A bitcast between a narrow
float and its 16 bits (random floats are made that way) becomes `narrow_from_bits` /
`narrow_to_bits`, which decode/encode the widened value exactly; a bitcast to or from a type of
another width goes through those 16 bits and an integer bitcast. A conversion from complex rounds
the real part.

The compiled entry function takes and returns float32 arrays where the Program has narrow ones:
`narrow_boundary(program)` tells the executable which to convert.
"""
import ast
import copy

import numpy as np

from ..staging import literals
from ..staging.convert import all_names
from ..staging.naming import Namer
from ..staging.program import Program, eqn, is_eqn, make_stmt, name_atom
from ..staging.ast_walk import walk

NARROW = ("float16", "bfloat16")
WIDE = np.dtype(np.float32)
ROUND = "round_to_narrow"

# results that are operand values, or made of them, unchanged: already narrow values
EXACT = {
    "neg", "abs", "select_n", "max", "min", "sign", "floor", "ceil", "round", "round_away", "reshape",
    "broadcast_in_dim", "transpose", "squeeze", "expand_dims", "rev", "slice", "dynamic_slice",
    "dynamic_update_slice", "gather", "concatenate", "pad", "sort", "copy", "reduce_max", "reduce_min",
    "cummax", "cummin", "scatter", ROUND,
    "cond", "while_loop", "scan",  # their bodies round for themselves
}


def _narrow(dtype):
    try:
        return np.dtype(dtype).name in NARROW
    except TypeError:
        return False


def needs_widening_value(value):
    return _narrow(np.asarray(value).dtype)


def wide(value):
    """A constant as compiled code holds it: float32 for a float16/bfloat16 one (exact)."""
    return np.asarray(value, WIDE) if needs_widening_value(value) else value


def needs_widening(program):
    return any(_narrow(a.dtype) for a in program.avals.values()) or any(
        needs_widening_value(c) for c in program.consts.values())


def narrow_boundary(program):
    """([narrow dtype name or None per input], [... per output]) of `program` (not widened)."""
    name = lambda a: np.dtype(a.dtype).name if _narrow(a.dtype) else None  # noqa: E731
    return [name(a) for a in program.in_avals], [name(a) for a in program.out_avals]


def cast_exactly(a, dtype):
    """NumPy array `a` as `dtype`, one of the two float32 and the other float16/bfloat16 (the
    float32 values on the narrow value set): exact, NaN payloads included. bfloat16's bits are
    the upper half of a float32's; ml_dtypes' own cast would quiet signalling NaNs."""
    a, dtype = np.asarray(a), np.dtype(dtype)
    if dtype.name == "bfloat16" and a.dtype == WIDE:
        return (np.ascontiguousarray(a).view(np.uint32) >> 16).astype(np.uint16).view(dtype)
    if a.dtype.name == "bfloat16" and dtype == WIDE:
        return (np.ascontiguousarray(a).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.astype(dtype)


class _WideLiterals(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if literals.is_literal(node) and node.func.attr in NARROW:
            return literals.literal_ast(np.float32(literals.literal_value(node)))
        return node


def widen(program):
    """`program` with float16/bfloat16 computed in float32 (module docstring); `program` itself
    when it has no narrow values."""
    if not needs_widening(program):
        return program
    fn = _WideLiterals().visit(copy.deepcopy(program.fn))
    w = _Widening(program, fn)

    def rewrite(body):
        out = []
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef):
                rewrite(stmt.body)
                out.append(stmt)
                continue
            if not is_eqn(stmt):
                out.append(stmt)
                continue
            e = eqn(stmt)
            special = _SPECIAL.get(e.prim)
            stmts = special(w, e, getattr(stmt, "loc", None)) if special is not None else None
            out.extend(stmts if stmts is not None else w.rounded(stmt, e))
        body[:] = out

    rewrite(fn.body)
    return Program(fn, w.avals, {n: wide(c) for n, c in program.consts.items()}, program.debug_name)


class _Widening:
    """The state of one `widen`: the original program, the widened avals, fresh names."""

    def __init__(self, program, fn):
        self.program = program
        self.narrow_of = {n: np.dtype(a.dtype).name for n, a in program.avals.items() if _narrow(a.dtype)}
        self.avals = {n: a.update(dtype=WIDE) if n in self.narrow_of else a for n, a in program.avals.items()}
        self._fresh = Namer(all_names(fn)).fresh

    def temp(self, base, aval):
        """A fresh variable of `aval`."""
        name = self._fresh(base)
        self.avals[name] = aval
        return name

    def narrow_in(self, e):
        """The narrow dtype name (or None) of each operand of `e`."""
        return [self.narrow_of.get(a.id) if isinstance(a, ast.Name) else None for a in e.ins]

    def rounded(self, stmt, e):
        """The generic rule: the statement in float32, then a rounding of each narrow result
        (none for EXACT primitives, whose results are operand values)."""
        _widen_dtype_params(stmt)
        rounded = [o for o in e.outs if o in self.narrow_of] if e.prim not in EXACT else []
        if not rounded:
            return [stmt]
        renamed = {o: self.temp(f"{o}_f32", self.avals[o]) for o in rounded}
        _rename_targets(stmt, renamed)
        loc = getattr(stmt, "loc", None)
        return [stmt] + [make_stmt([o], ROUND, [name_atom(t)], {"dtype": self.narrow_of[o]}, loc)
                         for o, t in renamed.items()]


def _convert(w, e, loc):
    """convert_element_type(x, new_dtype=float16) as round_to_narrow, from x's float32/float64
    value (integers and bools through float64, where every int32 is exact; complex through its
    real part, as NumPy's and JAX's conversions take it)."""
    if not _narrow(e.params.get("new_dtype")):
        return None
    (x,) = e.ins
    (out,) = e.outs
    src = w.program.atom_aval(x).dtype
    stmts = []
    if src.kind == "c":
        re = w.temp(f"{out}_re", w.avals[out].update(dtype=np.dtype(np.float64 if src.itemsize == 16 else np.float32)))
        stmts.append(make_stmt([re], "real", [x], {}, loc))
        x = name_atom(re)
    elif src.kind in "iub":
        f64 = w.temp(f"{out}_f64", w.avals[out].update(dtype=np.dtype(np.float64)))
        stmts.append(make_stmt([f64], "convert_element_type", [x], {"new_dtype": "float64", "weak_type": False}, loc))
        x = name_atom(f64)
    stmts.append(make_stmt(e.outs, ROUND, [x], {"dtype": np.dtype(e.params["new_dtype"]).name}, loc))
    return stmts


_BITS = ("uint16", "int16")


def _bitcast(w, e, loc):
    """A bitcast to or from a narrow float, on the widened value: through its 16 bits
    (`narrow_to_bits` / `narrow_from_bits`), with an ordinary integer bitcast between those bits
    and a type of another width (float32, uint8, ...) where the widths differ."""
    (x,) = e.ins
    (out,) = e.outs
    src_aval = w.program.atom_aval(x)
    src, new = src_aval.dtype.name, np.dtype(e.params["new_dtype"]).name
    if src not in NARROW and new not in NARROW:
        return None
    stmts = []
    if src in NARROW:
        if new in _BITS:
            return [make_stmt(e.outs, "narrow_to_bits", [x], {"dtype": src}, loc)]
        bits = w.temp(f"{out}_bits", src_aval.update(dtype=np.dtype(np.uint16)))
        stmts.append(make_stmt([bits], "narrow_to_bits", [x], {"dtype": src}, loc))
        x, src = name_atom(bits), "uint16"
        if new not in NARROW:
            stmts.append(make_stmt(e.outs, "bitcast_convert_type", [x], {"new_dtype": new}, loc))
            return stmts
    if src not in _BITS:  # a type of another width: its bits regrouped as uint16 first
        width = np.dtype(src).itemsize
        shape = tuple(src_aval.shape) + (width // 2,) if width > 2 else tuple(src_aval.shape[:-1])
        bits = w.temp(f"{out}_bits", src_aval.update(shape=shape, dtype=np.dtype(np.uint16)))
        stmts.append(make_stmt([bits], "bitcast_convert_type", [x], {"new_dtype": "uint16"}, loc))
        x = name_atom(bits)
    stmts.append(make_stmt(e.outs, "narrow_from_bits", [x], {"dtype": new}, loc))
    return stmts


def _debug_print(w, e, loc):
    """Prints the narrow values, not their float32 copies; its format string is never a dtype."""
    narrow = w.narrow_in(e)
    if not any(narrow):
        return [e.stmt]
    return [make_stmt(e.outs, e.prim, e.ins, {**e.params, "narrow": tuple(narrow)}, loc)]


# primitives with a rule of their own (None from a rule: the generic one applies)
_SPECIAL = {"convert_element_type": _convert, "bitcast_convert_type": _bitcast, "debug_print": _debug_print}


def _widen_dtype_params(stmt):
    for kw in stmt.value.keywords:
        if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str) and kw.value.value in NARROW:
            kw.value = ast.Constant("float32")


def _rename_targets(stmt, renamed):
    for node in walk(stmt.targets[0]):
        if isinstance(node, ast.Name) and node.id in renamed:
            node.id = renamed[node.id]


__all__ = ["widen", "needs_widening", "needs_widening_value", "narrow_boundary", "cast_exactly", "wide",
           "NARROW", "ROUND"]
