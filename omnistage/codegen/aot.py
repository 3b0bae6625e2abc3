"""Ahead-of-time native libraries: a warm first call that never imports Numba.

A fresh process that finds its module in the disk cache still pays `import numba` and Numba's
first-use setup (together ~0.6-0.9 s) before Numba can load the cached machine code. This module
removes that cost: after a program is compiled by Numba once, a background *builder* process
compiles the same generated module again, wraps its entry function in a C-ABI function, and
links the result into a shared library stored next to the cached module. A later process looks
the library up from the Program alone and calls it through `ctypes`: no Numba, no llvmlite.

How a library is made (the builder, `python -m omnistage.codegen.aot REQUEST`):
- the cached module's text is executed uncached (Numba's cache dir points at an empty
  temporary directory), so every function, helper kernels included, is compiled fresh and its
  LLVM IR is available; the entry is compiled for the program's exact argument types;
- a wrapper `int32 omnistage_aot_main(void **buffers)` is written in LLVM IR with Numba's own
  calling convention: it builds C-contiguous array structs over the caller's input buffers
  (rank-0 values are scalars read from their buffer), calls the entry, copies each result into
  the caller's output buffer and releases it; a nonzero return means the entry failed;
- everything except the wrapper is internalized and dead code is dropped (Numba's CPython
  wrappers go away), then the remaining external references are checked: only our NRT subset
  (`_RUNTIME_C`, a few lines of C linked in) and the C library may remain. Programs that still
  need Numba's helper library (LAPACK, reshape helpers), the Python C API, or return
  non-contiguous arrays keep the Numba path: the builder records them as unsupported;
- products call BLAS through `blas_table` (gemm addresses, like the MPI handles below), so a
  training step is a library too;
- a multi-process program (collectives calling MPI, `mpi_kernels`) reads the MPI handle table
  through an external symbol the JIT resolves from LLVM's symbol table: the library defines
  that table itself, exported, and `load` has `mpi_handles` keep it filled (`mirror`);
- object code is emitted with Numba's optimized IR, Numba's CPU name and features and a PIC
  target machine, linked with the system C compiler, dlopen-checked with RTLD_NOW, published.

Keys and staleness: a library is named after its module (`disk_cache.module_name`: hash of the
generated source, the toolchain and the runtime modules) plus a hash of its signature. The
warm path cannot compute that name (emitting the source needs `vmath`, which imports Numba),
so it looks libraries up through a record named by a *program key*: a hash of the Program's
text and avals, of every omnistage source file (emitter and runtime alike) and of a Numba-free
toolchain fingerprint (Python, NumPy, Numba and llvmlite versions read from their files, the CPU
model and flags, NUMBA_* settings). Anything that could change the generated code changes the
key, so stale code is never loaded; the record also holds the library's SHA-256, checked before
`dlopen`, and an HMAC tag only omnistage can make (aot_trust). Files are published atomically
and a valid file is never rewritten (disk_cache rules). One builder builds an entry at a time
(a lock file per entry); a builder that gets no request for `_IDLE_EXIT_S` seconds has its input
closed by its process and exits once its queue is done (it also leaves by itself after
`_BUILDER_IDLE_S` seconds without input, for when a forked child keeps that input open).

Costs: the warm path adds ~2-5 ms (program key, record, dlopen); the library call copies each
output once (results are Numba-allocated inside the kernel). The cold path only spawns the
builder (it runs on another core, ~1-3 s); the process waits for its builders at exit, at most
`_EXIT_WAIT_S` seconds. No C compiler (`$CC`, flags allowed, or `cc`): one warning, and the
Numba path stays.
`OMNISTAGE_AOT=0` disables both directions.
"""
import atexit
import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import platform
import sys
import threading
import time
import warnings

import numpy as np

from . import aot_trust, blas_table, blas_threads, cache_integrity, disk_cache, gemm_pool, lapack_table, mpi_handles, narrow_floats, parallel

FORMAT = 1
SYMBOL = "omnistage_aot_main"
# a native-tier library's entry taking one tuple of ndarrays, and the layout it reads them by
# (c_translate.object_call_lines)
OBJECT_CALL = "omnistage_aot_call"
OBJECT_LAYOUT = "omnistage_object_layout"
_RECORD_PREFIX = "omnistage_aot_"
# op kernels (op_kernels.py): compiled once per machine, not per program; their keys and
# library files carry their own prefixes, so a cache's programs can be told from them
OP_KERNEL_KEY_PREFIX = "ops-"
_OP_LIBRARY_PREFIX = "omnistage_ops_"
_EXIT_WAIT_S = 60.0  # wait_for_builds(): tests and benchmarks that need the libraries now
_EXIT_GRACE_S = 0.5  # at interpreter exit the builder carries on detached
_IDLE_EXIT_S = 10.0  # no request for this long: the builder's input is closed (a later one starts anew)
_BUILDER_IDLE_S = 120.0  # the builder's own limit, for input a forked child keeps open

