"""Parallel loops for the Numba CPU backend: which loop nests of an emitted function run on
several threads, and how the emitted source says so.

`parallelize(lines)` rewrites a function body the emitter has finished: each top-level loop
(`for _i0 in range(N):` at the body's first indent) that is safe and big enough becomes
`for _i0 in numba.prange(N):`, and the row buffers it alone uses are allocated inside it with
`np.empty` (Numba hoists that allocation out of each thread's share of the iterations, so there
is one buffer per thread, not one per row; `_rt.empty` is not hoisted: measured 584 vs 490 us on
a 4096x512 softmax). Numba splits the N iterations evenly between its threads. (Splitting them
into explicit chunks, `prange(C)` around `range(lo, hi)`, stopped LLVM vectorizing the inner
loop: 830 vs 120 us on a 1M selu.)

Safe means every iteration touches its own data: each array the body stores into is either a
row buffer (allocated `# one row` just before the loop and used nowhere else) or read and written
only at `[_i0, ...]`; every local the body assigns is assigned before it is read (nothing carried
from one iteration to the next) and is not read after the loop; and the body calls nothing that
writes into an argument (BLAS, opaque kernels). Big enough means the nest runs at least
PARALLEL_MIN_WORK statements (a static count: extents are literals).

Only the entry function is parallelized: control-flow bodies run inside the entry's loops, and a
parallel region nested in another is what the workqueue layer aborts on. Nothing is parallel
when Numba has one thread, when OMNISTAGE_PARALLEL=0, or when the only threading layer Numba can
load is `workqueue` (not safe for concurrent calls from several Python threads; our functions
release the GIL). Numba sizes its pool from the CPUs this process may run on (sched_getaffinity),
so the pool does not oversubscribe the machine, and its threads never run while OpenBLAS's do:
BLAS is called only outside parallel loops (`_kn.matmul` calls are never inside one), with one
OpenBLAS thread (blas_threads.py). A parallel build runs a big product's blocks on Numba's
threads instead (`_kn.matmul_threads`: kernels.gemm_blocks cuts it by shape, each block one
single-threaded BLAS call, so the serial and parallel builds give the same bits): 1.7-2x on two
cores for the examples' 32..1024 x 784..1024 products. A program threaded only there ("blas",
`threaded()`) has one build; its serial calls run it with Numba's thread count set to one. The
serial build of a program with parallel loops cuts its products the same way, and runs them on
threads while the rent below is paid (a GEMM-bound training step is on every core from its
first call: mnist_classifier's update 8.2 -> 4.7 ms with OMNISTAGE_AOT=0, JAX 5.3), on one
thread in the serial phases BuildChoice times. A module without parallel loops runs its
products' blocks on the GEMM pool (gemm_pool.py: blocks from a queue, so a preempted thread
delays nobody) once it is loaded, and native libraries do too; a module with parallel loops
keeps Numba's threads, which spin after each loop and would fight the pool's.

A process runs a parallel program's serial build first, and tries the parallel one (compiled
in a background thread, calls running serial meanwhile, so a compile of seconds never lands in
a call) once its calls have taken TIER_UP_S (about what compiling the parallel build, or loading Numba for a
process that runs the ahead-of-time library, costs): the rent-or-buy rule, so a program called a
few times never pays for a parallel compile (~250 ms more than the serial one for selu), and one
called a lot pays at most about twice what it would have paid had it known from the start.
From then on BuildChoice keeps whichever build is faster on this machine now: a trial of the
parallel build's mean call against the serial build's; the loser is re-tried after a wait that
doubles each time it loses again (the rule and its numbers are in its docstring). On a quiet
machine the parallel build wins; on a loaded one (other processes on every core) its threads
wait for each other and it loses by 5x (128x1024 selu) to 30x (1e6 selu) in mean call time.
Measured at load ~7 (3 s of back-to-back calls, mean of the last third): 128x1024 selu 1137 us
a call when the parallel build was kept for good, 123 us with BuildChoice (it went back to
serial), 130 us with OMNISTAGE_PARALLEL=0; 1e6 selu 7288, 633 and 757 us.

Measured on the 2-core shared machine this was written on (2026-11, session 5, omp layer,
`jit` of the benchmark cases, serial (OMNISTAGE_PARALLEL=0) vs parallel, medians of 30 calls):
  selu float32 1e5: 37 vs 32 us; 3e5: 84 vs 46 us; 1e6: 237 vs 141 us
  row softmax float32 128x512: 34 vs 32 us; 4096x512: 1173 vs 785 us (380-450 us in other runs)
  with one other busy process: selu 1e6 232 vs 140 us, softmax 4096x512 815 vs 384 us.
libgomp's defaults (workers spin briefly, then sleep) measured best: OMP_WAIT_POLICY=PASSIVE
cost ~40 us per loop (a futex wake-up; selu 1e5 70 us), a shorter GOMP_SPINCOUNT made one run
with a busy neighbour 20x slower. Oversubscription is the risk: with the AOT builder compiling
beside a process (2 cores, 3 busy threads) a parallel selu 1e6 once took 8 ms a call, and
session 2 saw 28x slowdowns at load ~9: what BuildChoice now detects and undoes.
OMNISTAGE_PARALLEL=0 turns parallel loops off.
"""
import ast
import os
import re
import sys
import threading
import time

