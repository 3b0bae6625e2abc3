"""Native libraries (aot.py) in the cache: their records are tagged, a library is loaded only
from bytes whose SHA-256 its tagged record holds, one builder at a time builds an entry, a
builder leaves when it has nothing to do, and `CC` may carry flags.

Why a tag: a record in the same directory as its library only says what the library's hash
was when someone wrote both; with an HMAC tag made with the directory's secret key
(cache_integrity) only omnistage can have written it. The library is read and hashed through
the checked directory's descriptor and dlopen'ed through that descriptor too
(`/proc/self/fd/N/name`), so the file checked is the file loaded.

Imports only the standard library (the warm path must not import Numba).
"""
import contextlib
import hashlib
import json
import os
import select
import shlex

from . import cache_integrity

_TAG_FIELD = "tag"


def _pdir():
    from . import disk_cache

    return cache_integrity.private_dir(disk_cache.cache_dir(), create=False)


def _payload(record):
    return json.dumps({k: v for k, v in record.items() if k != _TAG_FIELD}, sort_keys=True).encode()


def signed(record, name):
    """`record` (to be stored as `name`) with its tag; unchanged when there is no key."""
    tag = _pdir().tag(name, _payload(record))
    return record if tag is None else dict(record, **{_TAG_FIELD: tag})


def read_record(name):
    """The record stored as `name` when its tag is right; None when it is missing. A record
    that is unreadable or whose tag is wrong is deleted (with one warning), and None returned."""
    try:
        pdir = _pdir()
        raw = pdir.read(name)
    except OSError:
        return None
    if raw is None:
        return None
    if pdir.key() is None:
        return None  # nothing can be checked (a read-only directory without its key)
    record = parse_record(pdir, name, raw)
    if record is None:
        _discard(pdir, [name], name, "not a record of ours (its tag does not match its contents)")
    return record


def parse_record(pdir, name, raw):
    """The record in bytes `raw` read from `name` when its tag is right, else None."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    tag = record.get(_TAG_FIELD) if isinstance(record, dict) else None
    expected = pdir.tag(name, _payload(record)) if isinstance(tag, str) else None
    return record if expected is not None and cache_integrity.same_text(expected, tag) else None


def publish(name, data, record_name, field="library"):
    """Store `data` as `name` in the private cache with a tagged record (`record_name`) of its
    SHA-256 under `field`: what this process compiled once per machine (the GEMM pool, the
    native tier's kernel object). Nothing happens without a cache directory, or when it cannot
    be written (the process keeps what it compiled)."""
    from . import disk_cache

    try:
        directory = disk_cache.cache_dir()
        if not directory:
            return
        pdir = cache_integrity.private_dir(directory)
        pdir.publish(name, data)
        record = signed({field: name, "sha256": hashlib.sha256(data).hexdigest()}, record_name)
        pdir.publish(record_name, (json.dumps(record, sort_keys=True) + "\n").encode())
    except Exception:  # noqa: BLE001 - an unwritable cache
        pass


def _checked(record, record_name, field, suffix):
    """(private directory, file name, bytes) of the file `record[field]` names when its bytes
    have the record's SHA-256; None when missing, and None (the file and record deleted, one
    warning) when they differ."""
    name = record.get(field)
    if not isinstance(name, str) or os.path.basename(name) != name or not name.endswith(suffix):
        return None
    try:
        pdir = _pdir()
        data = pdir.read(name)
    except OSError:
        return None
    if data is None:
        return None  # evicted: the next cold path builds it again
    if not cache_integrity.same_text(hashlib.sha256(data).hexdigest(), record.get("sha256")):
        _discard(pdir, [name, record_name], name, "its SHA-256 differs from its record's")
        return None
    pdir.touch(name)
    pdir.touch(record_name)
    return pdir, name, data


def library_path(record, record_name):
    """A path dlopen can load `record`'s library from, after checking its bytes against the
    record's SHA-256; None (the library and record deleted, one warning) when they differ."""
    checked = _checked(record, record_name, "library", ".so")
    return None if checked is None else checked[0].fd_path(checked[1])


def object_bytes(record, record_name):
    """The bytes of `record`'s object file (key "object") when they have its SHA-256, as
    library_path checks a library's; else None."""
    checked = _checked(record, record_name, "object", ".o")
    return None if checked is None else checked[2]


def library_intact(record):
    """Whether `record`'s library is a regular file of ours whose SHA-256 is the record's."""
    library = record.get("library") if isinstance(record, dict) else None
    if not isinstance(library, str) or os.path.basename(library) != library:
        return False
    try:
        data = _pdir().read(library)
    except OSError:
        return False
    return data is not None and hashlib.sha256(data).hexdigest() == record.get("sha256")


def _discard(pdir, names, shown, reason):
    for name in names:
        pdir.unlink(name)
    cache_integrity.warn_damaged(pdir.path, shown, reason)


# --- the C compiler ----------------------------------------------------------------------------


def compiler_command():
    """The command that links libraries, as an argument list: `$CC` split like a shell would
    (`CC='gcc -O2'` is gcc with -O2), else `cc`; None when its program is not found."""
    words = shlex.split(os.environ.get("CC") or "cc")
    if not words:
        words = ["cc"]
    program = _which(words[0])
    return None if program is None else [program, *words[1:]]


def _which(name):
    """The executable `name` is (a path, or found on PATH), or None: what shutil.which answers
    on POSIX, without importing shutil (it imports bz2 and lzma: ~2 ms of every first call,
    which asks for the compiler)."""
    def runnable(path):
        return os.access(path, os.X_OK) and not os.path.isdir(path)

    if os.path.dirname(name):
        return name if runnable(name) else None
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(directory or os.curdir, name)
        if runnable(path):
            return path
    return None


# --- one builder per entry, and none idling --------------------------------------------------


def _lock_name(key):
    return f"omnistage_aot_{key}.lock"


@contextlib.contextmanager
def build_lock(key):
    """Hold the entry's build lock while the block runs: yields True, or False when another
    builder holds it (the caller then leaves the entry to it). No cache directory: True."""
    try:
        pdir = _pdir()
        fd = pdir.flock(_lock_name(key), exclusive=True, blocking=False)
    except OSError:
        yield True
        return
    if fd is None:
        yield False
        return
    try:
        yield True
    finally:
        os.close(fd)


def being_built(key):
    """Whether some builder holds the entry's build lock right now."""
    with build_lock(key) as free:
        return not free


def requests_until_idle(stream, idle_s):
    """The lines of `stream` until it ends or `idle_s` seconds pass without one: a builder
    whose parent lives on (or whose input a forked child keeps open) must not sit idle with
    Numba loaded; the parent starts another for its next request."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        yield from stream  # not a pipe (tests pass lists and StringIO): no idle limit
        return
    pending = b""
    while True:
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line.decode("utf-8")
        ready, _, _ = select.select([fd], [], [], idle_s)
        if not ready:
            return
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            if pending.strip():
                yield pending.decode("utf-8")
            return
        pending += chunk
