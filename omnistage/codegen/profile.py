"""OMNISTAGE_PROFILE=1: where a compiled CPU program spends its time, statement by statement.

With the variable set, `instrument` rewrites each generated module's entry function: before
every group of lines that starts a program statement (the lines carrying the user's
`file:line` comment; fused loop nests and BLAS calls are one group each) it stores the CPU's
cycle counter (profile_clock.cycles: a few nanoseconds) into a local array, and
before the return it hands the array to `record` in one `with numba.objmode():` block (a switch
into the interpreter, ~0.1 ms, per call, outside every group). At exit (or when `report()` is
called) the groups that took the most time are printed on stderr, per program: time per call,
share of the program's time, the user's line, the names the group assigns and its kind.
Cycles become seconds by a calibration against time.perf_counter (once per process).

The instrumented module is another text, so it is cached apart from the uninstrumented one and
never replaces it. Control-flow bodies are timed as the one statement that calls them.
"""
import atexit
import hashlib
import os
import re
import sys
import time

import numpy as np

_LOC = re.compile(r"  # ([^#\n]*?:\d+)(?=  #|$)")
_ASSIGN = re.compile(r"^    (\w+(?:, \w+)*) = ")
_TOP = "    "

_programs = {}  # key -> {"name", "labels", "seconds", "calls"}
_registered = False
_seconds_per_cycle = None


def enabled():
    return os.environ.get("OMNISTAGE_PROFILE", "").strip().lower() not in ("", "0", "false", "no", "off")


def instrument(source, fn_name):
    """`source` (a generated module) with timer marks in each of its functions: the entry
    `fn_name` and the control-flow bodies it calls (each reported on its own)."""
    lines = source.split("\n")
    base = hashlib.sha256(_LOC.sub("", source).encode()).hexdigest()
    starts = [i for i, line in enumerate(lines) if line.startswith("def ") and lines[i - 1].startswith(("@numba.njit", "@called_by_pointer"))]
    out, done = [], 0
    for start in starts:
        end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
        name = lines[start][4:lines[start].index("(")]
        key = int(hashlib.sha256(f"{base}:{name}".encode()).hexdigest()[:12], 16)
        out += lines[done:start - 1]
        out.append(lines[start - 1].replace("nogil=True, ", ""))  # objmode takes the GIL itself
        out.append(lines[start])
        out += _instrumented_body(lines[start + 1:end], key, name if name == fn_name else f"{fn_name}/{name}")
        done = end
    out += lines[done:]
    imports_end = max(i for i, ln in enumerate(out[:starts[0]]) if ln.startswith(("import ", "from "))) + 1
    out[imports_end:imports_end] = ["from omnistage.codegen import profile as _prof",
                                    "from omnistage.codegen.profile_clock import cycles as _prof_cycles"]
    _register()
    return "\n".join(out)


def _instrumented_body(body, key, name):
    groups = _groups(body)
    out = [f"{_TOP}_prof_t = np.empty({len(groups)}, np.int64)"]
    for k, group in enumerate(groups):
        out.append(f"{_TOP}_prof_t[{k}] = _prof_cycles()")
        if k == len(groups) - 1:
            out += [f"{_TOP}with numba.objmode():", f"{_TOP}    _prof.record({key}, _prof_t)"]
        out += group
    labels = [_label(g) for g in groups]
    _programs[key] = {"name": name, "labels": labels, "seconds": [0.0] * len(labels), "calls": 0}
    return out


def _groups(body):
    """The entry body split where a top-level line carries a provenance comment, and before
    the final return (its mark closes the last group)."""
    groups = [[]]
    for line in body:
        top = line.startswith(_TOP) and not line.startswith(_TOP + " ")
        if top and groups[-1] and (_LOC.search(line) or line.startswith(_TOP + "return ")):
            groups.append([])
        groups[-1].append(line)
    return [g for g in groups if g]


def _label(group):
    loc = next((m.group(1) for m in map(_LOC.search, group) if m), "")
    names = [m.group(1) for m in map(_ASSIGN.match, group) if m]
    what = []
    if any(re.search(r"\b_kn\.matmul\w*\(", line) for line in group):
        what.append("BLAS")
    if any("prange(" in line for line in group):
        what.append("parallel loop")
    elif any(line.lstrip().startswith("for ") for line in group):
        what.append("loop")
    if group[0].startswith(_TOP + "return "):
        names = ["return"]
    text = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return f"{loc:24s} {text}" + (f"  [{', '.join(what)}]" if what else "")


def record(key, stamps):
    """Called by instrumented code before it returns: `stamps[k]` is the cycle count when
    group k began; the last group (the return) is not timed."""
    prog = _programs.get(key)
    if prog is None:
        return
    scale = _calibrate()
    deltas = np.diff(np.asarray(stamps)) * scale
    for k, d in enumerate(deltas):
        prog["seconds"][k] += float(d)
    prog["calls"] += 1


def _calibrate():
    global _seconds_per_cycle
    if _seconds_per_cycle is None:
        from .profile_clock import read_cycles

        read_cycles()  # compiled before the clock starts
        c0, t0 = read_cycles(), time.perf_counter()
        time.sleep(0.05)
        c1, t1 = read_cycles(), time.perf_counter()
        _seconds_per_cycle = (t1 - t0) / (c1 - c0) if c1 > c0 else 0.0
    return _seconds_per_cycle


def report(file=None, top=15):
    """Print each profiled program's most expensive statement groups."""
    file = file or sys.stderr
    for prog in _programs.values():
        total = sum(prog["seconds"])
        if not prog["calls"] or total <= 0:
            continue
        print(f"\nomnistage profile: {prog['name']}, {prog['calls']} calls, {total * 1e3 / prog['calls']:.3f} ms "
              f"per call in {len(prog['labels'])} statement groups", file=file)
        order = sorted(range(len(prog["labels"])), key=lambda i: -prog["seconds"][i])[:top]
        for i in order:
            s = prog["seconds"][i]
            print(f"  {s * 1e3 / prog['calls']:9.3f} ms {100 * s / total:5.1f}%  #{i:<4d} {prog['labels'][i]}", file=file)


def reset():
    for prog in _programs.values():
        prog["seconds"] = [0.0] * len(prog["seconds"])
        prog["calls"] = 0


def _register():
    global _registered
    if not _registered:
        _registered = True
        atexit.register(report)
