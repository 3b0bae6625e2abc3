"""Executables that run a Program: the Numba-compiled module, with the NumPy interpreter as
the fallback for programs holding a primitive the code generator cannot lower yet."""
import contextlib
import sys
import threading
import time
import warnings

import numpy as np

from ..core import gc_pause
from ..staging.interpret import compile_program
from . import blas_probe, compile_log, disk_cache, memory_check, narrow_floats, numba_extensions, parallel


def vmath_lookup():
    """The emitter's vmath lookup: a function (name, dtype) -> the exported kernel's name or None."""
    blas_probe.answer_present()  # before anything imports numba.np.arraymath (vmath does)
    try:
        from . import vmath
    except ImportError:
        return lambda name, dtype: None
    lookup = getattr(vmath, "lookup", None)
    if lookup is None:
        table = getattr(vmath, "VMATH", {})
        return lambda name, dtype: (table.get((name, np.dtype(dtype).name)) and _export_name(table[(name, np.dtype(dtype).name)]))
    return lambda name, dtype: (lambda f: f and _export_name(f))(lookup(name, np.dtype(dtype)))


def _export_name(fn):
    return getattr(fn, "__name__", None) or getattr(getattr(fn, "py_func", None), "__name__", None)


class NumbaProgram:
    """A Program compiled by Numba (one module, cached on disk).

    Compiled when constructed, for exactly one signature: the program's avals with every array
    a read-only C-contiguous array (Numba converts a writable one to it for free) and rank-0
    values as scalars; further compiles are then disabled, so an input of another layout (the
    stride-0 result of `jnp.zeros`, a transposed or sliced view, a Fortran-ordered array) is
    copied to C order at the boundary instead of compiling a second specialization.

    A module with parallel loops starts on its serial build (the program emitted without
    parallel loops, a module of its own in the cache: half the compile time in a cold process)
    and tries the parallel one once its calls have taken parallel.TIER_UP_S (the rent-or-buy
    rule, so a program called a few times never pays for the parallel compile); from then on
    a parallel.BuildChoice times both builds now and then and runs the faster (a loaded machine
    makes the parallel one slower). `serial_first=False` runs the parallel build always."""

    backend = "numba_cpu"
    after_first_call = None  # what an instance's hook reads as once its hook has run

    def __init__(self, program, serial_first=True, pause_gc=True):
        from .emit_cpu import emit_module

        self.program = program
        self.source, self.fn_name = emit_module(program, vmath_lookup())
        compile_log.note_source(self.source)
        memory_check.check_source(self.source, program.name)  # an array bigger than the machine: say where
        self.module = disk_cache.load_module(self.source, owner=self)  # freed after its last owner
        self._fn = getattr(self.module, self.fn_name)
        self._tier = None  # a parallel program's choice of build: parallel.BuildChoice
        self._serial_module = self.module  # see serial_module
        self.tier_up_thread = None  # the background compile of the parallel build, once started
        self._one_thread_serial = False  # its serial build has threaded products: timed serial calls run on one thread
        self._serial_module_threaded = False  # _serial_module is not what a native library is built from
        self._library_module = None  # what serial_module emits when _serial_module is not that
        threads = parallel.threaded(self.source)
        if threads:
            parallel.launch_threads()  # before any of its threaded kernels is loaded
        if threads == "blas":
            self._serial_module = None  # emitted only if a library is built
            self._parallel_fn, self._parallel_ready = self._fn, True
            if serial_first:  # else a library's BuildChoice already stands for the serial build
                self._tier, self._one_thread_serial = parallel.BuildChoice(tier_up_s=parallel.TRIAL_S), True
        elif threads:
            # the serial build keeps its products' blocks on Numba's threads (the same bits as
            # one thread): a GEMM-bound training step runs on every core from its first call,
            # while the rent for the parallel loops' compile is paid; the build's timed serial
            # phases run it on one thread
            serial, _ = emit_module(program, vmath_lookup(), threads="blas")
            self._serial_module = disk_cache.load_module(serial, owner=self)
            self._serial_module_threaded = parallel.threaded(serial) is not None
            if serial_first:
                self._parallel_fn, self._fn = self._fn, getattr(self._serial_module, self.fn_name)
                self._tier = parallel.BuildChoice(rent_threads=self._serial_module_threaded)
                self._parallel_ready, self._one_thread_serial = False, self._serial_module_threaded
        # float16/bfloat16 inputs, outputs and constants are float32 in compiled code (narrow_floats)
        narrow_in, self._narrow_out = narrow_floats.narrow_boundary(program)
        self._widen_in = [i for i, n in enumerate(narrow_in) if n]
        self._any_narrow_out = any(self._narrow_out)
        consts = [narrow_floats.wide(c) for c in program.consts.values()]
        # rank-0 values cross into generated code as scalars
        self._consts = tuple(_to_kernel(np.ascontiguousarray(c) if np.ndim(c) else np.asarray(c)) for c in consts)
        self._scalar_in = [a.ndim == 0 for a in program.in_avals]
        self._any_scalar_in = any(self._scalar_in)
        self._arrays_in = [i for i, a in enumerate(program.in_avals) if a.ndim]
        self.after_first_call = None  # a callable run once, after the first call returns
        self._fallback = None  # the interpreter, if Numba failed to compile the module
        self.signature = kernel_signature(program)
        self.cache_status = "compiled (cache miss)"  # for compile_log
        hits = sum(self._fn.stats.cache_hits.values())
        if self.signature in self._fn.overloads:
            self.cache_status = "already compiled in this process"
        try:
            _compile_once(self._fn, self.signature, pause_gc=pause_gc)
            if sum(self._fn.stats.cache_hits.values()) > hits:
                self.cache_status = "machine code loaded from the disk cache"
        except Exception as e:  # noqa: BLE001 - only Numba's compile errors are handled
            if not _is_numba_compile_error(e):
                raise
            # A lowering bug must not cost the user their result: run the staged program
            # with NumPy instead, and say so once.
            warnings.warn(
                f"omnistage: Numba could not compile the program {self.program.name!r} "
                f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); running it "
                f"with the NumPy interpreter instead. Please report this with the output of "
                f"jit(f).lower(...).compile().as_text().",
                RuntimeWarning,
                stacklevel=4,
            )
            self._fallback = InterpretedProgram(self.program)

    def __call__(self, *args):
        if self._any_scalar_in:
            args = [a[()] if s else a for a, s in zip(args, self._scalar_in)]
        if self._fallback is not None:
            return self._fallback(*[np.asarray(a) for a in args])
        if self._widen_in:
            args = list(args)
            for i in self._widen_in:
                args[i] = np.float32(args[i]) if self._scalar_in[i] else _widened(args[i])
        tier, fn, start = self._tier, self._fn, None  # read once: other threads may change them
        one_thread = False
        if tier is not None:
            on_parallel = tier.parallel
            if on_parallel and _builder_busy():
                # serial, not credited to a build, until it is done: beside the builder even the
                # GEMM pool loses (mnist_vae's epoch of small products 750 vs 550 ms serial)
                on_parallel = False
            elif on_parallel:
                if self._parallel_ready:
                    fn = self._parallel_fn
                else:  # compiling in the background: this call runs serial, and is not credited to a build
                    self._tier_up()
                    on_parallel = False
            # a rent call may use threads unless a library builder holds a core (a GEMM split
            # between Numba's threads then waits for the one it preempts: 40 vs 9 ms a call)
            one_thread = self._one_thread_serial and not on_parallel and not (tier.threads_allowed and not _builder_busy())
            start = tier.start()  # after the compile: it is not the build's running cost
        for i in self._arrays_in:
            if not args[i].flags.c_contiguous:  # jnp.zeros' stride 0, a view: copied (~90 ns a check)
                args = _c_ordered(args, self._arrays_in)
                break
        try:
            if one_thread:
                with parallel.one_thread():
                    out = fn(*args, *self._consts)
            else:
                out = fn(*args, *self._consts)
        except TypeError:
            # no matching signature: a misaligned input; copy it
            retry = _c_ordered(args, self._arrays_in)
            if retry is None:
                raise
            out = fn(*retry, *self._consts)
        if self._any_narrow_out:
            out = tuple(o if n is None else _narrowed(o, n) for o, n in zip(out, self._narrow_out))
        if start is not None:
            tier.record(on_parallel, time.perf_counter() - start)
        if self.after_first_call is not None:
            # one atomic pop: of threads finishing their first calls together, one runs the hook
            hook = self.__dict__.pop("after_first_call", None)
            if hook is not None:
                hook()
        return out

    def _tier_up(self):
        """Start compiling the parallel build in a background thread (once). Calls run the
        serial build meanwhile: a compile as long as the program's first (seconds, for a
        training epoch) no longer lands inside a call, and both builds give the same bits, so
        when it ends changes no result. If Numba cannot compile it, the serial build for good."""
        # not _DISPATCHER_LOCK: the compile holds that one throughout
        parallel.start_tier_up(self, self._compile_parallel, _TIER_UP_LOCK)

    def _compile_parallel(self):
        try:
            # the collector stays on: the user's threads run on while this compiles
            _compile_once(self._parallel_fn, self.signature, pause_gc=False)
        except Exception as e:  # noqa: BLE001 - the serial build runs on, whatever went wrong
            if not _is_numba_compile_error(e):
                warnings.warn(f"omnistage: the parallel build of {self.program.name!r} failed "
                              f"({type(e).__name__}: {e}); its serial build runs instead", RuntimeWarning)
            self._tier = None
            return
        self._parallel_ready = True

    @property
    def serial_module(self):
        """The build without threads: what a native library is built from (aot.py). A program
        threaded only in its products (one build) emits it when the library builder first asks."""
        if self._serial_module is not None and not self._serial_module_threaded:
            return self._serial_module
        if self._library_module is None:
            from .emit_cpu import emit_module

            serial, _ = emit_module(self.program, vmath_lookup(), threads=False)
            self._library_module = disk_cache.load_module(serial, owner=self)
        return self._library_module

    def as_text(self):
        return self.source


