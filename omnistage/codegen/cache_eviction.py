"""Bounding the disk cache: least-recently-used eviction, and `clear_cache`.

Only files the manifest lists (cache_integrity.manifest: files omnistage wrote, with a keyed
tag) are ever deleted; anything else in the directory is left alone. The clock is a file's
access time: writing it sets it and every successful load sets it (PrivateDir.touch), so the
oldest is the least recently used file. Entries are not grouped: a module file, its
Numba index and data files and its native library each go when they are the oldest, and a
partly evicted entry is simply rebuilt (every reader treats a missing file as a miss).

The bound is `OMNISTAGE_CACHE_MAX_MB` (default 512 MB; 0 or less: no bound). A process scans
the directory at its first write, then adds what it writes to that total; when the total
passes the bound it scans again (other processes write too) and deletes the least recently
used files until the directory is under 90% of the bound. One process evicts at a time (an
exclusive flock it does not wait for); writers append to the manifest under a shared one.

Imports only the standard library.
"""
import os
import re
import stat
import threading
import time

from . import cache_integrity

DEFAULT_MAX_MB = 512
_LOW_WATER = 0.9
# A temporary file of ours (PrivateDir.write, or disk_cache's older mkstemp names) left by a
# writer that was killed; removed by clear_cache and, after an hour, by eviction.
_TEMP_RE = re.compile(r"^\.tmp-(\d+-[0-9a-f]{16}|[A-Za-z0-9_]{8}\.(py|so|json))$")
_STALE_TEMP_S = 3600.0

_lock = threading.Lock()
_totals = {}  # directory -> bytes this process believes its cached files take


def max_bytes():
    """The bound in bytes, or None for no bound."""
    text = os.environ.get("OMNISTAGE_CACHE_MAX_MB", "").strip()
    try:
        mb = float(text) if text else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return None if mb <= 0 else int(mb * 2**20)


def note_written(pdir, nbytes):
    """Count `nbytes` just written to `pdir`; evict when the directory may be over the bound."""
    limit = max_bytes()
    if limit is None:
        return
    with _lock:
        total = _totals.get(pdir.path)
        if total is not None:
            total = _totals[pdir.path] = total + nbytes
            if total <= limit:
                return
    evict(pdir, limit)


def evict(pdir, limit):
    """Delete the least recently used files of ours until the directory holds at most
    90% of `limit` bytes (when it holds more than `limit`). Returns the set of names deleted."""
    lock = _try_lock(pdir)
    if lock is None:
        return set()  # another process is evicting right now
    try:
        owned = cache_integrity.manifest(pdir, repair=True)
        files, total = _sizes(pdir, owned)
        deleted = set()
        if total > limit:
            for _used, name, size in sorted(files):
                if total <= limit * _LOW_WATER:
                    break
                pdir.unlink(name)
                deleted.add(name)
                total -= size
        _remove_stale_temps(pdir, _STALE_TEMP_S)
        kept = {name: owned[name] for _used, name, _size in files if name not in deleted}
        if len(kept) != len(owned) or _manifest_grew(pdir, kept):
            cache_integrity.rewrite_manifest(pdir, kept)  # forget what is gone
        with _lock:
            _totals[pdir.path] = total
        return deleted
    except OSError:
        return set()
    finally:
        os.close(lock)


def _try_lock(pdir):
    try:
        return pdir.flock(cache_integrity.LOCK_NAME, exclusive=True, blocking=False)
    except OSError:
        return None


def _sizes(pdir, owned):
    """([(last use in ns, name, size)] of the listed files that exist, their total size)."""
    files, total = [], 0
    for name in owned:
        try:
            st = pdir.stat(name)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            files.append((max(st.st_atime_ns, st.st_mtime_ns), name, st.st_size))
            total += st.st_size
    return files, total


def _manifest_grew(pdir, owned):
    """Whether the manifest has many more lines than files (rewritten names append again)."""
    try:
        return pdir.stat(cache_integrity.MANIFEST_NAME).st_size > 400 * (len(owned) + 64)
    except OSError:
        return False


def _remove_stale_temps(pdir, older_than_s):
    now = time.time()
    removed = 0
    for name in pdir.names():
        if not _TEMP_RE.match(name):
            continue
        try:
            st = pdir.stat(name)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and now - st.st_mtime >= older_than_s:
            removed += pdir.unlink(name)
    return removed


def clear_cache(directory=None):
    """Delete every file omnistage wrote to its compile cache directory (generated modules,
    Numba's index and data files, native libraries and their records, as listed in the
    cache's manifest) and nothing else; returns how many files were deleted.

    `directory` defaults to the cache in use (`OMNISTAGE_CACHE_DIR`, else
    `$XDG_CACHE_HOME/omnistage` or `~/.cache/omnistage`). Processes running now keep the
    code they loaded; the next compile of each program starts from scratch."""
    from . import disk_cache

    directory = directory or disk_cache.cache_dir()
    try:
        pdir = cache_integrity.private_dir(directory, create=False)
    except FileNotFoundError:
        return 0
    lock = pdir.flock(cache_integrity.LOCK_NAME, exclusive=True)
    try:
        removed = 0
        for name in cache_integrity.manifest(pdir, repair=True):
            removed += pdir.unlink(name)
        removed += _remove_stale_temps(pdir, 0.0)
        cache_integrity.rewrite_manifest(pdir, {})
        with _lock:
            _totals.pop(pdir.path, None)
        return removed
    finally:
        os.close(lock)
