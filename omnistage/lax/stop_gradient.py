"""`lax.stop_gradient`: the identity whose derivative is zero.

A primitive so the differentiation passes see it (its JVP and VJP are zero); code
generation never does: `staging.cleanup` replaces it by its operand before compiling."""
import numpy as np

from ..core import dtypes
from ..core import primitive as core_primitive
from ..core import tree_util
from ..core.primitive import Primitive
from ._rules import operands

stop_gradient_p = Primitive("stop_gradient", lambda x: x, lambda x: np.asarray(x))
core_primitive.inline_for_lowering["stop_gradient"] = None


def stop_gradient(x):
    """`x` with zero derivative, applied to every leaf of a pytree (integer and boolean
    leaves, which have no derivative anyway, pass through unstaged)."""

    def leaf(v):
        (v,) = operands(v)
        if not dtypes.is_inexact(v.dtype):
            return v
        return stop_gradient_p.bind(v)

    return tree_util.tree_map(leaf, x)


__all__ = ["stop_gradient", "stop_gradient_p"]
