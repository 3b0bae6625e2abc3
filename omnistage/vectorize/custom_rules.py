"""Batching rules of `custom_jvp_call` and `custom_vjp_call` (see `omnistage.autodiff.custom`).

The statement stays a custom-derivative call whose bodies are batched, so differentiating
the batched program later (`grad(vmap(f))`) still uses the user's rule:

- an output is batched (at axis 0) if the function or its rule batches it, and the rule's
  tangents/cotangents are batched exactly like the primal values they belong to;
- custom_vjp's residuals are batched at axis 0 where `fwd` batches them; a cotangent that
  `bwd` computes per example for an argument shared by all examples is summed over them
  (each example contributes to the shared argument's cotangent).
"""
from ..core import dtypes
from ..core.array import aval_of
from ..lax import reductions as lax_red
from ..staging import replay
from .batching import batch_call, batch_program, move_outputs, output_dims
from .rules import batched_aval, bind, register


def _is_float(aval):
    """Has a (co)tangent: the rule bodies take and return them for inexact values only."""
    return dtypes.is_inexact(aval.dtype)


def _either(*dim_lists):
    return [0 if any(d is not None for d in ds) else None for ds in zip(*dim_lists)]


@register("custom_jvp_call", needs_axis=True)
def _custom_jvp_call(args, dims, *, fun, jvp, num_caps, batch_axis):
    k = len(args) - num_caps
    arg_dims, cap_dims = list(dims[:k]), list(dims[k:])
    diff = [_is_float(a) for a in fun.in_avals[:k]]
    t_dims = [d for d, f in zip(arg_dims, diff) if f]
    n_out = len(fun.out_avals)
    out_diff = [_is_float(a) for a in fun.out_avals]
    jvp_in = arg_dims + t_dims + cap_dims
    jvp_out = output_dims(jvp, jvp_in, batch_axis)
    t_out = iter(jvp_out[n_out:])
    t_per_out = [next(t_out) if f else None for f in out_diff]
    force = _either(output_dims(fun, dims, batch_axis), jvp_out[:n_out], t_per_out)
    fun_b, _ = batch_program(fun, list(dims), batch_axis, force)
    t_force = [f for f, d in zip(force, out_diff) if d]
    jvp_b, _ = batch_program(jvp, jvp_in, batch_axis, force + t_force)
    outs = bind("custom_jvp_call", *args, fun=fun_b, jvp=jvp_b, num_caps=num_caps)
    return list(outs), force


@register("custom_vjp_call", needs_axis=True)
def _custom_vjp_call(args, dims, *, fun, fwd, bwd, num_res, batch_axis):
    n_out = len(fun.out_avals)
    n_caps = len(bwd.in_names) - num_res - n_out
    k = len(args) - n_caps
    dims = list(dims)
    fwd_dims = output_dims(fwd, dims, batch_axis)
    force = _either(output_dims(fun, dims, batch_axis), fwd_dims[:n_out])
    res_force = _either(fwd_dims[n_out:])
    fun_b, _ = batch_program(fun, dims, batch_axis, force)
    fwd_b, _ = batch_program(fwd, dims, batch_axis, force + res_force)
    diff = [_is_float(aval_of(a)) for a in args[:k]]
    ct_targets = [d for d, f in zip(dims[:k], diff) if f]
    bwd_b = _batched_bwd(bwd, res_force + force + dims[k:], ct_targets, batch_axis)
    outs = bind("custom_vjp_call", *args, fun=fun_b, fwd=fwd_b, bwd=bwd_b, num_res=num_res)
    return list(outs), force


def _batched_bwd(bwd, in_dims, targets, batch_axis):
    """bwd batched along `in_dims`; cotangent i comes out batched at targets[i], or summed
    over the examples where its argument is unbatched (targets[i] None)."""
    size = batch_axis.size
    in_avals = [batched_aval(a, d, size) for a, d in zip(bwd.in_avals, in_dims)]

    def fn(*xs):
        cts, ct_dims = batch_call(bwd, xs, in_dims, batch_axis)
        out = []
        for ct, d, t in zip(cts, ct_dims, targets):
            if t is None and d is not None:
                out.append(lax_red.reduce_sum(ct, (d,)))
            else:
                out.extend(move_outputs([ct], [d], [t], size))
        return out

    return replay.stage_program(fn, in_avals, bwd.in_names, f"{bwd.name}_vmap")

