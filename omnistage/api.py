"""The public transformations: `jit`, `make_jaxpr`, `eval_shape`, device helpers.

Composes the layers: staging turns a function into a Program; an executor runs it (the
NumPy interpreter for now; the Numba code generator plugs in behind `Compiled`).
"""
import functools
import inspect
import threading
import types
import weakref

import numpy as np

from .core import dtypes, gc_pause
from .core.array import Array
from .core.aval import ShapedArray
from .core.config import config
from .core.primitive import current_trace
from .core.tracer import Tracer
from .core import tree_util
from . import fast_args, fast_outputs
from .staging.trace import DebugInfo, stage
from .staging.cleanup import cleanup
from .staging.naming import sanitize
from .staging.program import eqn, is_eqn
from .lax._rules import to_operand
from .staging.ast_walk import walk


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (for `eval_shape`, `lower`)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        self.shape = tuple(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    @property
    def aval(self):
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type) == (other.shape, other.dtype, other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


# --- leaves: avals and values ----------------------------------------------------------


def leaf_aval(x):
    """The aval a jit argument leaf is traced with (also its cache key part)."""
    if isinstance(x, Array):
        return x.aval
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        dt, weak = dtypes.python_scalar_dtype(x)
        return ShapedArray((), dt, weak)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    if isinstance(x, Tracer):
        return x.aval
    if hasattr(x, "__array__"):
        v = np.asarray(x)
        return ShapedArray(v.shape, dtypes.canonicalize_dtype(v.dtype))
    raise TypeError(
        f"Argument {x!r} of type {type(x).__name__} is not a valid omnistage type: "
        f"arguments to transformed functions must be arrays, scalars or pytrees of them "
        f"(mark non-array arguments static with static_argnums/static_argnames)."
    )


def check_outputs(fun, out, leaves, transform):
    """A TypeError naming `fun`'s output (not an argument) for a leaf that is not an array."""
    for leaf in leaves:
        try:
            leaf_aval(leaf)
        except TypeError:
            raise TypeError(_output_type_message(fun, out, leaf, transform)) from None


_OUTPUT_HINTS = {  # what to do instead, by the type of the offending value
    "generator": "Return a tuple or list of arrays (tuple(...) of the generator) instead of yielding.",
    "str": "Return strings and other non-array values from outside the transformed function.",
}


def _output_type_message(fun, out, leaf, transform):
    from .staging.trace import DebugInfo

    info = DebugInfo(fun, transform)
    kind = type(leaf).__name__
    path = next((tree_util.keystr(p) for p, l in tree_util.tree_flatten_with_path(out)[0] if l is leaf), "")
    what = f"is a {kind}" if out is leaf else f"holds a {kind} at {path or 'a leaf'}"
    shown = repr(leaf) if len(repr(leaf)) <= 60 else repr(leaf)[:57] + "..."
    hint = _OUTPUT_HINTS.get(kind, "Return non-array values from outside the transformed function.")
    return (
        f"The output (return value) of {info.fun_name} at {info.where} {what} ({shown}), not an "
        f"array: a function transformed by {transform} must return arrays, Python scalars or "
        f"pytrees (tuples, lists, dicts) of them. {hint}"
    )


def leaf_value(x, aval):
    """The NumPy value passed to an executable for leaf `x`."""
    if isinstance(x, Array):
        return x._value
    v = np.asarray(x)
    return v if v.dtype == aval.dtype else v.astype(aval.dtype)


# --- argument handling -------------------------------------------------------------------


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _resolve_static(fun, static_argnums, static_argnames):
    """JAX infers each of static_argnums/static_argnames from the other via the signature."""
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums or ())
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames or ())
    sig = _signature(fun)
    if sig is None:
        return tuple(sorted(set(nums))), tuple(names)
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums_set = {n if n >= 0 else n + len(positional) for n in nums}
    names_set = set(names)
    for n in list(nums_set):
        if 0 <= n < len(positional):
            names_set.add(positional[n])
    for name in names:
        if name in positional:
            nums_set.add(positional.index(name))
    return tuple(sorted(nums_set)), tuple(sorted(names_set))