def kernel_signature(program):
    """The one Numba signature of `program`'s entry: its inputs (float16/bfloat16 widened to
    float32), then its constants; arrays read-only and C-contiguous, rank-0 values scalars."""
    from numba import types
    from numba.np.numpy_support import from_dtype

    def numba_type(shape, dtype):
        scalar = from_dtype(np.dtype(dtype))
        return scalar if not shape else types.Array(scalar, len(shape), "C", readonly=True)

    narrow_in, _ = narrow_floats.narrow_boundary(program)
    ins = [numba_type(a.shape, np.float32 if n else a.dtype) for a, n in zip(program.in_avals, narrow_in)]
    consts = [narrow_floats.wide(c) for c in program.consts.values()]
    return tuple(ins + [numba_type(np.shape(c), np.asarray(c).dtype) for c in consts])


def _builder_busy():
    """Whether this process's ahead-of-time library builder is compiling (aot.building())."""
    aot = sys.modules.get("omnistage.codegen.aot")  # not imported: no builder was started
    return aot is not None and aot.building()


def _compile_once(dispatcher, signature, pause_gc=True):
    """Compile `dispatcher` for `signature` (Numba loads it from its cache when it can), then
    let it compile nothing else: a call that matches no signature raises TypeError instead.
    (Modules are shared by programs with the same text, which may differ in dtypes: each
    program adds its own signature.)"""
    with _DISPATCHER_LOCK, numba_extensions.compiling(), gc_pause.paused() if pause_gc else contextlib.nullcontext():
        if signature not in dispatcher.overloads:
            dispatcher.disable_compile(False)
            dispatcher.compile(signature)
        dispatcher.disable_compile()


