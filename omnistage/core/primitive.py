"""Primitives and the one entry point every operation goes through: `bind`.

A `Primitive` has a name, a shape/dtype rule (`abstract_eval`: avals -> aval) and a NumPy
implementation (`impl`). `bind` sends an application to the innermost active trace (the
staging trace of `jit`/`make_jaxpr`), or runs it eagerly when no trace is active. Passes in
later layers keep their own rule tables keyed by primitive name.
"""
import contextlib
import functools

import numpy as np

from . import errors
from .config import config
from .aval import ShapedArray
from .memory_limit import check_eager
from .source_info import describe_here
from .thread_local import ThreadLocalStack

registry = {}

# Primitives whose statements are kept although nothing uses their results: they have effects
# (`debug_print`). Passes that drop or merge statements (staging.cleanup) leave them alone.
EFFECTFUL = set()

# Primitives whose statements call back into Python (`pure_callback`): pure for the passes, but
# what they return is the callback's to decide, so a program holding one is never folded into a
# constant (api.Compiled).
CALLS_PYTHON = set()

# Primitives that exist for the transformations and mean nothing to code generation:
# name -> the body parameter to inline in their place (None: the identity on operand 0).
# `staging.cleanup` rewrites them away before a program is compiled.
inline_for_lowering = {}


class Primitive:
    """An operation: `name`, `abstract_eval(*avals, **params)`, `impl(*ndarrays, **params)`."""

    __slots__ = ("name", "abstract_eval", "impl", "multiple_results", "__weakref__")

    def __init__(self, name, abstract_eval=None, impl=None, multiple_results=False):
        if name in registry:
            raise ValueError(f"primitive {name!r} is already registered")
        self.name = name
        self.abstract_eval = abstract_eval
        self.impl = impl
        self.multiple_results = multiple_results
        registry[name] = self

    def def_abstract_eval(self, fn):
        self.abstract_eval = fn
        return fn

    def def_impl(self, fn):
        self.impl = fn
        return fn

    def bind(self, *args, **params):
        return bind(self, args, params)

    __call__ = bind

    def __repr__(self):
        return self.name


# The trace stack, one per thread: a trace stages only what its own thread binds, so an
# eager call in another thread runs eagerly. Each entry implements
# `process_primitive(prim, args, params)`.
_trace_stack = ThreadLocalStack()


def current_trace():
    stack = _trace_stack.items
    return stack[-1] if stack else None


def trace_stack():
    return tuple(_trace_stack.items)


def trace_is_active(trace):
    """Whether `trace` is on this thread's trace stack (a tracer of any other trace, e.g. one
    another thread is running, has escaped it as far as this thread is concerned)."""
    return any(t is trace for t in _trace_stack.items)


@contextlib.contextmanager
def new_trace(trace):
    stack = _trace_stack.items
    stack.append(trace)
    try:
        yield trace
    finally:
        popped = stack.pop()
        assert popped is trace, "trace stack corrupted"


@contextlib.contextmanager
def eager():
    """Binds inside run eagerly whatever trace is active: for a primitive's impl that evaluates
    lax code on concrete values (an expansion kept as the reference of a compiled kernel)."""
    stack = _trace_stack.items
    stack.append(None)
    try:
        yield
    finally:
        popped = stack.pop()
        assert popped is None, "trace stack corrupted"


def bind(prim, args, params):
    stack = _trace_stack.items
    trace = stack[-1] if stack else None
    if trace is None:
        return eager_apply(prim, args, params)
    return trace.process_primitive(prim, args, params)


def abstract_eval_located(prim, avals, params):
    """Run `prim`'s shape rule; errors get the user's file and line appended."""
    try:
        return prim.abstract_eval(*avals, **params)
    except (TypeError, ValueError, IndexError) as e:
        raise errors.add_location(e, describe_here())


def _value_of(x):
    """NumPy value of an eager operand (Array or NumPy value)."""
    v = getattr(x, "_value", None)
    if v is not None:
        # a GPU Array's value is device memory: eager operations work on a host copy
        return v if type(v) is np.ndarray or not hasattr(v, "to_host") else v.to_host()
    from .tracer import Tracer

    if isinstance(x, Tracer):
        raise x._escaped_error()
    return np.asarray(x)


def eager_apply(prim, args, params):
    Array, aval_of = _array_types()
    # a CPU Array's aval and value read directly (the common operand; aval_of and _value_of
    # cost a call each per operand per eager op)
    avals = [a._aval if type(a) is Array and a._aval is not None else aval_of(a) for a in args]
    out_aval = abstract_eval_located(prim, avals, params)
    # an array bigger than the machine: say which line, before NumPy tries to allocate it
    check_eager(prim.name, out_aval if prim.multiple_results else (out_aval,))
    outs = prim.impl(*[a._value if type(a) is Array else _value_of(a) for a in args], **params)
    if config.checks_on:  # debug_nans / debug_infs
        from .float_checks import check_eager_outputs

        check_eager_outputs(prim.name, outs)
    if prim.multiple_results:
        return [Array.from_numpy(o, a) for o, a in zip(outs, out_aval)]
    return Array.from_numpy(outs, out_aval)


@functools.cache
def _array_types():
    """core.array's Array and aval_of (that module imports this one)."""
    from .array import Array, aval_of

    return Array, aval_of


def check_params_literal(prim, params):
    """Parameters must be plain literals so that staged programs print as runnable Python."""
    for k, v in params.items():
        if not _is_literal(v):
            raise TypeError(f"{prim.name}: parameter {k}={v!r} is not a Python literal")


def _is_literal(v):
    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return True
    if isinstance(v, tuple):
        return all(_is_literal(e) for e in v)
    return False


__all__ = ["Primitive", "ShapedArray", "bind", "registry", "current_trace", "new_trace"]