def _positional_names(fun):
    """(positional parameter names, *args name or None) of a plain Python function, seen
    through `functools.wraps` as `inspect.signature` sees it, read off its code object: eager
    vmap and grad name a fresh lambda's arguments every call, and a signature took ~10 us.
    None for anything else (partials, methods, classes, an explicit `__signature__`)."""
    for _ in range(100):  # a __wrapped__ chain (inspect.unwrap stops at a __signature__)
        if hasattr(fun, "__signature__"):
            return None
        wrapped = getattr(fun, "__wrapped__", None)
        if wrapped is None:
            break
        fun = wrapped
    else:
        return None
    if type(fun) is not types.FunctionType:
        return None
    code = fun.__code__
    n = code.co_argcount
    var = code.co_varnames[n + code.co_kwonlyargcount] if code.co_flags & inspect.CO_VARARGS else None
    return code.co_varnames[:n], var


def _arg_names(fun, n_args, kw_names):
    fast = _positional_names(fun)
    if fast is not None:
        positional, var = fast
        var = var or "args"
        names = [positional[i] if i < len(positional) else f"{var}_{i}" for i in range(n_args)]
        return names + list(kw_names)
    sig = _signature(fun)
    names = []
    if sig is not None:
        params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var = next((p.name for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL), "args")
        for i in range(n_args):
            names.append(params[i].name if i < len(params) else f"{var}_{i}")
    else:
        names = [f"arg{i}" for i in range(n_args)]
    return names + list(kw_names)


def flat_arg_names(labels, args, kwargs):
    """Program input names for every leaf of the positional `args` (labelled `labels`) and
    the keyword arguments: `x`, `params_w`, `xs_0`."""
    names = []
    for label, a in zip(labels, args):
        names += _leaf_names(label, a)
    for k, v in kwargs.items():
        names += _leaf_names(k, v)
    return names


def _leaf_names(label, tree):
    """Names for a pytree argument's leaves: `x`, `params_w`, `xs_0`."""
    if tree_util.flatten_node(tree) is None:  # a leaf (an array): its label, no path to walk
        return [sanitize(label)]
    pairs, _ = tree_util.tree_flatten_with_path(tree)
    if len(pairs) == 1 and not pairs[0][0]:
        return [sanitize(label)]
    return [sanitize("_".join([label] + [str(getattr(k, "name", k)) for k in path])) for path, _ in pairs]


def _hashable_static(value, name_of):
    """`value` if hashable; else JAX's error naming the argument (`name_of()` gives it)."""
    try:
        hash(value)
    except TypeError as e:
        name = name_of()
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying to "
            f"hash an object of type {type(value)}, {value!r}, passed as static argument {name!r}. "
            f"The error was:\n{type(e).__name__}: {e}"
        ) from None
    return value


# --- executables -------------------------------------------------------------------------


# EAGER_BACKEND: the interpreter for jnp functions called eagerly (numpy/eager_programs.py):
# every division stays one, as op by op, and its compiles are not the user's to log
EAGER_BACKEND = "eager"
_BACKEND_ALIASES = {"cpu": "cpu", "numba": "cpu", "interpreter": "interpreter", "numpy": "interpreter",
                    "gpu": "cuda", "cuda": "cuda", EAGER_BACKEND: "interpreter"}


def _make_executable(program, backend):
    """The executable for `program` on `backend` (None: the configured default)."""
    name = backend or config.read("omnistage_default_backend")
    kind = _BACKEND_ALIASES.get(name)
    if kind is None:
        raise ValueError(f"Unknown backend {name!r}; choose 'cpu' (Numba), 'cuda' (or 'gpu') or 'interpreter'.")
    from .codegen import executable
    from .core import devices

    devices.computation_started = True  # distributed.initialize() must come before (as in JAX)
    if kind == "interpreter":
        return executable.InterpretedProgram(program)
    if kind == "cuda":
        from .codegen.cuda.executable import compile_for_cuda

        return compile_for_cuda(program)
    cpu = executable.compile_for_cpu(program)
    from .core import devices

    if backend is None and devices.gpu_arrays_exist:
        # computation follows its inputs' device (no check at all until a GPU array exists)
        from .codegen.cuda.executable import FollowDevice

        return FollowDevice(program, cpu)
    return cpu


# A program without inputs (every argument static) computes the same value at every call: like
# XLA's constant folding, its first call's results are kept and returned again (read-only, as
# every Array's buffer), when they are this small and nothing in it has effects or calls Python.
FOLD_MAX_BYTES = 1 << 20


