"""The GEMM pool: a small native thread pool that runs the blocks of a big product (`kernels`:
each block one single-threaded BLAS call) on the machine's cores, in compiled code with or
without Numba (a native library, `aot`, has no Numba threading layer).

Why our own pool and not Numba's prange: blocks are handed out one at a time from a queue, and
the calling thread takes blocks too and never waits for a worker that has not started one. A
preempted worker (a loaded machine; the library builder, SCHED_IDLE as it is, next to a
program's first calls) costs at most the block it holds, where a static split waits for it at
the barrier (Numba's omp layer beside a running builder: 40 ms a call against 9 ms serial for
mnist_classifier's update). The blocks and their calls are fixed by the product's shape alone
(`kernels.gemm_blocks`), so the bits never depend on how many threads ran, or which. The same
workers run the ranges of native libraries' parallel loops (`omnistage_pool_for`,
c_translate.parallel_loop), between those products: a second pool of threads (OpenMP's) took
turns on the cores with this one.
Beside a running library builder the pool still loses (mnist_vae's epoch of 32-row products
675-750 ms against 550 serial), so programs run their products alone while this process's
builder works (executable, aot), as they do Numba's threads.

The pool is C (SOURCE), compiled once per machine with the C compiler native libraries are
linked with, kept in the private cache directory with a tagged record of its SHA-256 and loaded
only from bytes with that hash (aot_trust), as libraries are. It is built in a background
thread the first time a process asks for it (`start`), so no call waits for the compiler;
until it is loaded, and for good on a machine without a compiler, `blas_table`'s POOL_SLOT
holds 0 and compiled code runs the blocks itself (Numba builds on Numba's threads, libraries
serially): the same bits.

Workers: one fewer than the cores this process may run on (the caller is the other), none when
parallel loops are off (OMNISTAGE_PARALLEL=0, one core). `one_thread()` makes the calling
thread's products run alone (a build's timed serial calls, parallel.one_thread).

Imports only the standard library (the warm path must not import Numba).
"""
import ctypes
import hashlib
import os
import threading

from . import aot_trust, blas_table

FUNCTION = "omnistage_gemm_calls"
LOOP_FUNCTION = "omnistage_pool_for"
CALL_WORDS = 11  # int64s per BLAS call: transa, transb, m, n, k, lda, ldb, ldc, a, b, c (addresses)

