"""The differentiation API with JAX's signatures: `jvp`, `vjp`, `linearize`, `grad`,
`value_and_grad`, `jacfwd`, `jacrev`, `hessian`.

Each call stages the user's function into a Program (Python control flow on traced values
converted, as `jit` does), then runs a differentiation pass (`omnistage.autodiff`) over it
in the current context: inside `jit`/`make_jaxpr`/another transformation the derivative
statements are staged there; outside, they run eagerly on NumPy (no compilation).
"""
import functools

import numpy as np

from .api import _arg_names, _staged_constant, check_outputs, flat_arg_names, leaf_aval, leaf_value
from .autodiff import all_rules  # noqa: F401 - fills the rule tables
from .autodiff import forward, reverse
from .autodiff import zeros as Z
from .autodiff.linearize import linearize_program
from .core import dtypes
from .core import tree_util
from .core.array import Array
from .core.tracer import Tracer
from .staging.convert import convert
from .staging.trace import DebugInfo, stage


# --- staging the user's function ----------------------------------------------------------


class _Staged:
    """A user function staged on its arguments' avals: the Program, the flat argument
    values to run it on (captured outer values last), and the output pytree structure."""

    __slots__ = ("program", "args", "n_leaves", "in_tree", "out_tree", "aux_tree", "n_out")

    def outputs(self, flat):
        """(output pytree, aux pytree or None) from the program's flat outputs."""
        flat = [_as_array(v, a) for v, a in zip(flat, self.program.out_avals)]
        out = tree_util.tree_unflatten(self.out_tree, flat[: self.n_out])
        aux = None if self.aux_tree is None else tree_util.tree_unflatten(self.aux_tree, flat[self.n_out:])
        return out, aux


def stage_function(fun, args, kwargs=None, transform="grad", has_aux=False, labels=None):
    """Stage `fun` (control flow converted) on `args`' avals; `labels` name the arguments in
    the Program (default: `fun`'s parameter names)."""
    kwargs = kwargs or {}
    leaves, in_tree = tree_util.tree_flatten((tuple(args), kwargs))
    avals = [leaf_aval(x) for x in leaves]
    names = flat_arg_names(labels or _arg_names(fun, len(args), []), args, kwargs)
    s = _Staged()
    target = convert(fun)

    def flat_fun(*tracers):
        a, k = tree_util.tree_unflatten(in_tree, list(tracers))
        out = target(*a, **k)
        aux = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    f"{transform} with has_aux=True requires {_fun_name(fun)} to return a pair "
                    f"(output, auxiliary data); it returned {type(out).__name__}"
                )
            out, aux = out
        out_leaves, s.out_tree = tree_util.tree_flatten(out)
        aux_leaves, s.aux_tree = tree_util.tree_flatten(aux) if has_aux else ([], None)
        s.n_out = len(out_leaves)
        check_outputs(fun, (out, aux) if has_aux else out, out_leaves + aux_leaves, transform)
        return [o if isinstance(o, Tracer) else _staged_constant(o) for o in out_leaves + aux_leaves]

    debug = DebugInfo(fun, transform, names)
    program, trace = stage(flat_fun, avals, names, debug, name=getattr(fun, "__name__", "fn"))
    s.program = program
    values = [x if isinstance(x, (Array, Tracer)) else Array.from_numpy(leaf_value(x, a), a) for x, a in zip(leaves, avals)]
    s.args = values + [t for t, _ in trace.captures]
    s.n_leaves = len(leaves)
    s.in_tree = in_tree
    return s


def _fun_name(fun):
    return getattr(fun, "__name__", repr(fun))


def _as_array(v, aval):
    if isinstance(v, (Array, Tracer)):
        return v
    return Array.from_numpy(np.asarray(v), aval)


def _zeros_or(t, aval):
    """A (co)tangent to return to the user: zeros for symbolic zeros, float0 for
    non-differentiable (integer, boolean) values, as JAX does."""
    if not Z.is_differentiable(aval):
        return np.zeros(aval.shape, dtype=dtypes.float0)
    return _as_array(Z.instantiate(t, aval), aval)


def _argnums_tuple(argnums, n_args, transform):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"{transform}: argnums must be an int or a tuple of ints, got {argnums!r}")
    if nums and max(i if i >= 0 else -i - 1 for i in nums) >= n_args:
        raise TypeError(
            f"differentiating with respect to argnums={argnums!r} requires at least "
            f"{max(nums) + 1} positional arguments to be passed by the caller, but got only "
            f"{n_args} positional arguments."
        )
    return tuple(i % n_args for i in nums)


