"""`custom_jvp` and `custom_vjp`: user-defined derivatives, with JAX's API.

A call of a decorated function stages one statement whose bodies are Programs:

    outs = custom_jvp_call(*args, *captured, fun=f, jvp=f_jvp)
        f(*args, *captured) -> outs
        f_jvp(*args, *tangents of the float args, *captured) -> (*outs, *tangents of outs)
    outs = custom_vjp_call(*args, *captured, fun=f, fwd=f_fwd, bwd=f_bwd, num_res=r)
        f_fwd(*args, *captured) -> (*outs, *residuals)
        f_bwd(*residuals, *cotangents of outs, *captured) -> cotangents of the float args

Without differentiation the statement computes `fun` (code generation inlines it:
`core.primitive.inline_for_lowering`). Forward mode runs the JVP body; reverse mode runs
`fwd` forward and `bwd` backward (custom_vjp), or transposes the JVP body by running reverse
mode over it with respect to its tangent inputs, where it is linear (custom_jvp). Values the
functions close over are operands without derivatives, as JAX treats closed-over
constants of a custom rule.
"""
import functools

import numpy as np

from ..core import dtypes
from ..core import primitive as core_primitive
from ..core import tree_util
from ..core.array import aval_of
from ..core.thread_local import ThreadLocalStack
from ..lax import control_flow as CF
from ..lax._rules import to_operand
from ..staging import replay
from . import zeros as Z
from .rules import FWD, JVP_JOINT, VJP

# The custom functions whose rule this thread is staging, innermost last: a rule's own
# call of its function (`ans = f(x)`) is a plain call. Per thread: another thread calling the
# same function at that moment must still get its custom rule.
_STAGING_RULE_OF = ThreadLocalStack()


def _fun_abstract(*args, **bodies):
    return list(bodies["fun"].out_avals)


def _fun_impl(*args, fun, **other):
    return fun(*args)


def _no_staging(arg_avals, params):
    return {}


custom_jvp_call_p = CF.ControlFlowPrimitive("custom_jvp_call", _fun_abstract, _fun_impl, _no_staging)
custom_vjp_call_p = CF.ControlFlowPrimitive("custom_vjp_call", _fun_abstract, _fun_impl, _no_staging)
core_primitive.inline_for_lowering["custom_jvp_call"] = "fun"
core_primitive.inline_for_lowering["custom_vjp_call"] = "fun"


def _float0_zeros(aval):
    return np.zeros(aval.shape, dtype=dtypes.float0)


class _Call:
    """One call of a custom-rule function: its static (nondiff) and array arguments, their
    flattened leaves and avals, and `fun_flat`, the function on flat leaves (it records
    the output tree in `box["tree"]`)."""

    def __init__(self, owner, args):
        self.owner = owner
        self.static, self.dyn = _split_nondiff(args, owner.nondiff_argnums)
        self.n = len(args)
        leaves, self.in_tree = tree_util.tree_flatten(tuple(self.dyn))
        self.leaves = [to_operand(x) for x in leaves]
        self.avals = [aval_of(x) for x in self.leaves]
        self.diff = [Z.is_differentiable(a) for a in self.avals]
        self.box = {}

        def fun_flat(*xs):
            out = owner.fun(*self.args_of(xs))
            leaves_out, self.box["tree"] = tree_util.tree_flatten(out)
            return leaves_out

        fun_flat.__name__ = owner.__name__
        self.fun_flat = fun_flat

    def args_of(self, xs):
        """The full argument list for flat leaves `xs`."""
        return _merge(self.static, tree_util.tree_unflatten(self.in_tree, list(xs)), self.n)


def _split_nondiff(args, nondiff_argnums):
    """(static values by position, the differentiable arguments in order)."""
    static = {i: args[i] for i in nondiff_argnums}
    dyn = [a for i, a in enumerate(args) if i not in static]
    return static, dyn


def _merge(static, dyn, n):
    it = iter(dyn)
    return [static[i] if i in static else next(it) for i in range(n)]


def _resolve_args(fun, args, kwargs):
    """Keyword arguments become positional (JAX resolves them through the signature)."""
    if not kwargs:
        return tuple(args)
    import inspect

    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


