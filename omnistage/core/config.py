"""Global configuration flags (`omnistage.config`), mirroring `jax.config`.

Owns: the flag table, `config.update`, the 64-bit switch and `disable_jit`.

`config.update` sets a flag for every thread; a context manager (`disable_jit`,
`config.override`) sets it for the calling thread only, as JAX's do: another thread tracing or
calling at that moment keeps the global value.
"""
import contextlib
import os
import threading

_TRUTHY = {"1", "true", "yes", "on"}


def _env_flag(*names):
    return any(os.environ.get(n, "").strip().lower() in _TRUTHY for n in names)


class Config:
    """Flags read with attribute access (`config.jax_enable_x64`) and set with `update`."""

    _aliases = {"enable_x64": "jax_enable_x64", "disable_jit": "jax_disable_jit"}

    def __init__(self):
        self._values = {
            "jax_enable_x64": _env_flag("JAX_ENABLE_X64", "OMNISTAGE_ENABLE_X64"),
            "jax_disable_jit": _env_flag("JAX_DISABLE_JIT", "OMNISTAGE_DISABLE_JIT"),
            "jax_numpy_rank_promotion": "allow",
            # log every compile on stderr (codegen/compile_log.py; OMNISTAGE_LOG_COMPILES too)
            "jax_log_compiles": _env_flag("JAX_LOG_COMPILES"),
            # what `jit` compiles to when no backend is named: "cpu" (Numba) or "interpreter"
            "omnistage_default_backend": os.environ.get("OMNISTAGE_BACKEND", "cpu").strip().lower() or "cpu",
            # FloatingPointError at the first op whose output has a NaN / an inf (config_flags.py)
            "jax_debug_nans": _env_flag("JAX_DEBUG_NANS"),
            "jax_debug_infs": _env_flag("JAX_DEBUG_INFS"),
            # accepted for JAX compatibility; what omnistage does with each: config_flags.py
            "jax_enable_checks": False,
            "jax_numpy_dtype_promotion": "standard",
            "jax_default_matmul_precision": None,
            "jax_debug_key_reuse": False,
            "jax_check_tracer_leaks": False,
            "jax_explain_cache_misses": False,
            "jax_no_tracing": False,
            "jax_no_execution": False,
            "jax_default_device": None,
        }
        # Bumped on every change, so caches can key on the whole configuration cheaply.
        self.epoch = 0
        self._local = threading.local()  # .values: this thread's overrides, name -> value
        # How many override contexts are open, in all threads: while 0 (nearly always), a
        # cached jit call need not look at thread-local state at all.
        self.overrides_open = 0
        self._count_lock = threading.Lock()
        # Whether a NaN/inf check is on anywhere: eager ops then check their outputs. While it
        # is on globally, one extra count sits in overrides_open, so that cached jit calls leave
        # their fast path for the one that checks outputs (at no cost to the fast path itself).
        self.checks_on = False
        self._global_checks = False
        self._local_checks = 0  # open override contexts that turn a check on
        self._sync_checks()

    def _canonical(self, name):
        name = self._aliases.get(name, name)
        if name not in self._values and "jax_" + name in self._values:
            name = "jax_" + name  # JAX's State objects' short names (debug_nans)
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name!r}; known: {sorted(self._values)}")
        return name

    def update(self, name, value):
        name = self._canonical(name)
        with self._count_lock:
            self._values[name] = value
            self.epoch += 1
            if name in CHECK_FLAGS:
                self._sync_checks()

    def _sync_checks(self):
        """Keep `checks_on` and the extra overrides_open count in step with the check flags
        (called with `_count_lock` held, or from __init__)."""
        on = any(self._values[f] for f in CHECK_FLAGS)
        if on != self._global_checks:
            self._global_checks = on
            self.overrides_open += 1 if on else -1
        self.checks_on = on or self._local_checks > 0

    def read(self, name):
        name = self._canonical(name)
        if self.overrides_open:
            local = getattr(self._local, "values", None)
            if local and name in local:
                return local[name]
        return self._values[name]

    def local_overrides(self):
        """This thread's overrides as a hashable tuple (a cache-key part); () if none."""
        if not self.overrides_open:
            return ()
        return tuple(sorted((k, v) for k, v in getattr(self._local, "values", {}).items() if k not in NOT_IN_KEY))

    @contextlib.contextmanager
    def override(self, name, value):
        """Set flag `name` to `value` in the calling thread only, inside the `with` block."""
        name = self._canonical(name)
        local = self._local.__dict__.setdefault("values", {})
        missing = object()
        old = local.get(name, missing)
        local[name] = value
        checks = name in CHECK_FLAGS and bool(value)
        with self._count_lock:
            self.overrides_open += 1
            if checks:
                self._local_checks += 1
                self.checks_on = True
        try:
            yield
        finally:
            if old is missing:
                del local[name]
            else:
                local[name] = old
            with self._count_lock:
                self.overrides_open -= 1
                if checks:
                    self._local_checks -= 1
                    self.checks_on = self._global_checks or self._local_checks > 0

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    @property
    def x64_enabled(self):
        return bool(self.read("jax_enable_x64") if self.overrides_open else self._values["jax_enable_x64"])


# Flags that do not change what a function traces to: a `with` block setting one reuses the
# programs jit compiled outside it (no_tracing would be useless otherwise).
NOT_IN_KEY = frozenset({
    "jax_debug_nans", "jax_debug_infs", "jax_log_compiles", "jax_check_tracer_leaks",
    "jax_debug_key_reuse", "jax_explain_cache_misses", "jax_no_tracing", "jax_no_execution",
})

# The flags whose truth makes ops check their outputs for NaN/inf (see Config.checks_on).
CHECK_FLAGS = ("jax_debug_nans", "jax_debug_infs")

config = Config()


@contextlib.contextmanager
def disable_jit(disable=True):
    """Context manager under which `jit` calls of this thread run eagerly, op by op."""
    with config.override("jax_disable_jit", disable):
        yield