def _leaf_positions(args):
    """For each positional argument, the range of flat leaf indices it occupies."""
    spans, start = [], 0
    for a in args:
        n = len(tree_util.tree_leaves(a))
        spans.append(range(start, start + n))
        start += n
    return spans


# --- vjp / grad -----------------------------------------------------------------------------


def _check_grad_input(aval, holomorphic, allow_int, transform):
    dt = aval.dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(f"{transform} with holomorphic=True requires inputs with complex dtype, but got {dt.name}.")
        return
    if dtypes.is_inexact(dt):
        return
    if not allow_int:
        raise TypeError(
            f"{transform} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
            f"of np.inexact), but got {dt.name}. If you want to use Boolean- or integer-valued "
            f"inputs, use vjp or set allow_int to True."
        )


def _check_grad_output(aval, holomorphic, transform):
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")
    dt = aval.dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(f"{transform} with holomorphic=True requires outputs with complex dtype, but got {dt.name}.")
    elif not dtypes.is_float(dt):
        raise TypeError(
            f"{transform} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
            f"holomorphic=True. For differentiation of non-holomorphic functions involving "
            f"complex outputs, use omnistage.vjp directly."
        )


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """`fun` -> a function returning (fun's value, its gradient w.r.t. `argnums`)."""
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "value_and_grad")


def _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, transform):
    """value_and_grad, with the name of the transformation the user called (for messages)."""

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), transform)
        positions = list(dict.fromkeys(nums))
        dyn = [args[i] for i in positions]
        labels = _arg_names(fun, len(args), [])
        s = stage_function(_closed_over(fun, args, kwargs, positions), dyn, None, transform, has_aux,
                           [labels[i] for i in positions])
        spans = _leaf_positions(dyn)
        active = [False] * len(s.args)
        for k in range(len(positions)):
            for j in spans[k]:
                _check_grad_input(s.program.in_avals[j], holomorphic, allow_int, "grad")
                active[j] = True
        out_avals = s.program.out_avals
        if s.n_out != 1:
            raise TypeError(
                f"Gradient only defined for scalar-output functions. Output was a pytree with "
                f"{s.n_out} leaves (structure {s.out_tree})."
            )
        _check_grad_output(out_avals[0], holomorphic, "grad")
        outs, tape = reverse.vjp_forward(s.program, s.args, active)
        seed = np.ones((), dtype=out_avals[0].dtype)
        cts = reverse.vjp_backward(tape, [seed] + [None] * (len(outs) - 1))
        in_avals = s.program.in_avals
        grads = []
        for i in nums:
            leaves = [_zeros_or(cts[j], in_avals[j]) for j in spans[positions.index(i)]]
            grads.append(tree_util.tree_unflatten(tree_util.tree_structure(args[i]), leaves))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        out, aux = s.outputs(outs)
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """`fun` -> its gradient w.r.t. `argnums` (with `has_aux`: (gradient, aux))."""
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "grad")

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """(fun(*primals), vjp_fun[, aux]) where vjp_fun(cotangent) -> cotangents of primals."""
    s = stage_function(fun, primals, None, "vjp", has_aux)
    n = s.n_leaves
    outs, tape = reverse.vjp_forward(s.program, s.args, [True] * n + [False] * (len(s.args) - n))
    out, aux = s.outputs(outs)
    out_avals = s.program.out_avals[: s.n_out]
    in_avals = s.program.in_avals[:n]
    primal_tree = tree_util.tree_structure(tuple(primals))

    def vjp_fun(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != s.out_tree:
            raise TypeError(
                f"Tree structure of cotangent input {ct_tree}, does not match structure of "
                f"primal output {s.out_tree}."
            )
        flat = [_check_cotangent(c, a) for c, a in zip(ct_leaves, out_avals)]
        cts = reverse.vjp_backward(tape, flat + [None] * (len(outs) - s.n_out))
        return tree_util.tree_unflatten(primal_tree, [_zeros_or(c, a) for c, a in zip(cts[:n], in_avals)])

    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def _check_cotangent(c, aval):
    if not Z.is_differentiable(aval):
        return None
    c_aval = leaf_aval(c)
    if c_aval.shape != aval.shape:
        raise ValueError(
            f"Shape of cotangent input to vjp pullback function {c_aval.shape} must be the same "
            f"as the shape of corresponding primal input {aval.shape}."
        )
    if c_aval.dtype != aval.dtype:
        raise ValueError(
            f"Type of cotangent input to vjp pullback function ({c_aval.dtype.name}) is not the "
            f"expected tangent type ({aval.dtype.name}) of corresponding primal output with "
            f"dtype {aval.dtype.name}."
        )
    return c


# --- jvp / linearize ----------------------------------------------------------------------------


def _check_tangents(primals, tangents, transform):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            f"primal and tangent arguments to {transform} must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            f"primal and tangent arguments to {transform} must have the same tree structure; "
            f"primals have tree structure {p_tree} whereas tangents have tree structure {t_tree}."
        )
    flat = []
    for p, t in zip(p_leaves, t_leaves):
        pa = leaf_aval(p)
        ta_dtype = np.asarray(t).dtype if not isinstance(t, (Array, Tracer)) else t.dtype
        if not Z.is_differentiable(pa):
            if ta_dtype != dtypes.float0:
                raise TypeError(
                    f"primal and tangent arguments to {transform} do not match; dtypes must be "
                    f"equal, or in case of int/bool primal dtype the tangent dtype must be float0."
                    f"Got primal dtype {pa.dtype.name} and so expected tangent dtype float0, but "
                    f"got tangent dtype {ta_dtype}instead."
                )
            flat.append(None)
            continue
        ta = leaf_aval(t)
        if ta.dtype != pa.dtype:
            raise TypeError(
                f"primal and tangent arguments to {transform} do not match; dtypes must be equal, "
                f"or in case of int/bool primal dtype the tangent dtype must be float0.Got primal "
                f"dtype {pa.dtype.name} and so expected tangent dtype {pa.dtype.name}, but got "
                f"tangent dtype {ta.dtype.name} instead."
            )
        if ta.shape != pa.shape:
            raise ValueError(
                f"{transform} called with different primal and tangent shapes;Got primal shape "
                f"{pa.shape} and tangent shape as {ta.shape}"
            )
        flat.append(t)
    return flat


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), the directional derivative of fun at primals along tangents)."""
    flat_t = _check_tangents(primals, tangents, "jvp")
    s = stage_function(fun, tuple(primals), None, "jvp", has_aux)
    ts = flat_t + [None] * (len(s.args) - s.n_leaves)
    outs, touts = forward.jvp_call(s.program, s.args, ts)
    out, aux = s.outputs(outs)
    avals = s.program.out_avals[: s.n_out]
    t_out = tree_util.tree_unflatten(s.out_tree, [_zeros_or(t, a) for t, a in zip(touts, avals)])
    return (out, t_out, aux) if has_aux else (out, t_out)


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp): the primal is computed now, once; `f_jvp(*tangents)` runs only
    the linear (tangent) part, reusing the saved residuals."""
    s = stage_function(fun, primals, None, "linearize", has_aux)
    n = s.n_leaves
    in_avals = s.program.in_avals
    diff = [Z.is_differentiable(a) for a in in_avals[:n]] + [False] * (len(s.args) - n)
    outs, linear = linearize_program(s.program, s.args, diff)
    out, aux = s.outputs(outs)
    out_avals = s.program.out_avals[: s.n_out]
    primals_tuple = tuple(primals)

    def f_jvp(*tangents):
        flat_t = _check_tangents(primals_tuple, tangents, "linearize")
        touts = linear([t for t, d in zip(flat_t, diff) if d])
        return tree_util.tree_unflatten(s.out_tree, [_zeros_or(t, a) for t, a in zip(touts, out_avals)])

    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


