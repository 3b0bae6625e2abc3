"""`omnistage.debug.print`: print values from inside transformed and compiled code, as
`jax.debug.print` does.

Outside any transformation it formats and prints at once. While `jit`, `grad` or `vmap` trace,
it stages a `debug_print` statement: the only effectful primitive (`core.primitive.EFFECTFUL`:
clean-up keeps it although nothing uses its result, a rank-0 bool token). Each run of the program prints
then: the interpreter calls this module's `impl`; compiled CPU code calls it from a
`numba.objmode` block; the CUDA host driver copies the operands to the host and calls it.

The format arguments travel as the statement's operands (array leaves) plus a literal `tree`
parameter that rebuilds `args` and `kwargs` around them, so printed programs stay runnable
Python. Under `grad`/`jvp` the primal values are printed (the token has no derivative); under
`vmap` each example is printed on its own line, in JAX's order (`batch_rank` leading axes are
looped over; see vectorize/debug_rules.py).
"""
import builtins
import string

import numpy as np

from .core.aval import ShapedArray
from .core.primitive import EFFECTFUL, Primitive

_TOKEN = ShapedArray((), np.dtype(np.bool_))

# tree encoding (literal tuples): a leaf is the int index of its operand; containers are
# ("tuple", child...), ("list", child...), ("dict", (key...), child...); None is ("none",)


def _encode(value, leaves):
    if value is None:
        return ("none",)
    if type(value) in (tuple, list):
        return (type(value).__name__,) + tuple(_encode(v, leaves) for v in value)
    if type(value) is dict:
        keys = tuple(value)
        if not all(isinstance(k, (str, int)) for k in keys):
            raise TypeError(f"omnistage.debug.print: dict keys must be strings or ints, got {keys!r}")
        return ("dict", keys) + tuple(_encode(value[k], leaves) for k in keys)
    if isinstance(value, (str, bytes)) or not _is_array_like(value):
        raise TypeError(
            f"omnistage.debug.print formats arrays and numbers, in tuples, lists and dicts; got "
            f"{type(value).__name__} {value!r:.60}: put it in the format string instead")
    leaves.append(value)
    return len(leaves) - 1


def _is_array_like(value):
    from .core.array import is_array_like

    return is_array_like(value) or hasattr(value, "__array__")


def _decode(tree, values):
    if isinstance(tree, int):
        return values[tree]
    kind, rest = tree[0], tree[1:]
    if kind == "none":
        return None
    if kind == "dict":
        return dict(zip(rest[0], (_decode(t, values) for t in rest[1:])))
    children = [_decode(t, values) for t in rest]
    return tuple(children) if kind == "tuple" else children


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 - jax.debug.print's name
    """Print `fmt.format(*args, **kwargs)` with the runtime values of the arrays in `args`
    and `kwargs` (pytrees of tuples, lists and dicts), also inside jit, grad and vmap; under
    vmap, once per example. `ordered` is accepted for JAX compatibility: prints always run in
    program order here."""
    if not isinstance(fmt, str):
        raise TypeError(f"omnistage.debug.print: the format must be a str, got {type(fmt).__name__}")
    leaves = []
    tree = (_encode(tuple(args), leaves), _encode(dict(kwargs), leaves))
    from .core.primitive import bind

    bind(debug_print_p, leaves, {"fmt": fmt, "tree": tree, "batch_rank": 0})


def _check_fields(fmt, tree):
    """The fields `fmt` names must exist in args/kwargs (checked when staged, with the user's line)."""
    n_args, keys = len(tree[0]) - 1, tree[1][1]
    auto = 0
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(fmt) if f is not None]
    except ValueError as e:
        raise ValueError(f"omnistage.debug.print: bad format string {fmt!r}: {e}") from None
    for field in fields:
        first = field.split(".", 1)[0].split("[", 1)[0]
        if first == "":
            index, auto = auto, auto + 1
            if index >= n_args:
                raise IndexError(f"omnistage.debug.print: {fmt!r} has more {{}} fields than the {n_args} positional arguments")
        elif first.isdigit():
            if int(first) >= n_args:
                raise IndexError(f"omnistage.debug.print: {fmt!r} names positional argument {first}, "
                                 f"but {n_args} were given")
        elif first not in keys:
            raise ValueError(f"omnistage.debug.print: {fmt!r} names {first!r}, which is not a keyword argument "
                             f"(given: {', '.join(map(str, keys)) or 'none'})")


def _abstract_eval(*avals, fmt, tree, batch_rank, narrow=None):
    _check_fields(fmt, tree)
    return _TOKEN


def impl(*values, fmt, tree, batch_rank, narrow=None):
    """Format and print (once per example of the `batch_rank` leading axes). Returns the token.
    `narrow`: the float16/bfloat16 dtype (or None) of each operand that compiled code computed
    in float32 (codegen.narrow_floats), printed as that dtype."""
    values = [np.asarray(v) for v in values]
    if narrow is not None:
        values = [v if n is None else v.astype(n) for v, n in zip(values, narrow)]
    batch = values[0].shape[:batch_rank] if values else ()  # vmap batches every operand
    for index in np.ndindex(*batch):
        _print_one(fmt, tree, [v[index] for v in values])
    return np.array(True)


def _print_one(fmt, tree, values):
    args, kwargs = (_decode(t, values) for t in tree)
    builtins.print(fmt.format(*args, **kwargs), flush=True)


debug_print_p = Primitive("debug_print", _abstract_eval, impl)
EFFECTFUL.add("debug_print")

__all__ = ["print"]