def _foldable(program):
    from .core.primitive import CALLS_PYTHON, EFFECTFUL

    if program.in_avals or sum(a.size * np.dtype(a.dtype).itemsize for a in program.out_avals) > FOLD_MAX_BYTES:
        return False
    for node in walk(program.fn):
        if is_eqn(node):
            prim = eqn(node).prim
            if prim in EFFECTFUL or prim in CALLS_PYTHON:
                return False
    return True


class _Folded:
    """An input-free program's executable whose first results serve every later call."""

    def __init__(self, executable):
        self._executable = executable
        self._outs = None

    def __call__(self):
        outs = self._outs
        if outs is None:
            outs = tuple(self._executable())
            for o in outs:
                if isinstance(o, np.ndarray):
                    o.flags.writeable = False
            self._outs = outs
        return outs


class Compiled:
    """An executable for one cache key: runs the cleaned Program (Numba by default)."""

    def __init__(self, program, out_tree, backend=None):
        from .codegen import compile_log

        eager = backend == EAGER_BACKEND
        with compile_log.compiling(program, config.read("jax_log_compiles"), quiet=eager) as built:
            program = cleanup(program, exact=eager)
            if config.read("jax_enable_checks"):  # omnistage.enable_checks: type-check what is compiled
                program.check()
            self.executable = _make_executable(program, backend)
            built(self.executable)
        self.program = program
        self.out_tree = out_tree
        self.out_avals = program.out_avals
        self.backend = self.executable.backend
        self._run = _Folded(self.executable) if _foldable(program) else self.executable
        self._build_outputs = fast_outputs.builder(out_tree, self.out_avals)  # (made here, not on a call)
        self._aliases = None  # (output, input) pairs sharing memory; found on the first call

    def _owned(self, outs, values):
        """`outs` with every output that is (a view of) a caller's writable NumPy input copied:
        an Array must not alias memory its caller can still change, and wrapping it would make
        the caller's own array read-only (`jit(lambda x: x)(np_array)`). Which outputs alias which
        inputs is fixed by the program (one signature, C order), so it is found once."""
        aliases = self._aliases
        if aliases is None:
            arrays = [(i, v) for i, v in enumerate(values) if type(v) is np.ndarray and v.ndim]
            aliases = self._aliases = tuple(
                (k, i) for k, o in enumerate(outs) if isinstance(o, np.ndarray)
                for i, v in arrays if np.may_share_memory(o, v))
            if not aliases:
                return outs
        outs = list(outs)
        for k, i in aliases:
            if values[i].flags.writeable and np.may_share_memory(outs[k], values[i]):
                outs[k] = outs[k].copy()
        return outs

    def as_text(self):
        """The executable's source: the generated Numba module (or the interpreted program)."""
        return self.executable.as_text()

    def call_flat(self, values):
        outs = self._run(*values)
        if self._aliases != ():
            outs = self._owned(outs, values)
        return [Array.from_numpy(o, a) for o, a in zip(outs, self.out_avals)]

    def call_tree(self, values):
        """Run on flat NumPy values; return the output pytree of Arrays."""
        outs = self._run(*values)
        if self._aliases != ():
            outs = self._owned(outs, values)
        return self._build_outputs(outs)

    def __call__(self, *args, **kwargs):
        leaves = tree_util.tree_leaves((args, kwargs))
        values = [leaf_value(x, leaf_aval(x)) for x in leaves]
        return tree_util.tree_unflatten(self.out_tree, self.call_flat(values))


class Lowered:
    """A staged (not yet compiled) function: `.as_text()` is the Program's Python source."""

    def __init__(self, program, out_tree, jit_fn, key):
        self.program = program
        self.out_tree = out_tree
        self._jit_fn = jit_fn
        self._key = key

    def as_text(self):
        return self.program.source()

    def compile(self):
        return self._jit_fn._executable(self._key, self.program, self.out_tree)


# --- jit ---------------------------------------------------------------------------------

_CACHES = weakref.WeakKeyDictionary()
_STRONG_CACHES = {}


def _cache_owner(fun):
    return getattr(fun, "__func__", fun)


def clear_caches():
    """Empty every jit function's in-memory cache of compiled programs (JAX's
    `jax.clear_caches`); the on-disk cache stays (`omnistage.clear_cache` empties it)."""
    for caches in (_CACHES, _STRONG_CACHES):
        for cache in list(caches.values()):
            cache.clear()