# The part of Numba's runtime (numba/core/runtime/nrt.cpp) generated kernels call, with the
# same MemInfo layout: Numba's inlined NRT_incref/NRT_decref/NRT_MemInfo_data_fast read the
# refcount (field 0) and data (field 3) directly.
_RUNTIME_C = r"""
#include <stdint.h>
#include <stdlib.h>

typedef void (*omnistage_dtor)(void *ptr, size_t size, void *info);
typedef struct {
    size_t refct;
    omnistage_dtor dtor;
    void *dtor_info;
    void *data;
    size_t size;
    void *external_allocator;
} MemInfo;

void *NRT_Allocate(size_t size) { return malloc(size); }
void NRT_Free(void *ptr) { free(ptr); }

static MemInfo *init(MemInfo *mi, void *data, size_t size, omnistage_dtor dtor, void *info) {
    mi->refct = 1; mi->dtor = dtor; mi->dtor_info = info;
    mi->data = data; mi->size = size; mi->external_allocator = NULL;
    return mi;
}

MemInfo *NRT_MemInfo_new(void *data, size_t size, omnistage_dtor dtor, void *info) {
    MemInfo *mi = malloc(sizeof(MemInfo));
    return mi ? init(mi, data, size, dtor, info) : NULL;
}

MemInfo *NRT_MemInfo_alloc(size_t size) {
    MemInfo *mi = malloc(sizeof(MemInfo) + size);
    return mi ? init(mi, (char *)(mi + 1), size, NULL, NULL) : NULL;
}

MemInfo *NRT_MemInfo_alloc_aligned(size_t size, unsigned align) {
    if (align == 0) align = 1;
    char *base = malloc(sizeof(MemInfo) + size + 2 * (size_t)align);
    if (!base) return NULL;
    uintptr_t data = (uintptr_t)(base + sizeof(MemInfo));
    uintptr_t rem = data % align;
    if (rem) data += align - rem;
    return init((MemInfo *)base, (void *)data, size, NULL, NULL);
}

MemInfo *NRT_MemInfo_alloc_safe_aligned(size_t size, unsigned align) {
    return NRT_MemInfo_alloc_aligned(size, align);
}

MemInfo *NRT_MemInfo_alloc_safe(size_t size) { return NRT_MemInfo_alloc(size); }

void NRT_MemInfo_call_dtor(MemInfo *mi) {
    if (mi->dtor) mi->dtor(mi->data, mi->size, mi->dtor_info);
    free(mi);
}

/* Reshape without copy, as Numba's helper library has it (numba/_helperlib.c, BSD-2-Clause,
   "straight from NumPy's _attempt_nocopy_reshape"): array reshapes call it. */
typedef intptr_t npy_intp;
#define NPY_MAXDIMS 64

static int
nocopy_empty_reshape(npy_intp nd, const npy_intp *dims, const npy_intp *strides,
                     npy_intp newnd, const npy_intp *newdims,
                     npy_intp *newstrides, npy_intp itemsize,
                     int is_f_order)
{
    int i;
    /* Just make the strides vaguely reasonable
     * (they can have any value in theory).
     */
    for (i = 0; i < newnd; i++)
        newstrides[i] = itemsize;
    return 1;  /* reshape successful */
}

/*
 * Straight from Numpy's _attempt_nocopy_reshape()
 * (np/core/src/multiarray/shape.c).
 * Attempt to reshape an array without copying data
 *
 * This function should correctly handle all reshapes, including
 * axes of length 1. Zero strides should work but are untested.
 *
 * If a copy is needed, returns 0
 * If no copy is needed, returns 1 and fills `npy_intp *newstrides`
 *     with appropriate strides
 */

int
numba_attempt_nocopy_reshape(npy_intp nd, const npy_intp *dims, const npy_intp *strides,
                             npy_intp newnd, const npy_intp *newdims,
                             npy_intp *newstrides, npy_intp itemsize,
                             int is_f_order)
{
    int oldnd;
    npy_intp olddims[NPY_MAXDIMS];
    npy_intp oldstrides[NPY_MAXDIMS];
    npy_intp np, op, last_stride;
    int oi, oj, ok, ni, nj, nk;

    oldnd = 0;
    /*
     * Remove axes with dimension 1 from the old array. They have no effect
     * but would need special cases since their strides do not matter.
     */
    for (oi = 0; oi < nd; oi++) {
        if (dims[oi]!= 1) {
            olddims[oldnd] = dims[oi];
            oldstrides[oldnd] = strides[oi];
            oldnd++;
        }
    }

    np = 1;
    for (ni = 0; ni < newnd; ni++) {
        np *= newdims[ni];
    }
    op = 1;
    for (oi = 0; oi < oldnd; oi++) {
        op *= olddims[oi];
    }
    if (np != op) {
        /* different total sizes; no hope */
        return 0;
    }

    if (np == 0) {
        /* the Numpy code does not handle 0-sized arrays */
        return nocopy_empty_reshape(nd, dims, strides,
                                    newnd, newdims, newstrides,
                                    itemsize, is_f_order);
    }

    /* oi to oj and ni to nj give the axis ranges currently worked with */
    oi = 0;
    oj = 1;
    ni = 0;
    nj = 1;
    while (ni < newnd && oi < oldnd) {
        np = newdims[ni];
        op = olddims[oi];

        while (np != op) {
            if (np < op) {
                /* Misses trailing 1s, these are handled later */
                np *= newdims[nj++];
            } else {
                op *= olddims[oj++];
            }
        }

        /* Check whether the original axes can be combined */
        for (ok = oi; ok < oj - 1; ok++) {
            if (is_f_order) {
                if (oldstrides[ok+1] != olddims[ok]*oldstrides[ok]) {
                     /* not contiguous enough */
                    return 0;
                }
            }
            else {
                /* C order */
                if (oldstrides[ok] != olddims[ok+1]*oldstrides[ok+1]) {
                    /* not contiguous enough */
                    return 0;
                }
            }
        }

        /* Calculate new strides for all axes currently worked with */
        if (is_f_order) {
            newstrides[ni] = oldstrides[oi];
            for (nk = ni + 1; nk < nj; nk++) {
                newstrides[nk] = newstrides[nk - 1]*newdims[nk - 1];
            }
        }
        else {
            /* C order */
            newstrides[nj - 1] = oldstrides[oj - 1];
            for (nk = nj - 1; nk > ni; nk--) {
                newstrides[nk - 1] = newstrides[nk]*newdims[nk];
            }
        }
        ni = nj++;
        oi = oj++;
    }

    /*
     * Set strides corresponding to trailing 1s of the new shape.
     */
    if (ni >= 1) {
        last_stride = newstrides[ni - 1];
    }
    else {
        last_stride = itemsize;
    }
    if (is_f_order) {
        last_stride *= newdims[ni - 1];
    }
    for (nk = ni; nk < newnd; nk++) {
        newstrides[nk] = last_stride;
    }

    return 1;
}
"""
_RUNTIME_SYMBOLS = frozenset({
    "NRT_Allocate", "NRT_Free", "NRT_MemInfo_new", "NRT_MemInfo_alloc", "NRT_MemInfo_alloc_aligned",
    "NRT_MemInfo_alloc_safe_aligned", "NRT_MemInfo_alloc_safe", "NRT_MemInfo_call_dtor",
    "numba_attempt_nocopy_reshape",
})
# External names a library must not need (anything else is libc/libm; dlopen checks the rest):
# Numba's helper library (BLAS, LAPACK, exceptions) and runtime, and Numba-mangled functions
# whose body was not linked in, and rocket-fft's pocketfft (numpy.fft inside njit: its library
# is global in the builder only). The Python C API is allowed: Numba's dynamic-exception paths
# use it, so such a library is called with the GIL held (ctypes.PyDLL).
_FORBIDDEN_PREFIXES = ("numba_", "NRT_", "_ZN", "rf_")
_PYTHON_API_PREFIXES = ("Py", "_Py")

