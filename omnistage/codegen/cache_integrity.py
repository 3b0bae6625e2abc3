"""What makes the on-disk compile cache trustworthy: a private directory checked on its opened
descriptor, a per-directory secret key, keyed tags on the files we write, the manifest of
the files we created, and the one warning a damaged or unwritable cache gives.

Threat model. Numba's cache files are pickles and our native libraries are machine code:
loading a file someone else wrote runs their code as the user, and loading a damaged one
crashes or computes wrong values (a flipped bit in machine code). So:
- the cache directory is used only through a descriptor opened with O_NOFOLLOW and checked
  with fstat (ours, writable by nobody else), reached from `/` through descriptors of its
  parents, each checked as OpenSSH's StrictModes checks them (root's or ours, writable by
  nobody else unless sticky like /tmp); every file operation is relative to that descriptor
  (`dir_fd`), so swapping a directory on the path after the check changes nothing;
  a directory we create is 0700 and a file 0600 whatever the umask;
- every file whose bytes we later trust carries, or is listed with, an HMAC-SHA256 tag made
  with a 32-byte key kept 0600 in the directory (`.omnistage-key`): a tag binds the bytes to
  the file's name, so neither a planted nor a damaged nor a swapped file passes. The bytes
  are read once, checked, and only those checked bytes are unpickled or linked (a pickle's
  crash cannot be caught, so the check comes first);
- the manifest (`.omnistage-manifest`, lines of name, SHA-256 and tag appended as files are
  written) is what `clear_cache` and eviction may delete: nothing else in the directory.

Imports only the standard library and omnistage.core (for the user's line in warnings).
"""
import errno
import fcntl
import hashlib
import hmac
import os
import secrets
import stat
import sys
import threading
import time
import warnings

from ..core import source_info

KEY_NAME = ".omnistage-key"
MANIFEST_NAME = ".omnistage-manifest"
LOCK_NAME = ".omnistage-lock"
TEMP_PREFIX = ".tmp-"  # disk_cache's too: clear() removes what a killed writer left
_KEY_BYTES = 32
_TAG_HEX = 64
_HEADER_MAGIC = b"omnistage-tagged-1\n"
# A file of ours in the manifest: at most this long, so one append is one atomic write.
_MAX_NAME = 255

_lock = threading.RLock()
_dirs = {}  # real path -> PrivateDir
_warned = set()  # (kind, directory) pairs this process has warned about


class CacheUnusable(OSError):
    """The cache directory exists but must not be used (others could plant code in it)."""