def _cache_for(fun):
    owner = _cache_owner(fun)
    try:
        return _CACHES.setdefault(owner, {})
    except TypeError:  # not weak-referenceable (builtins)
        return _STRONG_CACHES.setdefault(owner, {})


# First compiles in progress: (id(cache), key) -> _Flight. A key missing from its cache is
# traced and compiled by one thread; others calling with the same key meanwhile wait for it.
# Only misses touch this (under the lock); a cached call is one plain dict lookup.
_FLIGHTS = {}
_FLIGHTS_LOCK = threading.RLock()  # re-entrant: hashing a user's static value may call jit


class _Flight:
    """One key's first compile in progress: the thread compiling it, and an event set when done."""

    __slots__ = ("owner", "done")

    def __init__(self, owner):
        self.owner = owner
        self.done = threading.Event()


def _compile_once(cache, key, build):
    """`cache[key]`, made by `build()` in one thread when missing (single flight).

    Threads that miss while another compiles the key wait, then use its entry. If that compile
    raised, each waiter compiles for itself in turn, so every thread gets the error (or result)
    of its own call. A thread already compiling `key` further up its own stack builds again
    instead of waiting for itself."""
    token = (id(cache), key)
    me = threading.get_ident()
    while True:
        with _FLIGHTS_LOCK:
            entry = cache.get(key)
            if entry is not None:
                return entry
            flight = _FLIGHTS.get(token)
            if flight is None:
                flight = _FLIGHTS[token] = _Flight(me)
                break
        if flight.owner == me:
            with gc_pause.paused():
                return build()
        flight.done.wait()
    try:
        with gc_pause.paused():
            entry = build()
        cache[key] = entry
        return entry
    finally:
        with _FLIGHTS_LOCK:
            del _FLIGHTS[token]
        flight.done.set()