from ..core import ast_threads
from . import row_passes

PARALLEL_MIN_WORK = 1 << 18  # statements a loop nest must run to be split over threads (~50-100 us serial)

# numba.njit's `parallel` option: prange loops only. Numba's other parallel rewrites (array
# expressions, np.* calls, reductions) would turn our allocations and reductions into parfors
# too, at compile time cost, and are off. A literal in each decorator: Numba pops its keys.
NJIT_OPTION = ("parallel={'prange': True, 'comprehension': False, 'reduction': False, 'inplace_binop': False, "
               "'setitem': False, 'numpy': False, 'stencil': False, 'fusion': False}")

TIER_UP_S = 0.6  # seconds of serial calls after which a process first tries the parallel build

# The adaptive choice between the builds (BuildChoice; the measurements are in the module docstring)
TRIAL_S = 0.05  # seconds of calls a timed phase lasts: a trial of the parallel build, a fresh serial mean
TRIAL_MIN_CALLS = 3  # and at least this many calls (besides the phase's first, not counted)
MARGIN = 0.10  # the parallel build goes back to serial when its mean call is this much slower
CLEAR_LOSS = 4.0  # a trial ends at once when its calls have taken this many times the serial mean
RETRY_S = 0.5  # seconds of serial calls after a lost trial before the next; doubles per loss
RECHECK_S = 1.0  # seconds of parallel calls after a won trial before the next check; doubles per win
MAX_WAIT_S = 30.0  # the most either wait grows to (unless CHECK_SHARE asks for more)
CHECK_SHARE = 0.1  # a wait lasts at least the last resample and trial over this: long calls check rarely
SAMPLE_EVERY = 16  # between trials, one call in this many is timed