_TABLES = (mpi_handles, blas_table, lapack_table)  # process-wide tables compiled code reads by symbol

_lock = threading.Lock()
_builder = None  # this process's builder (a subprocess.Popen), started on first use
_requested = set()  # program keys queued on it
_retired = []  # builders whose input the idle timer closed, finishing their queues
_idle_timer = None
_warned = False


def enabled():
    return os.environ.get("OMNISTAGE_AOT", "1").strip().lower() not in ("0", "false", "no", "off")


# --- the program key (no Numba) ------------------------------------------------------------


def _package_dir():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _source_files():
    """(path relative to the package, path, its os.stat_result) of every omnistage source file,
    in a fixed order: os.walk's (a directory's files by name, then its subdirectories by name).
    os.scandir, not os.walk and relpath: the stat records come with the listing's entries, and
    a process's first program key spent 1.5-2 ms here (0.6-0.9 ms now)."""
    found = []

    def scan(directory, rel):
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        subdirs = []
        for entry in entries:
            if entry.is_dir():
                if entry.name != "__pycache__" and not entry.is_symlink():  # (os.walk lists, never enters, a linked one)
                    subdirs.append(entry)
            elif entry.name.endswith(".py"):
                found.append((os.path.join(rel, entry.name) if rel else entry.name, entry.path, entry.stat()))
        for entry in subdirs:
            scan(entry.path, os.path.join(rel, entry.name) if rel else entry.name)

    scan(_package_dir(), "")
    return found


