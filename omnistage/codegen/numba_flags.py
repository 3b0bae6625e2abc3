"""The floating-point flags every cached Numba function of ours is built with, spelled out, and
Numba's in-process cache of compiled subroutines kept apart by fast-math flags.

Numba compiles a callee whose decorator leaves `fastmath` or `error_model` unset with its
caller's (`CPUTargetOptions.finalize`: `inherit_if_not_set`), but keys the callee's overloads, in
a process and in its disk cache, by argument types alone. An unset helper first compiled inside a
generated program (fastmath 'contract', error model 'numpy') was cached contracted, and a later
process's direct call loaded that build; compiled first by a direct call, programs got the
uncontracted one. So a kernel's bits depended on which process filled the cache first. Every
cached function names both flags, so each has one build.

- `ROUNDED`: every runtime kernel (kernels.py, mpi_kernels.py) and scalar helper (support.py)
  but those below: each operation rounds once, as NumPy's loops and the native tier's ports
  (c_complex, c_lapack's eigenvector normalization, c_conv, c_windows) compute; a float division
  by zero gives inf/nan, never an exception.
- `CONTRACTED`: the LU kernels (`kernels.lu`, `forward_substitution`): a real product is fused
  with its sum, as c_linalg's port computes (rounded twice, a rank-deficient matrix's trailing
  zeros become tiny numbers and change the pivots).

Numba lowers complex `*` and `/` (and other builtins) by compiling a Python implementation as a
subroutine, cached per process under its code, signature and error model, not its fast-math
flags: the first caller's flags won for every later one (a contracted kernel's complex product
made every later complex product in the process fused). `install` keys that cache by the
context's flags too.
"""
import threading

ROUNDED = {"fastmath": False, "error_model": "numpy"}
CONTRACTED = {"fastmath": {"contract"}, "error_model": "numpy"}


def decorator_text(flags):
    """`flags` as a generated module's decorator spells them: "fastmath={'contract'}, error_model='numpy'"."""
    fastmath = flags["fastmath"]
    if isinstance(fastmath, (set, frozenset)):  # (a set's repr has no fixed order)
        fastmath = "{" + ", ".join(repr(f) for f in sorted(fastmath)) + "}"
    else:
        fastmath = repr(fastmath)
    return f"fastmath={fastmath}, error_model={flags['error_model']!r}"


_lock = threading.Lock()
_installed = False


def install():
    """Key Numba's subroutine cache (`BaseContext.cached_internal_func`) by the compiling
    context's fast-math flags as well (idempotent; every Numba target context)."""
    global _installed
    with _lock:
        if _installed:
            return
        from numba.core.base import BaseContext

        original = BaseContext.compile_subroutine

        def compile_subroutine(self, *args, **kwargs):
            # the shared dict holds one dict per flag set; Numba's own lookup runs in that one
            # (Numba compiles under its global lock, so the swap is never seen by another thread)
            shared = self.cached_internal_func
            self.cached_internal_func = shared.setdefault(("omnistage-fastmath", _flag_set(self)), {})
            try:
                return original(self, *args, **kwargs)
            finally:
                self.cached_internal_func = shared

        BaseContext.compile_subroutine = compile_subroutine
        _installed = True


def _flag_set(context):
    options = getattr(context, "fastmath", False)  # False, or Numba's FastMathOptions
    return frozenset(getattr(options, "flags", ())) if options else frozenset()