class BuildChoice:
    """Which build, serial or parallel, one program's calls run in one process, and which calls
    to time. Callers read `parallel` (the build to run), call `start()` just before the call (a
    perf_counter() reading when this call is to be timed, else None) and, when it was not None,
    `record(parallel, seconds)` after it.

    The rule, phase by phase (PHASES; `rent` first):
      rent      serial, every call timed, until they have cost TIER_UP_S (rent or buy: this pays
                for the parallel compile); their mean, the first call left out, is the serial mean
                (with `rent_threads` the calls use threads in their products, and a resample
                follows instead);
      trial     parallel, every call timed, for TRIAL_S (at least TRIAL_MIN_CALLS calls, the first
                left out: it wakes the thread pool), or less once the calls have cost CLEAR_LOSS
                serial means each. A mean more than MARGIN above the serial mean loses: `serial`;
                else (also when there is no serial mean to compare with) `parallel`. A loss
                right after a won trial (or the rent) is confirmed first: `resample` and a second
                trial, so one noisy trial on a shared machine does not send a program serial for
                RETRY_S of calls (at load a second loss follows within about 2 TRIAL_S);
      serial    serial, one call in SAMPLE_EVERY timed, for RETRY_S of calls, which doubles per
                lost trial (at most MAX_WAIT_S), then `resample`;
      parallel  parallel, one call in SAMPLE_EVERY timed, for RECHECK_S of calls, doubling per won
                trial (at most MAX_WAIT_S), then `resample`; sooner if its calls come to cost
                CLEAR_LOSS serial means each (the machine got busy). Both waits last at least
                the last resample and trial took over CHECK_SHARE: a program whose calls take
                seconds checks after tens of them, not after each few;
      resample  serial, every call timed, for TRIAL_S (the first call left out): a fresh serial
                mean, then `trial`.
    Waits are seconds spent in this program's calls, so a machine busy enough to slow them is
    re-checked sooner in calls, not later. Checks cost at most about CHECK_SHARE of the time
    (on a loaded machine the trials, about TRIAL_S per RETRY_S..MAX_WAIT_S of calls: 10% falling
    to 0.2%; on a quiet one the resamples, TRIAL_S of serial calls per RECHECK_S..MAX_WAIT_S),
    and a program gets the faster build back within about MAX_WAIT_S of calls (or ten checks'
    time) once the machine's load changes.

    Means, not medians: on a loaded machine the parallel build's cost is its tail. On the
    2-core machine this was written on, at load ~10, a 128x1024 selu took a median of 15.6 us
    parallel against 28.7 us serial but a mean of 850 against 164 us (1 call in 30 waited ~24 ms
    for a descheduled worker thread); at 1e6 elements the parallel median was 20 ms against
    0.22 ms serial.

    Threads: several may call one program. The hot path takes no lock: counts and sums are
    updated racily (a lost update only shifts a mean or a wait a little), a call is credited
    only to the build it ran on (`record` drops it otherwise), and a phase change is made by the
    one thread that takes a non-blocking lock. Both builds give the same bits (parallelize()
    splits only loops whose iterations share nothing), so a switch between calls, or two threads
    on different builds at once, changes no result."""

    # phase: (runs the parallel build, one call in how many timed)
    PHASES = {
        "rent": (False, 1),
        "trial": (True, 1),
        "serial": (False, SAMPLE_EVERY),
        "parallel": (True, SAMPLE_EVERY),
        "resample": (False, 1),
    }

    def __init__(self, tier_up_s=None, rent_threads=False):
        # tier_up_s: the rent phase's length; a program whose parallel build needs no compile
        # of its own (threads only in its products' BLAS blocks) rents only long enough for a mean
        self._tier_up_s = tier_up_s  # None: TIER_UP_S, read when the rent is checked
        # rent_threads: the serial build runs its products' blocks on threads while the rent is
        # paid (the same bits); its timed serial phases (resample, serial) run it on one thread,
        # so the rent is followed by a resample, not compared with the trial itself
        self._rent_threads = rent_threads
        self._lock = threading.Lock()
        self.serial_mean = None  # seconds a serial call takes, from the last rent/resample phase
        self.trial_mean = None  # the last trial's mean call
        self.retry_s, self.recheck_s = RETRY_S, RECHECK_S  # the next waits (backoff)
        self.trials = self.losses = 0  # losses: confirmed ones
        self._lost_last = False  # the last trial lost: a loss now confirms it
        self._wait = 0.0  # seconds of calls the `serial`/`parallel` phase lasts
        self._check_s = 0.0  # seconds the last resample and trial took
        self._first = None  # the first serial call's time: the serial mean when it is the only one
        self._enter("rent" if self._rent_s() >= 0 else "trial")  # < 0: parallel from the first call

    def _rent_s(self):
        return TIER_UP_S if self._tier_up_s is None else self._tier_up_s

    def _enter(self, phase):
        # the build first: a call still running on the old one is then dropped by `record`
        self.parallel, self._every = self.PHASES[phase]
        self.threads_allowed = phase == "rent" and self._rent_threads  # may a serial call use threads?
        self.phase = phase
        # a sampled call stands for the SAMPLE_EVERY calls up to it: the first is the last of them
        self._sum, self._count, self._spent, self._tick = 0.0, 0, 0.0, self._every
        self._skip = self._every == 1

    def start(self):
        self._tick -= 1
        if self._tick > 0:
            return None
        self._tick = self._every
        return time.perf_counter()

    def record(self, parallel, seconds):
        """Credit one timed call of the `parallel` (True) or serial build."""
        if parallel != self.parallel:
            return  # it started before a phase change: it says nothing about this phase
        phase = self.phase
        self._spent += seconds * self._every
        if self._skip:  # the phase's first call: a cold cache, a waking thread pool
            self._skip = False
            if phase == "rent":
                self._first = seconds
        else:
            self._sum += seconds
            self._count += 1
        if self._done(phase):
            self._advance(phase, self._sum / self._count if self._count else None)

    def _done(self, phase):
        if phase == "rent":
            return self._spent > self._rent_s()
        total, count = self._sum, self._count
        if self.parallel and self.serial_mean and total > CLEAR_LOSS * self.serial_mean * max(count, 1):
            return True  # a clear loss: more calls would only cost more
        if phase in ("serial", "parallel"):
            return self._spent > self._wait
        return total >= TRIAL_S and count >= TRIAL_MIN_CALLS

    def _advance(self, phase, mean):
        """Leave `phase`, if it is still the current one, given its mean call (or None)."""
        if not self._lock.acquire(blocking=False):
            return  # another thread is moving on
        try:
            if self.phase == phase:
                self._enter(self._next(phase, mean))
        finally:
            self._lock.release()

    def _next(self, phase, mean):
        if phase in ("serial", "parallel"):
            return "resample"
        if phase == "rent" and self._rent_threads:
            return "resample"  # its calls had threads: a serial mean on one thread first
        if phase != "trial":  # rent, resample
            self.serial_mean = mean if mean is not None else self._first
            self._check_s = self._spent if phase == "resample" else 0.0
            return "trial"
        self.trials += 1
        self.trial_mean = mean
        least = (self._check_s + self._spent) / CHECK_SHARE
        if mean is not None and self.serial_mean and mean > (1 + MARGIN) * self.serial_mean:
            if not self._lost_last:
                self._lost_last = True
                return "resample"  # confirm it: a fresh serial mean, then a second trial
            self.losses += 1
            self._wait = max(self.retry_s, least)
            self.retry_s, self.recheck_s = min(2 * self.retry_s, MAX_WAIT_S), RECHECK_S
            return "serial"
        self._lost_last = False
        self._wait = max(self.recheck_s, least)
        self.recheck_s, self.retry_s = min(2 * self.recheck_s, MAX_WAIT_S), RETRY_S
        return "parallel"

    def __repr__(self):
        return (f"BuildChoice({self.phase}, serial mean {self.serial_mean}, last trial {self.trial_mean}, "
                f"{self.losses}/{self.trials} trials lost, next waits {self.retry_s}/{self.recheck_s} s)")


