"""Saying what the compiler is doing, on stderr.

- By default, a compile still running after SLOW_S seconds says so once (which function, how
  big), so a user waiting on a first call knows why;
- `OMNISTAGE_LOG_COMPILES=1` (or `config.update("jax_log_compiles", True)`, as in JAX) also
  logs every compile when it ends: its time and whether the machine code came from a cache;
- `OMNISTAGE_LOG_COMPILES=0` says nothing.

Imports only the standard library; executables report what they know (the generated module's
size, cache hit or miss) through `note_source` and their `cache_status` attribute.
"""
import ast
import contextlib
import os
import sys
import threading
import time

from ..staging.ast_walk import walk

SLOW_S = 2.0  # a compile running longer than this says so (once)

_current = threading.local()  # the compile this thread is running: a _Compile


def _mode(config_flag):
    """'off', 'slow' (the default: only compiles past SLOW_S) or 'all'."""
    env = os.environ.get("OMNISTAGE_LOG_COMPILES", "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return "off"
    if env in ("1", "true", "yes", "on") or config_flag:
        return "all"
    return "slow"


def statement_count(program):
    """The primitive statements of `program`, control-flow bodies included."""
    return sum(isinstance(node, ast.Assign) for node in walk(program.fn))


class _Compile:
    __slots__ = ("name", "program", "lines", "said_slow")

    def __init__(self, name, program):
        self.name, self.program, self.lines, self.said_slow = name, program, None, False

    def size(self):
        """(counted when said: most compiles end before anything is said)"""
        lines = f", {self.lines} lines of generated code" if self.lines else ""
        return f"{statement_count(self.program)} statements{lines}"


def _say(text):
    try:
        sys.stderr.write(f"omnistage: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr must not break the compile
        pass


def _still_running(record):
    record.said_slow = True
    _say(f"compiling {record.name!r} ({record.size()}) is taking more than {SLOW_S:g} s; the "
         f"result is cached for later calls and processes (OMNISTAGE_LOG_COMPILES=0 silences this, "
         f"=1 logs every compile)")


@contextlib.contextmanager
def compiling(program, config_flag=False, quiet=False):
    """Around one compile of `program`; yields a callable that is given the executable when it
    is built, for the closing log line (`cache_status`). `quiet`: a compile that is not the
    user's (an eager jnp function's program) is not logged."""
    mode = "off" if quiet else _mode(config_flag)
    if mode == "off":
        yield lambda executable: None
        return
    record = _Compile(getattr(program, "debug_name", None) or program.name, program)
    outer, _current.record = getattr(_current, "record", None), record
    timer = threading.Timer(SLOW_S, _still_running, (record,))
    timer.daemon = True
    built = []
    start = time.perf_counter()
    timer.start()
    try:
        yield built.append
    finally:
        timer.cancel()
        _current.record = outer
    if mode == "all":
        status = getattr(built[0], "cache_status", None) if built else None
        _say(f"compiled {record.name!r} ({record.size()}) in {time.perf_counter() - start:.2f} s"
             + (f": {status}" if status else ""))


def note_source(source):
    """Tell the compile running in this thread how big its generated module is."""
    record = getattr(_current, "record", None)
    if record is not None:
        record.lines = source.count("\n")
