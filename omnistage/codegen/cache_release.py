"""What a compiled program keeps in this process's native memory, given back when the
program's last jit cache entry goes.

disk_cache frees a program's module and dispatchers after their last owner; what Numba and
llvmlite keep below them is this module's. Measured (llvmlite 0.50 / Numba 0.68, distinct
small programs jitted, called and dropped): 1.52 MB of RSS stayed per program over 100
programs (1.59 MB over 30 with `malloc_trim`), ~1.4 MB of it malloc'd C++ memory, 12 KB
Python objects. Where it went:

- ~1 MB: LLVM pass managers that are never deleted. llvmlite's `ModulePassManager` and
  `FunctionPassManager` derive from `ffi.ObjectRef` first and `NewPassManager` second, so
  `ObjectRef._dispose` (which does nothing) shadows `NewPassManager._dispose` (which deletes
  the C++ object): every pipeline Numba builds, one per function of every library plus two
  per library, leaks 16 KB (function) or 32 KB (module). `install` makes the two classes use
  `NewPassManager._dispose` (only while llvmlite still has the bug).
- ~270 KB: the library's optimized LLVM IR module. Numba adds every finalized module to its
  MCJIT execution engine and never removes it (its `JITCPUCodegen._add_module` has the
  removal commented out: "MCJIT engine leakage in removeModule ... access violation with
  certain test combinations"). `install` removes the module of a library of a generated
  module (`omnistage_gen_*` symbols) after the library is collected, at the next compile
  (under Numba's compiler lock, as all LLVM work in the process): MCJIT's removeModule
  only unlinks the IR (which llvmlite then deletes); the machine code, the loaded object and
  the runtime linker's symbols stay, so code still running, or another module that
  resolved a weak symbol to this one's copy, keep working. Libraries of any other module
  (the user's own Numba code, omnistage's runtime modules) keep Numba's behaviour.

- ~60 KB: a PassBuilder per function pipeline, declarations included (39 of the 42
  functions of a small program), each leaking its instrumentation callbacks (below).
  `install` runs Numba's function pipelines on definitions only (while Numba's
  `_optimize_functions` is still the loop it replaces).

What stays (measured with the three fixes: 123 KB of RSS per program over 100 programs,
~310 KB over 30 with `malloc_trim`; 140 KB malloc'd), and why it cannot be freed from here:
- the machine code, the object file and the runtime linker's symbol and relocation tables of
  every module ever loaded: MCJIT has no way to unload an object (its memory manager frees
  only when the whole engine goes, and Numba has one engine per process);
- each remaining `PassBuilder`'s `PassInstrumentationCallbacks` (~1.5 KB, more once a
  pipeline ran: 7 a program here): llvmlite allocates it with `new` in
  LLVMPY_CreatePassBuilder and never deletes it (not reachable from Python; sharing one
  PassBuilder would not help: every run registers its callbacks on it again);
- constants and types uniqued in LLVM's global context, and the names in Numba's
  `JitEngine._defined_symbols` set (a few KB).

Importing this module imports Numba and llvmlite: disk_cache calls `install()` when it
loads a module.
"""
import functools
import threading

from llvmlite.binding import ffi
from llvmlite.binding import newpassmanagers
from numba.core import codegen as numba_codegen

_GENERATED_SYMBOL = "omnistage_gen_"  # in the mangled names of a generated module's functions
_lock = threading.Lock()
_installed = False


def install():
    """Apply the fixes (once per process; idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _dispose_pass_managers()
        _skip_declarations()
        _remove_dead_generated_modules()
        _installed = True


def _dispose_pass_managers():
    """Let llvmlite's new-pass-manager wrappers delete their C++ object when collected."""
    dispose = getattr(newpassmanagers.NewPassManager, "_dispose", None)
    if dispose is None:
        return
    for cls in (newpassmanagers.ModulePassManager, newpassmanagers.FunctionPassManager):
        if cls._dispose is ffi.ObjectRef._dispose:  # still shadowed: llvmlite's bug
            cls._dispose = dispose