# Threads compiling programs that share one module share its dispatcher: one's
# disable_compile() must not land in the middle of another's compile ("compilation disabled").
# Numba compiles under a global lock anyway, so this serializes nothing that ran in parallel.
_DISPATCHER_LOCK = threading.Lock()
_TIER_UP_LOCK = threading.Lock()


def _c_ordered(args, arrays):
    """`args` with every array among positions `arrays` that is not aligned C-contiguous
    copied into one that is; None when all already were (the mismatch is something else)."""
    out, copied = list(args), False
    for i in arrays:
        a = out[i]
        if isinstance(a, np.ndarray) and not (a.flags.c_contiguous and a.flags.aligned):
            out[i], copied = np.array(a, order="C"), True
    return out if copied else None


# float16 arrays at least this big cross the boundary through support's vectorized loops
# (NumPy's casts cost ~1.5 ns an element each way, these ~0.1-0.2 ns; a call costs ~1 us)
_FAST_FLOAT16_SIZE = 2048


def _widened(value):
    """A float16/bfloat16 parameter as the float32 array compiled code takes (exact)."""
    a = np.asarray(value)
    if a.dtype == np.float16 and a.size >= _FAST_FLOAT16_SIZE:
        from . import support  # Numba: only for compiled programs

        bits = np.ascontiguousarray(a).reshape(-1).view(np.uint16)
        return support.float16_bits_to_float32(bits).reshape(a.shape)
    return narrow_floats.cast_exactly(a, np.float32)