_TOP_LOOP = re.compile(r"^    for (\w+) in range\((\d+)\):$")
_LOOP = re.compile(r"^(\s*)for (\w+) in range\((\d+)\):$")
# the blocked accumulation of a long float reduction (emit_cpu): blocks of B over [0, N), each
# block's own loop at most B long
_BLOCKS = re.compile(r"^(\s*)for (\w+) in range\(0, (\d+), (\d+)\):$")
_BLOCK = re.compile(r"^(\s*)for (\w+) in range\((\w+), _rt\.imin\(\3 \+ (\d+), (\d+)\)\):$")
_CONTROL = re.compile(r"^\s*(if .*:|elif .*:|else:)$")
_AUGMENTED = re.compile(r"^(\w+) [-+*/]= [^=]")
_ROW_BUFFER = re.compile(r"^    (\w+) = _rt\.empty\(.*# one row$")
_WRITES_ARGUMENTS = re.compile(r"\bnp\.dot\(|\b_kn\.|\.sort\(|\.fill\(")


_ENABLED = None


def threaded(source):
    """How an emitted module uses Numba's threads: "loops" (parallel loops: the program also
    gets a serial build, compiled first), "blas" (only products whose BLAS blocks run on the
    threads: one build, its serial calls run with one thread, `one_thread()`), or None."""
    if "numba.prange(" in source:
        return "loops"
    if "_kn.matmul_threads(" in source or "_kn.matmul_pool_threads(" in source:
        return "blas"
    return None


