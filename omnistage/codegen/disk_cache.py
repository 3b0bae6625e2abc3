"""The persistent cache of generated modules.

Each generated module is written once to a per-user cache directory (mode 0700;
`OMNISTAGE_CACHE_DIR` overrides) under a name derived from a hash of its source, of the
toolchain (Python, NumPy, Numba and llvmlite versions, CPU name and features) and of the
omnistage runtime modules it imports, then executed with the module registered in `sys.modules`
*before* its code runs, so Numba's `cache=True` finds the module again in a fresh process
(Numba's `_rebuild_env` imports it by name) and loads machine code instead of compiling.

Why the runtime modules are part of the name: generated code inlines `support` and `vmath`
functions, and Numba's cache index keys only on the cached function's own source, so after an
edit (or an upgrade) of `vmath` Numba would happily load machine code holding the old `exp`.

Rules this module keeps:
- a file is published atomically (temp file + hard link, or rename where links are not
  supported) and a valid existing file is never rewritten: its inode and mtime stay (older
  Numba versions key their cache index on mtime and size) and concurrent processes all read
  one complete file;
- every file starts with a header holding the SHA-256 of the rest, and a file is used only if
  it is byte-for-byte the expected text, so a truncated, corrupt, foreign or stale (older
  format) file is detected and replaced;
- the module's code is compiled from the validated text in memory (never re-read from disk);
- a read-only, uncreatable or unsafe (shared-writable) cache directory degrades to in-memory
  modules, with one warning per process; results are the same, only slower to start;
- the directory is used through its checked descriptor and every file written is listed in
  its manifest (cache_integrity); Numba's own files for a module are kept and checked by
  numba_locator, the size bound and `clear` are cache_eviction's;
- a module loaded for an `owner` leaves `sys.modules` after its last owner (`hold`).

Imports only the standard library at import time; Numba and llvmlite are imported by
`toolchain_fingerprint`, which runs only when a module is loaded (the first compiled `jit`).
"""
import functools
import hashlib
import importlib.util
import linecache
import os
import platform
import re
import sys
import threading
import types
import weakref

from . import cache_integrity, provenance

