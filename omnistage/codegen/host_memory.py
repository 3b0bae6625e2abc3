"""The process's malloc settings, tuned once when the first CPU program is compiled.

Compiled programs allocate their results and temporaries with malloc on every call. glibc
serves blocks over its mmap threshold (dynamic, from 128 KiB) with fresh mappings and hands
freed memory at the top of the heap back to the system past its trim threshold, so a program
with a few multi-MiB temporaries maps, faults in and unmaps them on every call: measured here,
a 1M-element `random.uniform` took 4.5 ms instead of 0.9 ms, almost all of it in the kernel.
Serving blocks up to MMAP_THRESHOLD from the heap and keeping up to TRIM_THRESHOLD of free
memory lets the next call reuse the same pages, as XLA's and PyTorch's caching allocators do.
The cost: a process may keep up to TRIM_THRESHOLD of freed memory.

Only glibc has `mallopt`; elsewhere, or with `OMNISTAGE_MALLOC_TUNING=0`, or when the user set
glibc's own MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_, nothing is changed.
"""
import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20

_tuned = None  # None: not tried yet; then whether the settings were applied


def tune():
    """Apply the settings (once per process); returns whether they are in effect."""
    global _tuned
    if _tuned is None:
        _tuned = _apply()
    return _tuned


def _apply():
    if os.environ.get("OMNISTAGE_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False  # the user's own glibc settings win
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
