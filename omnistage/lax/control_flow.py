"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`.

Three primitives carry everything: `cond` (pick one of N branches by a bool or an integer
index), `while_loop` and `scan`. Their bodies are closure-free `Program`s, passed as
parameters. The user's functions are traced into those Programs with
`omnistage.staging.trace.stage` (a lazy import: control flow is the one place where lax
needs the tracer; it stays out of lax's import graph). Values of the enclosing trace that a
body closes over become explicit operands of the statement, so every body is closure-free.

Statement forms (see `omnistage.staging.program` for how bodies appear in a Program):

    outs = cond(index, *operands, branches=(b0, b1, ...))
        `index` is a bool scalar (two branches: b0 when False) or an integer scalar
        (clamped to the branch range). Each branch takes the operands, returns the outs.
    carry = while_loop(*cond_consts, *body_consts, *init, cond_fun=c, body_fun=b,
                       cond_nconsts=m, body_nconsts=n)
        c(*cond_consts, *carry) -> (bool[],); b(*body_consts, *carry) -> carry.
    carry_and_ys = scan(*consts, *init, *xs, body=f, num_consts=m, num_carry=n,
                        length=L, reverse=False, unroll=1)
        f(*consts, *carry, *x_slices) -> (*carry, *y); ys are stacked along a new axis 0.

A body parameter is a Program while tracing and checking, and a plain function when the
printed program runs (the NumPy interpreter binds impls by name, so the impls call
whatever callable they get; a Program is callable too). When a printed program calls the
primitive itself (`from omnistage.staging.runtime import *`), `ControlFlowPrimitive.bind`
stages callable bodies into Programs first.

Checks follow JAX: branch outputs and loop carries must agree in pytree structure, shape and
dtype (weak types are joined; a weakly typed loop input is promoted to the body's output
dtype, as JAX does); a mismatch is a TypeError that shows both sides.
"""
import copy

import numpy as np

from ..core import dtypes
from ..core import primitive as core_primitive
from ..core import tree_util
from ..core.array import Array, aval_of
from ..core.aval import ShapedArray
from ..core.config import config
from ..core.primitive import Primitive
from ..core.tracer import Tracer
from ._rules import to_operand
from .elementwise import _convert_weak, clamp, convert_element_type, ne


# --- the primitive class -------------------------------------------------------------------


class ControlFlowPrimitive(Primitive):
    """A primitive whose body parameters are Programs (or callables to stage into them).

    `body_in_avals(arg_avals, params) -> {param: avals or tuple of avals}` says what each
    body is called with, so a callable body can be staged on demand.
    """

    __slots__ = ("body_in_avals",)

    def __init__(self, name, abstract_eval, impl, body_in_avals):
        super().__init__(name, abstract_eval, impl, multiple_results=True)
        self.body_in_avals = body_in_avals

    def bind(self, *args, **params):
        return core_primitive.bind(self, args, _stage_callable_bodies(self, args, params))

    __call__ = bind


def _stage_callable_bodies(prim, args, params):
    if not any(_is_plain_callable(v) for v in _body_values(params)):
        return params
    signatures = prim.body_in_avals([aval_of(a) for a in args], params)
    out = dict(params)
    for key, in_avals in signatures.items():
        value = params[key]
        if isinstance(value, tuple):
            out[key] = tuple(_closed_program(v, in_avals, key) for v in value)
        else:
            out[key] = _closed_program(value, in_avals, key)
    return out


def _body_values(params):
    for v in params.values():
        yield from (v if isinstance(v, tuple) else (v,))


def _is_plain_callable(v):
    from ..staging.program import Program

    return callable(v) and not isinstance(v, (Program, str))


def _closed_program(fun, in_avals, role):
    """Stage a closure-free body function (e.g. a printed program's nested def)."""
    from ..staging.program import Program
    from ..staging.trace import DebugInfo, stage

    if isinstance(fun, Program):
        return fun
    labels = _param_names(fun, len(in_avals))
    program, trace = stage(lambda *a: fun(*a), in_avals, labels, DebugInfo(fun, role), _body_name(fun, role))
    if trace.captures:
        raise TypeError(
            f"the {role} body {_body_name(fun, role)} closes over traced values; bodies given to a "
            f"control-flow primitive directly must be closure-free (use lax.cond/while_loop/scan, "
            f"which turn captured values into operands)"
        )
    return program


def _param_names(fun, n):
    import inspect

    try:
        names = [p.name for p in inspect.signature(fun).parameters.values()]
    except (TypeError, ValueError):
        names = []
    return names[:n] + [f"a{i}" for i in range(len(names), n)]


# --- staging user functions into bodies ----------------------------------------------------


class _Staged:
    """A user function traced into a body: its Program, output tree and captured tracers."""

    __slots__ = ("program", "out_tree", "captures", "out_leaves")

    def __init__(self, program, out_tree, captures, out_leaves):
        self.program, self.out_tree, self.captures, self.out_leaves = program, out_tree, captures, out_leaves

    @property
    def out_avals(self):
        return self.program.out_avals


def _body_name(fun, role):
    name = getattr(fun, "__name__", None)
    return role if not name or not name.isidentifier() else name


def _arg_labels(leaves, default):
    from ..staging.trace import StagingTracer, _capture_label

    return [_capture_label(x) if isinstance(x, StagingTracer) else default for x in leaves]


def stage_body(fun, args, role, labels=None, keep_outputs=False):
    """Trace `fun(*args)` (pytrees of arrays or avals) into a body `_Staged`.

    Output leaves must be arrays (Python scalars become weakly typed arrays)."""
    from ..staging.trace import DebugInfo, stage

    leaves, in_tree = tree_util.tree_flatten(args)
    in_avals = [x if isinstance(x, ShapedArray) else aval_of(x) for x in leaves]
    box = {}

    def flat(*tracers):
        out = fun(*tree_util.tree_unflatten(in_tree, list(tracers)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        box["tree"] = out_tree
        if keep_outputs:
            box["leaves"] = out_leaves
        return [_output_leaf(x, role, out_tree, i) for i, x in enumerate(out_leaves)]

    labels = labels or _arg_labels(leaves, "x")
    program, trace = stage(flat, in_avals, labels, DebugInfo(fun, role), _body_name(fun, role))
    return _Staged(program, box["tree"], [t for t, _ in trace.captures], box.get("leaves"))


def _output_leaf(x, role, tree, i):
    try:
        return to_operand(x)
    except TypeError:
        path = _leaf_paths(tree)[i]
        raise TypeError(
            f"{role} output{path} is a {type(x).__name__} ({x!r}); control-flow outputs must "
            f"be arrays or pytrees of arrays"
        ) from None


def close_over(staged, n_declared, consts_first):
    """Make captured values explicit: every body takes the union of all bodies' captures
    (in one order) besides its declared inputs. Returns (programs, captured tracers)."""
    union, seen = [], set()
    for s in staged:
        for t in s.captures:
            if id(t) not in seen:
                seen.add(id(t))
                union.append(t)
    return [_with_inputs(s, n_declared, union, consts_first) for s in staged], union


def _with_inputs(s, n_declared, union, consts_first):
    from ..staging.naming import Namer
    from ..staging.program import Program

    program = s.program
    names = program.in_names
    declared = names[:n_declared]
    own = {id(t): n for t, n in zip(s.captures, names[n_declared:])}
    avals = dict(program.avals)
    namer = Namer(set(avals) | set(program.consts) | set(program.bodies()))
    consts = []
    for t in union:
        name = own.get(id(t))
        if name is None:
            name = namer.fresh("unused")
            avals[name] = t.aval
        consts.append(name)
    fn = copy.copy(program.fn)
    fn.args = _arguments(consts + declared if consts_first else declared + consts)
    return Program(fn, avals, program.consts)


def _arguments(names):
    import ast

    return ast.arguments(
        posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None, kwonlyargs=[],
        kw_defaults=[], kwarg=None, defaults=[],
    )


def select_outputs(program, keep):
    """`program` returning only the outputs at positions `keep`."""
    import ast

    from ..staging.program import Program

    fn = copy.copy(program.fn)
    atoms = program.out_atoms
    fn.body = program.body[:-1] + [ast.Return(ast.Tuple([atoms[i] for i in keep], ast.Load()))]
    return Program(fn, program.avals, program.consts)


def cast_outputs(program, target_avals):
    """`program` whose outputs are converted to `target_avals` (dtype and weak type)."""
    import ast

    from ..staging.naming import Namer
    from ..staging.program import Program, make_stmt

    avals = dict(program.avals)
    namer = Namer(set(avals) | set(program.consts) | set(program.bodies()))
    body, atoms = list(program.body[:-1]), []
    for atom, have, want in zip(program.out_atoms, program.out_avals, target_avals):
        if have.dtype == want.dtype and have.weak_type == want.weak_type:
            atoms.append(atom)
            continue
        name = namer.fresh("convert_element_type")
        avals[name] = want
        body.append(make_stmt([name], "convert_element_type", [atom],
                              {"new_dtype": want.dtype.name, "weak_type": want.weak_type}))
        atoms.append(ast.Name(name, ast.Load()))
    fn = copy.copy(program.fn)
    fn.body = body + [ast.Return(ast.Tuple(atoms, ast.Load()))]
    return Program(fn, avals, program.consts)


# --- type checks and their messages --------------------------------------------------------


def typematch(a, b):
    """Same shape and dtype (weak types are joined, as in JAX)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _leaf_paths(tree):
    """`[0]['w']`-style paths of a treedef's leaves, in flattening order."""
    pairs, _ = tree_util.tree_flatten_with_path(tree_util.tree_unflatten(tree, range(tree.num_leaves)))
    return [tree_util.keystr(p) for p, _ in pairs]


def _all_typematch(left, right):
    return len(left) == len(right) and all(typematch(a, b) for a, b in zip(left, right))


def describe_mismatches(tree, left, right, left_name, right_name):
    """Lines `  out[1]: float32[3] in true_fun vs int32[3] in false_fun` for differing leaves."""
    paths = _leaf_paths(tree)
    lines = []
    for path, a, b in zip(paths, left, right):
        if not typematch(a, b):
            why = "shapes differ" if a.shape != b.shape else "dtypes differ"
            lines.append(
                f"  {path or 'the value'}: {a.str_short()} in {left_name} vs {b.str_short()} in "
                f"{right_name} ({why})"
            )
    return lines


class ControlFlowTypeError(TypeError):
    """Bodies disagree in structure, shape or dtype; `mismatches` lists (path, left, right)."""

    def __init__(self, message, mismatches=()):
        super().__init__(message)
        self.mismatches = list(mismatches)


def check_same_outputs(staged, names, what):
    """All branches return the same tree and leaf types (shape, dtype)."""
    first = staged[0]
    for s, name in zip(staged[1:], names[1:]):
        if s.out_tree != first.out_tree:
            raise ControlFlowTypeError(
                f"{what} must have same type structure, got {first.out_tree} in {names[0]} and "
                f"{s.out_tree} in {name}."
            )
        lines = describe_mismatches(first.out_tree, first.out_avals, s.out_avals, names[0], name)
        if lines:
            raise ControlFlowTypeError(
                f"{what} must have identical types, got\n" + "\n".join(lines) + "\n"
                f"Make the branches return the same shapes and dtypes (cast with "
                f".astype(...) or broadcast explicitly).",
                _mismatch_tuples(first.out_tree, first.out_avals, s.out_avals),
            )


def _mismatch_tuples(tree, left, right):
    return [(p, a, b) for p, a, b in zip(_leaf_paths(tree), left, right) if not typematch(a, b)]


def joined_avals(avals_per_branch):
    """The result avals of agreeing branches: weak only where every branch is weak."""
    return [
        ShapedArray(a[0].shape, a[0].dtype, all(x.weak_type for x in a))
        for a in zip(*avals_per_branch)
    ]


# --- cond ----------------------------------------------------------------------------------


def _cond_abstract(index, *operands, branches):
    if index.shape != () or index.dtype.kind not in "biu":
        raise TypeError(f"cond: the index must be a bool or integer scalar, got {index.str_short()}")
    if index.dtype.kind == "b" and len(branches) != 2:
        raise TypeError(f"cond: a boolean predicate selects between 2 branches, got {len(branches)}")
    for i, b in enumerate(branches):
        _check_inputs(f"cond branch {i}", b.in_avals, operands)
    outs = [b.out_avals for b in branches]
    for i, o in enumerate(outs[1:], 1):
        if not _all_typematch(o, outs[0]):
            raise TypeError(f"cond: branch {i} returns {_short(o)} but branch 0 returns {_short(outs[0])}")
    return joined_avals(outs)


def _short(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _check_inputs(what, params, operands):
    if not _all_typematch(params, operands):
        raise TypeError(f"{what} takes {_short(params)} but is given {_short(operands)}")


def _cond_impl(index, *operands, branches):
    i = int(np.asarray(index))
    i = min(max(i, 0), len(branches) - 1)
    return [np.asarray(v) for v in branches[i](*operands)]


def _cond_body_avals(arg_avals, params):
    return {"branches": list(arg_avals[1:])}


cond_p = ControlFlowPrimitive("cond", _cond_abstract, _cond_impl, _cond_body_avals)

_NO_OPERAND = object()


def _operands_arg(operands, operand, name):
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"{name}: if 'operand' keyword is passed then no positional operands can be passed.")
    return (operand,)


def _ndim(x):
    return x.ndim if isinstance(x, (Tracer, Array)) else np.ndim(x)


def _check_pred(pred):
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, (list, tuple)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}.")
    if _ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {pred.shape}.")
    pred = to_operand(pred)
    if pred.dtype.kind == "b":
        return pred
    if pred.dtype.kind in "iu":
        return ne(pred, 0)
    raise TypeError(f"Pred type must be either boolean or number, got {pred.dtype}.")


def _is_traced(*xs):
    return any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(xs))


def _python_mode(*xs):
    """`disable_jit` with concrete inputs: run control flow as plain Python (as JAX does)."""
    return config.read("jax_disable_jit") and not _is_traced(*xs)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, staged as one `cond`
    statement; both branches must return the same structure, shapes and dtypes."""
    operands = _operands_arg(operands, operand, "cond")
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    pred = _check_pred(pred)
    if _python_mode(pred, operands):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    return _staged_cond(pred, (false_fun, true_fun), operands, ("false_fun", "true_fun"),
                        "true_fun and false_fun output")


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """`branches[clamp(index, 0, len(branches) - 1)](*operands)`, staged as one `cond`."""
    operands = _operands_arg(operands, operand, "switch")
    if not isinstance(branches, (list, tuple)) or not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if len(branches) == 0:
        raise ValueError("Empty branch sequence")
    if isinstance(index, (list, tuple)) or _ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    index = to_operand(index)
    if index.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index}.")
    if len(branches) == 1:
        return branches[0](*operands)
    if _python_mode(index, operands):
        return branches[int(np.clip(int(index), 0, len(branches) - 1))](*operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    names = tuple(f"branch_{i}" for i in range(len(branches)))
    return _staged_cond(index, tuple(branches), operands, names, "branch outputs")


def _staged_cond(index, funs, operands, names, what):
    leaves, in_tree = tree_util.tree_flatten(operands)
    leaves = [to_operand(x) for x in leaves]
    args = tree_util.tree_unflatten(in_tree, leaves)
    staged = [stage_body(f, args, _body_name(f, n)) for f, n in zip(funs, names)]
    check_same_outputs(staged, names, what)
    programs, consts = close_over(staged, len(leaves), consts_first=False)
    outs = cond_p.bind(index, *leaves, *consts, branches=tuple(programs))
    return tree_util.tree_unflatten(staged[0].out_tree, outs)


# --- while_loop ----------------------------------------------------------------------------


def _while_abstract(*args, cond_fun, body_fun, cond_nconsts, body_nconsts):
    cconsts = args[:cond_nconsts]
    bconsts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts:]
    _check_inputs("while_loop cond_fun", cond_fun.in_avals, cconsts + carry)
    _check_inputs("while_loop body_fun", body_fun.in_avals, bconsts + carry)
    pred = cond_fun.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got {_short(pred)}")
    out = body_fun.out_avals
    if not _all_typematch(out, carry):
        raise TypeError(f"while_loop: body_fun returns {_short(out)} for the carry {_short(carry)}")
    return list(carry)


def _while_impl(*args, cond_fun, body_fun, cond_nconsts, body_nconsts):
    cconsts = args[:cond_nconsts]
    bconsts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = tuple(args[cond_nconsts + body_nconsts:])
    while bool(np.asarray(cond_fun(*cconsts, *carry)[0])):
        carry = tuple(body_fun(*bconsts, *carry))
    return [np.asarray(c) for c in carry]


def _while_body_avals(arg_avals, params):
    m, n = params["cond_nconsts"], params["body_nconsts"]
    carry = list(arg_avals[m + n:])
    return {"cond_fun": list(arg_avals[:m]) + carry, "body_fun": list(arg_avals[m:m + n]) + carry}


while_p = ControlFlowPrimitive("while_loop", _while_abstract, _while_impl, _while_body_avals)


def promote_weak_carry(in_avals, out_avals):
    """JAX's weak-type promotion of loop inputs: a weakly typed input whose body output has
    another dtype takes the promoted dtype (strongly typed). Returns new avals or None."""
    changed = False
    new = []
    for a, b in zip(in_avals, out_avals):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            dt, _ = dtypes.promote((a.dtype, True), (b.dtype, b.weak_type))
            new.append(ShapedArray(a.shape, dt, False))
            changed = True
        else:
            new.append(a)
    return new if changed else None


def coerce_to(x, aval):
    """`x` converted to `aval`'s dtype and weak type (a no-op when it already is)."""
    return _convert_weak(x, aval.dtype, aval.weak_type)


def carry_mismatch(what, tree, in_avals, out_avals, in_name, out_name):
    lines = describe_mismatches(tree, in_avals, out_avals, in_name, out_name)
    return ControlFlowTypeError(
        f"{what} must have identical types, got\n" + "\n".join(lines) + "\n"
        f"The loop carry must keep its shape and dtype across iterations (cast inside the "
        f"body, or give the initial value the dtype the body produces).",
        _mismatch_tuples(tree, in_avals, out_avals),
    )


def stage_loop(carry_leaves, carry_tree, stage_fns, body_index, out_tree_of, what, names):
    """Stage loop bodies until the carry types are stable (weak-type promotion).

    `stage_fns(carry_avals)` returns the list of `_Staged`; `out_tree_of(staged)` and the
    carry part of the body outputs are compared with the carry. Returns (staged, leaves)."""
    avals = [aval_of(x) for x in carry_leaves]
    for _ in range(len(avals) + 2):
        staged = stage_fns(avals)
        body = staged[body_index]
        tree, outs = out_tree_of(body)
        if tree != carry_tree:
            raise ControlFlowTypeError(
                f"{what} must have same type structure, got {carry_tree} in {names[0]} and "
                f"{tree} in {names[1]}."
            )
        promoted = promote_weak_carry(avals, outs)
        if promoted is None:
            if not _all_typematch(avals, outs):
                raise carry_mismatch(what, carry_tree, avals, outs, names[0], names[1])
            return staged, [coerce_to(x, a) for x, a in zip(carry_leaves, avals)]
        avals = promoted
    raise carry_mismatch(what, carry_tree, avals, outs, names[0], names[1])


def _check_cond_fun_output(s):
    avals = s.out_avals
    if len(avals) != 1 or avals[0].shape != () or avals[0].dtype != np.bool_:
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got output type(s) "
            f"{[a for a in avals]}."
        )


def while_loop(cond_fun, body_fun, init_val):
    """`val = init_val; while cond_fun(val): val = body_fun(val)`, staged as one statement."""
    return while_loop_labeled(cond_fun, body_fun, init_val)


def while_loop_labeled(cond_fun, body_fun, init_val, labels=None):
    """`while_loop` whose carry leaves get the readable names `labels` in the bodies."""
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    if _python_mode(init_val):
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    leaves, tree = tree_util.tree_flatten(init_val)
    leaves = [to_operand(x) for x in leaves]
    labels = labels or _arg_labels(leaves, "carry")

    def stage_both(avals):
        carry = tree_util.tree_unflatten(tree, avals)
        c = stage_body(cond_fun, (carry,), _body_name(cond_fun, "cond_fun"), labels)
        _check_cond_fun_output(c)
        b = stage_body(body_fun, (carry,), _body_name(body_fun, "body_fun"), labels)
        return [c, b]

    staged, leaves = stage_loop(
        leaves, tree, stage_both, 1, lambda s: (s.out_tree, s.out_avals),
        "body_fun output and input", ("the input carry", "the body_fun output"),
    )
    (cprog,), cconsts = close_over(staged[:1], len(leaves), consts_first=True)
    (bprog,), bconsts = close_over(staged[1:], len(leaves), consts_first=True)
    outs = while_p.bind(*cconsts, *bconsts, *leaves, cond_fun=cprog, body_fun=bprog,
                        cond_nconsts=len(cconsts), body_nconsts=len(bconsts))
    return tree_util.tree_unflatten(tree, outs)


# --- fori_loop -----------------------------------------------------------------------------


def _concrete_int(x):
    if isinstance(x, Tracer):
        return None
    try:
        return int(x)
    except TypeError:
        return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`for i in range(lower, upper): val = body_fun(i, val)`. Static bounds stage a `scan`
    of known length; traced bounds stage a `while_loop` (as JAX does)."""
    if not callable(body_fun):
        raise TypeError("fori_loop: body_fun argument should be callable.")
    lower, upper = to_operand(lower), to_operand(upper)
    for name, v in (("lower", lower), ("upper", upper)):
        if v.ndim != 0 or v.dtype.kind not in "iu":
            raise TypeError(f"fori_loop {name} bound must be an integer scalar, got {v.aval.str_short()}")
    if lower.dtype != upper.dtype:
        dt, weak = dtypes.promote((lower.dtype, lower.weak_type), (upper.dtype, upper.weak_type))
        lower, upper = _convert_weak(lower, dt, weak), _convert_weak(upper, dt, weak)
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if _python_mode(lower, upper, init_val):
        val = init_val
        for i in range(lo, hi):
            val = body_fun(i, val)
        return val
    if lo is not None and hi is not None:
        def scan_body(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None

        (_, result), _ = scan(scan_body, (lower, init_val), None, length=max(hi - lo, 0),
                              unroll=1 if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")

    def while_cond(carry):
        i, stop, _ = carry
        return i < stop

    def while_body(carry):
        i, stop, val = carry
        return i + 1, stop, body_fun(i, val)

    _, _, result = while_loop(while_cond, while_body, (lower, upper, init_val))
    return result


# --- scan ----------------------------------------------------------------------------------


def _scan_abstract(*args, body, num_consts, num_carry, length, reverse, unroll):
    consts = args[:num_consts]
    carry = args[num_consts:num_consts + num_carry]
    xs = args[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan: scanned operand {x.str_short()} does not have leading axis {length}")
    slices = tuple(x.update(shape=x.shape[1:]) for x in xs)
    _check_inputs("scan body", body.in_avals, consts + carry + slices)
    out = body.out_avals
    if len(out) < num_carry or not _all_typematch(out[:num_carry], carry):
        raise TypeError(f"scan: body returns {_short(out[:num_carry])} for the carry {_short(carry)}")
    ys = [ShapedArray((length,) + y.shape, y.dtype, y.weak_type) for y in out[num_carry:]]
    return list(carry) + ys


def _scan_impl(*args, body, num_consts, num_carry, length, reverse, unroll):
    consts = args[:num_consts]
    carry = tuple(args[num_consts:num_consts + num_carry])
    xs = [np.asarray(x) for x in args[num_consts + num_carry:]]
    if length == 0:  # run the body once on zeros only to learn the ys' shapes and dtypes
        probe = body(*consts, *carry, *[np.zeros(x.shape[1:], x.dtype) for x in xs])
        ys = [np.zeros((0,) + np.shape(y), np.asarray(y).dtype) for y in probe[num_carry:]]
        return [np.asarray(c) for c in carry] + ys
    steps = range(length - 1, -1, -1) if reverse else range(length)
    ys = [None] * length
    for i in steps:
        out = body(*consts, *carry, *[x[i] for x in xs])
        carry, ys[i] = tuple(out[:num_carry]), [np.asarray(y) for y in out[num_carry:]]
    stacked = [np.stack(col) for col in zip(*ys)] if ys[0] else []
    return [np.asarray(c) for c in carry] + stacked


def _scan_body_avals(arg_avals, params):
    m, n = params["num_consts"], params["num_carry"]
    xs = [x.update(shape=x.shape[1:]) for x in arg_avals[m + n:]]
    return {"body": list(arg_avals[:m + n]) + xs}


scan_p = ControlFlowPrimitive("scan", _scan_abstract, _scan_impl, _scan_body_avals)


def _scan_length(xs_leaves, length):
    for x in xs_leaves:
        if x.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {x.aval.str_short()}.")
    sizes = [x.shape[0] for x in xs_leaves]
    if length is not None:
        if isinstance(length, Tracer):
            raise length.concretization_error("the length argument to scan")
        length = int(length)
        if not all(length == s for s in sizes):
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading axis sizes {sizes}."
            )
        return length
    if not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(sizes)) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: {', '.join(str(s) for s in sizes)}.")
    return sizes[0]


def _unroll_param(unroll, length):
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    if not isinstance(unroll, (int, np.integer)) or unroll < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    return int(unroll)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """`carry = init; for x in xs: carry, y = f(carry, x)`; returns (carry, stacked ys)."""
    if not callable(f):
        raise TypeError("scan: f argument should be a callable.")
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    xs_leaves = [to_operand(x) for x in xs_leaves]
    length = _scan_length(xs_leaves, length)
    unroll = _unroll_param(unroll, length)
    if _python_mode(init, xs):
        return _python_scan(f, init, xs_leaves, xs_tree, length, reverse)
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    carry_leaves = [to_operand(x) for x in carry_leaves]
    x_slices = [x.aval.update(shape=x.shape[1:]) for x in xs_leaves]
    labels = _arg_labels(carry_leaves, "carry") + _arg_labels(xs_leaves, "x")
    box = {}

    def stage_f(avals):
        args = (tree_util.tree_unflatten(carry_tree, avals), tree_util.tree_unflatten(xs_tree, x_slices))
        return [stage_body(f, args, _body_name(f, "scan_body"), labels)]

    def carry_part(s):
        out = tree_util.tree_unflatten(s.out_tree, list(range(len(s.out_avals))))
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(f"scan body output must be a pair, got {s.out_tree}.")
        c_leaves, c_tree = tree_util.tree_flatten(out[0])
        y_leaves, box["y_tree"] = tree_util.tree_flatten(out[1])
        box["y"] = y_leaves
        return c_tree, [s.out_avals[i] for i in c_leaves]

    staged, carry_leaves = stage_loop(
        carry_leaves, carry_tree, stage_f, 0, carry_part,
        "scan body function carry input and carry output", ("the carry input", "the carry output"),
    )
    (program,), consts = close_over(staged, len(carry_leaves) + len(xs_leaves), consts_first=True)
    outs = scan_p.bind(*consts, *carry_leaves, *xs_leaves, body=program, num_consts=len(consts),
                       num_carry=len(carry_leaves), length=length, reverse=bool(reverse), unroll=unroll)
    n = len(carry_leaves)
    return (tree_util.tree_unflatten(carry_tree, outs[:n]), tree_util.tree_unflatten(box["y_tree"], outs[n:]))


def _python_scan(f, init, xs_leaves, xs_tree, length, reverse):
    from .shapes import broadcast_in_dim, concatenate

    carry, ys = init, [None] * length
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        x = tree_util.tree_unflatten(xs_tree, [leaf[i] for leaf in xs_leaves])
        carry, ys[i] = f(carry, x)
    if length == 0:
        raise ValueError("scan with length 0 under disable_jit needs a traced body to know the outputs")

    def stack(*leaves):
        leaves = [to_operand(y) for y in leaves]
        return concatenate([broadcast_in_dim(y, (1,) + y.shape, tuple(range(1, y.ndim + 1))) for y in leaves], 0)

    return carry, tree_util.tree_map(stack, *ys)


def map(f, xs, *, batch_size=None):  # noqa: A001 - lax's name
    """`stack([f(x) for x in xs])`, staged as a `scan` without carry. `batch_size` is
    accepted for JAX compatibility; elements are mapped one at a time (same results)."""
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")

    def body(carry, x):
        return carry, f(x)

    _, ys = scan(body, (), xs)
    return ys


__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "cond_p", "while_p", "scan_p"]
