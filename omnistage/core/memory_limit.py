"""Arrays too big for this machine, refused before they are allocated.

An array larger than this process could ever hold (physical memory, or the cgroup's limit
when lower) cannot be computed: NumPy raises a bare MemoryError with no line of the user's
code, and with memory overcommit a fill may instead get the process killed. Shapes are known
before anything is allocated, so each place that makes arrays asks first: an eager operation
(core.primitive.eager_apply, with the user's line), and a compiled program's stored
intermediates (codegen.memory_check, with the statement's provenance). Both raise
IntermediateTooLargeError worded by `too_large_message`.

Imports only the standard library, NumPy and core.source_info.
"""
import functools
import math
import os

import numpy as np

from .source_info import user_loc


class IntermediateTooLargeError(MemoryError):
    """An array larger than this machine's memory was asked for (a MemoryError)."""


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


def size_text(nbytes):
    """`nbytes` for people: '7.3 TiB'."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.1f} {unit}" if unit != "bytes" else f"{int(nbytes)} bytes"
        nbytes /= 1024


FIX = ("Compute it in pieces (lax.map or lax.fori_loop over blocks), or reduce it in the same "
       "expression that makes it (under jit, a value fused into its consumer is never stored "
       "whole).")


def too_large_message(subject, shape, dtype, nbytes, limit, where=None):
    """The one wording: `subject` ('the program 'f' stores an intermediate value 'y'') of
    `shape` and `dtype`, where it is made, the sizes and how to fix it."""
    at = f" made at {where}" if where else ""
    return (f"omnistage: {subject} of shape {tuple(shape)} and dtype {np.dtype(dtype).name} "
            f"({size_text(nbytes)}){at}: more memory than this machine has "
            f"({size_text(limit)}). {FIX}")


def nbytes_of(shape, dtype):
    return math.prod(shape) * np.dtype(dtype).itemsize


def check_eager(prim_name, avals):
    """Raise IntermediateTooLargeError if an eager `prim_name` would make an output (of
    `avals`) larger than the machine, naming the user's line."""
    limit = memory_limit()
    if limit is None:
        return
    for aval in avals:
        nbytes = math.prod(aval.shape) * aval.dtype.itemsize
        if nbytes > limit:
            loc = user_loc()
            message = too_large_message(f"the operation {prim_name!r} makes an array", aval.shape,
                                        aval.dtype, nbytes, limit, loc and loc.site)
            if loc is not None:
                message += f"\nThe error occurred at this line of your code:\n{loc.describe()}"
            raise IntermediateTooLargeError(message)