class custom_jvp:  # noqa: N801 - JAX's name
    """A function with a user-defined JVP (`@f.defjvp` or `f.defjvps`)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One function per argument: jvps[i](tangent_i, primal_out, *primals) -> tangent
        contribution (None: the argument has no derivative)."""

        def jvp(primals, tangents):
            out = self.fun(*primals)
            terms = [
                j(t, out, *primals) for j, t in zip(jvps, tangents)
                if j is not None and not _is_float0(t)
            ]
            total = tree_util.tree_map(lambda *xs: functools.reduce(lambda a, b: a + b, xs), *terms) if terms else tree_util.tree_map(lambda o: o * 0, out)
            return out, total

        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {self.__name__} using defjvp."
            )
        args = _resolve_args(self.fun, args, kwargs)
        if self in _STAGING_RULE_OF or core_primitive.current_trace() is None:
            # the rule calls the function for its primal value (`ans = f(x)`): plain call,
            # else staging the rule would stage the rule again, forever. With no trace at
            # all (an eager call), nothing can ask for the rule: as JAX, just the function
            # (staging both bodies each call cost ~0.3 s for lax.igamma)
            return self.fun(*args)
        c = _Call(self, args)
        static, n, leaves, in_tree, avals, diff, box = c.static, c.n, c.leaves, c.in_tree, c.avals, c.diff, c.box
        fun_flat = c.fun_flat


        def jvp_flat(*xs):
            _STAGING_RULE_OF.append(self)
            try:
                return jvp_body(*xs)
            finally:
                _STAGING_RULE_OF.pop()

        def jvp_body(*xs):
            primals = tree_util.tree_unflatten(in_tree, list(xs[: len(avals)]))
            ts_iter = iter(xs[len(avals):])
            ts = [next(ts_iter) if d else _float0_zeros(a) for d, a in zip(diff, avals)]
            tangents = tree_util.tree_unflatten(in_tree, ts)
            nd_vals = [static[i] for i in self.nondiff_argnums]
            p_args = _merge(static, primals, n)
            t_args = [t for i, t in enumerate(_merge({i: None for i in static}, tangents, n)) if i not in static]
            got = self.jvp(*nd_vals, tuple(x for i, x in enumerate(p_args) if i not in static), tuple(t_args))
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise TypeError(
                    f"Custom JVP rule of {self.__name__} must produce a pair (list or tuple of length "
                    f"two) representing primal and tangent outputs, got {got!r}."
                )
            out, t_out = got
            out_leaves, out_tree = tree_util.tree_flatten(out)
            t_leaves, t_tree = tree_util.tree_flatten(t_out)
            if out_tree != t_tree:
                raise TypeError(
                    f"Custom JVP rule of {self.__name__} must produce primal and tangent outputs "
                    f"with equal container (pytree) structures, but got {out_tree} and {t_tree}."
                )
            out_avals = [aval_of(to_operand(o)) for o in out_leaves]
            t_fixed = []
            for t, a in zip(t_leaves, out_avals):
                if not Z.is_differentiable(a):
                    continue
                t_fixed.append(_match_tangent(t, a, self.__name__))
            return list(out_leaves) + t_fixed

        jvp_flat.__name__ = f"{self.__name__}_jvp"
        fun_s = CF.stage_body(fun_flat, tuple(avals), self.__name__)
        jvp_avals = tuple(avals) + tuple(a for a, d in zip(avals, diff) if d)
        jvp_s = CF.stage_body(jvp_flat, jvp_avals, f"{self.__name__}_jvp")
        _check_jvp_outputs(fun_s, jvp_s, self.__name__)
        (fun_p, jvp_p), caps = _close(fun_s, jvp_s, len(avals), len(jvp_avals))
        outs = custom_jvp_call_p.bind(*leaves, *caps, fun=fun_p, jvp=jvp_p, num_caps=len(caps))
        return tree_util.tree_unflatten(box["tree"], outs)


def _close(fun_s, jvp_s, n_fun, n_jvp):
    """Both bodies take the union of their captured values after their declared inputs."""
    union, seen = [], set()
    for s in (fun_s, jvp_s):
        for t in s.captures:
            if id(t) not in seen:
                seen.add(id(t))
                union.append(t)
    fun_p = CF._with_inputs(fun_s, n_fun, union, consts_first=False)
    jvp_p = CF._with_inputs(jvp_s, n_jvp, union, consts_first=False)
    return (fun_p, jvp_p), union


def _is_float0(t):
    return isinstance(t, np.ndarray) and t.dtype == dtypes.float0