class JitFunction:
    """The result of `jit(fun)`: traces once per cache key, then runs the executable."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None,
                 python_control_flow=True, inline=False):
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun!r}")
        functools.update_wrapper(self, fun, updated=())
        self._fun = fun
        self._static_argnums, self._static_argnames = _resolve_static(fun, static_argnums, static_argnames)
        self._donate_argnums = tuple(donate_argnums) if not isinstance(donate_argnums, int) else (donate_argnums,)
        self._backend = backend
        self._python_control_flow = python_control_flow
        self._converted = None
        self._cache = _cache_for(fun)
        bound_self = getattr(fun, "__self__", None)
        self._options = (
            self._static_argnums, self._static_argnames, backend, python_control_flow,
            None if bound_self is None else _self_key(bound_self),
        )

    def _call_target(self):
        """The function to trace: its control-flow-converted version unless disabled (then
        nothing the trace reaches is converted, through grad and vmap too, as in JAX)."""
        from .staging.convert import call_unconverted, conversion_is_off, convert

        if not self._python_control_flow:
            return functools.partial(call_unconverted, self._fun)
        if conversion_is_off():  # inlined into a python_control_flow=False trace
            return self._fun
        if self._converted is None:
            self._converted = convert(self._fun)
        return self._converted

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<JitFunction of {self._fun!r}>"

    # --- argument split -------------------------------------------------------------

    def _split(self, args, kwargs):
        """(static values, dynamic args, dynamic kwargs)."""
        nums, names = self._static_argnums, self._static_argnames
        if nums and max(nums) >= len(args):
            # a static argument left out is fine when the signature gives it a default
            missing = [n for n in nums if n >= len(args) and _named(self._fun, n) not in kwargs and not _has_default(self._fun, n)]
            if missing:
                raise ValueError(
                    f"jitted function has static_argnums={nums}, but only accepts {len(args)} positional "
                    f"arguments; static argument(s) {missing} were not passed"
                )
        static = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in nums:
                static.append((i, _hashable_static(a, lambda i=i: _named(self._fun, i) or i)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in names:
                static.append((k, _hashable_static(v, lambda k=k: k)))
            else:
                dyn_kwargs[k] = v
        return tuple(static), dyn_args, dyn_kwargs

    def _rebuild(self, static, dyn_args, dyn_kwargs):
        args = list(dyn_args)
        kwargs = dict(dyn_kwargs)
        for k, v in static:
            if isinstance(k, int):
                args.insert(k, v)
            else:
                kwargs[k] = v
        return args, kwargs

    # --- calling --------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        # a thread-local config override (disable_jit) anywhere: keys must see this thread's
        fast = None
        if not kwargs and not config.overrides_open:
            fast = fast_args.key_and_values((self._options, config.epoch), args, self._static_argnums)
            if fast is not None:
                try:
                    entry = self._cache.get(fast[0])
                except TypeError:  # an unhashable static value: the general path raises the proper error
                    fast = entry = None
                if entry is not None:
                    return entry.call_tree(fast[1])
        if config.read("jax_disable_jit"):
            return self._fun(*args, **kwargs)
        static, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        if current_trace() is not None:
            # Inside another trace: inline (the outer trace stages our body).
            return self._call_target()(*args, **kwargs)
        avals = tuple(leaf_aval(x) for x in leaves)
        key = self._key(static, in_tree, avals)
        backend = self._backend
        if backend is None and _on_gpu(leaves):
            # computation follows its inputs' device, also for a function compiled for the CPU first
            key, backend = key + ("gpu",), "cuda"
        entry = self._cache.get(key)
        if entry is None:
            def build():
                program, out_tree = self._trace(static, dyn_args, dyn_kwargs, avals, in_tree)
                return Compiled(program, out_tree, backend or self._backend)

            entry = _compile_once(self._cache, key, build)
        if fast is not None:
            self._cache[fast[0]] = entry  # also when lower().compile() made the entry
        out = entry.call_tree([leaf_value(x, a) for x, a in zip(leaves, avals)])
        if config.checks_on:  # debug_nans / debug_infs: find the op by re-running eagerly
            from .core.float_checks import check_jit_outputs

            check_jit_outputs(self._fun, tree_util.tree_leaves(out), lambda: self._fun(*args, **kwargs))
        return out

    def _key(self, static, in_tree, avals):
        return (self._options, config.epoch, config.local_overrides(), static, in_tree, avals)

    def _executable(self, key, program, out_tree, backend=None):
        entry = self._cache.get(key)
        if entry is None:
            entry = _compile_once(self._cache, key, lambda: Compiled(program, out_tree, backend or self._backend))
        return entry

    def _trace(self, static, dyn_args, dyn_kwargs, avals, in_tree, transform="jit"):
        if config.read("jax_no_tracing"):  # omnistage.no_tracing: a test that no call retraces
            raise RuntimeError(f"re-tracing function {getattr(self._fun, '__qualname__', self._fun)} for `{transform}`, "
                               f"but 'no_tracing' is set (argument avals: {', '.join(a.str_short() for a in avals)})")
        if config.read("jax_explain_cache_misses"):
            from .cache_misses import explain

            explain(self._fun, self._key(static, in_tree, avals), list(self._cache))
        arg_labels = _arg_names(self._fun, len(dyn_args) + len(static), [])
        static_pos = {k for k, _ in static if isinstance(k, int)}
        dyn_labels = [l for i, l in enumerate(arg_labels) if i not in static_pos][: len(dyn_args)]
        names = flat_arg_names(dyn_labels, dyn_args, dyn_kwargs)
        out_tree_box = []

        def flat_fun(*tracers):
            dargs, dkwargs = tree_util.tree_unflatten(in_tree, list(tracers))
            args, kwargs = self._rebuild(static, dargs, dkwargs)
            out = self._call_target()(*args, **kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            check_outputs(self._fun, out, out_leaves, transform)
            out_tree_box.append(out_tree)
            return [o if isinstance(o, Tracer) else _staged_constant(o) for o in out_leaves]

        debug = DebugInfo(self._fun, transform, names)
        program, trace = stage(flat_fun, avals, names, debug, name=getattr(self._fun, "__name__", "fn"))
        if trace.captures:
            raise _closure_tracer_error(self._fun, trace.captures)
        return program, out_tree_box[0]

    def lower(self, *args, **kwargs):
        static, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(leaf_aval(x) for x in leaves)
        key = self._key(static, in_tree, avals)
        program, out_tree = self._trace(static, dyn_args, dyn_kwargs, avals, in_tree)
        return Lowered(program, out_tree, self, key)

    def eval_shape(self, *args, **kwargs):
        lowered = self.lower(*args, **kwargs)
        return tree_util.tree_unflatten(lowered.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in lowered.program.out_avals])

    def clear_cache(self):
        self._cache.clear()

    def _cache_size(self):
        return len(self._cache)


def _on_gpu(leaves):
    """Whether any argument leaf lives in GPU memory (only checked once GPU arrays exist)."""
    from .core import devices

    if not devices.gpu_arrays_exist:
        return False
    from .core.array import GpuArray

    return any(type(x) is GpuArray for x in leaves)


def _staged_constant(value):
    """A constant output, staged so it keeps JAX's canonical dtype and weak type."""
    from .lax.shapes import broadcast_in_dim_p

    x = to_operand(value)
    return broadcast_in_dim_p.bind(x, shape=x.shape, broadcast_dimensions=tuple(range(x.ndim)))


