"""Numba's cache files for omnistage's code: in omnistage's private cache directory, tagged,
checked before they are unpickled.

Numba keeps a compiled function's machine code in an index file (`.nbi`) and data files
(`.nbc`), both pickles, next to the module (`__pycache__`), or in `NUMBA_CACHE_DIR`, or in
`~/.cache/numba` when `__pycache__` is read-only. For the functions of generated modules
(`omnistage_gen_*`) and of omnistage's runtime modules (`support`, `kernels`, ...) none of
those places is ours to check, so `install()` puts a locator first in Numba's list that
claims exactly those functions: their files go to the checked private directory
(cache_integrity.private_dir) whatever `NUMBA_CACHE_DIR` or `NUMBA_CACHE_LOCATOR_CLASSES`
(which replaces Numba's locator list) say, and Numba never falls back to another place. Their files are written with an HMAC tag and read back through the directory's
descriptor; a file whose tag does not match (truncated, flipped, planted, moved) is deleted
and the function compiled again with one warning, before a byte of it is unpickled. Any other
failure loading an entry (an exception while unpickling or rebuilding checked bytes) does the
same. A write error (full disk, read-only directory) leaves the compiled code in memory, with
one warning. Functions of any other module keep Numba's own behaviour untouched.

Importing this module imports Numba: disk_cache calls `install()` when it loads a module.
"""
import hashlib
import io
import os
import pickle
import sys
import threading
import types

import numpy as np
from numba.core import caching

from . import cache_integrity, numba_flags

_GENERATED_PREFIX = "omnistage_gen_"
_lock = threading.Lock()
_installed = False
_NumbaIndexDataCacheFile = caching.IndexDataCacheFile


class PrivateCachePath(str):
    """The cache path of a function we own: a str (Numba joins and prints it) that marks it."""


_runtime_directory = None  # set by the library builder: its runtime kernels compile afresh there


def use_runtime_directory(path):
    """Keep the cache files of runtime kernels compiled from now on in `path` (the library
    builder's temporary directory): a library links every kernel's code, and cached machine
    code has none to link (a cached kernel also calls others through cells the library lacks)."""
    global _runtime_directory
    _runtime_directory = path


def _owned_directory(py_func, py_file):
    """Where the cache files of `py_func` go when it is ours, else None."""
    module = getattr(py_func, "__module__", None) or ""
    if module.startswith(_GENERATED_PREFIX):
        return os.path.dirname(os.path.abspath(py_file))
    if module == "omnistage" or module.startswith("omnistage."):
        if _runtime_directory is not None:
            return _runtime_directory
        from . import disk_cache

        return disk_cache.cache_dir()
    return None


class OmnistageLocator(caching._CacheLocator):
    """Claims the functions of generated and runtime modules (see the module docstring)."""

    def __init__(self, py_func, py_file, directory):
        self._py_file = py_file  # Numba's cachability warning names it
        self._lineno = py_func.__code__.co_firstlineno
        self._directory = directory
        self._generated = py_func.__module__.startswith(_GENERATED_PREFIX)
        self._module = py_func.__module__

    @classmethod
    def from_function(cls, py_func, py_file):
        directory = _owned_directory(py_func, py_file)
        return None if directory is None else cls(py_func, py_file, directory)

    def ensure_cache_path(self):
        pass  # the directory is made and checked when a file is read or written

    def get_cache_path(self):
        return PrivateCachePath(self._directory)

    def get_source_stamp(self):
        if self._generated:
            return os.path.basename(self._py_file)  # the module's name is a hash of its text
        from . import disk_cache

        # the module's file and every omnistage module it imports: a runtime kernel inlines
        # the helpers it calls (vmath's intrinsics, support's scalar functions)
        stamp = disk_cache.runtime_digest(f"import {self._module}\n")
        if stamp:
            return stamp
        try:
            with open(self._py_file, "rb") as f:
                return hashlib.sha256(f.read()).hexdigest()
        except OSError:
            return None

    def get_disambiguator(self):
        if self._generated:
            return str(self._lineno)
        # runtime modules of two omnistage copies sharing one cache keep separate entries
        where = hashlib.sha256(os.path.abspath(self._py_file).encode()).hexdigest()[:8]
        return f"{self._lineno}-{where}"