# --- Jacobians -------------------------------------------------------------------------------------
# One batched program per Jacobian: vmap of a JVP over the standard basis of the inputs
# (jacfwd) or of a VJP over the standard basis of the outputs (jacrev), as JAX does.


def _std_basis(avals, dtype):
    """The standard basis of the flattened leaves, one row per element: for each leaf an
    array [n_total, *leaf shape] (rows outside the leaf's segment are zero)."""
    sizes = [int(np.prod(a.shape)) for a in avals]
    total = sum(sizes)
    eye = np.eye(total, dtype=dtype)
    out, start = [], 0
    for a, n in zip(avals, sizes):
        out.append(eye[:, start:start + n].reshape((total,) + tuple(a.shape)))
        start += n
    return out


def _segments(x, axis, avals):
    """Split `x` along `axis` into one piece per leaf of `avals`, each reshaped to that
    leaf's shape in place of the axis."""
    from . import numpy as jnp

    pieces, start = [], 0
    shape = tuple(x.shape)
    for a in avals:
        n = int(np.prod(a.shape))
        idx = [slice(None)] * len(shape)
        idx[axis] = slice(start, start + n)
        piece = x[tuple(idx)]
        new_shape = shape[:axis] + tuple(a.shape) + shape[axis + 1:]
        pieces.append(jnp.reshape(piece, new_shape))
        start += n
    return pieces


