"""`omnistage.numpy` functions run eagerly as one cached program, as JAX's `@jit` on its own
jnp functions (`logaddexp`, `mean`, `cholesky` are one XLA call each there).

Eagerly, a composite such as `logaddexp` (ten primitives), or a binary op whose operands need
broadcasting (`x / ls` of shapes (7, 1) and (1, 1): a reshape and a broadcast_in_dim before
the division), pays the eager dispatch of each primitive: promotion, the shape rule, an Array
per intermediate, ~8 us apiece; `x / ls` took 30 us, `mean` 28 us, `cholesky` 37 us, where
JAX dispatches one compiled function in 4-9 us. `one_program(fn)` runs `fn`, outside every
trace, as a `jit` on the EAGER backend: traced once per argument avals (and static
arguments), then each call runs the staged program with the primitives' NumPy
implementations, the ones eager dispatch calls, on the same values. So the bits are those of
the op-by-op path: the EAGER backend is the interpreter without the one clean-up pass that
changes values (`reciprocal_divisors`, which jit shares with XLA), and the others (CSE, DCE,
identity drops) are what JAX's compiler does to its jnp functions too.

Under a trace (jit, grad, vmap) `fn` is staged inline, as before. Arguments that are not host
values (GPU arrays, escaped tracers, lists), Python ints beyond int32, unhashable or array
static arguments, and functions that need concrete values (found on the first trace) take the
op-by-op path, which handles them. A call whose program raises runs op by op too, so errors
are what they always were (an intermediate bigger than memory names the user's line).
"""
import contextlib
import functools

import numpy as np

from ..core import errors
from ..core.array import Array
from ..core.config import config
from ..core.primitive import current_trace

_HOST_SCALARS = (bool, float, complex)
_INT32 = (-(2 ** 31), 2 ** 31 - 1)
# flags about the user's own traces: the programs made here are not theirs (and jit does not
# log their compiles: api.Compiled)
_QUIET = ("jax_no_tracing", "jax_explain_cache_misses")
_loud = [None, ()]  # (config epoch, the _QUIET flags set globally then)
# what a function raises when traced where it reads concrete values
_CONCRETE_ONLY = (errors.ConcretizationTypeError, errors.TracerIntegerConversionError,
                  errors.TracerArrayConversionError, errors.NonConcreteBooleanIndexError)


def _on_host(x):
    t = type(x)
    if t is Array:
        return type(x._value) is np.ndarray  # a GPU Array holds device memory
    if t is int:
        return _INT32[0] <= x <= _INT32[1]  # as a traced argument it becomes a weak int32
    return t in _HOST_SCALARS or isinstance(x, (np.ndarray, np.generic))


def _static_ok(value):
    """Whether `value` can be a static argument of a cached program (hashable, not an array)."""
    if isinstance(value, (Array, np.ndarray)) or hasattr(value, "aval"):
        return False
    if isinstance(value, tuple):
        return all(_static_ok(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _NeedsOpByOp(Exception):
    """The function cannot be traced for these static arguments (it reads concrete values)."""


def one_program(fn, operands=None):
    """`fn` as one cached program when called eagerly.

    `operands`: how many leading positional arguments are arrays (traced); the rest, and
    every keyword argument, are static. None: all positional arguments are arrays and keyword
    arguments are not accepted on this path."""
    programs = {}  # static arguments -> a JitFunction, or None: this function needs op by op

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if current_trace() is not None:
            return fn(*args, **kwargs)
        n = len(args) if operands is None else operands
        if len(args) < n or (operands is None and kwargs):
            return fn(*args, **kwargs)
        for a in args[:n]:  # (a loop, not all() over a generator: this runs per eager call)
            if not _on_host(a):
                return fn(*args, **kwargs)
        static = args[n:]
        # the number of operands is the key of a plain call: `where(c)` needs the op-by-op
        # path and `where(c, x, y)` not
        key = (static, tuple(kwargs.items())) if static or kwargs else n
        if key is not n and not all(_static_ok(v) for v in static + tuple(kwargs.values())):
            return fn(*args, **kwargs)
        jitted = programs.get(key, False)
        if jitted is None:
            return fn(*args, **kwargs)
        if jitted is False:
            jitted = programs[key] = _jit(fn, static, kwargs)
        try:
            loud = _loud_flags()
            if not loud:
                return jitted(*args[:n])
            with contextlib.ExitStack() as stack:
                for flag in loud:
                    stack.enter_context(config.override(flag, False))
                return jitted(*args[:n])
        except _NeedsOpByOp:
            programs[key] = None
            return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - the op-by-op path raises it as it always did
            # (naming the user's line: an intermediate bigger than memory, a bad shape)
            return fn(*args, **kwargs)

    wrapper.programs = programs  # static arguments -> its jit function (None: op by op)
    return wrapper


def wrap_module_functions(namespace, names, operands):
    """Make each of `names` in a module's `namespace` (its `globals()`) a `one_program` with
    `operands` array operands: how an op library turns on eager programs for its functions."""
    for name in names:
        namespace[name] = one_program(namespace[name], operands)


def _loud_flags():
    """The _QUIET flags now set in this thread (re-read only when the configuration changed)."""
    if config.overrides_open:
        return [flag for flag in _QUIET if config.read(flag)]
    if _loud[0] != config.epoch:
        _loud[:] = [config.epoch, [flag for flag in _QUIET if config.read(flag)]]
    return _loud[1]


# Programs one function keeps per static arguments: eager code over ever-new shapes (a
# sequence of growing lengths) must not hold a program for every shape it ever saw; past this
# many the cache starts over (a trace costs ~0.1-1 ms).
MAX_PROGRAMS = 256


def _jit(fn, static, kwargs):
    from ..api import EAGER_BACKEND, jit

    traces = [0]

    def traced(*dyn):
        traces[0] += 1
        if traces[0] > MAX_PROGRAMS:
            jitted.clear_cache()  # the entry being made now is stored after this
            traces[0] = 1
        try:
            return fn(*dyn, *static, **kwargs)
        except _CONCRETE_ONLY as e:
            raise _NeedsOpByOp() from e

    traced.__name__ = getattr(fn, "__name__", "fn")
    traced.__qualname__ = getattr(fn, "__qualname__", traced.__name__)
    jitted = jit(traced, backend=EAGER_BACKEND, python_control_flow=False)
    return jitted