class PrivateDir:
    """An open, checked cache directory. Every operation goes through `fd`."""

    def __init__(self, path, fd):
        self.path = path
        self.fd = fd
        self._key = None

    # --- files ----------------------------------------------------------------------------

    def read(self, name):
        """The bytes of regular file `name` (not a link), or None when it is missing."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:  # a symbolic link: not ours
                return None
            raise
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            return f.read()

    def write(self, name, data, replace=True):
        """Publish `data` as `name` atomically (temp file, 0600, then rename; or link when
        `replace` is False, which keeps a file someone published meanwhile). Raises OSError
        (ENOSPC, EROFS, ...) to the caller, which degrades to memory."""
        tmp = f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=self.fd)
        placed = True
        try:
            # no fsync: a file torn by a crash fails its tag or its byte comparison when read
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if replace:
                os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            else:
                try:
                    os.link(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
                except FileExistsError:
                    placed = False
                except OSError:  # no hard links on this file system
                    if self.read(name) is None:
                        os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
                    else:
                        placed = False
        finally:
            self.unlink(tmp)
        if placed:
            record_written(self, name, data)
            if not name.startswith("."):
                from . import cache_eviction  # (imports this module)

                cache_eviction.note_written(self, len(data))
        return placed

    def publish(self, name, data):
        """Make `name` hold `data` unless it already does: a valid file keeps its inode (a
        concurrent reader sees one complete file), anything else there is replaced."""
        if self.read(name) == data:
            return
        if not self.write(name, data, replace=False) and self.read(name) != data:
            self.write(name, data, replace=True)

    def unlink(self, name):
        try:
            os.unlink(name, dir_fd=self.fd)
            return True
        except FileNotFoundError:
            return False

    def names(self):
        return os.listdir(self.fd)

    def stat(self, name):
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def touch(self, name):
        """Mark `name` as just used: its access time, set explicitly (noatime mounts do not
        matter), is the eviction clock. The mtime stays: a valid file looks unchanged."""
        try:
            st = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            os.utime(name, ns=(time.time_ns(), st.st_mtime_ns), dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            pass  # a read-only cache is still used; it just is not evicted from

    def fd_path(self, name):
        """A path that reaches `name` through the checked descriptor (for dlopen, which takes
        no dir_fd): /proc/self/fd/N/name where /proc exists, else the plain path."""
        if os.path.isdir(f"/proc/self/fd/{self.fd}"):
            return f"/proc/self/fd/{self.fd}/{name}"
        return os.path.join(self.path, name)

    # --- the key and tags -----------------------------------------------------------------

    def key(self):
        """This directory's secret key (made on first use), or None when there is none and
        none can be made (a read-only directory): nothing tagged can then be trusted."""
        if self._key is None:
            self._key = self._read_key()
            if self._key is None:
                try:
                    self.write(KEY_NAME, secrets.token_bytes(_KEY_BYTES), replace=False)
                except OSError:
                    return None
                self._key = self._read_key()
                if self._key is None:  # a bad key file (wrong size or mode): replace it
                    try:
                        self.write(KEY_NAME, secrets.token_bytes(_KEY_BYTES), replace=True)
                    except OSError:
                        return None
                    self._key = self._read_key()
        return self._key

    def _read_key(self):
        try:
            fd = os.open(KEY_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != _euid() or st.st_mode & 0o077:
                return None
            data = f.read(_KEY_BYTES + 1)
        return data if len(data) == _KEY_BYTES else None

    def tag(self, name, data):
        """The hex HMAC-SHA256 of `data` stored as `name`, or None without a key."""
        key = self.key()
        if key is None:
            return None
        return hmac.new(key, name.encode("utf-8", "surrogateescape") + b"\0" + data, hashlib.sha256).hexdigest()

    def tagged(self, name, payload):
        """`payload` with a header holding its tag (for files Numba unpickles)."""
        tag = self.tag(name, payload)
        if tag is None:
            raise PermissionError(errno.EACCES, "no key to tag the cache file with")
        return _HEADER_MAGIC + tag.encode() + b"\n" + payload

    def untagged(self, name, data):
        """The payload of tagged `data` read from `name`; raises DamagedEntry when the tag is
        missing or wrong (truncated, flipped, planted, moved from another name)."""
        head = len(_HEADER_MAGIC) + _TAG_HEX + 1
        if len(data) < head or not data.startswith(_HEADER_MAGIC) or data[head - 1:head] != b"\n":
            raise DamagedEntry(name, "no valid header")
        payload = data[head:]
        expected = self.tag(name, payload)
        if expected is None or not hmac.compare_digest(expected.encode(), data[len(_HEADER_MAGIC):head - 1]):
            raise DamagedEntry(name, "its tag does not match its contents")
        return payload

    # --- locking --------------------------------------------------------------------------

    def flock(self, name, exclusive=True, blocking=True):
        """An open descriptor of lock file `name` holding a flock, or None when `blocking` is
        False and another process holds it. Close the descriptor to release."""
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=self.fd)
            record_written(self, name, b"")  # ours: clear_cache may delete it
        except FileExistsError:
            fd = os.open(name, flags, dir_fd=self.fd)
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass


def same_text(a, b):
    """Constant-time equality of two strings (tags, hashes) whatever characters a damaged file
    put in them (hmac.compare_digest refuses non-ASCII str)."""
    return hmac.compare_digest(str(a).encode("utf-8", "surrogateescape"), str(b).encode("utf-8", "surrogateescape"))


class DamagedEntry(Exception):
    """A cache file failed its check (the caller deletes it and recompiles)."""

    def __init__(self, name, reason):
        super().__init__(f"{name}: {reason}")
        self.name, self.reason = name, reason


def _euid():
    return os.geteuid() if hasattr(os, "geteuid") else 0


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _open_checked(path):
    """A descriptor of directory `path` (absolute), which must not be a symbolic link, be ours
    and be writable by nobody else, reached from `/` one directory at a time through checked
    descriptors (every parent safe: `_unsafe_parent`); raises CacheUnusable or OSError."""
    if not hasattr(os, "geteuid"):
        return os.open(path, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(os.sep, _DIR_FLAGS)
    try:
        where = os.sep
        for name in [p for p in path.split(os.sep) if p]:
            reason = _unsafe_parent(os.fstat(fd))
            if reason:
                # whoever may rename entries of a parent can swap the cache for their own
                raise CacheUnusable(
                    f"its parent directory {where} is {reason}; every directory above the cache "
                    f"must be owned by you or root and writable by no one else (or sticky, as /tmp)"
                )
            inner = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd, where = inner, os.path.join(where, name)
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            # Numba unpickles its cache files: a directory others can write to runs their code.
            raise CacheUnusable(
                f"it is owned by uid {st.st_uid} with mode {st.st_mode & 0o777:o}; it must be yours "
                f"and writable only by you (chmod 700)"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unsafe_parent(st):
    """Why a parent directory with fstat `st` lets someone else replace what it holds (None
    when it does not): as OpenSSH's StrictModes, it must be owned by root or us and not
    group- or world-writable, except a sticky directory such as /tmp (where others cannot
    rename or delete our entries)."""
    if st.st_uid not in (0, os.geteuid()):
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return f"writable by {'others' if st.st_mode & 0o002 else 'its group'} (mode {st.st_mode & 0o7777:o})"
    return None


def _create(path):
    """Create `path` (and missing parents) mode 0700 whatever the umask; return a checked fd."""
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, mode=0o700, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
        created = True
    except FileExistsError:
        created = False
    fd = _open_checked(path)
    if created:
        os.fchmod(fd, 0o700)  # mkdir's mode is filtered by the umask
    return fd


def private_dir(path, create=True):
    """The checked PrivateDir at `path` (created if missing and `create`); raises
    CacheUnusable (others may write to it), NotADirectoryError or OSError. Cached per process;
    reopened when another directory now lives at `path` (deleted and made again)."""
    path = os.path.realpath(path)  # a user's symlinked cache location is fine; its target is checked
    with _lock:
        known = _dirs.get(path)
        if known is not None:
            try:
                st, held = os.stat(path), os.fstat(known.fd)
                if (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino):
                    return known
            except OSError:
                pass
            del _dirs[path]
            known.close()
        try:
            fd = _open_checked(path)
        except FileNotFoundError:
            if not create:
                raise
            fd = _create(path)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise CacheUnusable("it is a symbolic link that changed while it was opened") from None
            if e.errno == errno.ENOTDIR:
                raise NotADirectoryError(f"{path} exists and is not a directory") from None
            raise
        pdir = _dirs[path] = PrivateDir(path, fd)
        for name in (MANIFEST_NAME, LOCK_NAME):
            if stat.S_ISLNK(_lstat_mode(pdir, name)):
                pdir.unlink(name)  # ours are regular files: a link was planted or left there
        return pdir


def forget(path):
    """Drop the cached PrivateDir of `path` (tests that delete a directory)."""
    with _lock:
        known = _dirs.pop(os.path.realpath(path), None)
    if known is not None:
        known.close()


# --- the manifest ---------------------------------------------------------------------------


def record_written(pdir, name, data):
    """Append `name` (with the SHA-256 of `data` and a tag) to the manifest: it is ours.
    Best effort: an entry the manifest misses is only never evicted or cleared."""
    if name in (KEY_NAME, MANIFEST_NAME, LOCK_NAME) or len(name) > _MAX_NAME or not name.isprintable() or " " in name:
        return
    digest = hashlib.sha256(data).hexdigest()
    tag = pdir.tag(name, digest.encode())
    if tag is None:
        return
    line = f"{name} {digest} {tag}\n".encode()
    try:
        lock = pdir.flock(LOCK_NAME, exclusive=False)  # compaction holds it exclusively
        try:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(MANIFEST_NAME, flags, 0o600, dir_fd=pdir.fd)
            except OSError as e:
                if e.errno != errno.ELOOP:
                    raise
                pdir.unlink(MANIFEST_NAME)  # a link planted there: ours is a regular file
                fd = os.open(MANIFEST_NAME, flags, 0o600, dir_fd=pdir.fd)
            try:
                os.write(fd, line)  # one write of < PIPE_BUF bytes with O_APPEND: never interleaved
            finally:
                os.close(fd)
        finally:
            os.close(lock)
    except OSError:
        pass


def manifest(pdir, repair=False):
    """{name: sha256} of every file the manifest lists with a valid tag (later lines win).

    A damaged manifest (a line with a wrong tag, or not a regular file) would leave files of
    ours that nothing may delete; with `repair` (the caller holds LOCK_NAME exclusively) the
    directory is scanned for files that prove to be ours (scan_owned) and the manifest
    rewritten."""
    try:
        data = pdir.read(MANIFEST_NAME)
        damaged = data is None and _exists(pdir, MANIFEST_NAME)
    except OSError:
        data, damaged = None, True
    owned = {}
    for raw in (data or b"").split(b"\n"):
        if not raw:
            continue
        parts = raw.decode("utf-8", "replace").split(" ")
        name, digest, tag = parts if len(parts) == 3 else ("", "", "")
        expected = pdir.tag(name, digest.encode()) if name else None
        if expected is not None and same_text(expected, tag) and "/" not in name:
            owned[name] = digest
        else:
            damaged = True
    if damaged and repair:
        owned.update(scan_owned(pdir))
        if not stat.S_ISREG(_lstat_mode(pdir, MANIFEST_NAME)):
            pdir.unlink(MANIFEST_NAME)  # a link or other odd thing put there
        rewrite_manifest(pdir, owned)
    return owned


def _exists(pdir, name):
    return _lstat_mode(pdir, name) != 0


def _lstat_mode(pdir, name):
    try:
        return pdir.stat(name).st_mode
    except OSError:
        return 0


def scan_owned(pdir):
    """{name: sha256} of the files in `pdir` that prove to be ours by their contents: Numba
    files with a valid tag, generated modules whose header hash holds, library records with a
    valid tag and the libraries whose hash they hold, empty build locks."""
    from . import aot_trust, disk_cache  # (both import this module)

    owned, libraries = {}, {}
    for name in pdir.names():
        if name.startswith(".") or not stat.S_ISREG(_lstat_mode(pdir, name)):
            continue
        data = pdir.read(name)
        if data is None:
            continue
        if name.endswith((".nbi", ".nbc")):
            try:
                pdir.untagged(name, data)
            except DamagedEntry:
                continue
        elif name.endswith(".py"):
            if not disk_cache.is_module_file(name, data):
                continue
        elif name.startswith("omnistage_aot_") and name.endswith(".lock"):
            if data:
                continue
        elif name.startswith("omnistage_aot_") and name.endswith(".json"):
            record = aot_trust.parse_record(pdir, name, data)
            if record is None:
                continue
            if isinstance(record.get("library"), str):
                libraries[record["library"]] = record.get("sha256")
        else:
            continue
        owned[name] = hashlib.sha256(data).hexdigest()
    for name, digest in libraries.items():
        data = pdir.read(name) if "/" not in name else None
        if data is not None and hashlib.sha256(data).hexdigest() == digest:
            owned[name] = digest
    return owned


def rewrite_manifest(pdir, owned):
    """Replace the manifest by `owned` ({name: sha256}); the caller holds LOCK_NAME exclusively."""
    lines = []
    for name, digest in sorted(owned.items()):
        tag = pdir.tag(name, digest.encode())
        if tag is not None:
            lines.append(f"{name} {digest} {tag}\n")
    tmp = f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=pdir.fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write("".join(lines).encode())
        os.replace(tmp, MANIFEST_NAME, src_dir_fd=pdir.fd, dst_dir_fd=pdir.fd)
    finally:
        pdir.unlink(tmp)


# --- warnings at the user's line --------------------------------------------------------------


def _library_dirs():
    dirs = []
    for name in ("numba", "llvmlite"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(mod.__file__)) + os.sep)
    return tuple(dirs)


def _is_library_frame(filename, libraries):
    base = os.path.basename(filename)
    return (
        source_info.is_internal_file(filename) or filename.startswith(libraries)
        or filename.startswith(("<frozen", "<omnistage")) or base.startswith("omnistage_gen_")  # generated
    )


def user_stacklevel():
    """The `stacklevel` for a `warnings.warn` made by the caller of this function that names
    the innermost user frame: not omnistage, Numba, llvmlite or generated code."""
    libraries = _library_dirs()
    frame, level = sys._getframe(1), 1  # level 1: the frame calling warnings.warn
    while frame is not None and _is_library_frame(frame.f_code.co_filename, libraries):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 1


def warn_once(kind, directory, message):
    """One RuntimeWarning per (kind, directory) per process, at the user's line."""
    with _lock:
        if (kind, directory) in _warned:
            return
        _warned.add((kind, directory))
    warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())


def warn_damaged(directory, name, reason):
    warn_once(
        "damaged", directory,
        f"omnistage: the compile cache directory {directory} held a damaged or foreign file "
        f"({name}: {reason}); it was deleted and the program is compiled again. Results are "
        f"unaffected. If this repeats, something else writes into that directory: point "
        f"OMNISTAGE_CACHE_DIR at a directory only omnistage uses.",
    )


def warn_unwritable(directory, error):
    reason = f"{type(error).__name__}: {error}"
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        reason = "the disk is full"
    warn_once(
        "unwritable", directory,
        f"omnistage: cannot write to the compile cache directory {directory} ({reason}); "
        f"compiled code is kept in memory only, so a new process compiles again. Free space "
        f"or set OMNISTAGE_CACHE_DIR to a writable directory only you can write to.",
    )
