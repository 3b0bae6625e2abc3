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
        }
        # Bumped on every change, so caches can key on the whole configuration cheaply.
        self.epoch = 0
        self._local = threading.local()  # .values: this thread's overrides, name -> value
        # How many override contexts are open, in all threads: while 0 (nearly always), a
        # cached jit call need not look at thread-local state at all.
        self.overrides_open = 0
        self._count_lock = threading.Lock()

    def _canonical(self, name):
        name = self._aliases.get(name, name)
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name!r}; known: {sorted(self._values)}")
        return name

    def update(self, name, value):
        name = self._canonical(name)
        with self._count_lock:
            self._values[name] = value
            self.epoch += 1

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
        return tuple(sorted(getattr(self._local, "values", {}).items()))

    @contextlib.contextmanager
    def override(self, name, value):
        """Set flag `name` to `value` in the calling thread only, inside the `with` block."""
        name = self._canonical(name)
        local = self._local.__dict__.setdefault("values", {})
        missing = object()
        old = local.get(name, missing)
        local[name] = value
        with self._count_lock:
            self.overrides_open += 1
        try:
            yield
        finally:
            if old is missing:
                del local[name]
            else:
                local[name] = old
            with self._count_lock:
                self.overrides_open -= 1

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    @property
    def x64_enabled(self):
        return bool(self.read("jax_enable_x64") if self.overrides_open else self._values["jax_enable_x64"])


config = Config()


@contextlib.contextmanager
def disable_jit(disable=True):
    """Context manager under which `jit` calls of this thread run eagerly, op by op."""
    with config.override("jax_disable_jit", disable):
        yield
