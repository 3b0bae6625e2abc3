"""The native tier's optimized builds, compiled in the background while a quick build answers.

Why: a program's first call waits for its C compile, and `-O2` (loop vectorization above all)
takes 1.5-3x as long as `-O1`: mnist_classifier_fromscratch's update 0.24 vs 0.15 s, the
differentially private SGD step 2.4 vs 0.8 s. So c_tier compiles a program's first build with
`-O1` (c_tier.QUICK; a module under c_tier.QUICK_LINES lines with the loop vectorizer too,
c_tier.QUICK_VECTORIZED), answers with it, and hands the same C to a helper process here, which
compiles it with c_tier.FLAGS and publishes that library under the program's key; the process
then switches to it between two calls (aot.AotProgram.adopt_optimized), and runs its products
and loops on one thread until then, leaving the helper a core. A program whose whole run is a
few thousand statements (c_tier.SMALL_WORK) keeps its -O1 build.

Bits: the two builds are the same C under the same floating-point rules (no contraction, no
reassociation, no fast math), so they compute the same values; an optimization level changes
how, never what. The one exception GCC knows is its SLP pattern that fuses a multiply-subtract
and a multiply-add in adjacent lanes into `vfmaddsub`/`vfmsubadd` whatever -ffp-contract says:
the helper compiles to assembly first, and where it finds one it compiles without
vectorization instead (scalar code has no such pattern); so does a quick build that
vectorizes. So a program's results do not depend
on which build ran a call, nor on when the optimized one arrived.

The helper (`main`, one per process, started on the first request) reads requests (the key,
the C text, the record's fields), each from a private file whose name and SHA-256 come down its
input, checked before use; it takes each key's build lock (a key another process
is building, or has built, is skipped), compiles on CPU time nobody else wants (SCHED_IDLE, as
the library builder), publishes (deleting the quick build's record and library, which nothing
else names), and writes the key back on its output with the outcome. A
process that exits first leaves it to finish its queue in its own session: the next process finds the optimized
library. A quick library loaded from the cache (its process exited before the helper finished,
or the helper failed) asks for its optimized build again.

`OMNISTAGE_C_BACKGROUND=0` compiles the optimized build at once, as before (the test suite
does: it tests the code a program runs at steady state).
"""
import atexit
import contextlib
import hashlib
import json
import os
import sys
import threading
import weakref

from . import aot, aot_trust, disk_cache

_IDLE_EXIT_S = 30.0  # the helper leaves after this long without a request
_lock = threading.Lock()
_helper = None  # the helper process, once started
_waiting = {}  # key -> [weak references to the AotPrograms to switch once it is published]
_done = set()  # keys the helper published
_asking = []  # the threads handing requests over (`optimize`), joined at exit
_working = [0]  # builds running on this process's threads (`working`: op_tier's fused builds)


# idle-scheduled before it imports anything: it starts while the quick build compiles
_HELPER = ("import os, sys\n"
           "try:\n    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
           "except (AttributeError, OSError):\n    pass\n"
           "from omnistage.codegen import c_background\nsys.exit(c_background.main())\n")


def enabled():
    return os.environ.get("OMNISTAGE_C_BACKGROUND", "1").strip().lower() not in ("0", "false", "no", "off")


