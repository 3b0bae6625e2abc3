"""Intermediates too big for this machine, found before a program is compiled.

Generated code allocates every array it stores whole through `_rt.empty((shape), dtype)`, on a
line carrying the user's `file:line` (a value fused into a loop nest is never stored and never
counted). Sizes are static, so an array larger than this machine's memory (core.memory_limit:
physical memory, or the cgroup's limit when lower) is known when the module is emitted:
`check_source` raises IntermediateTooLargeError naming the value, its shape and dtype and the
user's line, instead of the compiled code failing at run time with a bare MemoryError. Eager
operations and the NumPy interpreter check their arrays the same way (core.memory_limit).

Imports only the standard library, NumPy and core.
"""
import re

import numpy as np

from ..core.memory_limit import IntermediateTooLargeError, memory_limit, too_large_message

__all__ = ["IntermediateTooLargeError", "check_source", "memory_limit"]

_ALLOCATION = re.compile(
    r"^[ \t]*(?P<name>\w+) = _rt\.empty\(\((?P<shape>[^)]*)\), np\.(?P<dtype>\w+)\)(?:[ \t]*#[ \t]*(?P<where>[^\n]*))?$",
    re.M,
)


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
            raise IntermediateTooLargeError(too_large_message(
                f"the program {program_name!r} stores an intermediate value {match['name']!r}",
                shape, match["dtype"], nbytes, limit, (match["where"] or "").strip() or None))