SOURCE = r"""
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

typedef void (*gemm_fn)(const char *, const char *, const int *, const int *, const int *, const void *,
                        const void *, const int *, const void *, const int *, const void *, void *, const int *);

typedef struct job {
    void (*task)(const struct job *, int64_t);  /* runs task i of the job */
    gemm_fn gemm;  /* a product's blocks: BLAS calls */
    const int64_t *calls;
    const void *alpha, *beta;
    void (*fn)(void *, int64_t, int64_t);  /* a loop's ranges of iterations (omnistage_pool_for) */
    void *ctx;
    int64_t n;  /* the loop's iterations, cut into `count` ranges */
    int64_t count, next, done;
} job_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static job_t *current = NULL;
static uint64_t generation = 0;
static int workers = 0;
static __thread int alone = 0;

static void run_range(const job_t *j, int64_t i) { j->fn(j->ctx, j->n * i / j->count, j->n * (i + 1) / j->count); }

static void run(const job_t *j, int64_t i) {
    const int64_t *c = j->calls + CALL_WORDS * i;
    char ta = c[0] ? 't' : 'n', tb = c[1] ? 't' : 'n';
    int m = (int)c[2], n = (int)c[3], k = (int)c[4], lda = (int)c[5], ldb = (int)c[6], ldc = (int)c[7];
    if (m <= 0 || n <= 0) return;
    j->gemm(&ta, &tb, &m, &n, &k, j->alpha, (const void *)(intptr_t)c[8], &lda, (const void *)(intptr_t)c[9],
            &ldb, j->beta, (void *)(intptr_t)c[10], &ldc);
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A worker waits for the next product spinning for SPIN_NS first: a program's products come
   back to back, and waking a sleeping thread (a futex, a halted virtual CPU) takes tens of us,
   a good part of a 100 us block. */
#define SPIN_NS 200000

static void *work(void *unused) {
    sigset_t all;
    uint64_t seen = 0;
    (void)unused;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);  /* signals are the interpreter's main thread's */
    pthread_mutex_lock(&mu);
    for (;;) {
        if (generation == seen) {
            int64_t until = now_ns() + SPIN_NS;
            int spins = 0;
            pthread_mutex_unlock(&mu);
            while (__atomic_load_n(&generation, __ATOMIC_ACQUIRE) == seen) {
                if (++spins % 64 == 0 && now_ns() > until) break;
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
            pthread_mutex_lock(&mu);
        }
        while (current == NULL || generation == seen) pthread_cond_wait(&wake, &mu);
        job_t *j = current;
        seen = generation;
        while (j->next < j->count) {
            int64_t i = j->next++;
            pthread_mutex_unlock(&mu);
            j->task(j, i);
            pthread_mutex_lock(&mu);
            if (++j->done == j->count) pthread_cond_signal(&finished);
        }
    }
    return NULL;
}

/* the job's tasks on the workers and this thread (all here when alone, no workers or busy) */
static void dispatch(job_t *jj) {
    int64_t i;
    pthread_mutex_lock(&mu);
    if (workers == 0 || alone || jj->count < 2 || current != NULL) {  /* current: another thread's job */
        pthread_mutex_unlock(&mu);
        for (i = 0; i < jj->count; i++) jj->task(jj, i);
        return;
    }
    current = jj;
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
    if (jj->count - 1 >= workers) pthread_cond_broadcast(&wake);
    else for (i = 1; i < jj->count; i++) pthread_cond_signal(&wake);
    while (jj->next < jj->count) {
        i = jj->next++;
        pthread_mutex_unlock(&mu);
        jj->task(jj, i);
        pthread_mutex_lock(&mu);
        jj->done++;
    }
    while (jj->done < jj->count) pthread_cond_wait(&finished, &mu);
    current = NULL;
    pthread_mutex_unlock(&mu);
}

/* The calls, each a BLAS gemm with the given alpha and beta, on the pool and this thread. */
void omnistage_gemm_calls(void *gemm, int64_t count, const int64_t *calls, const void *alpha, const void *beta) {
    job_t j = {run, (gemm_fn)gemm, calls, alpha, beta, NULL, NULL, 0, count, 0, 0};
    dispatch(&j);
}

/* fn(ctx, lo, hi) over ranges covering [0, n) on the pool and this thread: a loop whose
   iterations share nothing (a native library's parallel loops, c_translate.parallel_loop),
   RANGES_PER_THREAD ranges a thread so a preempted one holds up little; one call of the whole
   range when the pool cannot help. */
#define RANGES_PER_THREAD 4
void omnistage_pool_for(void (*fn)(void *, int64_t, int64_t), void *ctx, int64_t n) {
    int64_t ranges = (int64_t)(__atomic_load_n(&workers, __ATOMIC_RELAXED) + 1) * RANGES_PER_THREAD;
    if (ranges > n) ranges = n;
    if (ranges < 2 || alone) {
        if (n > 0) fn(ctx, 0, n);
        return;
    }
    job_t j = {run_range, NULL, NULL, NULL, NULL, fn, ctx, n, ranges, 0, 0};
    dispatch(&j);
}

static void after_fork_in_child(void) {  /* the workers did not come along */
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&finished, NULL);
    current = NULL;
    workers = 0;
}

/* Start n workers (once); the number running. */
int omnistage_gemm_pool_start(int n) {
    static int forks_handled = 0;
    pthread_mutex_lock(&mu);
    if (!forks_handled) {
        pthread_atfork(NULL, NULL, after_fork_in_child);
        forks_handled = 1;
    }
    while (workers < n) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 1 << 20);
        int failed = pthread_create(&t, &attr, work, NULL);
        pthread_attr_destroy(&attr);
        if (failed) break;
        workers++;
    }
    n = workers;
    pthread_mutex_unlock(&mu);
    return n;
}

/* Whether this thread's products run without the pool (1) or with it (0); the previous value. */
int omnistage_gemm_pool_alone(int value) {
    int previous = alone;
    alone = value;
    return previous;
}
"""

