"""The helpers that converted functions call (see `convert.py` for the rewrite itself).

A converted function reaches these through one closure variable, `_omni`, a `Runtime` bound
to the function's file. Each helper decides at trace time: a static (Python or concrete)
condition keeps plain Python semantics, a traced one stages `cond` / `while_loop` / logical
ops through `omnistage.lax.control_flow`.

State protocol: a converted `if`/`while`/`for` passes `locals()` and the tuple of the names
its bodies assign; a name not bound yet enters as an `Undefined`, which raises a clear
error when used. Bodies are functions of those names returning their new values.

Owns: `Runtime`, `Undefined` and the errors of rejected constructs. Imports core and lax.
"""
import builtins
import linecache
import re

import numpy as np

from ..core import dtypes, errors, tree_util
from ..core.array import Array, aval_of
from ..core.aval import ShapedArray
from ..core.primitive import current_trace
from ..core.source_info import file_label, file_path
from ..core.tracer import Tracer
from ..lax import control_flow as lcf
from ..lax import elementwise as lew
from ..lax._rules import to_operand
from .mutation_watch import MutationWatch
from .trace import StagingTrace


class UndefinedVariableError(UnboundLocalError):
    """A variable without a value was used (e.g. assigned in only one branch of a traced `if`)."""


class UnsupportedControlFlowError(errors.TracerBoolConversionError):
    """`break`/`continue`/`return`/`raise` under a traced condition: cannot be staged."""


class ControlFlowConversionTypeError(TypeError):
    """Branches or loop iterations give a variable different structures, shapes or dtypes."""


# --- Undefined ------------------------------------------------------------------------------


class Undefined:
    """The value of a variable that has none: using it in any way raises the stored reason."""

    __slots__ = ("name", "reason")

    def __init__(self, name, reason=None):
        self.name = name
        self.reason = reason

    def error(self):
        why = self.reason or "it is used before it is assigned"
        return UndefinedVariableError(f"local variable {self.name!r} has no value here: {why}")

    def __repr__(self):
        return f"<undefined {self.name}>"

    def __getattr__(self, attr):
        raise self.error()


def _raise_undefined(self, *args, **kwargs):
    raise self.error()


for _dunder in (
    "bool", "array", "call", "getitem", "iter", "len", "index", "int", "float", "complex",
    "neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "add", "radd", "sub", "rsub", "mul",
    "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow",
    "matmul", "rmatmul", "and", "rand", "or", "ror", "xor", "rxor", "lshift", "rshift",
    "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "contains",
    "format",
):
    setattr(Undefined, f"__{_dunder}__", _raise_undefined)


def _is_undefined(x):
    return type(x) is Undefined


def is_traced(x):
    return isinstance(x, Tracer)


def _is_array_leaf(x):
    return isinstance(x, (Tracer, Array, np.ndarray, np.generic, bool, int, float, complex))


# --- the runtime ----------------------------------------------------------------------------


