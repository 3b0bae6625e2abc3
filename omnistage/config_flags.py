"""JAX's configuration context managers: `omnistage.enable_x64`, `debug_nans`, `log_compiles`, ...

Each name is a `FlagState` over one flag of `core.config`: `with omnistage.debug_nans(True):`
sets it for the calling thread inside the block (as JAX's do), `omnistage.debug_nans.value`
reads it. What each flag does here:

- enable_x64: 64-bit mode, as `config.update("jax_enable_x64", ...)`.
- debug_nans, debug_infs: every eager op checks its outputs and raises `FloatingPointError`
  naming the op and the user's line; a `jit` call whose outputs hold a NaN/inf is re-run op by
  op to find the op, as JAX does (core/float_checks.py).
- log_compiles: logs every compile on stderr (codegen/compile_log.py).
- enable_checks: every program `jit` compiles is type-checked first (`Program.check`).
- numpy_rank_promotion: 'allow' (default), 'warn' or 'raise' when jnp broadcasts operands of
  different ranks, as JAX.
- no_tracing: a `jit` call that would trace (a cache miss) raises RuntimeError, as JAX's.
- explain_cache_misses: a `jit` call that traces again logs why (cache_misses.py).
- default_device: accepted; arrays are created on the CPU, `device_put` moves them.
- check_tracer_leaks, checking_leaks: accepted; an escaped tracer always raises
  `UnexpectedTracerError`.
- numpy_dtype_promotion: accepted and readable; promotion is always JAX's standard lattice.
- default_matmul_precision: accepted; contractions run in the operands' precision on the CPU.
- debug_key_reuse, no_execution: accepted, no effect.

Imports core only.
"""
from .core.config import config

_NO_VALUE = object()


class FlagState:
    """One configuration flag: call it for a thread-local context manager, read `.value`."""

    def __init__(self, flag, default_new=True, doc=""):
        self.flag = flag
        self._default_new = default_new
        self.__doc__ = doc or f"Context manager for the `{flag}` config option."

    def __call__(self, new_val=_NO_VALUE):
        value = self._default_new if new_val is _NO_VALUE else new_val
        if value is _NO_VALUE:
            short = self.flag.removeprefix("jax_")
            raise TypeError(f"{short}() requires a value, e.g. {short}('allow')")
        return config.override(self.flag, value)

    @property
    def value(self):
        return config.read(self.flag)

    def __repr__(self):
        return f"<omnistage config state {self.flag}={self.value!r}>"


def _state(name, default_new=True):
    return FlagState("jax_" + name, default_new)


enable_x64 = _state("enable_x64")
debug_nans = _state("debug_nans")
debug_infs = _state("debug_infs")
log_compiles = _state("log_compiles")
enable_checks = _state("enable_checks")
check_tracer_leaks = _state("check_tracer_leaks")
debug_key_reuse = _state("debug_key_reuse")
explain_cache_misses = _state("explain_cache_misses")
no_tracing = _state("no_tracing")
no_execution = _state("no_execution")
numpy_rank_promotion = _state("numpy_rank_promotion", _NO_VALUE)
numpy_dtype_promotion = _state("numpy_dtype_promotion", _NO_VALUE)
default_matmul_precision = _state("default_matmul_precision", _NO_VALUE)
default_device = _state("default_device", _NO_VALUE)


def checking_leaks():
    """`with checking_leaks():` is `with check_tracer_leaks(True):`."""
    return check_tracer_leaks(True)


__all__ = [
    "FlagState", "enable_x64", "debug_nans", "debug_infs", "log_compiles", "enable_checks",
    "check_tracer_leaks", "checking_leaks", "debug_key_reuse", "explain_cache_misses", "no_tracing",
    "no_execution", "numpy_rank_promotion", "numpy_dtype_promotion", "default_matmul_precision",
    "default_device",
]