# The names Numba 0.6x's CPUCodeLibrary._optimize_functions uses: its body is replaced only
# while it is still that loop (a later Numba keeps its own).
_OPTIMIZE_FUNCTIONS_NAMES = {"_codegen", "_data_layout", "_function_pass_manager", "_recorded_timings",
                             "data_layout", "functions", "name", "record", "run"}


def _skip_declarations():
    """Numba runs a function pipeline, with a PassBuilder of its own, on every function of a
    module, declarations included (39 of 42 in a small program), and llvmlite never frees a
    PassBuilder's instrumentation callbacks: running the pipelines on definitions only keeps
    the same code and ~60 KB less per program."""
    cls = numba_codegen.CPUCodeLibrary
    numba_optimize = cls._optimize_functions
    if getattr(numba_optimize, "_omnistage", False) or set(numba_optimize.__code__.co_names) != _OPTIMIZE_FUNCTIONS_NAMES:
        return

    def _optimize_functions(self, ll_module):
        ll_module.data_layout = self._codegen._data_layout
        for func in ll_module.functions:
            if func.is_declaration:
                continue  # llvmlite's run returns at once for these
            fpm, pb = self._codegen._function_pass_manager()
            with self._recorded_timings.record(f"Function passes on {func.name!r}", pb):
                fpm.run(func, pb)

    _optimize_functions._omnistage = True
    cls._optimize_functions = _optimize_functions


def _remove_dead_generated_modules():
    """Make Numba's JIT codegen hand back a clean-up for generated modules' libraries (Numba
    runs it when the library is collected: `weakref.finalize` in `_finalize_final_module`)."""
    cls = numba_codegen.JITCPUCodegen
    add_module = cls._add_module
    if getattr(add_module, "_omnistage", False):
        return

    def _add_module(self, module):
        _remove_pending()  # Numba holds its compiler lock here (CodeLibrary.finalize)
        add_module(self, module)
        if _is_generated(module):
            engine = self._engine._ee  # bound now: the clean-up must not keep the codegen
            return functools.partial(_pending.append, (engine, module))
        return None  # Numba's own choice for every other module (it returns None too)

    _add_module._omnistage = True
    cls._add_module = _add_module


def _is_generated(module):
    """Whether an LLVM module defines a function of a generated module (its optimized IR;
    a module loaded from Numba's cache is an empty shell and not worth tracking)."""
    return any(not fn.is_declaration and _GENERATED_SYMBOL in fn.name for fn in module.functions)


# Modules of collected libraries, removed at the next compile. Not in the finalizer itself: it
# runs in whichever thread collects garbage, and deleting IR mutates LLVM's global context
# (use lists of shared constants), which is safe only under Numba's compiler lock, held by
# whoever compiles; taking that lock inside a collection could deadlock.
_pending = []


def _remove_pending():
    """Take the modules of collected libraries out of the engine and delete their IR (called
    with Numba's compiler lock held)."""
    while _pending:
        try:
            engine, module = _pending.pop()
        except IndexError:  # another thread took the last one
            return
        if engine.closed or module.closed:
            continue  # the process is shutting down: the engine frees everything itself
        try:
            engine.remove_module(module)
        except (RuntimeError, KeyError):  # not in the engine: nothing to give back
            continue
        module.close()  # ours now (remove_module handed it back): delete its IR


def release_pending():
    """Give back what collected programs left, now rather than at the next compile."""
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        _remove_pending()


def engine_module_count():
    """How many LLVM modules Numba's CPU execution engine holds once collected programs'
    modules are removed (what `install` keeps from growing; for tests and diagnostics)."""
    from numba.core.registry import cpu_target

    release_pending()
    return len(cpu_target.target_context.codegen()._engine._ee._modules)
