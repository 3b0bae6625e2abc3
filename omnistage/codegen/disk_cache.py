"""The persistent cache of generated modules.

Each generated module is written once to a per-user cache directory (mode 0700;
`OMNISTAGE_CACHE_DIR` overrides) under a name derived from a hash of its source and of the
toolchain (Numba and llvmlite versions, Python version, CPU), then imported with the module
registered in `sys.modules` *before* it executes, so Numba's `cache=True` can find the module
again in a fresh process and load machine code instead of compiling.

Rules this module keeps:
- writes are atomic (temp file + rename), and a valid existing file is never rewritten
  (Numba's cache index keys on the source file's mtime and size);
- every file starts with a header holding the SHA-256 of the rest, so a truncated, corrupt or
  foreign file is detected and replaced;
- a read-only or missing cache directory degrades to in-memory modules, with one warning.

Imports only the standard library (never Numba: the caller decides when Numba loads).
"""
import hashlib
import importlib.util
import os
import platform
import sys
import tempfile
import threading
import types
import warnings

_HEADER_PREFIX = "# omnistage generated module sha256="
_lock = threading.Lock()
_warned = False
_memory_modules = {}


def cache_dir():
    """The cache directory (not created here)."""
    env = os.environ.get("OMNISTAGE_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "omnistage")


def toolchain_fingerprint():
    """What generated machine code depends on besides the source."""
    parts = [sys.version.split()[0], platform.machine(), platform.processor() or ""]
    try:
        import numba
        import llvmlite

        parts += [numba.__version__, llvmlite.__version__]
        from numba.core import config as numba_config

        parts.append(getattr(numba_config, "CPU_NAME", None) or "host")
    except ImportError:  # pragma: no cover - numba is a dependency
        parts.append("no-numba")
    try:
        from llvmlite import binding as llvm

        parts.append(llvm.get_host_cpu_name())
        parts.append(llvm.get_host_cpu_features().flatten())
    except Exception:  # noqa: BLE001 - best effort; the name already includes versions
        pass
    return "|".join(parts)


def module_name(source, fingerprint=None):
    digest = hashlib.sha256((source + "\0" + (fingerprint or toolchain_fingerprint())).encode()).hexdigest()
    return f"omnistage_gen_{digest[:32]}"


def _with_header(source):
    digest = hashlib.sha256(source.encode()).hexdigest()
    return f"{_HEADER_PREFIX}{digest}\n{source}"


def _valid(path, expected_text):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == expected_text
    except (OSError, UnicodeDecodeError):
        return False


def _warn_once(msg):
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(msg, RuntimeWarning, stacklevel=3)


def _ensure_dir(path):
    os.makedirs(path, mode=0o700, exist_ok=True)
    if not os.access(path, os.W_OK):
        raise PermissionError(f"cache directory {path} is not writable")


def _write_atomic(directory, filename, text):
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".py", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(directory, filename))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_module(source, preset=None):
    """Import generated `source` as a module, from the disk cache when possible.

    `preset` globals are placed in the module before its code runs. The module gets
    `_OMNISTAGE_CACHED = True` when it lives on disk (so Numba may cache machine code next to
    it) and False when it had to be built in memory. Returns the module.
    """
    name = module_name(source)
    with _lock:
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        text = _with_header(source)
        directory = cache_dir()
        path = os.path.join(directory, name + ".py")
        try:
            _ensure_dir(directory)
            if not _valid(path, text):
                _write_atomic(directory, name + ".py", text)
            on_disk = True
        except OSError as e:
            _warn_once(
                f"omnistage: the compile cache directory {directory} cannot be used ({e}); "
                f"compiling in memory instead (set OMNISTAGE_CACHE_DIR to a writable directory "
                f"to keep compiled code between processes)."
            )
            on_disk = False
        if on_disk:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
        else:
            mod = types.ModuleType(name)
            mod.__file__ = f"<omnistage in-memory module {name}>"
        mod.__dict__.update(preset or {})
        mod._OMNISTAGE_CACHED = on_disk
        # Registered before execution: Numba's cache locates functions through sys.modules.
        sys.modules[name] = mod
        try:
            if on_disk:
                spec.loader.exec_module(mod)
            else:
                exec(compile(text, mod.__file__, "exec"), mod.__dict__)  # noqa: S102 - our own code
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return mod


def clear(directory=None):
    """Delete every generated module (and Numba's cache files) in the cache directory."""
    directory = directory or cache_dir()
    if not os.path.isdir(directory):
        return 0
    removed = 0
    for root, _dirs, files in os.walk(directory, topdown=False):
        for fname in files:
            if fname.startswith(("omnistage_gen_", ".tmp-")):
                os.unlink(os.path.join(root, fname))
                removed += 1
    return removed
