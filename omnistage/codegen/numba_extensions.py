"""Numba's extension entry points (`numba_extensions`), loaded when omnistage needs them.

Numba runs every installed extension's `init` at the first compile of a process. rocket-fft's
(numpy.fft inside njit, which our FFT lowering calls) imports scipy.fft and scipy.special:
measured ~0.2 s of the ~0.8 s of CPU that the first jit call of a fresh process costs (a selu,
runtime kernels already cached; 0.83 vs 0.60 s). While omnistage compiles its own code
(`compiling()`), the extensions in DEFERRED are left out until a program needs one
(`require`, called by the lowering that uses it). A compile of anyone else's code in the
process (a user's own @njit functions, which may call np.fft) still loads every extension
first, exactly as Numba does, so their code sees no difference.

`install()` wraps `numba.core.entrypoints.init_all`, which Numba calls by module attribute
(the dispatcher's compilation hook and the CPU target's registry set-up).
"""
import contextlib
import threading
import warnings

DEFERRED = ("rocket_fft",)

_lock = threading.RLock()
_local = threading.local()
_loaded = set()  # entry point values already run
_points = None


def _entry_points():
    global _points
    if _points is None:
        from importlib import metadata  # (~5 ms to import: only the Numba path needs it)

        eps = metadata.entry_points()
        if hasattr(eps, "select"):
            _points = list(eps.select(group="numba_extensions", name="init"))
        else:  # importlib.metadata before 3.10's selectable interface
            _points = [ep for ep in eps.get("numba_extensions", ()) if ep.name == "init"]
    return _points


def _top_module(ep):
    return ep.value.split(":")[0].split(".")[0]


def _load(wanted):
    """Run the `init` of every extension `wanted(entry point)` accepts and not run yet (as
    Numba's own loader: a failing extension is a warning, not an error)."""
    with _lock:
        for ep in _entry_points():
            if ep.value in _loaded or not wanted(ep):
                continue
            _loaded.add(ep.value)
            try:
                ep.load()()
            except Exception as e:  # noqa: BLE001 - Numba's own loader only warns too
                warnings.warn(f"Numba extension module '{_top_module(ep)}' failed to load due to "
                              f"'{type(e).__name__}({e})'.", stacklevel=3)


def install():
    """Put our `init_all` in front of Numba's (once per process)."""
    from numba.core import entrypoints

    with _lock:
        if getattr(entrypoints.init_all, "_omnistage", False):
            return

        def init_all():
            if entrypoints._already_initialized:
                return
            if getattr(_local, "depth", 0):
                _load(lambda ep: _top_module(ep) not in DEFERRED)
                return
            with _lock:  # anyone else's compile: every extension, as Numba would
                _load(lambda ep: True)
                entrypoints._already_initialized = True

        init_all._omnistage = True
        entrypoints.init_all = init_all


@contextlib.contextmanager
def compiling():
    """While omnistage compiles its own code in this thread: deferred extensions stay unloaded."""
    install()
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def require(module):
    """Load extension `module`'s entry point now (e.g. 'rocket_fft' before numpy.fft is typed)."""
    _load(lambda ep: _top_module(ep) == module)


def loaded(module):
    """Whether extension `module`'s `init` has run in this process (by us or by Numba)."""
    from numba.core import entrypoints

    return entrypoints._already_initialized or any(
        ep.value in _loaded for ep in _entry_points() if _top_module(ep) == module)
