"""OMNISTAGE_PROFILE=1: where a compiled CPU program spends its time, statement by statement.

With the variable set, `instrument` rewrites each generated module's entry function: before
every group of lines that starts a program statement (the lines carrying the user's
`file:line` comment; fused loop nests and BLAS calls are one group each) it inserts a timer
mark, a `with numba.objmode():` call of `mark` (Python's clock: generated code has none of its
own). A mark adds the time since the previous mark to the previous group. At exit (or when
`report()` is called) the groups that took the most time are printed on stderr, per program:
seconds, share of the program's time, the user's line and the names the group assigns.

The marks cost a few microseconds each (a switch into the interpreter and back), counted in the
group before them; programs of many tiny statements look slower than they are. The instrumented
module is another text, so it is cached apart from the uninstrumented one and never replaces
it. Control-flow bodies are timed as the one statement that calls them. Imports only the
standard library and NumPy (generated modules import it).
"""
import atexit
import hashlib
import os
import re
import sys
import time

_LOC = re.compile(r"  # ([^#\n]*?:\d+)(?=  #|$)")
_ASSIGN = re.compile(r"^    (\w+(?:, \w+)*) = ")
_TOP = "    "

_programs = {}  # key -> {"name", "labels", "seconds", "calls"}
_state = {}  # key -> (index of the group running, its start time)
_registered = False


def enabled():
    return os.environ.get("OMNISTAGE_PROFILE", "").strip().lower() not in ("", "0", "false", "no", "off")


def instrument(source, fn_name):
    """`source` (a generated module) with timer marks in its entry function `fn_name`."""
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {fn_name}("))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
    body = lines[start + 1:end]
    key = int(hashlib.sha256(_LOC.sub("", source).encode()).hexdigest()[:12], 16)
    labels, out = [], []
    for k, group in enumerate(_groups(body)):
        labels.append(_label(group))
        out += [f"{_TOP}with numba.objmode():", f"{_TOP}    _prof.mark({key}, {k})"] + group
    decorator = lines[start - 1].replace("nogil=True, ", "")  # objmode takes the GIL itself
    head = [ln for ln in lines[:start - 1]]
    imports_end = max(i for i, ln in enumerate(head) if ln.startswith(("import ", "from "))) + 1
    head.insert(imports_end, "from omnistage.codegen import profile as _prof")
    _programs[key] = {"name": fn_name, "labels": labels, "seconds": [0.0] * len(labels), "calls": 0}
    _register()
    return "\n".join(head + [decorator, lines[start]] + out + lines[end:])


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
    if any("np.dot(" in line for line in group):
        what.append("BLAS")
    if any("prange(" in line for line in group):
        what.append("parallel loop")
    elif any(line.lstrip().startswith("for ") for line in group):
        what.append("loop")
    if group[0].startswith(_TOP + "return "):
        names = ["return"]
    text = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return f"{loc:24s} {text}" + (f"  [{', '.join(what)}]" if what else "")


def mark(key, k):
    """Called by instrumented code before group `k`: the previous group ends now."""
    now = time.perf_counter()
    prog = _programs.get(key)
    if prog is None:
        return
    running = _state.get(key)
    if running is not None and k > running[0]:
        prog["seconds"][running[0]] += now - running[1]
    if k == 0:
        prog["calls"] += 1
    last = len(prog["labels"]) - 1
    _state[key] = (k, now) if k < last else None


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
    _state.clear()


def _register():
    global _registered
    if not _registered:
        _registered = True
        atexit.register(report)
