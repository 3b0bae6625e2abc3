"""The host functions that staged programs call back (`omnistage.pure_callback`), by key.

A staged statement names its callback by a string key (a literal parameter, so printed programs
stay Python and a program's identity, its cache key, does not depend on object ids): the
function's qualified name and a number that tells apart different functions with that name.
The same function (the same code with the same closure contents, defaults and bound object)
gets the same key on every trace, so a retrace produces the same program and reuses its
compiled code. The registry holds the functions for the life of the process: a compiled program
may call one long after the code that made it is gone. Compiled code looks the key up at run
time in this process's registry, so a program loaded from the on-disk cache calls this
process's function.

Also: the callbacks the batching rule derives (`sequential`: one call per example).
Imports numpy only.
"""
import threading

import numpy as np

_lock = threading.Lock()
_by_key = {}  # key -> host function (flat: array leaves in, list of arrays out)
_key_of = {}  # identity of a function (see _identity) -> key
_count = {}  # qualified name -> how many keys it has
_keep = []  # the functions whose identity uses ids of objects they hold


def _identity(fn, extra):
    """What makes two function objects the same callback: code, closure contents, defaults,
    bound object (by id: _keep keeps them alive, so the ids stay unique) and `extra`."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ("object", id(fn), extra)
    cells = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            cells.append(id(cell.cell_contents))
        except ValueError:  # an empty cell
            cells.append(None)
    return ("function", code, tuple(cells), id(getattr(fn, "__defaults__", None)),
            id(getattr(fn, "__kwdefaults__", None)), id(getattr(fn, "__self__", None)), extra)


def register(fn, flat, extra=()):
    """The key under which `flat` (the host function the program calls, made from the user's
    `fn` and the hashable `extra`: argument and result structure) is registered."""
    identity = _identity(fn, extra)
    with _lock:
        key = _key_of.get(identity)
        if key is None:
            name = getattr(fn, "__qualname__", None) or type(fn).__name__
            n = _count.get(name, 0)
            _count[name] = n + 1
            key = f"{name}#{n}"
            _key_of[identity] = key
            _by_key[key] = flat
            _keep.append(fn)
        return key


def derive(key, kind, make):
    """The key of a callback derived from `key`'s (`make(original)`), registered once."""
    new = f"{key}|{kind}"
    with _lock:
        if new not in _by_key:
            _by_key[new] = make(_by_key[key])
    return new


def lookup(key):
    try:
        return _by_key[key]
    except KeyError:
        raise RuntimeError(
            f"host callback {key!r} is not registered in this process: a program that calls back into "
            f"Python must be traced in the process that runs it") from None


def sequential(fn, batched, size):
    """A callback running `fn` once per example: operands whose `batched` flag is set carry the
    examples on axis 0; results are stacked on axis 0."""
    def run(*values):
        per_example = []
        for i in range(size):
            per_example.append(fn(*[v[i] if b else v for v, b in zip(values, batched)]))
        if not per_example:
            return None  # size 0: the caller builds empty results
        return [np.stack(outs) for outs in zip(*per_example)]

    return run


__all__ = ["register", "derive", "lookup", "sequential"]