class TaggedIndexDataCacheFile(_NumbaIndexDataCacheFile):
    """Numba's index/data files, tagged and checked when the cache path is ours; Numba's own
    behaviour otherwise."""

    def __init__(self, cache_path, filename_base, source_stamp):
        super().__init__(cache_path, filename_base, source_stamp)
        self._ours = isinstance(cache_path, PrivateCachePath)
        self._base = filename_base

    def _private(self):
        try:
            return cache_integrity.private_dir(self._cache_path)
        except OSError:
            return None  # disk_cache has said why; this function simply is not cached

    def _read_checked(self, pdir, name):
        try:
            raw = pdir.read(name)
        except OSError:
            return None
        if raw is None:
            return None
        try:
            return pdir.untagged(name, raw)
        except cache_integrity.DamagedEntry as e:
            self.discard(pdir, e.reason, name)
            return None

    def discard(self, pdir, reason, name=None):
        """Delete this function's index and data files and say so once."""
        for fname in _entry_files(pdir, self._base):
            pdir.unlink(fname)
        cache_integrity.warn_damaged(pdir.path, name or self._index_name, reason)

    def _load_index(self):
        if not self._ours:
            return super()._load_index()
        pdir = self._private()
        data = None if pdir is None else self._read_checked(pdir, self._index_name)
        if data is None:
            return {}
        try:
            stream = io.BytesIO(data)
            version = pickle.load(stream)
            if version != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
        except Exception as e:  # noqa: BLE001 - checked bytes that still fail: drop the entry
            self.discard(pdir, f"{type(e).__name__} while reading it")
            return {}
        caching._cache_log("[cache] index loaded from %r", os.path.join(pdir.path, self._index_name))
        if stamp != self._source_stamp:
            return {}
        pdir.touch(self._index_name)
        return overloads

    def _save_index(self, overloads):
        if not self._ours:
            return super()._save_index(overloads)
        data = pickle.dumps(self._version, protocol=-1) + self._dump((self._source_stamp, overloads))
        if self._write(self._index_name, data):
            caching._cache_log("[cache] index saved to %r", os.path.join(self._cache_path, self._index_name))

    def _load_data(self, name):
        if not self._ours:
            return super()._load_data(name)
        pdir = self._private()
        data = None if pdir is None else self._read_checked(pdir, name)
        if data is None:
            raise FileNotFoundError(name)  # Numba's load() reads OSError as a miss
        try:
            result = pickle.loads(data)
        except Exception as e:  # noqa: BLE001
            self.discard(pdir, f"{type(e).__name__} while reading it", name)
            raise FileNotFoundError(name) from None
        pdir.touch(name)
        caching._cache_log("[cache] data loaded from %r", os.path.join(pdir.path, name))
        return result

    def _save_data(self, name, data):
        if not self._ours:
            return super()._save_data(name, data)
        if self._write(name, self._dump(data)):
            caching._cache_log("[cache] data saved to %r", os.path.join(self._cache_path, name))

    def _write(self, name, payload):
        """Write tagged `payload`; on any OSError keep the code in memory (one warning)."""
        pdir = self._private()
        if pdir is None:
            return False
        try:
            pdir.write(name, pdir.tagged(name, payload))
        except OSError as e:
            cache_integrity.warn_unwritable(pdir.path, e)
            return False
        return True


def _entry_files(pdir, base):
    try:
        names = pdir.names()
    except OSError:
        return []
    return [n for n in names if n.startswith(base + ".") and n.endswith((".nbi", ".nbc"))]


_numba_index_key = caching.Cache._index_key


def _index_key(self, sig, codegen):
    """Numba's index key, except that for a closure of ours its captured values enter as a
    canonical fingerprint: Numba pickles them, and a captured dispatcher or function pickles
    differently in every process, so vmath's kernels (closures over their constants and
    building blocks) missed the cache and added an entry in every process."""
    if not getattr(self._cache_file, "_ours", False) or self._py_func.__closure__ is None:
        return _numba_index_key(self, sig, codegen)
    digest = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    return (sig, codegen.magic_tuple(), (digest(self._py_func.__code__.co_code), digest(_fingerprint(self._py_func, set()))))