class one_thread:
    """Run a call of a "blas" program serially: Numba's thread count for this thread set to one
    for the call (the blocks and their BLAS calls are the same, so are the bits). ~2 us."""

    def __enter__(self):
        import numba

        from . import gemm_pool

        self._n = numba.get_num_threads()
        numba.set_num_threads(1)
        self._pool = gemm_pool.one_thread().__enter__()

    def __exit__(self, *exc):
        import numba

        self._pool.__exit__(*exc)
        numba.set_num_threads(self._n)


def launch_threads():
    """Start Numba's threading runtime (once; Numba's own `_launch_threads`) before machine code
    that runs on it is compiled or loaded from the cache: a cached kernel with a parallel loop
    linked into it (kernels.matmul_threads) references the runtime's symbols, and Numba re-starts
    the runtime only for a cached function whose own pipeline made the loop. Loading such a
    kernel first aborted the process (`LLVM ERROR: Symbol not found: allocate_sched`: a library
    process tiering up to DP-SGD's parallel build)."""
    from numba.np.ufunc import parallel as numba_parallel

    numba_parallel._launch_threads()


def enabled():
    """Whether generated code may use parallel loops in this process (decided once)."""
    global _ENABLED
    if _ENABLED is None:
        _ENABLED = _decide()
    return _ENABLED


def start_tier_up(owner, target, lock):
    """Run `target` (loading or compiling `owner`'s parallel build) in a daemon thread, kept
    as `owner.tier_up_thread`: once per owner, whichever of its calling threads asks first."""
    if owner.tier_up_thread is not None:
        return
    with lock:
        if owner.tier_up_thread is not None:
            return
        owner.tier_up_thread = threading.Thread(target=target, daemon=True,
                                                name=f"omnistage parallel build of {owner.program.name}")
    owner.tier_up_thread.start()


