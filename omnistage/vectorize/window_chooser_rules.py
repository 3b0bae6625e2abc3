"""Batching rules of the max/min window primitives (`lax/window_choosers.py`): the examples
become one more operand axis with a window of one (stride 1, no padding or dilation), as
JAX batches reduce_window, so a batched max pool is still one primitive."""
from .rules import all_batched_at, bind, register


def _with_unit_window(params, axis):
    """The window params with a window-of-one axis inserted at `axis`."""
    out = dict(params)
    for key, unit in (("window_dimensions", 1), ("window_strides", 1), ("padding", (0, 0)),
                      ("base_dilation", 1), ("window_dilation", 1)):
        v = list(params[key])
        v.insert(axis, unit)
        out[key] = tuple(v)
    return out


def _reduce_rule(name):
    def rule(args, dims, **params):
        (x,), (d,) = args, dims
        return bind(name, x, **_with_unit_window(params, d)), d

    return rule


for _name in ("reduce_window_max", "reduce_window_min"):
    register(_name)(_reduce_rule(_name))


def _pair_rule(name):
    def rule(args, dims, **params):
        # the (co)tangent and the operand carry the examples on one axis (an unbatched
        # one is broadcast: each example chooses in its own operand)
        d = dims[0] if dims[0] == dims[1] else 0
        first, x = all_batched_at(args, dims, d)
        return bind(name, first, x, **_with_unit_window(params, d)), d

    return rule


for _name in ("select_and_gather_add", "select_and_scatter_add"):
    register(_name)(_pair_rule(_name))