def _match_tangent(t, aval, name):
    t = to_operand(t)
    ta = aval_of(t)
    if ta.shape != aval.shape:
        raise TypeError(
            f"Custom JVP rule of {name} must produce primal and tangent outputs with equal "
            f"shapes and dtypes, but got primal {aval.str_short()} and tangent {ta.str_short()}."
        )
    if ta.dtype != aval.dtype:
        from ..lax import elementwise as E

        t = E.convert_element_type(t, aval.dtype)
    return t


def _check_jvp_outputs(fun_s, jvp_s, name):
    n = len(fun_s.out_avals)
    got = jvp_s.out_avals[:n]
    for a, b in zip(fun_s.out_avals, got):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(
                f"Custom JVP rule of {name} must produce primal outputs with the same shapes and "
                f"dtypes as the function: function gives {a.str_short()}, rule gives {b.str_short()}."
            )


def _split_caps(operands, num_caps):
    """(declared arguments, captured values): the captured ones are the last `num_caps`."""
    k = len(operands) - num_caps
    return list(operands[:k]), list(operands[k:])


def _custom_jvp_jvp(primals, tangents, *, fun, jvp, num_caps):
    args, caps = _split_caps(primals, num_caps)
    avals = [aval_of(a) for a in args]
    diff = [Z.is_differentiable(a) for a in avals]
    ts = [Z.instantiate(t, a) for t, a, d in zip(tangents, avals, diff) if d]
    outs, _ = replay.evaluate(jvp, list(args) + ts + list(caps))
    n_out = len(fun.out_avals)
    out_mask = [Z.is_differentiable(a) for a in fun.out_avals]
    t_it = iter(outs[n_out:])
    return list(outs[:n_out]), [next(t_it) if m else None for m in out_mask]


def _custom_jvp_vjp(cts, ins, outs, *, fun, jvp, num_caps):
    args, caps = _split_caps(ins, num_caps)
    avals = [aval_of(a) for a in args]
    diff = [Z.is_differentiable(a) for a in avals]
    zeros_t = [Z.zeros(a) for a, d in zip(avals, diff) if d]
    n_out = len(fun.out_avals)
    out_mask = [Z.is_differentiable(a) for a in fun.out_avals]
    from . import reverse as rev

    active = [False] * len(args) + [True] * len(zeros_t) + [False] * len(caps)
    _, tape = rev.vjp_forward(jvp, list(args) + zeros_t + list(caps), active)
    t_cts = [c for c, m in zip(cts, out_mask) if m]
    cin = rev.vjp_backward(tape, [None] * n_out + t_cts)
    t_in = iter(cin[len(args): len(args) + len(zeros_t)])
    return [next(t_in) if d else None for d in diff] + [None] * len(caps)


JVP_JOINT["custom_jvp_call"] = _custom_jvp_jvp
VJP["custom_jvp_call"] = _custom_jvp_vjp


# --- custom_vjp ----------------------------------------------------------------------------------