def likely_enabled():
    """enabled() without importing Numba, for a process that runs native libraries only (aot):
    Numba's answer if it is loaded, else the same rule read from the environment, assuming a
    threading layer loads (Numba's wheels bring one). Only BLAS's thread count hangs on it."""
    if "numba" in sys.modules:
        return enabled()
    if os.environ.get("OMNISTAGE_PARALLEL", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    try:
        threads = int(os.environ.get("NUMBA_NUM_THREADS", "").strip() or 0) or len(os.sched_getaffinity(0))
    except (AttributeError, ValueError):
        threads = os.cpu_count() or 1
    return threads >= 2 and os.environ.get("NUMBA_THREADING_LAYER", "").strip().lower() != "workqueue"


def _decide():
    if os.environ.get("OMNISTAGE_PARALLEL", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    from numba.core import config

    if config.NUMBA_NUM_THREADS < 2:
        return False
    layer = str(config.THREADING_LAYER).lower()
    if layer == "workqueue":
        return False  # the user asked for it; we do not put concurrent callers at risk
    if layer in ("omp", "tbb"):
        return True
    # 'default'/'safe'/'threadsafe'/'forksafe': Numba picks tbb, then omp, then workqueue
    return _loads("tbbpool") or (layer != "threadsafe" and _loads("omppool"))


def _loads(pool):
    try:
        __import__(f"numba.np.ufunc.{pool}")
    except Exception:  # not built, or its library (libgomp, tbb) is missing or too old
        return False
    return True


def parallelize(lines):
    """(new lines, whether any loop became parallel) for a finished function body."""
    out, changed, i = [], False, 0
    while i < len(lines):
        m = _TOP_LOOP.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        j = _body_end(lines, i)
        var, extent, body = m.group(1), int(m.group(2)), lines[i + 1:j]
        peeled = _peeled(var, body) if extent == 1 else None
        if peeled is not None:  # its body's loops are the top-level ones now
            lines = lines[:i] + peeled + lines[j:]
            continue
        rewritten = _parallel_loop(out, var, extent, body, lines[j:])
        if rewritten is None:
            out.extend(lines[i:j])
        else:
            out, changed = rewritten, True
        i = j
    return out, changed


def _peeled(var, body):
    """The body of a loop of one iteration, one level out, its index the literal 0; None when
    the body assigns the index. A mapped axis of size 1 (pmap on one device) is the outermost
    loop of every nest over a mapped value: peeled, the nest's next loop is the one split over
    threads (the SPMD MNIST step's weight updates ran on one core)."""
    if any(re.search(rf"\b{var}\b\s*(=[^=]|[-+*/]=)|\bfor\b.*\b{var}\b.*\bin\b", line) for line in body):
        return None
    return [re.sub(rf"\b{var}\b", "0", line[4:] if line.startswith("        ") else line.lstrip()) for line in body]


def static_work(lines):
    """Statements a finished function body runs in all (`_work` of each top-level loop, one per
    other statement), or None when a loop's extent is not a literal or it has a while loop."""
    total, i = 0, 0
    while i < len(lines):
        m = _TOP_LOOP.match(lines[i])
        if m:
            j = _body_end(lines, i)
            work = _work(lines[i + 1:j], int(m.group(2)))
            if work is None:
                return None
            total, i = total + work, j
            continue
        text = lines[i].strip()
        if text.startswith(("for ", "while ")):
            return None
        total += bool(text) and not text.startswith("#")
        i += 1
    return total


def _body_end(lines, i):
    """The index just past the body of the top-level loop whose header is lines[i]."""
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > 1):
        j += 1
    return j


def _indent(line):
    return (len(line) - len(line.lstrip())) // 4


def _parallel_loop(before, var, extent, body, after):
    """`before` plus the parallel form of the loop, or None when it stays serial."""
    work = _work(body, extent)
    if work is None or work < PARALLEL_MIN_WORK or extent < 2:
        return None
    after_text = "\n".join(after)
    private = _row_buffers(before, body, after_text)
    if not _independent(var, body, private, after_text):
        swapped = _interchanged(var, extent, body)
        if swapped is None or not _independent(swapped[0], swapped[2], private, after_text):
            return None
        var, extent, body = swapped
    kept, moved = [], []
    for line in before:
        m = _ROW_BUFFER.match(line)
        if m and m.group(1) in private:
            moved.append("    " + line.replace("_rt.empty(", "np.empty(", 1) + ", per thread")
        else:
            kept.append(line)
    reads, body = _hoist_rank0_reads(body, "\n".join(before + body) + after_text)
    loop = f"    for {var} in numba.prange({extent}):  # parallel: {work} statements over Numba's threads"
    return kept + reads + [loop] + moved + body


def _interchanged(var, extent, body):
    """(inner var, its extent, body) of the loop nest with its two outer loops swapped, or None
    when the body is not reads of the outer index's elements followed by one loop. A
    reduction over the leading axis (`g.sum(0)` of per-example gradients: each iteration adds
    a row into the whole result) is not parallel over that axis but is over the next, where
    each result element still sums the rows in order: the same bits. Only a nest of three
    loops or more is swapped, so the innermost loop still runs along rows (a strided column
    sum does not vectorize). `_independent` decides whether the swapped loop is parallel."""
    at = 0
    while at < len(body) and _indent(body[at]) == 2 and _HOISTED_READ.match(body[at].strip()):
        at += 1
    if at >= len(body):
        return None
    m = _LOOP.match(body[at])
    if not m or _indent(body[at]) != 2 or any(_indent(line) < 3 for line in body[at + 1:] if line.strip()):
        return None
    inner_var, inner_extent = m.group(2), int(m.group(3))
    if inner_extent < 2 or not any(_loop_count(line) is not None for line in body[at + 1:]):
        return None  # a loop must stay below the outer index: the innermost one is not strided
    swapped = [f"        for {var} in range({extent}):"] + ["    " + line for line in body[:at]] + body[at + 1:]
    return inner_var, inner_extent, swapped


# `x = a[_i0]`-like reads that the emitter hoists out of a loop nest's inner loops
_HOISTED_READ = re.compile(r"^\w+ = \w+\[[\w, ]+\]$")


_RANK0_READ = re.compile(r"\b(\w+)\[\(\)\]")


def _hoist_rank0_reads(body, text):
    """(lines reading each 0-d array the loop reads, the body reading those scalars instead).
    Numba's parfor lowering hands a 0-d array to the loop's gufunc as a scalar, where `x[()]`
    no longer types (an opaque rule's rank-0 operand, read in its loop). The loop is
    independent, so it writes none of them."""
    reads = []
    for name in sorted({m.group(1) for line in body for m in _RANK0_READ.finditer(line)}):
        scalar = name + "_s"
        while re.search(rf"\b{scalar}\b", text):
            scalar += "_"
        reads.append(f"    {scalar} = {name}[()]")
        body = [re.sub(rf"\b{name}\[\(\)\]", scalar, line) for line in body]
    return reads, body


def _work(body, extent):
    """Statements the loop runs in all (static extents), or None if an extent is not a literal."""
    total, stack = 0, []  # stack: (indent, product of extents) of the open inner loops
    for line in body:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        depth = _indent(line)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        mult = stack[-1][1] if stack else extent
        count = _loop_count(line)
        if count is not None:
            stack.append((depth, mult * count))
        elif line.lstrip().startswith(("for ", "while ")):
            return None
        else:
            total += mult
    return total


def _loop_count(line):
    """The iterations of a loop header with static extents (at most, for a block's loop), or
    None when the line is not one."""
    m = _LOOP.match(line)
    if m:
        return int(m.group(3))
    m = _BLOCKS.match(line)
    if m:
        return -(-int(m.group(3)) // int(m.group(4)))
    m = _BLOCK.match(line)
    return int(m.group(4)) if m else None


def _row_buffers(before, body, after_text):
    """Row buffers allocated just before the loop that nothing outside it uses: per thread."""
    names = set()
    for line in reversed(before):
        m = _ROW_BUFFER.match(line)
        if not m:
            if _indent(line) == 1 and " = _rt.empty(" in line:
                continue  # other group members' allocations sit between them
            break
        names.add(m.group(1))
    body_text = "\n".join(body)
    return {n for n in names if re.search(rf"\b{n}\b", body_text) and not re.search(rf"\b{n}\b", after_text)}


def _independent(var, body, private, after_text):
    """Whether the iterations of the loop over `var` share nothing they write."""
    written, assigned = set(), set()
    for at, line in enumerate(body):
        text = line.strip()
        if not text or text.startswith("#") or _loop_count(line) is not None or _CONTROL.match(line):
            continue
        if row_passes.is_hint(text):
            continue
        if _WRITES_ARGUMENTS.search(text):
            return False
        updated = _AUGMENTED.match(text)
        if updated:  # `acc += x` reads acc: it must have been assigned in this iteration
            if updated.group(1) not in assigned:
                return False
            continue
        targets = _assignment_targets(text)
        if targets is None:
            return False  # an expression statement or other form we do not reason about
        value = text.split(" = ", 1)[1]
        for kind, name in targets:
            if kind == "store":
                written.add(name)
            elif name not in assigned:
                if re.search(rf"\b{name}\b", "\n".join(body[:at] + [value])):
                    return False  # carried from the previous iteration
                assigned.add(name)
    body_text = "\n".join(body)
    for name in written - private:
        # every subscript's first index is `var`, after the same run of literal zeros (a peeled
        # unit loop's index): distinct iterations touch distinct elements
        uses = re.findall(rf"\b{name}\[((?:0, )*)([^],]*)", body_text)
        if any(u.strip() != var or zeros != uses[0][0] for zeros, u in uses):
            return False
    return not any(re.search(rf"\b{n}\b", after_text) for n in assigned)


def _assignment_targets(text):
    """[("local" | "store", name)] of a one-target assignment statement (names, subscripts of
    names, or a tuple of those), or None for any other statement."""
    try:
        (node,) = ast_threads.parse(text).body
    except (SyntaxError, ValueError):
        return None
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return None
    target = node.targets[0]
    out = []
    for t in target.elts if isinstance(target, ast.Tuple) else [target]:
        if isinstance(t, ast.Name):
            out.append(("local", t.id))
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            out.append(("store", t.value.id))
        else:
            return None
    return out


__all__ = ["enabled", "parallelize", "NJIT_OPTION", "PARALLEL_MIN_WORK", "TIER_UP_S", "BuildChoice"]