def _named(fun, i):
    sig = _signature(fun)
    if sig is None:
        return None
    params = [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return params[i] if i < len(params) else None


def _has_default(fun, i):
    sig = _signature(fun)
    if sig is None:
        return False
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return i < len(params) and params[i].default is not params[i].empty


def _self_key(obj):
    try:
        hash(obj)
        return obj
    except TypeError:
        return ("id", id(obj))


def _closure_tracer_error(fun, captures):
    from .core.errors import UnexpectedTracerError

    tracer = captures[0][0]
    return UnexpectedTracerError(
        f"{getattr(fun, '__name__', fun)} closes over a value traced by an enclosing transformation "
        f"({tracer!r}); pass it as an argument instead."
    )


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None,
        python_control_flow=True, inline=False, **unused):
    """Compile `fun`: trace once per (static values, pytree structure, avals), then run the
    executable. Usable as `@jit`, `jit(f, ...)` and `@partial(jit, static_argnums=...)`."""
    if fun is None:
        return functools.partial(
            jit, static_argnums=static_argnums, static_argnames=static_argnames,
            donate_argnums=donate_argnums, backend=backend, python_control_flow=python_control_flow,
        )
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, backend, python_control_flow)


# --- make_jaxpr / eval_shape ----------------------------------------------------------------


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None, static_argnames=()):
    """`make_jaxpr(f)(*args)` returns the staged `Program`; `str()` of it is runnable Python."""
    jf = JitFunction(fun, static_argnums, static_argnames)

    @functools.wraps(fun)
    def staged(*args, **kwargs):
        static, dyn_args, dyn_kwargs = jf._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(leaf_aval(x) for x in leaves)
        program, out_tree = jf._trace(static, dyn_args, dyn_kwargs, avals, in_tree, "make_jaxpr")
        if return_shape:
            shapes = tree_util.tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in program.out_avals])
            return program, shapes
        return program

    return staged


def eval_shape(fun, *args, **kwargs):
    """Output shapes and dtypes of `fun(*args)` as ShapeDtypeStructs, without running it."""
    return JitFunction(fun).eval_shape(*args, **kwargs)


# --- devices and data movement ----------------------------------------------------------------


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Put every leaf of `x` on `device` (a Device, 'cpu', 'gpu'/'cuda'; None: the CPU, or
    where an Array already is): Python and NumPy values become Arrays, GPU arrays are backed by
    device memory (anything with `__cuda_array_interface__` is adopted without a copy)."""
    from . import numpy as jnp
    from .core import devices
    from .core.array import GpuArray

    target = None if device is None else devices.resolve(device)

    def put(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        on_gpu = isinstance(leaf, GpuArray) or devices.is_device_array(leaf)
        if target is None or target.platform == "cpu":
            if target is not None and on_gpu:
                host = np.asarray(leaf)
                return jnp.asarray(host) if not isinstance(leaf, Array) else Array.from_numpy(host, leaf.aval)
            return leaf if isinstance(leaf, Array) else jnp.asarray(leaf)
        if isinstance(leaf, GpuArray):
            return leaf
        if isinstance(leaf, Array):
            return GpuArray.from_buffer(devices.to_gpu(leaf._value), leaf.aval)
        if on_gpu:
            buf = devices.to_gpu(leaf)
            if dtypes.canonicalize_dtype(buf.dtype) == buf.dtype:  # else: converted on the host below
                return GpuArray.from_buffer(buf, ShapedArray(buf.shape, buf.dtype))
            leaf = np.asarray(buf)
        host = jnp.asarray(leaf)
        return GpuArray.from_buffer(devices.to_gpu(host._value), host.aval)

    return tree_util.tree_map(put, x)


def block_until_ready(x):
    return tree_util.tree_map(lambda l: l.block_until_ready() if hasattr(l, "block_until_ready") else l, x)