class Runtime:
    """The `_omni` of one converted function: helpers that know its file for messages."""

    def __init__(self, filename, return_vars=()):
        self.filename = filename
        self.return_vars = frozenset(return_vars)

    def __repr__(self):
        return f"<omnistage control-flow runtime for {self.filename}>"

    # --- messages -----------------------------------------------------------------

    def where(self, line):
        text = linecache.getline(self.filename, line).strip()
        loc = f'File "{file_path(self.filename)}", line {line}'
        return loc + (f"\n    {text}" if text else "")

    def short(self, line):
        return f"{file_label(self.filename)}:{line}"

    def display(self, name):
        if name in self.return_vars:
            return "the return value"
        if name == _EXPR:
            return "the value of the conditional expression"
        return f"variable {name!r}"

    # --- recursive conversion ---------------------------------------------------------

    def call(self, fun):
        from .convert import convert

        return convert(fun)

    # --- conditions ---------------------------------------------------------------

    def predicate(self, test, construct, line):
        """A traced condition as a bool scalar (Python truthiness: nonzero is true)."""
        if test.ndim != 0:
            raise ControlFlowConversionTypeError(
                f"The condition of the {construct} at {self.short(line)} is a traced array of shape "
                f"{test.shape}; a traced condition must be a scalar. Use jnp.where(...) to select "
                f"elementwise, or reduce it with .any() / .all().\n{self.where(line)}"
            )
        return _truthy(test)

    def static_test(self, test, construct, line):
        """The condition of a construct that cannot be staged: fine while static."""
        if is_traced(test):
            raise UnsupportedControlFlowError(_unsupported_message(self, construct, line))
        return test

    def static_range(self, range_fn, args, construct, line):
        if range_fn is builtins.range and any(is_traced(a) for a in args):
            raise UnsupportedControlFlowError(_unsupported_message(self, construct, line))
        return range_fn(*args)

    # --- if / conditional expression ---------------------------------------------------

    def if_stmt(self, test, true_fn, false_fn, state, names, line):
        init = _initial_values(state, names)
        if not is_traced(test):
            return true_fn(*init) if test else false_fn(*init)
        pred = self.predicate(test, "`if`", line)
        return self._watched(state, "`if`", line, self.staged_if, pred, (false_fn, true_fn), init, names, line, "`if`")

    def if_exp(self, test, true_thunk, false_thunk, line):
        if not is_traced(test):
            return true_thunk() if test else false_thunk()
        pred = self.predicate(test, "conditional expression", line)
        branches = (lambda: (false_thunk(),), lambda: (true_thunk(),))
        (value,) = self.staged_if(pred, branches, (), (_EXPR,), line, "conditional expression")
        return value

    def staged_if(self, pred, fns, init, names, line, construct):
        return _StagedIf(self, pred, fns, init, names, line, construct).run()

    # --- loops --------------------------------------------------------------------

    def while_stmt(self, test_fn, body_fn, state, names, line):
        values = _initial_values(state, names)
        while True:
            trace = current_trace()
            mark = len(trace.stmts) if isinstance(trace, StagingTrace) else None
            test = test_fn(*values)
            if is_traced(test):
                if mark is not None:
                    # the loop stages its test again in its own body: this probe's statements
                    # would be dead code in the printed program
                    del trace.stmts[mark:]
                loop = _StagedLoop(self, names, line, "`while` loop")
                return self._watched(state, "`while` loop", line, loop.run_while, test_fn, body_fn, values)
            if not test:
                return values
            values = tuple(body_fn(*values))

    def for_stmt(self, range_fn, args, body_fn, state, names, line):
        values = _initial_values(state, names)
        if range_fn is not builtins.range or not any(is_traced(a) for a in args):
            for v in range_fn(*args):
                values = tuple(body_fn(v, *values[1:]))
            return values
        loop = _StagedLoop(self, names, line, "`for` loop")
        return self._watched(state, "`for` loop", line, loop.run_range, args, body_fn, values)

    def _watched(self, state, construct, line, stage, *args):
        """`stage(*args)`, raising a clear error at the construct if its staged bodies changed a
        Python object the function can see (the bodies are staged once, not run per case)."""
        watch = MutationWatch(state)
        try:
            result = stage(*args)
        except Exception as e:
            watch.check(self, construct, line, cause=e)  # the side effect is the cause to report
            raise
        watch.check(self, construct, line)
        return result

    # --- and / or / not -----------------------------------------------------------------

    def and_(self, first, *thunks):
        value = first
        for thunk in thunks:
            if is_traced(value):
                value = _select_logical(value, thunk(), "and")
            elif not value:
                return value
            else:
                value = thunk()
        return value

    def or_(self, first, *thunks):
        value = first
        for thunk in thunks:
            if is_traced(value):
                value = _select_logical(value, thunk(), "or")
            elif value:
                return value
            else:
                value = thunk()
        return value

    def not_(self, value):
        if not is_traced(value):
            return not value
        if value.dtype == np.bool_:
            return lew.bitwise_not(value)
        return lew.eq(value, _zero_like(value))


_EXPR = "<expression>"


def _initial_values(state, names):
    return tuple(state[n] if n in state else Undefined(n) for n in names)