def _hash_sources(files):
    h = hashlib.sha256()
    for rel, path, _ in files:
        with open(path, "rb") as f:
            h.update(rel.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


_SOURCES_MEMO_PREFIX = "sources-"


@functools.lru_cache(maxsize=None)
def _sources_digest():
    """A hash of every omnistage source file: the emitter and the runtime modules together.

    Reading the ~270 files took 8-10 ms of every process's first program key (a second
    process's whole first call is ~50 ms); so the digest is memoized in the cache directory
    (tagged) under a hash of the files' stat records, which any edit, copy, reinstall or
    checkout changes (size, mtime, ctime, inode: a tool may restore an mtime, never a ctime).
    Stat-ing them takes ~1 ms."""
    files = _source_files()
    stats = []
    for rel, _, st in files:
        stats.append(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\0{st.st_dev}")
    name = _SOURCES_MEMO_PREFIX + hashlib.sha256("\n".join(stats).encode()).hexdigest()[:32]
    try:
        pdir = cache_integrity.private_dir(disk_cache.cache_dir())
        raw = pdir.read(name)
    except OSError:  # an unusable cache directory: hash the files
        pdir = raw = None
    if raw is not None:
        try:
            return pdir.untagged(name, raw).decode("ascii")  # (the tag says we wrote it)
        except (cache_integrity.DamagedEntry, UnicodeDecodeError):  # (replaced below)
            pass
    digest = _hash_sources(files)
    if pdir is not None:
        try:
            pdir.publish(name, pdir.tagged(name, digest.encode("ascii")))
        except OSError:
            pass
    return digest


def _package_version_text(name):
    """The text of `name/_version.py` (Numba and llvmlite keep their version there), found
    without importing the package."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return "missing"
    for directory in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(directory, "_version.py")
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
    return "unknown"


def _cpu_text():
    """The CPU model and feature flags (what Numba's host CPU name and features derive from)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n\n", 1)[0].splitlines()
        wanted = ("vendor_id", "cpu family", "model", "model name", "flags", "Features", "CPU part")
        return "\n".join(ln for ln in lines if ln.split(":")[0].strip() in wanted)
    except OSError:
        return platform.processor() or platform.machine()


_KEY_NEUTRAL_ENV = frozenset({"NUMBA_CACHE_DIR"})


@functools.lru_cache(maxsize=None)
def toolchain_key():
    """What machine code depends on, computed without importing Numba or llvmlite."""
    # NUMBA_* and OMNISTAGE_PARALLEL decide what code is emitted (threads, parallel loops);
    # where Numba keeps its own cache does not (with it in the key, a machine's op kernels and
    # programs were unreachable from a process given another NUMBA_CACHE_DIR)
    numba_env = sorted((k, v) for k, v in os.environ.items()
                       if (k.startswith("NUMBA_") and k not in _KEY_NEUTRAL_ENV) or k == "OMNISTAGE_PARALLEL")
    return "\0".join([
        str(FORMAT), sys.version, getattr(sys, "abiflags", ""), platform.machine(), np.__version__,
        _package_version_text("numba"), _package_version_text("llvmlite"), _cpu_text(), repr(numba_env),
        os.environ.get("CC", ""),
    ])


def _aval_key(aval):
    return f"{np.dtype(aval.dtype).name}{list(aval.shape)}"


def signature(program):
    """(inputs, outputs): lists of (shape, dtype name); inputs are the arguments then constants."""
    ins = [(tuple(a.shape), np.dtype(a.dtype).name) for a in program.in_avals]
    ins += [(tuple(np.shape(c)), np.asarray(c).dtype.name) for c in program.consts.values()]
    outs = [(tuple(a.shape), np.dtype(a.dtype).name) for a in program.out_avals]
    return ins, outs


def program_key(program):
    """The lookup key of `program`'s library (see the module docstring)."""
    ins, outs = signature(program)
    # provenance (file:line comments) is not identity: a moved line reuses the library
    text = "\0".join([program.source(with_locs=False), repr(ins), repr(outs), _sources_digest(), toolchain_key()])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def program_key_or_none(program):
    """program_key(program), or None where it cannot be made (no key, no library)."""
    try:
        return program_key(program)
    except Exception:  # noqa: BLE001 - the Numba path is unaffected
        return None


_BUSY_CHECK_S = 0.2
_busy = [float("-inf"), False]  # [when last checked, the answer]


def building():
    """Whether this process's builder is still compiling one of its requests (a request with no
    published record while the builder lives; looked at once per _BUSY_CHECK_S). A parallel
    build's calls run serially meanwhile (executable.py): the builder, idle-scheduled as it is,
    still slowed mnist_vae's first two-thread epoch from 0.4 to 6-7 s on a 2-core machine."""
    now = time.monotonic()
    if now - _busy[0] < _BUSY_CHECK_S:
        return _busy[1]
    with _lock:
        proc, keys = _builder, list(_requested)
    busy = proc is not None and proc.poll() is None and any(not os.path.exists(_record_path(k)) for k in keys)
    _busy[:] = [now, busy]
    return busy


def _record_path(key):
    return os.path.join(disk_cache.cache_dir(), f"{_RECORD_PREFIX}{key}.json")


# --- the warm path: load and call ------------------------------------------------------------


def _read_record(key):
    # tagged by omnistage (aot_trust): a planted or damaged record is deleted, not trusted
    record = aot_trust.read_record(os.path.basename(_record_path(key)))
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("key") != key:
        return None
    return record


def _file_sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load(program, native_tier=False, key=None):
    """The AotProgram for `program` when a valid library is cached, else None.
    `native_tier`: the native tier (c_tier) asks for its own library, which is that tier's
    compiled code as Numba's cache is Numba's: loaded even when OMNISTAGE_AOT=0 turns off the
    libraries Numba's background builder makes. `key`: program_key(program), when known."""
    if not (enabled() or native_tier):
        return None
    try:
        key = key or program_key(program)
        record = _read_record(key)
        if record is None or "library" not in record:
            return None
        if not enabled() and record.get("tier") != "c":
            return None
        # the bytes are checked against the record through the checked directory's descriptor
        path = aot_trust.library_path(record, os.path.basename(_record_path(key)))
        if path is None:
            return None  # missing, truncated, corrupt or replaced: the next cold path rebuilds it
        # CDLL releases the GIL during the call; PyDLL keeps it, for error paths using the C API
        loader = ctypes.PyDLL if record.get("python_api", True) else ctypes.CDLL
        lib = loader(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        for table in _TABLES:  # the library's copies of the process's tables follow them
            if record.get(table.__name__.rsplit(".", 1)[-1]):
                table.mirror(ctypes.addressof(ctypes.c_int64.in_dll(lib, table.SYMBOL)))
        if record.get("blas_table"):
            blas_threads.configure(parallel.likely_enabled())  # as the Numba path does when it emits a product
        if record.get("numba_kernels"):  # a native-tier library calling runtime kernels' Numba builds
            from . import numba_kernel_table

            try:
                numba_kernel_table.fill(lib, record["numba_kernels"])
            except LookupError:
                return None  # (the kernels changed under the record: the next cold path rebuilds it)
        return AotProgram(program, lib, record)
    except (OSError, AttributeError, KeyError, TypeError, ValueError):
        return None


def quick_key(key):
    """The key a native-tier program's quick build is published under, until its optimized
    build is (c_tier, c_background)."""
    return key + "-quick"


def published(key):
    """Whether a library is published under `key` with its bytes intact."""
    record = _read_record(key)
    return record is not None and "library" in record and _record_valid(record)


def discard(key):
    """Delete the record published under `key` and the library it names (a native-tier quick
    build, once its optimized build is published: nothing else names that library). A process
    still running it keeps its mapping; one reading the record meanwhile finds the library gone
    and looks no further."""
    record = _read_record(key)
    names = [os.path.basename(_record_path(key))]
    if record is not None and isinstance(record.get("library"), str) and os.path.basename(record["library"]) == record["library"]:
        names.append(record["library"])
    for name in names:
        try:
            os.unlink(os.path.join(disk_cache.cache_dir(), name))
        except OSError:
            pass


def known_unsupported(program, key=None):
    """Whether a builder already found that `program` cannot become a library."""
    try:
        record = _read_record(key or program_key(program))
    except Exception:  # noqa: BLE001 - a key we cannot compute is simply not known
        return False
    return record is not None and "unsupported" in record


class AotProgram:
    """A Program run from its ahead-of-time library, without Numba. Same generated code as
    NumbaProgram (same module, same LLVM optimization), so the same results; if the kernel
    reports an error, the call is repeated on the Numba path, which raises it properly.

    A library is always the serial build. When the module has parallel loops, the process tries
    the Numba path (Numba's cached machine code, parallel loops and all) once its calls have
    taken parallel.TIER_UP_S in total (the rent-or-buy rule), and from then on runs whichever of
    the two a parallel.BuildChoice finds faster. The Numba path is loaded (or compiled, when no
    process has compiled the parallel build yet: seconds) in a background thread; calls run the
    library meanwhile and are credited to no build. Both builds give the same bits.

    A native-tier library with parallel loops (record "threads": c_tier) is both builds itself:
    `omnistage_threads` switches its loops onto the GEMM pool's threads, per call, as its
    BuildChoice decides; nothing is compiled or loaded for that."""

    backend = "numba_cpu"
    cache_status = "native library loaded from the disk cache"

    def __init__(self, program, lib, record):
        self.program = program
        self.record = record
        self._lib = lib  # keeps the library loaded
        self._fn = getattr(lib, SYMBOL)
        self._fn.restype = ctypes.c_int32
        self._fn.argtypes = [ctypes.c_void_p]
        ins, outs = signature(program)
        self._in_dtypes = [np.dtype(dt) for _, dt in ins[: len(program.in_avals)]]
        self._outs = [(shape, np.dtype(dt)) for shape, dt in outs]
        self._consts = [np.ascontiguousarray(c) for c in program.consts.values()]  # kept alive here
        self._const_addresses = [_data(c) for c in self._consts]
        self._slots = ctypes.c_void_p * (len(ins) + len(outs))
        self._call_objects = self._object_call(lib)
        self._numba = None
        self._pooled = bool(record.get("pooled"))  # its products' blocks run on the GEMM pool
        self._tier = parallel.BuildChoice() if record.get("parallel") else None  # the library is the serial build
        self.tier_up_thread = None  # loads the Numba path's parallel build, once started
        self._parallel = None  # that build, once ready
        # a native-tier library with parallel loops is both builds: this switch picks one per call
        # (they give the same bits), as BuildChoice decides; it needs no compile, so the rent is short
        self._threads = ctypes.c_int32.in_dll(lib, "omnistage_threads") if record.get("threads") else None
        if self._threads is not None:
            self._tier = parallel.BuildChoice(tier_up_s=parallel.TRIAL_S)
        # a native-tier quick build whose optimized build a helper compiles (c_background): its
        # products and loops run alone meanwhile, leaving the helper a core
        self.optimizing = False
        self._replaced = []  # libraries this one replaced (a call may still be running in one)

    @staticmethod
    def _object_call(lib):
        """The library's omnistage_aot_call (its layout set), or None: a library without one
        (Numba's path, an older format) or a process whose objects we could not read."""
        if object_layout is None:
            return None
        try:
            fn = getattr(lib, OBJECT_CALL)
            layout = (ctypes.c_int64 * 2).in_dll(lib, OBJECT_LAYOUT)
        except (AttributeError, ValueError):
            return None
        layout[0], layout[1] = object_layout
        fn.restype, fn.argtypes = ctypes.c_int32, [ctypes.py_object]
        return fn

    def function(self, symbol, restype, argtypes):
        """The library's C function `symbol` (op kernels' block driver: op_kernels.py)."""
        fn = getattr(self._lib, symbol)
        fn.restype, fn.argtypes = restype, argtypes
        return fn

    def adopt_optimized(self, key):
        """Run the optimized build published under `key` from the next call on (c_background:
        the same bits as the quick build this runs now)."""
        other = load(self.program, native_tier=True, key=key)
        if other is not None and (other._threads is None) == (self._threads is None):
            self._replaced.append(self._lib)
            self._lib, self.record, self._pooled = other._lib, other.record, other._pooled
            self._threads = other._threads
            if self._threads is not None:  # the quick build's calls ran alone: a fresh choice
                self._tier = parallel.BuildChoice(tier_up_s=parallel.TRIAL_S)
            self._fn, self._call_objects = other._fn, other._call_objects
            self.cache_status = "compiled by the C compiler (-O1 first; now the optimized build)"
        self.optimizing = False

    def __call__(self, *args):
        tier = self._tier
        start = None
        if self._threads is not None:
            threads = tier.parallel
            if self._threads.value != threads:
                self._threads.value = threads
            start = None if self.optimizing else tier.start()  # (calls run alone meanwhile: not timed)
            out = self._run(args)
            if start is not None:
                tier.record(threads, time.perf_counter() - start)
            return out
        if tier is not None:
            if tier.parallel and self._parallel is not None:
                start = tier.start()
                out = self._parallel(*args)
                if start is not None:
                    tier.record(True, time.perf_counter() - start)
                return out
            if tier.parallel:  # loading in the background: this call runs the library, uncredited
                self._tier_up()
            else:
                start = tier.start()
        out = self._run(args)
        if start is not None:
            tier.record(False, time.perf_counter() - start)
        return out

    def _run(self, args):
        """One call of the library (the Numba path raises the error it reports)."""
        # (_c_buffer's test inline: this is every cached call's path)
        ins = [a if type(a) is np.ndarray and a.dtype is dt and a.flags.c_contiguous else _c_buffer(a, dt)
               for a, dt in zip(args, self._in_dtypes)]
        outs = [np.empty(shape, dt) for shape, dt in self._outs]
        if self._call_objects is not None:
            fn, slots = self._call_objects, (*ins, *self._consts, *outs)  # (held until it returns)
        else:
            fn, slots = self._fn, self._slots(*[_data(a) for a in ins], *self._const_addresses, *[_data(a) for a in outs])
        try:
            if self._pooled and (self.optimizing or building()):
                # beside a builder the GEMM pool loses (mnist_vae's epoch 750 vs 550 ms serial);
                # (a branch, not a context per call: this is every cached call's path)
                with gemm_pool.one_thread():
                    status = fn(slots)
            else:
                status = fn(slots)
        except Exception:  # noqa: BLE001 - an error the kernel raised through the C API
            status = -1
        if status != 0:  # the Numba path raises the error properly
            return self._numba_program()(*args)
        return tuple(outs)

    def _numba_program(self):
        """The Numba path, for a call the library reported an error in (it raises properly)."""
        if self._numba is None:
            from .executable import NumbaProgram

            self._numba = NumbaProgram(self.program)
        return self._numba

    def _tier_up(self):
        parallel.start_tier_up(self, self._load_parallel, _lock)

    def _load_parallel(self):
        from .executable import NumbaProgram

        try:
            # straight to the parallel build; the collector stays on for the user's threads
            self._parallel = NumbaProgram(self.program, serial_first=False, pause_gc=False)
        except Exception as e:  # noqa: BLE001 - the library runs on, whatever went wrong
            warnings.warn(f"omnistage: the parallel build of {self.program.name!r} failed to load "
                          f"({type(e).__name__}: {e}); its library runs instead", RuntimeWarning)
            self._tier = None

    def as_text(self):
        """The generated module with this program's own `file:line` comments (the cached
        file has none); emitting it imports Numba (vmath), compiling nothing. A library of the
        native tier shows the module its C was translated from (c_tier)."""
        from .emit_cpu import emit_module

        if self.record.get("tier") == "c":
            from . import c_vmath

            return emit_module(self.program, c_vmath.lookup, threads=None)[0]
        from .executable import vmath_lookup

        return emit_module(self.program, vmath_lookup())[0]


def _data_reader():
    """A reader of an ndarray's data pointer. `__array_interface__` builds a dict (~0.85 us, a
    tenth of a small program's call when it has ten arguments); PyArrayObject's `data` field
    sits right after the object header in every NumPy, read in ~0.1 us. Checked here on a few
    arrays, else the slow way."""
    offset = object.__basicsize__
    read = ctypes.c_void_p.from_address
    probes = [np.empty(3), np.arange(10.0)[2:], np.zeros(()), np.empty((2, 3), np.float32).T, np.empty(0)]
    if all(read(id(p) + offset).value == p.__array_interface__["data"][0] for p in probes):
        return lambda a: read(id(a) + offset).value
    return lambda a: a.__array_interface__["data"][0]


_data = _data_reader()


def _object_layout():
    """(where a tuple keeps its items, where an ndarray keeps its data pointer), in bytes from
    the object's address, for a native library's omnistage_aot_call (c_translate.object_call_lines);
    checked here on a few objects, else None (calls then pass an array of pointers)."""
    items, data = tuple.__basicsize__, object.__basicsize__
    read = ctypes.c_void_p.from_address
    probes = (np.empty(3), np.arange(10.0)[2:], np.zeros(()), np.empty((2, 3), np.float32).T, np.empty(0))
    try:
        if all(read(id(probes) + items + k * ctypes.sizeof(ctypes.c_void_p)).value == id(p)
               and read(id(p) + data).value == p.__array_interface__["data"][0] for k, p in enumerate(probes)):
            return items, data
    except (OSError, ValueError):
        pass
    return None


object_layout = _object_layout()


def _c_buffer(value, dtype):
    """`value` as a C-contiguous array of `dtype` (0-d stays 0-d)."""
    a = value if isinstance(value, np.ndarray) else np.asarray(value)
    if a.dtype != dtype or not a.flags.c_contiguous:
        a = np.array(a, dtype=dtype, order="C")
    return a


def _cached_source(module):
    """The generated source of cached `module` (header checked), or None."""
    text = disk_cache._read(os.path.join(disk_cache.cache_dir(), module + ".py"))
    if not text or "\n" not in text:
        return None
    source = text.split("\n", 1)[1]
    return source if disk_cache._with_header(source) == text else None


# --- the cold path: schedule a builder --------------------------------------------------------


def native_tier_enabled():
    """Whether the native tier (c_tier) may build and load programs: OMNISTAGE_C_TIER=0 says no."""
    return os.environ.get("OMNISTAGE_C_TIER", "1").strip().lower() not in ("0", "false", "no", "off")


def compiler():
    """The command linking libraries (`$CC` with its flags, else cc) as a list, or None."""
    return aot_trust.compiler_command()


def schedule_build(numba_program):
    """Start a background builder for `numba_program`'s library, unless one exists, the
    program is known to be unsupported, the cache is in memory, or there is no C compiler."""
    if not enabled() or not getattr(numba_program.module, "_OMNISTAGE_CACHED", False):
        return None
    program = numba_program.program
    if narrow_floats.needs_widening(program):
        return None  # float16/bfloat16 cross the boundary as float32: the Numba path converts them
    if "numba.objmode(" in numba_program.source:
        return None  # debug.print and pure_callback call back into Python, which a library without Numba cannot
    key = program_key_or_none(program)
    if key is None:
        return None
    record = _read_record(key)
    if record is not None and ("unsupported" in record or _record_valid(record)):
        return None
    if aot_trust.being_built(key):
        return None  # another process's builder is on it
    if compiler() is None:
        _warn_once("no C compiler found (set CC or install cc)")
        return None
    request = {
        # parallel loops need Numba's threading library, which only Numba can load: a library
        # is the serial build, and a process using it tiers up to Numba's parallel build
        "key": key, "module": numba_program.serial_module.__name__, "entry": numba_program.fn_name,
        # products' blocks run on the GEMM pool in a library too: only parallel loops tier up
        "parallel": parallel.threaded(numba_program.source) == "loops",
        "signature": signature(program), "scalar": [len(s) == 0 for s, _ in signature(program)[0]],
    }
    return _spawn(request)


def _spawn(request):
    """Queue `request` on this process's builder (one process, started on first use, so a
    program with many jit functions pays Numba's start-up once and never runs two builders)."""
    global _builder
    with _lock:
        if request["key"] in _requested:
            return _builder
        if _builder is None or _builder.poll() is not None:
            import subprocess  # (here: a first call that loads or runs op by op never starts one)

            quiet = not os.environ.get("OMNISTAGE_AOT_DEBUG")
            try:
                _builder = subprocess.Popen(
                    _builder_command(), stdin=subprocess.PIPE, text=True,
                    env=dict(os.environ, OMNISTAGE_CACHE_DIR=disk_cache.cache_dir()),
                    stdout=subprocess.DEVNULL if quiet else None, stderr=subprocess.DEVNULL if quiet else None,
                    cwd=os.path.dirname(_package_dir()),
                    start_new_session=True,  # may outlive us: it finishes its queue on its own
                )
            except OSError as e:
                _warn_once(f"cannot start the library builder ({e})")
                return None
        try:
            _builder.stdin.write(json.dumps(request) + "\n")
            _builder.stdin.flush()
        except OSError:  # the builder died; the next request starts another
            return None
        _requested.add(request["key"])
        _close_when_idle(_builder)
        return _builder


def _close_when_idle(proc):
    """(Re)start the timer that closes `proc`'s input after `_IDLE_EXIT_S` seconds without a
    request: this process decides, so no request can be written to a builder that is leaving."""
    global _idle_timer
    if _idle_timer is not None:
        _idle_timer.cancel()
    _idle_timer = threading.Timer(_IDLE_EXIT_S, _retire, args=(proc,))
    _idle_timer.daemon = True
    _idle_timer.start()


def _retire(proc):
    global _builder
    with _lock:
        if _builder is not proc:
            return
        _builder = None
        _requested.clear()
        _retired.append(proc)
        try:
            proc.stdin.close()  # it finishes its queue, then sees the end of its input
        except OSError:
            pass


def wait_for_builds(timeout=_EXIT_WAIT_S, stop_late_builder=True):
    """Hand the builder its last requests (close its input) and wait up to `timeout` seconds
    for it to finish its queue. Tests and benchmarks that need the libraries now stop a
    builder that is still running then (a half-built library is never published); at
    interpreter exit it is left to finish in the background, in its own session."""
    global _builder
    with _lock:
        proc, _builder = _builder, None
        _requested.clear()
        procs = _retired + ([proc] if proc is not None else [])
        _retired.clear()
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
    import subprocess

    deadline = time.monotonic() + timeout
    for proc in procs:
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            if stop_late_builder:
                proc.kill()
                proc.wait()


def _detach_at_exit():
    wait_for_builds(_EXIT_GRACE_S, stop_late_builder=False)


atexit.register(_detach_at_exit)


def _warn_once(reason):
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(
        f"omnistage: {reason}; compiled programs cannot be saved as native libraries, so every "
        f"new process imports Numba before its first call (slower start, same results).",
        RuntimeWarning,
        stacklevel=cache_integrity.user_stacklevel(),  # the user's line, not ours
    )


# --- the builder (a separate process: imports Numba, llvmlite and the C compiler) -------------


class Unsupported(Exception):
    """The program's entry cannot become a self-contained library; it keeps the Numba path."""


def _builder_command():
    return [sys.executable, "-c", "import sys; from omnistage.codegen import aot; sys.exit(aot.main(sys.stdin))"]


def main(requests):
    """The builder: build and publish the library of each request (JSON lines on `requests`)."""
    import tempfile

    from . import kernel_calls, numba_locator

    yield_the_cpus()

    saved_cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="omnistage-aot-") as work:
        # Numba must compile everything afresh (cached machine code has no LLVM IR to link):
        # its cache points at an empty directory, set before Numba is imported.
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(work, "numba")
        # and omnistage's runtime kernels, which our locator keeps in our cache otherwise
        numba_locator.use_runtime_directory(os.path.join(work, "numba"))
        was_linked = kernel_calls.set_linked(True)  # a library must hold its kernels, not call through cells
        try:
            _serve(requests, work)
        finally:  # the builder is its own process; a caller in-process (tests) gets its state back
            kernel_calls.set_linked(was_linked)
            numba_locator.use_runtime_directory(None)
            if saved_cache_dir is None:
                os.environ.pop("NUMBA_CACHE_DIR", None)
            else:
                os.environ["NUMBA_CACHE_DIR"] = saved_cache_dir
    return 0


def yield_the_cpus():
    """Run the builder only on CPU time nobody else wants (Linux's SCHED_IDLE; elsewhere the
    lowest nice level). It starts after a program's first call, while the program runs on: at
    normal priority, on a 2-core machine, it took a core from the program's threads, and
    mnist_vae's first epoch on two threads took 6.1 s instead of 0.4 s."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return
    except (AttributeError, OSError):
        pass
    try:
        os.nice(19)
    except (AttributeError, OSError):
        pass


def _serve(requests, work):
    import traceback

    for line in aot_trust.requests_until_idle(requests, _BUILDER_IDLE_S):
        request = json.loads(line)
        with aot_trust.build_lock(request["key"]) as mine:
            existing = _read_record(request["key"]) if mine else None
            if not mine or (existing is not None and ("unsupported" in existing or _record_valid(existing))):
                continue  # another builder has it, or had it
            try:
                record = build(request, work)
            except Unsupported as e:
                record = {"format": FORMAT, "key": request["key"], "unsupported": str(e)}
            except Exception:  # noqa: BLE001 - not recorded: a later process may succeed
                traceback.print_exc()
                continue
            _publish_record(record)


def build(request, work):
    """Compile, wrap, link and publish the library of `request`; returns its record."""
    source = _cached_source(request["module"])
    if source is None or disk_cache.module_name(source) != request["module"]:
        raise RuntimeError(f"the cached module {request['module']} is missing or stale")
    module = disk_cache._execute(request["module"], disk_cache._with_header(source), None, None)
    ins, outs = request["signature"]
    cres = _compile_entry(getattr(module, request["entry"]), ins)
    obj, python_api, tables = _object_code(cres, ins, outs)
    lib_path = _link(obj, work, request["key"])
    name = f"{request['module']}-{hashlib.sha256(repr((FORMAT, ins, outs)).encode()).hexdigest()[:16]}.so"
    published = _publish_library(lib_path, name)
    return {
        "format": FORMAT, "key": request["key"], "module": request["module"], "library": name,
        "sha256": _file_sha256(published), "toolchain": disk_cache.toolchain_fingerprint(),
        "python_api": python_api, "parallel": bool(request.get("parallel")),
        "pooled": "_kn.matmul_pool(" in source, **tables,
    }


def _numba_type(shape, dtype):
    from numba import types
    from numba.np.numpy_support import from_dtype

    scalar = from_dtype(np.dtype(dtype))
    return scalar if len(shape) == 0 else types.Array(scalar, len(shape), "C")


def _compile_entry(dispatcher, ins):
    argtypes = tuple(_numba_type(shape, dt) for shape, dt in ins)
    dispatcher.compile(argtypes)
    return dispatcher.overloads[argtypes]


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return list(reversed(strides))


def _wrapper_ir(ctx, cres, ins, outs):
    """`int32 omnistage_aot_main(void **buffers)`: inputs, then outputs, one pointer each."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.np.arrayobj import populate_array

    fndesc = cres.fndesc
    module = ctx.create_module("omnistage_aot")
    callee = ir.Function(module, ctx.call_conv.get_function_type(fndesc.restype, fndesc.argtypes),
                         fndesc.llvm_func_name)
    i8p = ir.IntType(8).as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.IntType(32), [i8p.as_pointer()]), SYMBOL)
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    intp = lambda v: ctx.get_constant(types.intp, v)  # noqa: E731

    def buffer(k):
        return builder.load(builder.gep(fn.args[0], [ir.Constant(ir.IntType(32), k)]))

    args = []
    for k, ((shape, _dt), ty) in enumerate(zip(ins, fndesc.argtypes)):
        ptr = buffer(k)
        if isinstance(ty, types.Array):
            ary = ctx.make_array(ty)(ctx, builder)
            itemsize = ctx.get_abi_sizeof(ctx.get_data_type(ty.dtype))
            populate_array(ary, data=builder.bitcast(ptr, ary.data.type),
                           shape=cgutils.pack_array(builder, [intp(n) for n in shape]),
                           strides=cgutils.pack_array(builder, [intp(s) for s in _c_strides(shape, itemsize)]),
                           itemsize=intp(itemsize), meminfo=None)
            args.append(ary._getvalue())
        else:
            args.append(ctx.unpack_value(builder, ty, builder.bitcast(ptr, ctx.get_data_type(ty).as_pointer())))
    status, result = ctx.call_conv.call_function(builder, callee, fndesc.restype, fndesc.argtypes, args)
    with builder.if_then(status.is_error, likely=False):
        builder.ret(ir.Constant(ir.IntType(32), 1))
    restype = fndesc.restype
    results = ([(builder.extract_value(result, j), t) for j, t in enumerate(restype)]
               if isinstance(restype, types.BaseTuple) else [(result, restype)])
    if len(results) != len(outs):
        raise Unsupported(f"the entry returns {len(results)} values for {len(outs)} outputs")
    for j, ((value, ty), (shape, dt)) in enumerate(zip(results, outs)):
        _store_output(ctx, builder, value, ty, buffer(len(ins) + j), shape, np.dtype(dt))
    builder.ret(ir.Constant(ir.IntType(32), 0))
    return module


def _store_output(ctx, builder, value, ty, ptr, shape, dtype):
    """Copy one entry result into the caller's buffer (and release the result)."""
    from numba.core import cgutils, types
    from numba.np.numpy_support import as_dtype

    if isinstance(ty, types.Array):
        if ty.layout != "C" or ty.ndim != len(shape) or as_dtype(ty.dtype) != dtype:
            raise Unsupported(f"output of type {ty} for {dtype.name}{list(shape)}")
        ary = ctx.make_array(ty)(ctx, builder, value=value)
        count = ctx.get_constant(types.intp, int(np.prod(shape, dtype=np.int64)))
        cgutils.raw_memcpy(builder, builder.bitcast(ptr, ary.data.type), ary.data, count, dtype.itemsize)
        ctx.nrt.decref(builder, ty, value)
    elif isinstance(ty, (types.Number, types.Boolean)) and len(shape) == 0 and as_dtype(ty) == dtype:
        ctx.pack_value(builder, ty, value, builder.bitcast(ptr, ctx.get_data_type(ty).as_pointer()))
    else:
        raise Unsupported(f"output of type {ty} for {dtype.name}{list(shape)}")


def _object_code(cres, ins, outs):
    """The wrapper plus everything it reaches, as PIC object code for this CPU."""
    import llvmlite.binding as ll
    from numba.core import config

    ctx = cres.target_context  # the compile's context: NRT enabled
    module = cres.library._final_module.clone()
    module.link_in(ll.parse_assembly(str(_wrapper_ir(ctx, cres, ins, outs))))
    # tables the JIT finds in LLVM's symbol table (the MPI handles of a multi-process program,
    # the BLAS functions of a product): the library defines its own, exported, and the process
    # that loads it keeps them filled (`load`)
    referenced = {g.name for g in module.global_variables}
    tables = [t for t in _TABLES if t.SYMBOL in referenced]
    for table in tables:
        module.link_in(ll.parse_assembly(f"@{table.SYMBOL} = global [{table.LENGTH} x i64] zeroinitializer"))
    exported = {t.SYMBOL for t in tables}
    for fn in module.functions:  # only the wrapper stays visible; the rest is reachable or dead
        if not fn.is_declaration and fn.name != SYMBOL:
            fn.linkage = "internal"
    for gv in module.global_variables:
        if not gv.is_declaration and gv.name not in exported:
            gv.linkage = "internal"
    codegen = cres.library.codegen
    tm = ll.Target.from_triple(ll.get_process_triple()).create_target_machine(
        cpu=codegen._get_host_cpu_name(), features=codegen._tm_features, opt=config.OPT,
        reloc="pic", codemodel="default",
    )
    # Dead-code removal only: the IR is already Numba's optimized IR, so the machine code is
    # the same as the JIT's.
    pm = ll.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pm.add_strip_dead_prototype_pass()
    pm.run(module, ll.create_pass_builder(tm, ll.create_pipeline_tuning_options()))
    python_api = _check_externals(module)
    return tm.emit_object(module), python_api, {t.__name__.rsplit(".", 1)[-1]: True for t in tables}


def _check_externals(module):
    needed = {f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")}
    needed |= {g.name for g in module.global_variables if g.is_declaration}
    foreign = sorted(n for n in needed - _RUNTIME_SYMBOLS if n.startswith(_FORBIDDEN_PREFIXES))
    if foreign:
        raise Unsupported(f"needs Numba's helper library: {', '.join(foreign[:6])}")
    return any(n.startswith(_PYTHON_API_PREFIXES) for n in needed)


def _link(obj, work, tag):
    # unique names: dlopen would hand back an earlier library loaded from the same path
    kernel, runtime, out = (os.path.join(work, f"{tag}{n}") for n in (".o", "-runtime.c", ".so"))
    with open(kernel, "wb") as f:
        f.write(obj)
    with open(runtime, "w", encoding="utf-8") as f:
        f.write(_RUNTIME_C)
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler")
    # relative names (cwd=work): the library's bytes do not depend on the temporary directory
    names = [os.path.basename(p) for p in (out, kernel, runtime)]
    import subprocess

    subprocess.run([*cc, "-shared", "-fPIC", "-O2", "-o", *names, "-lm"], cwd=work, check=True, capture_output=True)
    return out


def _load_error(path):
    """Why the library at `path` does not load with every symbol resolved now (None when it
    does): Numba's libraries are not global, so this fails exactly when a process without
    Numba would."""
    try:
        getattr(ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL), SYMBOL)
        return None
    except (OSError, AttributeError) as e:
        return str(e).replace(os.path.dirname(path) + os.sep, "")  # the symbol, not the temporary path


def _publish_library(built, name):
    """Publish the library at `built` as `name` in the cache (a file with the same bytes stays
    untouched; anything else there is invalid and replaced atomically)."""
    error = _load_error(built)
    if error is not None:
        raise Unsupported(f"the linked library does not load without Numba ({error})")
    directory = disk_cache.cache_dir()
    disk_cache._ensure_dir(directory)
    path = os.path.join(directory, name)
    with open(built, "rb") as f:
        disk_cache._publish(directory, path, f.read(), suffix=".so")
    return path


def publish(key, built, name, fields):
    """Publish the library at `built` as `name` and its record under `key` (the native tier,
    c_tier, which builds libraries in the calling process); `fields` join the record. An op
    kernel's library is named with its own prefix."""
    if key.startswith(OP_KERNEL_KEY_PREFIX):
        name = _OP_LIBRARY_PREFIX + name.split("_")[-1]
    published = _publish_library(built, name)
    _publish_record({
        "format": FORMAT, "key": key, "module": name, "library": name, "sha256": _file_sha256(published),
        "toolchain": toolchain_key(), "python_api": False, "parallel": False, **fields,
    })


def _publish_record(record):
    directory = disk_cache.cache_dir()
    existing = _read_record(record["key"])
    if existing is not None and ("unsupported" in existing or _record_valid(existing)):
        return  # a valid record is never rewritten
    disk_cache._ensure_dir(directory)
    record = aot_trust.signed(record, os.path.basename(_record_path(record["key"])))
    text = json.dumps(record, sort_keys=True, indent=1) + "\n"
    disk_cache._publish(directory, _record_path(record["key"]), text, suffix=".json")


def _record_valid(record):
    """Whether the record's library is in the cache with the record's hash (a symbolic link
    or a damaged file is not: the library is built again)."""
    return aot_trust.library_intact(record)