SOURCE = f"#define CALL_WORDS {CALL_WORDS}\n" + SOURCE

_KEY = hashlib.sha256(SOURCE.encode()).hexdigest()[:16]
LIBRARY = f"omnistage_gemm_pool_{_KEY}.so"
RECORD = f"omnistage_gemm_pool_{_KEY}.json"

_lock = threading.Lock()
_started = False
_library = None  # the loaded pool (ctypes.CDLL), once loaded
_alone = None  # its omnistage_gemm_pool_alone, once loaded


def start():
    """Make the pool available to compiled code soon: load it now when it is in the cache, else
    build it in a background thread. Once per process; never raises, never waits for a compiler."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    workers = _workers()
    if workers < 1:
        return
    try:
        if _load(workers):
            return
    except Exception:  # noqa: BLE001 - no pool: products run their blocks themselves
        return
    threading.Thread(target=_build_and_load, args=(workers,), daemon=True, name="omnistage GEMM pool build").start()


def ready():
    """Whether compiled code's products run on the pool now."""
    return _library is not None


class one_thread:
    """The calling thread's products run their blocks themselves for a while (the same bits)."""

    def __enter__(self):
        alone = _alone
        self._previous = alone(1) if alone is not None else None
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            _alone(self._previous)


def _workers():
    from . import parallel

    if not parallel.likely_enabled():
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores - 1


def _load(workers):
    """Load the cached pool whose bytes match its tagged record; whether it was."""
    record = aot_trust.read_record(RECORD)
    if record is None:
        return False
    path = aot_trust.library_path(record, RECORD)
    return path is not None and _load_path(path, workers)


def _load_path(path, workers):
    global _library, _alone
    library = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    start_pool = library.omnistage_gemm_pool_start
    start_pool.restype, start_pool.argtypes = ctypes.c_int, [ctypes.c_int]
    alone = library.omnistage_gemm_pool_alone
    alone.restype, alone.argtypes = ctypes.c_int, [ctypes.c_int]
    address = ctypes.cast(getattr(library, FUNCTION), ctypes.c_void_p).value
    loop_address = ctypes.cast(getattr(library, LOOP_FUNCTION), ctypes.c_void_p).value
    if start_pool(workers) < 1 or not address or not loop_address:
        return False
    _library, _alone = library, alone
    blas_table.set_pool(address, loop_address)
    return True


def _build_and_load(workers):
    """Compile SOURCE in a private temporary directory, load what was compiled there, and
    publish it with its record for later processes."""
    import subprocess  # (here: loading a published pool, every later process, needs neither)
    import tempfile

    try:
        cc = aot_trust.compiler_command()
        if cc is None:
            return
        with tempfile.TemporaryDirectory(prefix="omnistage_gemm_pool_") as work:
            source = os.path.join(work, "pool.c")
            with open(source, "w") as f:
                f.write(SOURCE)
            built = os.path.join(work, "pool.so")
            result = subprocess.run([*cc, "-shared", "-fPIC", "-O2", "-pthread", "-o", built, source],
                                    capture_output=True, timeout=120)
            if result.returncode != 0:
                return
            with open(built, "rb") as f:
                data = f.read()
            aot_trust.publish(LIBRARY, data, RECORD)
            _load_path(built, workers)
    except Exception:  # noqa: BLE001 - no pool: products run their blocks themselves
        pass