def request(key, source, fields):
    """Have the optimized build of `source` compiled and published under `key` (c_tier asks
    once the quick build answers, through `optimize`). False when no helper could be started
    (the quick build then runs on)."""
    global _helper
    import subprocess  # (here, as tempfile: the op tier imports this module on a first call that requests nothing)
    import tempfile

    with _lock:
        if key in _waiting or key in _done:
            return True  # already asked for
        _waiting[key] = []
        if _helper is None or _helper.poll() is not None:
            try:
                _helper = subprocess.Popen(
                    [sys.executable, "-c", _HELPER],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None if os.environ.get("OMNISTAGE_AOT_DEBUG") else subprocess.DEVNULL,
                    text=True, env=dict(os.environ, OMNISTAGE_CACHE_DIR=disk_cache.cache_dir()),
                    cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    start_new_session=True)  # may outlive us: it finishes its queue on its own
            except OSError:
                del _waiting[key]
                return False
            threading.Thread(target=_listen, args=(_helper,), daemon=True, name="omnistage optimized builds").start()
        try:
            # the request (a C text of 50-500 KB) goes through a private file, its name and hash
            # through the pipe: a pipe holds 64 KB, and the helper reads while it compiles only
            # between builds (writing the text there blocked a first call 110 ms, and a process
            # exiting right after its first calls lost what was still unwritten)
            text = json.dumps({"key": key, "source": source, "fields": fields})
            fd, path = tempfile.mkstemp(prefix="omnistage-build-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            _helper.stdin.write(f"{path} {hashlib.sha256(text.encode()).hexdigest()}\n")
            _helper.stdin.flush()
        except (OSError, ValueError):  # the helper is gone: the quick build runs on
            del _waiting[key]
            return False
    return True


def optimize(key, source, fields, program_object):
    """Have the optimized build of `source` compiled and `program_object` (its quick build,
    now answering) switched to it once published, from a thread of its own: starting the helper
    and handing it the request took 5-20 ms of a 100 ms first call here (a fork beside the
    quick build's exiting compiler), which the caller need not wait for. `optimizing` is set at
    once, so a caller sees the build as underway until it is adopted or given up."""
    program_object.optimizing = True

    def ask():
        try:
            # (attach sets the flag under the lock when it queues the program; assigning its
            # answer here could overwrite the False an adoption had set meanwhile)
            if not (request(key, source, fields) and attach(key, program_object)):
                program_object.optimizing = False
        finally:
            with _lock:
                _asking.remove(threading.current_thread())

    thread = threading.Thread(target=ask, daemon=True, name="omnistage optimized build request")
    with _lock:
        _asking.append(thread)
    thread.start()


def _finish_asking():
    """At exit: let the requests still being handed over reach the helper (it finishes its
    queue after this process is gone), a few ms each."""
    with _lock:
        threads = list(_asking)
    for thread in threads:
        thread.join(timeout=2.0)


atexit.register(_finish_asking)


def attach(key, program_object):
    """Switch `program_object` (an aot.AotProgram running the quick build of what `key` names)
    to the optimized build once it is published, or now if it is; whether it will be."""
    with _lock:
        waiting = _waiting.get(key)
        if waiting is not None:
            waiting.append(weakref.ref(program_object))
            program_object.optimizing = True  # (before _listen can pop it: it clears the flag after)
            return True
        if key not in _done:
            return False
    program_object.adopt_optimized(key)
    return False


@contextlib.contextmanager
def working():
    """Count a build running on one of this process's threads as pending while the block runs."""
    with _lock:
        _working[0] += 1
    try:
        yield
    finally:
        with _lock:
            _working[0] -= 1


def pending():
    """Whether an optimized build this process asked for is still being compiled or handed
    over (or a build `working` counts is still running)."""
    with _lock:
        return _working[0] > 0 or bool(_asking) or (bool(_waiting) and _helper is not None and _helper.poll() is None)


def _listen(helper):
    """Switch the programs waiting for each key the helper reports built ("<key> ok"); those
    it could not build ("failed", or "busy": another process's helper has it) run on."""
    for line in helper.stdout:
        key, _, outcome = line.strip().partition(" ")
        with _lock:
            waiting = _waiting.pop(key, [])
            if outcome == "ok":
                _done.add(key)
        for ref in waiting:
            program_object = ref()
            if program_object is not None:
                if outcome == "ok":
                    program_object.adopt_optimized(key)
                else:
                    program_object.optimizing = False
    with _lock:  # the helper is gone: what it did not report stays on its quick build, not alone
        left = [ref() for refs in _waiting.values() for ref in refs] if _helper is helper else []
        if _helper is helper:
            _waiting.clear()
    for program_object in left:
        if program_object is not None:
            program_object.optimizing = False


def _read_request(line):
    """The request a line names ("<file> <sha256>"), read and deleted; None unless its bytes
    have that hash (the C in it becomes a library other processes load)."""
    path, _, digest = line.strip().partition(" ")
    try:
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != digest:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def main(requests=None):
    """The helper: compile and publish each request's optimized build (JSON lines on stdin)."""
    from . import c_tier

    aot.yield_the_cpus()
    out = sys.stdout
    for line in aot_trust.requests_until_idle(requests or sys.stdin, _IDLE_EXIT_S):
        job = _read_request(line)
        if job is None:
            continue
        key = job["key"]
        with aot_trust.build_lock(key) as mine:
            if not mine:
                outcome = "busy"
            else:
                try:
                    built = aot.published(key) or c_tier.build_optimized(key, job["source"], job["fields"])
                except Exception:  # noqa: BLE001 - an unwritable cache, a vanished compiler: the quick build runs on
                    built = False
                outcome = "ok" if built else "failed"
        if out is not None:
            try:
                out.write(f"{key} {outcome}\n")
                out.flush()
            except (OSError, ValueError):  # our process exited: the rest of the queue is still built
                out = None
    return 0