def _jac_dtype(avals):
    return np.result_type(*[a.dtype for a in avals]) if avals else np.float32


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` by forward mode: vmap of a JVP over the input basis. Each output
    leaf's block has shape out_shape + in_shape (JAX's layout)."""

    def jacfun(*args, **kwargs):
        from .api_vmap import vmap

        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        f_partial, dyn = _partial_argnums(fun, args, kwargs, nums)
        leaves, tree = tree_util.tree_flatten(dyn)
        avals = [leaf_aval(x) for x in leaves]
        for a in avals:
            _check_grad_input(a, holomorphic, False, "jacfwd")
        basis = _std_basis(avals, _jac_dtype(avals))
        box = {}

        def push(*ts):
            res = jvp(f_partial, (dyn,), (tree_util.tree_unflatten(tree, [t.astype(a.dtype) if hasattr(t, "astype") else t for t, a in zip(ts, avals)]),), has_aux=has_aux)
            box["out"] = res[0]
            if has_aux:
                box["aux"] = res[2]
            return res[1]

        cols = vmap(push, out_axes=-1)(*basis)
        out_leaves, out_tree = tree_util.tree_flatten(cols)
        blocks = [_block(tree, _segments(c, c.ndim - 1, avals), argnums) for c in out_leaves]
        jac = tree_util.tree_unflatten(out_tree, blocks)
        return (jac, _first_aux(fun, args, kwargs, nums, box)) if has_aux else jac

    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of `fun` by reverse mode: vmap of a VJP over the output basis."""

    def jacfun(*args, **kwargs):
        from .api_vmap import vmap

        nums = _argnums_tuple(argnums, len(args), "jacrev")
        f_partial, dyn = _partial_argnums(fun, args, kwargs, nums)
        in_leaves, in_tree = tree_util.tree_flatten(dyn)
        for x in in_leaves:
            _check_grad_input(leaf_aval(x), holomorphic, allow_int, "jacrev")
        res = vjp(f_partial, dyn, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_avals = [leaf_aval(o) for o in out_leaves]
        basis = _std_basis(out_avals, _jac_dtype(out_avals))

        def pull(*cts):
            cts = [c.astype(a.dtype) for c, a in zip(cts, out_avals)]
            return pullback(tree_util.tree_unflatten(out_tree, cts))[0]

        rows = vmap(pull)(*basis)
        row_leaves = tree_util.tree_leaves(rows)
        per_out = [[] for _ in out_avals]
        for r in row_leaves:
            for k, piece in enumerate(_segments(r, 0, out_avals)):
                per_out[k].append(piece)
        blocks = [_block(in_tree, p, argnums) for p in per_out]
        jac = tree_util.tree_unflatten(out_tree, blocks)
        return (jac, res[2]) if has_aux else jac

    return jacfun


def _first_aux(fun, args, kwargs, nums, box):
    """jacfwd's aux: the aux of one evaluation (it does not depend on the tangent)."""
    aux = box.get("aux")
    if aux is None or any(isinstance(l, Tracer) for l in tree_util.tree_leaves(aux)):
        f_partial, dyn = _partial_argnums(fun, args, kwargs, nums)
        return f_partial(dyn)[1]
    return aux


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian: jacfwd of jacrev."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux, holomorphic=holomorphic)


def _closed_over(fun, args, kwargs, positions):
    """`fun` (control flow converted) taking only the arguments at `positions`; the other
    arguments and `kwargs` reach it as they are. JAX's differentiation closes over them the
    same way, so a Python int stays an int: a shape, a loop bound, a recursion depth."""
    target = convert(fun)

    def dyn_fun(*dyn_args):
        full = list(args)
        for i, v in zip(positions, dyn_args):
            full[i] = v
        return target(*full, **kwargs)

    dyn_fun.__name__ = _fun_name(fun)
    dyn_fun.__wrapped__ = fun
    return dyn_fun


def _partial_argnums(fun, args, kwargs, nums):
    """(g, dyn): g(dyn) calls fun (control flow converted) with the arguments at `nums`
    replaced from the tuple `dyn`."""
    dyn_fun = _closed_over(fun, args, kwargs, nums)

    def g(dyn_args):
        return dyn_fun(*dyn_args)

    g.__name__ = dyn_fun.__name__
    g.__wrapped__ = fun
    return g, tuple(args[i] for i in nums)


def _block(in_tree, pieces, argnums):
    """One output leaf's Jacobian block, structured like the differentiated arguments (the
    single argument itself for an int argnums, as JAX)."""
    block = tree_util.tree_unflatten(in_tree, pieces)
    return block[0] if isinstance(argnums, int) else block


__all__ = ["grad", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "value_and_grad", "vjp"]
