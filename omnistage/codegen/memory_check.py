"""Intermediates too big for this machine, found before a program is compiled.

Generated code allocates every array it stores whole through `_rt.empty((shape), dtype)`, on a
line carrying the user's `file:line` (a value fused into a loop nest is never stored and never
counted). Sizes are static, so an array larger than this machine's memory (physical memory, or
the cgroup's limit when lower) is known when the module is emitted: `check_source` raises
IntermediateTooLargeError naming the value, its shape and dtype and the user's line, instead of
the compiled code failing at run time with a bare MemoryError.

Imports only the standard library and NumPy.
"""
import functools
import os
import re

import numpy as np

_ALLOCATION = re.compile(
    r"^[ \t]*(?P<name>\w+) = _rt\.empty\(\((?P<shape>[^)]*)\), np\.(?P<dtype>\w+)\)(?:[ \t]*#[ \t]*(?P<where>[^\n]*))?$",
    re.M,
)


class IntermediateTooLargeError(MemoryError):
    """A program needs an array larger than this machine's memory (a MemoryError)."""


@functools.lru_cache(maxsize=None)
def memory_limit():
    """Bytes of memory this process could ever hold: physical memory, or the cgroup (v2 or
    v1) limit when that is lower; None when unknown."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:  # "max" or a huge number: no limit
            limits.append(int(text))
    return min(limits) if limits else None


def _size_text(nbytes):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.1f} {unit}" if unit != "bytes" else f"{int(nbytes)} bytes"
        nbytes /= 1024


def check_source(source, program_name, limit=None):
    """Raise IntermediateTooLargeError if generated `source` allocates an array larger than
    `limit` bytes (default: memory_limit())."""
    limit = memory_limit() if limit is None else limit
    if limit is None:
        return
    for match in _ALLOCATION.finditer(source):
        try:
            shape = tuple(int(d) for d in match["shape"].split(",") if d.strip())
            itemsize = np.dtype(match["dtype"]).itemsize
        except (ValueError, TypeError):
            continue  # not a literal shape: nothing known before run time
        nbytes = int(np.prod(shape, dtype=object)) * itemsize
        if nbytes > limit:
            where = f" made at {match['where'].strip()}" if match["where"] else ""
            raise IntermediateTooLargeError(
                f"omnistage: the program {program_name!r} stores an intermediate value "
                f"{match['name']!r} of shape {shape} and dtype {match['dtype']} "
                f"({_size_text(nbytes)}){where}: more memory than this machine has "
                f"({_size_text(limit)}). Compute it in pieces (lax.map or lax.fori_loop over "
                f"blocks), or reduce it in the same expression that makes it (a value fused "
                f"into its consumer is never stored whole)."
            )