def _zero_like(x):
    return Array(np.zeros((), x.dtype), x.weak_type)


def _truthy(x):
    x = to_operand(x)
    return x if x.dtype == np.bool_ else lew.ne(x, _zero_like(x))


def _select_logical(a, b, op):
    """`a and b` / `a or b` with a traced `a`: logical ops on bools, otherwise Python's
    value semantics (`b if a else a` for and) elementwise."""
    a, b = to_operand(a), to_operand(b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        return lew.bitwise_and(a, b) if op == "and" else lew.bitwise_or(a, b)
    dt, weak = dtypes.promote((a.dtype, a.weak_type), (b.dtype, b.weak_type))
    t = _truthy(a)
    a, b = lew._convert_weak(a, dt, weak), lew._convert_weak(b, dt, weak)
    return lew.select_n(t, a, b) if op == "and" else lew.select_n(t, b, a)


# --- rejected constructs --------------------------------------------------------------------

_ADVICE = {
    "break": "Fold the exit condition into the loop condition (`while cond and not done:`) and "
             "keep the loop free of `break`.",
    "continue": "Guard the rest of the body with an `if` instead of `continue`.",
    "return": "Assign the result to a variable inside the loop and return it after the loop.",
    "raise": "A staged program cannot raise at run time; check the value outside the traced "
             "code, or return a flag (or NaN) instead.",
    "del": "Do not delete variables inside a branch whose condition is traced.",
}

_STAGED_AS = {"if": "lax.cond", "while": "lax.while_loop", "for": "lax.fori_loop"}


def _unsupported_message(rt, construct, line):
    kind, stmt = construct.split(":")
    return (
        f"`{stmt}` inside a{'n' if kind == 'if' else ''} `{kind}` whose condition is a traced value "
        f"cannot be converted: the `{kind}` at {rt.short(line)} would be staged as "
        f"{_STAGED_AS[kind]}, which has no `{stmt}`. {_ADVICE[stmt]}\n{rt.where(line)}"
    )


# --- staging an if --------------------------------------------------------------------------


class _BranchResult:
    """What one branch produced, per variable: Undefined, or (treedef, leaves)."""

    def __init__(self, values):
        self.values = values
        self.trees = []
        self.leaves = []
        for v in values:
            if _is_undefined(v):
                self.trees.append(None)
                self.leaves.append(None)
            else:
                leaves, tree = tree_util.tree_flatten(v)
                self.trees.append(tree)
                self.leaves.append(leaves)


class _StagedIf:
    """Stage each branch of a traced `if` once; merge what they assign into cond outputs."""

    def __init__(self, rt, pred, fns, init, names, line, construct):
        self.rt, self.pred, self.fns, self.init = rt, pred, fns, init
        self.names, self.line, self.construct = names, line, construct
        self.branch_names = ("the false branch", "the true branch")

    def run(self):
        results, staged = [], []
        for fn, role in zip(self.fns, ("if_false", "if_true")):
            box = {}
            staged.append(lcf.stage_body(self._flat(fn, box), (), role))
            results.append(box["result"])
        plan = self._plan(results)
        outs = self._bind(staged, results, plan) if plan["outputs"] else []
        return self._assemble(results, plan, outs)

    def _flat(self, fn, box):
        def flat():
            out = tuple(fn(*self.init))
            res = box["result"] = _BranchResult(out)
            return [to_operand(x) for leaves in res.leaves if leaves for x in leaves if _is_array_leaf(x)]

        flat.__name__ = getattr(fn, "__name__", "branch")
        return flat

    def _plan(self, results):
        """Decide per variable: undefined, static pass-through leaves, or cond outputs."""
        plan = {"undefined": {}, "static": {}, "outputs": []}
        for j, name in enumerate(self.names):
            trees = [r.trees[j] for r in results]
            if all(t is None for t in trees):
                plan["undefined"][j] = next((r.values[j] for r in results), Undefined(name))
                continue
            if any(t is None for t in trees):
                plan["undefined"][j] = Undefined(name, self._one_branch_reason(name, trees))
                continue
            if any(t != trees[0] for t in trees[1:]):
                raise self._error(name, f"{trees[1]} in {self.branch_names[1]} vs {trees[0]} in "
                                        f"{self.branch_names[0]}", "structure")
            for k in range(trees[0].num_leaves):
                leaves = [r.leaves[j][k] for r in results]
                if all(x is leaves[0] for x in leaves[1:]):
                    plan["static"][(j, k)] = leaves[0]
                elif not all(_is_array_leaf(x) for x in leaves):
                    kinds = " vs ".join(type(x).__name__ for x in leaves[::-1])
                    raise self._error(name, f"non-array values differ between the branches ({kinds})", "value")
                else:
                    plan["outputs"].append((j, k))
        return plan

    def _one_branch_reason(self, name, trees):
        which = self.branch_names[0] if trees[0] is not None else self.branch_names[1]
        return (
            f"it is assigned only in {which} of the {self.construct} at {self.rt.short(self.line)}, "
            f"whose condition is traced (both branches are staged, so it must have a value after "
            f"either). Assign it before the {self.construct} or in both branches.\n"
            f"{self.rt.where(self.line)}"
        )

    def _error(self, name, detail, what):
        return ControlFlowConversionTypeError(
            f"{self.rt.display(name)[0].upper()}{self.rt.display(name)[1:]} must have the same "
            f"{'structure, shape and dtype' if what != 'value' else 'value'} in both branches of "
            f"the {self.construct} at {self.rt.short(self.line)}, whose condition is traced: "
            f"{detail}.\n{self.rt.where(self.line)}"
        )

    def _bind(self, staged, results, plan):
        programs = []
        target = self._output_avals(staged, results, plan)
        for s, r in zip(staged, results):
            positions = _output_positions(r)
            keep = [positions[jk] for jk in plan["outputs"]]
            program = lcf.cast_outputs(lcf.select_outputs(s.program, keep), target)
            programs.append(lcf._Staged(program, None, s.captures, None))
        programs, consts = lcf.close_over(programs, 0, consts_first=False)
        return lcf.cond_p.bind(self.pred, *consts, branches=tuple(programs))

    def _output_avals(self, staged, results, plan):
        """Branch outputs must agree in shape; dtypes may differ only by weak types
        (Python scalars), which are promoted as jnp would."""
        target = []
        for j, k in plan["outputs"]:
            # from the values themselves: a literal output's program aval has lost its weak type
            avals = [aval_of(to_operand(r.leaves[j][k])) for r in results]
            target.append(self._join((j, k), avals))
        return target

    def _join(self, jk, avals):
        name = self.names[jk[0]]
        sides = f"{avals[1].str_short()} in {self.branch_names[1]} vs {avals[0].str_short()} in {self.branch_names[0]}"
        if avals[0].shape != avals[1].shape:
            raise self._error(name, f"shapes differ, {sides}", "shape")
        dt, weak = dtypes.promote(*[(a.dtype, a.weak_type) for a in avals])
        if any(not a.weak_type and a.dtype != dt for a in avals):
            raise self._error(name, f"dtypes differ, {sides}", "dtype")
        return ShapedArray(avals[0].shape, dt, all(a.weak_type for a in avals))

    def _assemble(self, results, plan, outs):
        out_values = dict(zip(plan["outputs"], outs))
        values = []
        for j, name in enumerate(self.names):
            if j in plan["undefined"]:
                values.append(plan["undefined"][j])
                continue
            tree = results[0].trees[j]
            leaves = [plan["static"][(j, k)] if (j, k) in plan["static"] else out_values[(j, k)]
                      for k in range(tree.num_leaves)]
            values.append(tree_util.tree_unflatten(tree, leaves))
        return tuple(values)


def _output_positions(result):
    """{(variable index, leaf index): position among the branch's array outputs}."""
    positions, n = {}, 0
    for j, leaves in enumerate(result.leaves):
        for k, x in enumerate(leaves or ()):
            if _is_array_leaf(x):
                positions[(j, k)] = n
                n += 1
    return positions


# --- staging a loop -------------------------------------------------------------------------


class _StagedLoop:
    """A `while` / `for ... in range` with a traced condition or bound, as lax.while_loop.

    Variables the body assigns that have a value before the loop are the carry; the others
    are loop temporaries, Undefined after the loop."""

    def __init__(self, rt, names, line, construct):
        self.rt, self.names, self.line, self.construct = rt, names, line, construct

    def _split(self, values):
        carried = [j for j, v in enumerate(values) if not _is_undefined(v)]
        static = {}
        for j in carried:
            leaves, _ = tree_util.tree_flatten(values[j])
            for k, x in enumerate(leaves):
                if not _is_array_leaf(x):
                    static[(j, k)] = x
        return carried, static

    def _labels(self, values, carried):
        """Readable names of the carry leaves in the staged bodies: the user's variables."""
        labels = []
        for j in carried:
            leaves, _ = tree_util.tree_flatten(values[j])
            arrays = [k for k, x in enumerate(leaves) if (j, k) not in self._static]
            name = self.names[j] if self.names[j].isidentifier() and self.names[j] != "_" else "carry"
            labels += [name] if len(arrays) == 1 else [f"{name}_{k}" for k in arrays]
        return labels

    def _carry_of(self, values, carried, static):
        """The arrays of the carried variables (non-array leaves stay static)."""
        out = []
        for j in carried:
            leaves, _ = tree_util.tree_flatten(values[j])
            out.append([x for k, x in enumerate(leaves) if (j, k) not in static])
        return out

    def _values_of(self, carry, template, carried, static):
        values = list(template)
        for j, arrays in zip(carried, carry):
            leaves, tree = tree_util.tree_flatten(template[j])
            it = iter(arrays)
            values[j] = tree_util.tree_unflatten(
                tree, [static[(j, k)] if (j, k) in static else next(it) for k in range(len(leaves))]
            )
        return values

    def _undefined_after(self, j):
        name = self.names[j]
        return Undefined(name, (
            f"it is first assigned inside the {self.construct} at {self.rt.short(self.line)}, which "
            f"is staged because its condition is traced, so it has no value after the loop. "
            f"Assign it before the loop to carry it through.\n{self.rt.where(self.line)}"
        ))

    def _check_static(self, values, template, carried, static):
        for j in carried:
            leaves, tree = tree_util.tree_flatten(values[j])
            t_leaves, t_tree = tree_util.tree_flatten(template[j])
            if tree != t_tree:
                raise self._type_error(self.names[j], f"its structure changes from {t_tree} to {tree}")
            for k, x in enumerate(leaves):
                if (j, k) in static and x is not static[(j, k)]:
                    raise self._type_error(self.names[j], f"it is reassigned to a non-array value ({x!r})")
                if (j, k) not in static and not _is_array_leaf(x):
                    raise self._type_error(self.names[j], f"it becomes a {type(x).__name__}, not an array")

    def _type_error(self, name, detail):
        d = self.rt.display(name)
        return ControlFlowConversionTypeError(
            f"{d[0].upper()}{d[1:]} must keep its structure, shape and dtype across iterations of "
            f"the {self.construct} at {self.rt.short(self.line)}, whose condition is traced: "
            f"{detail}.\n{self.rt.where(self.line)}"
        )

    def _rethrow(self, exc, carried, offset=0):
        """A lax carry mismatch, re-said with the user's variable names."""
        lines = []
        for path, a, b in exc.mismatches:
            m = re.match(r"^\[(\d+)\]", path)
            idx = int(m.group(1)) - offset if m else -1
            name = self.names[carried[idx]] if 0 <= idx < len(carried) else path
            lines.append(f"{self.rt.display(name)}: {a.str_short()} before an iteration vs "
                         f"{b.str_short()} after it")
        if not lines:
            return exc
        return ControlFlowConversionTypeError(
            f"Variables must keep their shape and dtype across iterations of the {self.construct} at "
            f"{self.rt.short(self.line)}, whose condition is traced:\n  " + "\n  ".join(lines) +
            f"\nCast inside the body, or give the variable its final dtype before the loop.\n"
            f"{self.rt.where(self.line)}"
        )

    def _finish(self, values, carried, carry):
        out = self._values_of(carry, values, carried, self._static)
        for j in range(len(values)):
            if j not in carried:
                out[j] = self._undefined_after(j)
        return tuple(out)

    def run_while(self, test_fn, body_fn, values):
        carried, self._static = self._split(values)
        template = values

        def full(carry):
            vals = self._values_of(carry, template, carried, self._static)
            return [v if j in carried else Undefined(self.names[j]) for j, v in enumerate(vals)]

        def cond_fun(carry):
            return self.rt.predicate(to_operand(test_fn(*full(carry))), self.construct, self.line)

        def body_fun(carry):
            new = tuple(body_fn(*full(carry)))
            self._check_static(new, template, carried, self._static)
            return self._carry_of(new, carried, self._static)

        cond_fun.__name__, body_fun.__name__ = "while_test", "while_body"
        try:
            carry = lcf.while_loop_labeled(cond_fun, body_fun, self._carry_of(values, carried, self._static),
                                           self._labels(values, carried))
        except lcf.ControlFlowTypeError as e:
            raise self._rethrow(e, carried) from None
        return self._finish(values, carried, carry)

    def run_range(self, args, body_fn, values):
        start, stop, step = _range_args(self.rt, args, self.line)
        values = list(values)
        if _is_undefined(values[0]):  # the loop variable starts as `start`, so it is carried
            values[0] = start
        carried, self._static = self._split(values)
        template = values

        def full(carry):
            vals = self._values_of(carry, template, carried, self._static)
            return [v if j in carried else Undefined(self.names[j]) for j, v in enumerate(vals)]

        def cond_fun(c):
            i = c[0]
            if isinstance(step, int):
                return lew.lt(i, stop) if step > 0 else lew.gt(i, stop)
            return lew.select_n(lew.gt(step, _zero_like(step)), lew.gt(i, stop), lew.lt(i, stop))

        def body_fun(c):
            i, carry = c
            vals = full(carry)
            new = tuple(body_fn(i, *vals[1:]))
            self._check_static(new, template, carried, self._static)
            return (lew.add(i, step if not isinstance(step, int) else _typed(step, i)),
                    self._carry_of(new, carried, self._static))

        cond_fun.__name__, body_fun.__name__ = "for_test", "for_body"
        try:
            _, carry = lcf.while_loop_labeled(
                cond_fun, body_fun, (start, self._carry_of(values, carried, self._static)),
                ["counter"] + self._labels(values, carried))
        except lcf.ControlFlowTypeError as e:
            raise self._rethrow(_shift_paths(e), carried) from None
        return self._finish(values, carried, carry)


def _shift_paths(exc):
    """Paths of the (counter, carry) loop state: `[1][k]...` -> `[k]...`."""
    exc.mismatches = [(re.sub(r"^\[1\]", "", p), a, b) for p, a, b in exc.mismatches]
    return exc


def _typed(step, like):
    return Array(np.asarray(step, like.dtype), like.weak_type)


def _range_args(rt, args, line):
    """(start, stop, step) of a traced `range(...)`, as arrays of one integer dtype."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}\n{rt.where(line)}")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
    ops = [to_operand(a) for a in (start, stop, step)]
    for a in ops:
        if a.ndim != 0 or a.dtype.kind not in "iu":
            raise TypeError(
                f"range() arguments of the `for` loop at {rt.short(line)} must be integer scalars, "
                f"got {a.aval.str_short()}\n{rt.where(line)}"
            )
    dt, weak = dtypes.promote(*[(a.dtype, a.weak_type) for a in ops])
    start, stop = (lew._convert_weak(a, dt, weak) for a in ops[:2])
    if not is_traced(step):
        step = int(step)
        if step == 0:
            raise ValueError(f"range() arg 3 must not be zero\n{rt.where(line)}")
    else:
        step = lew._convert_weak(ops[2], dt, weak)
    return start, stop, step


__all__ = ["Runtime", "Undefined", "UndefinedVariableError", "UnsupportedControlFlowError",
           "ControlFlowConversionTypeError"]