_HEADER_PREFIX = "# omnistage generated module sha256="
_MODULE_PREFIX = "omnistage_gen_"
_TEMP_PREFIX = ".tmp-"
# Top-level packages whose modules, when imported by generated code, are hashed into its name.
_TRACKED_ROOTS = ("omnistage",)
# An import statement: `from <dots><module> import <names or (names)>` or `import <modules>`.
_IMPORT_RE = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)|import[ \t]+([^\n#;]+))", re.M
)

_lock = threading.RLock()


# --- where and under which name -----------------------------------------------------------


def cache_dir():
    """The cache directory (not created here)."""
    env = os.environ.get("OMNISTAGE_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "omnistage")


@functools.lru_cache(maxsize=None)
def toolchain_fingerprint():
    """What generated machine code depends on besides the source (computed once per process:
    the host CPU queries go through llvmlite)."""
    import llvmlite
    import numba
    import numpy
    from llvmlite import binding as llvm
    from numba.core import config as numba_config

    return "|".join([
        sys.version.split()[0], getattr(sys, "abiflags", ""), platform.machine(),
        numpy.__version__, numba.__version__, llvmlite.__version__,
        # NUMBA_CPU_NAME / NUMBA_CPU_FEATURES (portable caches) override the host's.
        numba_config.CPU_NAME or llvm.get_host_cpu_name(),
        numba_config.CPU_FEATURES or llvm.get_host_cpu_features().flatten(),
    ])


def _imports(text, package):
    """Absolute names of the tracked modules a module's source (in `package`) imports:
    `from pkg import submodule` names the submodule, `from pkg import name` names pkg (whose
    `__init__.py` defines or re-exports name), `import a.b` names a.b. A regular expression,
    not `ast`: 50x faster on the runtime modules, and a false match only tracks one more file."""
    found = set()
    for from_mod, names, plain in _IMPORT_RE.findall(text):
        if plain:
            found.update(_bare_names(plain))
            continue
        base = _absolute(from_mod.lstrip("."), len(from_mod) - len(from_mod.lstrip(".")), package)
        for name in _bare_names(names.strip("()")):
            sub = f"{base}.{name}"
            found.add(sub if _tracked(sub) and _module_file(sub) else base)
    return {m for m in found if _tracked(m)}


def _bare_names(names):
    """`a as b, c.d` -> ['a', 'c.d']."""
    return [n.split()[0] for n in names.replace("\n", " ").split(",") if n.strip()]


def _absolute(module, level, package):
    """The absolute name of `from <level dots><module> import ...` inside `package`."""
    if not level:
        return module
    parts = package.split(".")
    parts = parts[: len(parts) - level + 1]
    return ".".join(parts + ([module] if module else []))


def _tracked(modname):
    return modname.split(".")[0] in _TRACKED_ROOTS


@functools.lru_cache(maxsize=None)
def _module_file(modname):
    """The source file of a tracked module (a package's `__init__.py`), or None; found on the
    file system below its top-level package, without importing anything."""
    root, *parts = modname.split(".")
    try:
        spec = importlib.util.find_spec(root)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return spec.origin if spec and not parts and (spec.origin or "").endswith(".py") else None
    for directory in spec.submodule_search_locations:
        base = os.path.join(directory, *parts)
        for path in (os.path.join(base, "__init__.py"), base + ".py"):
            if os.path.isfile(path) and all(
                os.path.isfile(os.path.join(directory, *parts[:i], "__init__.py")) for i in range(1, len(parts))
            ):
                return path
    return None


@functools.lru_cache(maxsize=None)
def _file_imports(path, package):
    with open(path, encoding="utf-8") as f:
        return frozenset(_imports(f.read(), package))


@functools.lru_cache(maxsize=None)
def _runtime_files(modules):
    """The files of `modules` and of every tracked module they import, transitively."""
    seen, files, todo = set(), set(), list(modules)
    while todo:
        modname = todo.pop()
        path = _module_file(modname)
        if modname in seen or path is None:
            continue
        seen.add(modname)
        files.add(path)
        is_package = os.path.basename(path) == "__init__.py"
        todo.extend(_file_imports(path, modname if is_package else modname.rpartition(".")[0]))
    return tuple(sorted(files))


@functools.lru_cache(maxsize=None)
def _files_digest(paths):
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            h.update(path.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def runtime_digest(source):
    """A hash of the tracked runtime modules `source` imports (see the module docstring)."""
    modules = _imports(source, "")
    files = _runtime_files(tuple(sorted(modules)))
    return _files_digest(files) if files else ""


def module_name(source, fingerprint=None):
    """The cache name of generated `source`: a hash of it (provenance comments stripped), the
    toolchain and its runtime."""
    source = provenance.strip(source)
    key = "\0".join([source, fingerprint or toolchain_fingerprint(), runtime_digest(source)])
    return _MODULE_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:32]


def is_module_file(name, data):
    """Whether bytes `data` stored as `name` are a generated module of ours (its header's hash
    holds; used to recognise our files when the manifest is lost)."""
    header, _, body = data.partition(b"\n")
    return (name.startswith(_MODULE_PREFIX) and name.endswith(".py")
            and header == (_HEADER_PREFIX + hashlib.sha256(body).hexdigest()).encode())


def _with_header(source):
    digest = hashlib.sha256(source.encode()).hexdigest()
    return f"{_HEADER_PREFIX}{digest}\n{source}"


# --- the directory and its files ----------------------------------------------------------


CacheUnusable = cache_integrity.CacheUnusable


def _ensure_dir(directory):
    """Create `directory` with mode 0700 if missing; refuse one that others may write to
    (checked on its opened descriptor: cache_integrity.private_dir). Returns the PrivateDir."""
    return cache_integrity.private_dir(directory)


def _read(path):
    """The text of `path`, or None if it is missing or not text."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _read_bytes(path):
    """The bytes of `path`, or None if it is missing."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _publish(directory, path, data, suffix=".py"):
    """Make `path` hold `data` (text or bytes), atomically, unless it already does; through the
    checked directory's descriptor, recorded in its manifest (cache_integrity)."""
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        raw = data if isinstance(data, bytes) else data.encode("utf-8")
        _ensure_dir(directory).publish(os.path.basename(path), raw)
        return
    binary = isinstance(data, bytes)
    current = _read_bytes if binary else _read
    import tempfile  # (here: tempfile imports shutil, bz2 and lzma, ~2 ms of a first call that writes nothing)

    fd, tmp = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=suffix, dir=directory)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            # link() fails if the file exists, so a valid file published meanwhile by another
            # process is never replaced (rename would replace it and change its inode).
            os.link(tmp, path)
        except FileExistsError:
            if current(path) != data:  # invalid: replace it
                os.replace(tmp, path)
        except OSError:  # no hard links on this file system
            if current(path) != data:
                os.replace(tmp, path)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def _store(name, text):
    """The path of a valid file holding `text` for module `name`, or None (after warning) when
    the cache directory cannot be used."""
    directory = cache_dir()
    path = os.path.join(directory, name + ".py")
    try:
        pdir = _ensure_dir(directory)
        data = text.encode("utf-8")
        if pdir.read(name + ".py") != data:  # missing, truncated, corrupt, foreign or stale
            pdir.publish(name + ".py", data)
        else:
            pdir.touch(name + ".py")  # used now: the eviction clock (cache_eviction)
        return path
    except OSError as e:
        _warn_once(directory, e)
        return None


def _warn_once(directory, error):
    """One warning per directory and process (shared with cache_integrity's write errors)."""
    reason = error if isinstance(error, CacheUnusable) else f"{type(error).__name__}: {error}"
    cache_integrity.warn_once(
        "unwritable", directory,
        f"omnistage: the compile cache directory {directory} cannot be used ({reason}); "
        f"compiling in memory instead, so every new process compiles again. Set "
        f"OMNISTAGE_CACHE_DIR to a directory only you can write to, to keep compiled code "
        f"between processes.",
    )


# --- executing a module -------------------------------------------------------------------


def _execute(name, text, path, preset):
    """Run `text` as module `name`, registered in `sys.modules` before its code runs."""
    mod = types.ModuleType(name)
    mod.__file__ = path or f"<omnistage in-memory module {name}>"
    mod.__dict__.update(preset or {})
    # Numba's cache=True needs a source file next to which it can keep machine code.
    mod._OMNISTAGE_CACHED = path is not None
    if path is None:  # tracebacks and inspect.getsource still show the generated lines
        linecache.cache[mod.__file__] = (len(text), None, text.splitlines(True), mod.__file__)
    code = compile(text, mod.__file__, "exec")
    sys.modules[name] = mod
    try:
        exec(code, mod.__dict__)  # noqa: S102 - our own validated code
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def load_module(source, preset=None, owner=None):
    """Import generated `source` as a module, from the disk cache when possible.

    The module is named after, stored as and run from `source` without its provenance
    comments (`provenance.strip`): programs that differ only in where they came from share
    one module and its machine code. `preset` globals are placed in the module before its
    code runs. The module gets `_OMNISTAGE_CACHED = True` when it lives on disk (so Numba may
    cache machine code next to it) and False when it had to be built in memory. With `owner`,
    the module stays registered while `owner` lives and is freed after its last owner (`hold`);
    without, it stays for the life of the process. Returns the module.
    """
    source = provenance.strip(source)
    name = module_name(source)
    with _lock:
        mod = sys.modules.get(name)
        if mod is None:
            mod = _load_new(name, source, preset)
        if owner is not None:
            hold(owner, mod)  # under the lock: a release cannot unregister it in between
        return mod


def _load_new(name, source, preset):
    """Store (when possible) and run module `name` (load_module, under the lock)."""
    text = _with_header(source)
    path = _store(name, text)
    from . import cache_release, numba_locator  # Numba's files: ours, tagged, checked

    numba_locator.install()
    cache_release.install()  # what Numba keeps of a program is freed with it
    try:
        return _execute(name, text, path, preset)
    except RuntimeError as e:
        # Numba found no place for its cache files (NUMBA_CACHE_LOCATOR_CLASSES set by the user).
        if path is None or "cannot cache" not in str(e):
            raise
        _warn_once(os.path.dirname(path), e)
        return _execute(name, text, None, preset)


_owners = {}  # module name -> how many live objects hold it (hold)


def hold(owner, module):
    """Keep `module` registered in `sys.modules` while `owner` lives (Numba imports a module by
    name when it loads machine code for it); when the last owner of a module is collected, the
    module leaves `sys.modules`, so it and its dispatchers are freed with the jit cache entries
    that used them, and with them the LLVM modules Numba would keep (cache_release; the
    machine code itself stays: MCJIT cannot unload it)."""
    name = module.__name__
    with _lock:
        _owners[name] = _owners.get(name, 0) + 1
    weakref.finalize(owner, _release, name, id(module))


def _release(name, module_id):
    with _lock:
        left = _owners.get(name, 1) - 1
        if left > 0:
            _owners[name] = left
            return
        _owners.pop(name, None)
        mod = sys.modules.get(name)
        if id(mod) == module_id:
            del sys.modules[name]
            linecache.cache.pop(f"<omnistage in-memory module {name}>", None)
            # A Numba dispatcher reaches its module's globals through compiled entry points the
            # cycle collector cannot see (Numba's environment keeps them): taking the
            # dispatchers out of the globals breaks that cycle. The rest stays, for an
            # environment Numba may hand to an identical module compiled later.
            for key, value in list(vars(mod).items()):
                if hasattr(value, "py_func") and hasattr(value, "overloads"):
                    del vars(mod)[key]


def clear(directory=None):
    """Delete the files omnistage wrote to the cache directory (its manifest lists them) and
    nothing else: `omnistage.clear_cache` (cache_eviction.clear_cache)."""
    from . import cache_eviction

    return cache_eviction.clear_cache(directory)