def _narrowed(value, dtype):
    """A float32 result of compiled code as the float16/bfloat16 output it stands for (exact:
    the value is already on the narrow value set)."""
    a = np.asarray(value)
    if dtype == "float16" and a.dtype == np.float32 and a.size >= _FAST_FLOAT16_SIZE:
        from . import support

        return support.float32_to_float16_bits(np.ascontiguousarray(a).reshape(-1)).view(np.float16).reshape(a.shape)
    narrow = narrow_floats.cast_exactly(a, dtype)
    return narrow[()] if narrow.ndim == 0 and not isinstance(value, np.ndarray) else narrow


def _is_numba_compile_error(exc):
    try:
        from numba.core.errors import NumbaError
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, NumbaError)


def _to_kernel(value):
    return value[()] if value.ndim == 0 else value


class InterpretedProgram:
    """The fallback: the staged program run by the NumPy interpreter."""

    backend = "interpreter"
    cache_status = "interpreted (nothing to compile)"

    def __init__(self, program, reason=None):
        self.program = program
        self.reason = reason
        self._run = compile_program(program)

    def __call__(self, *args):
        return self._run(*args)

    def as_text(self):
        note = f"# interpreted by NumPy: {self.reason}\n" if self.reason else ""
        return note + self.program.source()


def compile_for_cpu(program):
    """The best executable available for `program`: its ahead-of-time library when one is
    cached (no Numba import), else the Numba module (and a builder makes the library for the
    next process), else the interpreter. Under OMNISTAGE_PROFILE only the Numba module carries
    the timer marks, so libraries are neither loaded nor built for it."""
    from . import aot, host_memory, profile

    host_memory.tune()
    profiling = profile.enabled()
    if not profiling:
        key = aot.program_key_or_none(program)  # (once: the text of a big program takes a while to hash)
        loaded = aot.load(program, key=key)
        if loaded is not None:
            return loaded
        from . import op_tier

        # statements on kernels compiled once per machine answer while the fused library
        # compiles (c_tier, imported by its thread: ~20 ms of modules this call need not wait for)
        by_ops = op_tier.compile_program(program, key)
        if by_ops is not None:
            return by_ops
        from . import c_tier

        built = c_tier.compile_program(program, key=key)
        if built is not None:
            return built
    from .emit_cpu import Unsupported

    try:
        compiled = NumbaProgram(program)
    except Unsupported as e:
        return InterpretedProgram(program, f"no Numba lowering for {e.args[0]} yet")
    # After the first call: the builder then does not compete with this process's compile.
    if not profiling:
        compiled.after_first_call = lambda: aot.schedule_build(compiled)
    return compiled