class custom_vjp:  # noqa: N801 - JAX's name
    """A function with a user-defined VJP (`f.defvjp(f_fwd, f_bwd)`)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} using defvjp.")
        args = _resolve_args(self.fun, args, kwargs)
        if self in _STAGING_RULE_OF:  # fwd computing `f(x)` for its primal value (see custom_jvp)
            return self.fun(*args)
        c = _Call(self, args)
        static, dyn, leaves, avals, diff, box = c.static, c.dyn, c.leaves, c.avals, c.diff, c.box
        fun_flat = c.fun_flat

        def fwd_flat(*xs):
            got = self.fwd(*c.args_of(xs))
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise TypeError(
                    f"Custom VJP fwd rule {getattr(self.fwd, '__name__', self.fwd)} for function "
                    f"{self.__name__} must produce a pair (list or tuple of length two) where the "
                    f"first element represents the primal output and the second element represents "
                    f"residuals (the input to the bwd rule), got {got!r}."
                )
            out, res = got
            out_leaves, out_tree = tree_util.tree_flatten(out)
            res_leaves, box["res_tree"] = tree_util.tree_flatten(res)
            box["fwd_out_tree"] = out_tree
            box["n_res"] = len(res_leaves)
            return list(out_leaves) + [to_operand(r) for r in res_leaves]

        fwd_flat.__name__ = f"{self.__name__}_fwd"
        fun_s = CF.stage_body(fun_flat, tuple(avals), self.__name__)
        fwd_s = CF.stage_body(_guarded(self, fwd_flat), tuple(avals), f"{self.__name__}_fwd")
        if box["fwd_out_tree"] != box["tree"]:
            raise TypeError(
                f"Custom VJP fwd rule must produce an output with the same container (pytree) "
                f"structure as the args tuple of the primal function, and in particular must "
                f"produce a tuple of length equal to the number of arguments to the primal "
                f"function, but got fwd output structure {box['fwd_out_tree']} for primal output "
                f"structure {box['tree']}."
            )
        n_out = len(fun_s.out_avals)
        res_avals = fwd_s.out_avals[n_out:]
        out_avals = fun_s.out_avals
        nd_vals = [static[i] for i in self.nondiff_argnums]

        def bwd_flat(*xs):
            res = tree_util.tree_unflatten(box["res_tree"], list(xs[: len(res_avals)]))
            ct = tree_util.tree_unflatten(box["tree"], list(xs[len(res_avals):]))
            got = self.bwd(*nd_vals, res, ct)
            if not isinstance(got, (tuple, list)) or len(got) != len(dyn):
                raise TypeError(
                    f"Custom VJP bwd rule must produce a tuple with one cotangent per "
                    f"(differentiable) argument of {self.__name__} ({len(dyn)}), got {got!r}."
                )
            flat = []
            for arg, g in zip(dyn, got):
                arg_leaves = tree_util.tree_leaves(arg)
                g_leaves = [None] * len(arg_leaves) if g is None else tree_util.tree_leaves(g, is_leaf=lambda x: x is None)
                flat.extend(zip(arg_leaves, g_leaves))
            return [
                _match_tangent(Z.zeros(a) if g is None else g, a, self.__name__)
                for (x, g), a, d in zip(flat, avals, diff) if d
            ]

        bwd_flat.__name__ = f"{self.__name__}_bwd"
        bwd_s = CF.stage_body(_guarded(self, bwd_flat), tuple(res_avals) + tuple(out_avals), f"{self.__name__}_bwd")
        union, seen = [], set()
        for s in (fun_s, fwd_s, bwd_s):
            for t in s.captures:
                if id(t) not in seen:
                    seen.add(id(t))
                    union.append(t)
        fun_p = CF._with_inputs(fun_s, len(avals), union, False)
        fwd_p = CF._with_inputs(fwd_s, len(avals), union, False)
        bwd_p = CF._with_inputs(bwd_s, len(res_avals) + len(out_avals), union, False)
        outs = custom_vjp_call_p.bind(*leaves, *union, fun=fun_p, fwd=fwd_p, bwd=bwd_p, num_res=len(res_avals))
        return tree_util.tree_unflatten(box["tree"], outs)


def _guarded(owner, fn):
    """`fn` run with `owner`'s re-entrancy guard up (its calls of `owner` are plain calls)."""

    @functools.wraps(fn)
    def run(*xs):
        _STAGING_RULE_OF.append(owner)
        try:
            return fn(*xs)
        finally:
            _STAGING_RULE_OF.pop()

    return run


def _custom_vjp_jvp(primals, tangents, *, fun, fwd, bwd, num_res):
    raise TypeError(
        "can't apply forward-mode autodiff (jvp) to a custom_vjp function "
        f"({fun.name}); use custom_jvp for functions that need forward mode."
    )


def _n_vjp_caps(fun, bwd, num_res):
    n_out = len(fun.out_avals)
    return len(bwd.in_names) - num_res - n_out


def _custom_vjp_fwd(ins, *, fun, fwd, bwd, num_res):
    outs, _ = replay.evaluate(fwd, list(ins))
    n_out = len(fun.out_avals)
    return list(outs[:n_out]), list(outs[n_out:])


def _custom_vjp_vjp(cts, ins, outs, res, *, fun, fwd, bwd, num_res):
    n_caps = _n_vjp_caps(fun, bwd, num_res)
    args = ins[: len(ins) - n_caps]
    caps = ins[len(ins) - n_caps:]
    cts_full = [Z.instantiate(c, a) for c, a in zip(cts, fun.out_avals)]
    got, _ = replay.evaluate(bwd, list(res) + cts_full + list(caps))
    diff = [Z.is_differentiable(aval_of(a)) for a in args]
    it = iter(got)
    return [next(it) if d else None for d in diff] + [None] * n_caps


JVP_JOINT["custom_vjp_call"] = _custom_vjp_jvp
FWD["custom_vjp_call"] = _custom_vjp_fwd
VJP["custom_vjp_call"] = _custom_vjp_vjp


def _abstract_vjp(*args, fun, fwd, bwd, num_res):
    return list(fun.out_avals)


custom_vjp_call_p.abstract_eval = _abstract_vjp

__all__ = ["custom_jvp", "custom_vjp"]
