"""The NaN / inf checks that the `jax_debug_nans` / `jax_debug_infs` flags switch on
(`omnistage.debug_nans`): eager ops check their outputs (`core.primitive.eager_apply`, only
while `config.checks_on`), and a jit call whose outputs hold a NaN/inf re-runs its function op by
op to find the op, as JAX does. Imports numpy and core only.
"""
import numpy as np

from .config import config, disable_jit
from .source_info import describe_here


def _bad_kind(value):
    """'nan' or 'inf' if `value` (an ndarray) holds one that an active check looks for."""
    value = np.asarray(value)
    if value.dtype.kind not in "fc" or value.size == 0:
        return None
    if config.read("jax_debug_nans") and np.isnan(value).any():
        return "nan"
    if config.read("jax_debug_infs") and np.isinf(value).any():
        return "inf"
    return None


def check_eager_outputs(prim_name, outs):
    """Raise FloatingPointError if an eager op's outputs hold a NaN/inf that a check is on for
    (called by `core.primitive.eager_apply` only while `config.checks_on`)."""
    for out in outs if isinstance(outs, (list, tuple)) else (outs,):
        kind = _bad_kind(out)
        if kind is not None:
            where = describe_here()
            raise FloatingPointError(
                f"invalid value ({kind}) encountered in {prim_name}"
                + (f"\n{where}" if where else "")
                + f"\n(debug_{kind}s is on: turn it off with config.update('jax_debug_{kind}s', False))")


def check_jit_outputs(fun, out_leaves, rerun):
    """After a jit call with a check on: if an output holds a NaN/inf, re-run the function op
    by op (`rerun()`, under disable_jit) so that the op that made it raises; if the eager run
    does not reproduce it, raise naming the function."""
    kinds = [k for k in map(_bad_kind, out_leaves) if k is not None]
    if not kinds:
        return
    with disable_jit():
        rerun()
    name = getattr(fun, "__qualname__", repr(fun))
    raise FloatingPointError(
        f"invalid value ({kinds[0]}) encountered in the output of the jit function {name}; running it "
        f"op by op did not reproduce it (the compiled code's arithmetic differs in rounding)")
