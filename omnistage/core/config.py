"""Global configuration flags (`omnistage.config`), mirroring `jax.config`.

Owns: the flag table, `config.update`, the 64-bit switch and `disable_jit`.
"""
import contextlib
import os

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
            # what `jit` compiles to when no backend is named: "cpu" (Numba) or "interpreter"
            "omnistage_default_backend": os.environ.get("OMNISTAGE_BACKEND", "cpu").strip().lower() or "cpu",
        }
        # Bumped on every change, so caches can key on the whole configuration cheaply.
        self.epoch = 0

    def _canonical(self, name):
        name = self._aliases.get(name, name)
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name!r}; known: {sorted(self._values)}")
        return name

    def update(self, name, value):
        self._values[self._canonical(name)] = value
        self.epoch += 1

    def read(self, name):
        return self._values[self._canonical(name)]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    @property
    def x64_enabled(self):
        return bool(self._values["jax_enable_x64"])


config = Config()


@contextlib.contextmanager
def disable_jit(disable=True):
    """Context manager under which `jit` calls run eagerly, op by op."""
    old = config.read("jax_disable_jit")
    config.update("jax_disable_jit", disable)
    try:
        yield
    finally:
        config.update("jax_disable_jit", old)