def _fingerprint(value, seen):
    """Bytes that identify `value` as compiled code sees it, equal across processes."""
    from numba.core.dispatcher import Dispatcher

    if isinstance(value, Dispatcher):
        value = value.py_func
    if isinstance(value, types.FunctionType):
        name = f"function {value.__module__}.{value.__qualname__}".encode()
        if id(value) in seen:
            return name
        seen.add(id(value))
        cells = tuple(c.cell_contents for c in value.__closure__ or ())
        code = value.__code__
        return b"\0".join([name, code.co_code, _fingerprint(code.co_consts, seen), _fingerprint(cells, seen)])
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}[{len(value)}]".encode() + b"\0".join(_fingerprint(v, seen) for v in value)
    if isinstance(value, np.generic):
        return f"{value.dtype.str}:".encode() + value.tobytes()
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}".encode()
    if isinstance(value, types.CodeType):
        return b"code\0" + value.co_code + _fingerprint(value.co_consts, seen)
    return pickle.dumps(value, protocol=4)


_numba_load_overload = caching.Cache.load_overload


def _load_overload(self, sig, target_context):
    """Numba's load, where an entry of ours that fails to load for any reason is deleted and
    compiled again (one warning) instead of failing the user's call."""
    cache_file = self._cache_file
    if not getattr(cache_file, "_ours", False):
        return _numba_load_overload(self, sig, target_context)
    try:
        return _numba_load_overload(self, sig, target_context)
    except Exception as e:  # noqa: BLE001
        pdir = cache_file._private()
        if pdir is not None:
            cache_file.discard(pdir, f"{type(e).__name__} while loading it")
        return None


class _LocatorOverrideView:
    """What Numba's caching module sees as `config`: Numba's config, except that while a
    cache is set up for a function of ours, `CACHE_LOCATOR_CLASSES` (the user's
    NUMBA_CACHE_LOCATOR_CLASSES, which replaces Numba's locator list, ours included) reads
    as unset, so Numba's own constructor picks our locator, first in the default list."""

    def __init__(self, config):
        object.__setattr__(self, "_config", config)

    def __getattr__(self, name):
        if name == "CACHE_LOCATOR_CLASSES" and getattr(_setting_up, "ours", False):
            return ""
        return getattr(self._config, name)

    def __setattr__(self, name, value):
        setattr(self._config, name, value)


_setting_up = threading.local()
_numba_cache_impl_init = caching.CacheImpl.__init__


def _cache_impl_init(self, py_func):
    """Numba's CacheImpl constructor; for a function of ours, whatever locator list the
    user configured."""
    ours = _owned_directory(py_func, getattr(py_func.__code__, "co_filename", "")) is not None
    _setting_up.ours = ours
    try:
        _numba_cache_impl_init(self, py_func)
    finally:
        _setting_up.ours = False


def install():
    """Make Numba keep and check our functions' cache files as described above (idempotent).
    Functions of omnistage's runtime modules decorated before this call are re-pointed."""
    global _installed
    with _lock:
        if _installed:
            return
        caching.IndexDataCacheFile = TaggedIndexDataCacheFile
        caching.Cache.load_overload = _load_overload
        caching.Cache._index_key = _index_key
        caching.CacheImpl._locator_classes.insert(0, OmnistageLocator)
        caching.config = _LocatorOverrideView(caching.config)
        caching.CacheImpl.__init__ = _cache_impl_init
        numba_flags.install()
        _installed = True
    _repoint_runtime_dispatchers()


def _repoint_runtime_dispatchers():
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    for name, module in list(sys.modules.items()):
        if module is None or not (name == "omnistage" or name.startswith("omnistage.")):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher) and not isinstance(value._cache, NullCache):
                if not getattr(value._cache._cache_file, "_ours", False):
                    value.enable_caching()
