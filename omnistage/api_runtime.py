"""JAX's smaller top-level utilities: `device_get`, `ensure_compile_time_eval`, `named_call`,
`named_scope`, `typeof`. Each either computes what JAX's does or, where the concept is XLA's
(names in profiles), is the identity and says so.
"""
import contextlib

import numpy as np

from .core import tree_util
from .core.array import Array, aval_of
from .core.primitive import current_trace, eager_apply, new_trace
from .core.tracer import Tracer


def device_get(x):
    """Every Array leaf of `x` as a NumPy array on the host (other leaves unchanged)."""
    # np.asarray of a traced value raises TracerArrayConversionError, as JAX's device_get does
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, (Array, Tracer)) else leaf, x)


class _CompileTimeEvalTrace:
    """Inside `ensure_compile_time_eval` under a transformation: an op whose operands are all
    concrete runs at once (eagerly, on NumPy); an op on a traced value is staged as usual."""

    def __init__(self, outer):
        self.outer = outer

    def process_primitive(self, prim, args, params):
        if any(isinstance(a, Tracer) for a in args):
            return self.outer.process_primitive(prim, args, params)
        return eager_apply(prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Within the block, omnistage.numpy/lax calls on concrete values (not derived from a
    traced argument) compute their values at trace time, as JAX's does, so that Python can use
    them (`if`, shapes); calls on traced values are staged as always. Outside any
    transformation every op runs eagerly anyway."""
    outer = current_trace()
    if outer is None or isinstance(outer, _CompileTimeEvalTrace):
        yield
        return
    with new_trace(_CompileTimeEvalTrace(outer)):
        yield


def named_call(fun, *, name=None):
    """`fun` (JAX names the call in XLA's profiles; staged statements here already carry the
    user's file and line). `name` must be a str or None."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str, got {name!r}")
    return fun


@contextlib.contextmanager
def named_scope(name):
    """A name for the ops staged in the block in JAX's profiles; accepted here (statements
    carry the user's file and line instead). `name` must be a str."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope name argument must be a string, got {name!r}")
    yield


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array, tracer or scalar."""
    return aval_of(x)


__all__ = ["device_get", "ensure_compile_time_eval", "named_call", "named_scope", "typeof"]
