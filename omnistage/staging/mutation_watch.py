"""Side effects on Python objects inside staged branches and loop bodies, caught at the construct.

A traced `if` stages both branches once, whatever the condition; a traced loop stages its body
once, not once per iteration. A branch that appends to a Python list (or sets a dict item or an
object attribute) therefore changes it on every trace, and a traced value it stores there belongs
to the branch's finished trace: it fails later, far away, when printed or used. `MutationWatch`
takes shallow snapshots of the lists, dicts, sets and plain objects reachable from the enclosing
function's locals (two levels: `out`, `self.cache`) before the construct is staged, and after it
raises one error that names the construct's line, the changed variable, and how to fix it.

Owns: `MutationWatch`, `TracedSideEffectError`. Imports core only.
"""
import types

from ..core import errors, tree_util
from ..core.tracer import Tracer

_DEPTH = 2  # `out` and `self.cache`: the containers a branch body reaches through a local
_SKIP_TYPES = (type, types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType)
_SKIP_PACKAGES = ("omnistage", "numpy", "builtins")


class TracedSideEffectError(errors.TracerBoolConversionError):
    """A branch or loop body under a traced condition changed a Python list, dict, set or object."""


class MutationWatch:
    """Shallow snapshots of the mutable Python objects reachable from `state` (a `locals()`)."""

    def __init__(self, state):
        self._snaps = []
        seen = set()
        for name, value in state.items():
            self._add(name, value, 1, seen)

    def _add(self, path, value, depth, seen):
        contents = _contents(value)
        if contents is None or id(value) in seen:
            return
        seen.add(id(value))
        self._snaps.append((path, value, contents))
        if depth < _DEPTH:
            for key, item in _items(value, contents):
                self._add(_child_path(path, value, key), item, depth + 1, seen)

    def changed(self):
        """(path, object, new items) of the first object whose contents changed, or None. An
        object's attributes count only when a traced value was stored: a lazily computed
        attribute (functools.cached_property) is no error, `self.y = traced` is."""
        for path, value, before in self._snaps:
            after = _contents(value)
            if not _same(before, after):
                new = _new_items(before, after)
                if isinstance(value, (list, dict, set)) or any(_holds_tracer(x) for x in new):
                    return path, value, new
        return None

    def check(self, rt, construct, line, cause=None):
        """Raise TracedSideEffectError (from `cause`) if anything changed."""
        found = self.changed()
        if found is not None:
            raise TracedSideEffectError(_message(rt, construct, line, *found)) from cause


def _contents(value):
    """A shallow copy to compare with later (identity of items), or None if not watched."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, set):
        return set(value)
    if isinstance(value, (Tracer,) + _SKIP_TYPES) or type(value).__module__.split(".")[0] in _SKIP_PACKAGES:
        return None
    attrs = getattr(value, "__dict__", None)
    return dict(attrs) if isinstance(attrs, dict) else None


def _items(value, contents):
    if isinstance(value, list):
        return enumerate(contents)
    if isinstance(value, set):
        return ()
    return contents.items()


def _child_path(path, value, key):
    if isinstance(value, (list, dict)):
        return f"{path}[{key!r}]"
    return f"{path}.{key}"


def _same(before, after):
    if isinstance(before, set):
        return before == after  # set items are hashable, so comparable
    if len(before) != len(after):
        return False
    if isinstance(before, list):
        return all(a is b for a, b in zip(before, after))
    return before.keys() == after.keys() and all(before[k] is after[k] for k in before)


def _new_items(before, after):
    if isinstance(before, list):
        return [x for x in after if not any(x is y for y in before)]
    if isinstance(before, dict):
        return [v for k, v in after.items() if k not in before or before[k] is not v]
    return list(after - before)


def _holds_tracer(value):
    return any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(value))


_KIND = {list: "list", dict: "dict", set: "set"}

_FIX = {
    "if": ("both of its branches are staged once, whatever the condition, so a change to a Python "
           "object inside one cannot depend on the condition. Compute the value in the `if` and "
           "assign it to a variable in both branches (or use jnp.where), then change {name} after "
           "the `if`."),
    "loop": ("its body is staged once, not run once per iteration, so a change to a Python object "
             "inside it cannot happen per iteration. Carry the values in loop variables (or collect "
             "them with lax.scan), then change {name} after the loop."),
}


def _message(rt, construct, line, path, value, new_items):
    kind = next((k for t, k in _KIND.items() if isinstance(value, t)), f"{type(value).__name__} object")
    leaves = [leaf for x in new_items for leaf in tree_util.tree_leaves(x)]
    made = next((x for x in leaves if isinstance(x, Tracer) and x._loc is not None), None)
    holds = f" (it now holds a traced value computed at {made._loc.short})" if made is not None else ""
    fix = _FIX["if" if "if" in construct else "loop"].format(name=f"`{path}`")
    traced = "range" if "for" in construct else "condition"
    return (
        f"The {construct} at {rt.short(line)} has a traced {traced} and changed the {kind} "
        f"`{path}`{holds}: list.append, d[k] = v and obj.attr = v inside it are Python side "
        f"effects, and {fix}\n{rt.where(line)}"
    )


__all__ = ["MutationWatch", "TracedSideEffectError"]
