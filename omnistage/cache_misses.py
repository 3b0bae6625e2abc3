"""`explain_cache_misses`: when a `jit` call traces again, log why (as JAX's flag does): which
part of the cache key differs from the closest key the function was traced for before.

A key is (options, config epoch, thread-local config overrides, static arguments, pytree
structure, argument avals) (api.JitFunction._key). Logged at WARNING on the "omnistage" logger.
"""
import logging

from .core.source_info import user_loc

_FIELDS = ("jit options", "global configuration (config.update since)", "config overrides of this thread",
           "static arguments", "argument pytree structure", "argument shapes/dtypes")
logger = logging.getLogger("omnistage")


def _describe(old, new, field):
    if field == len(_FIELDS) - 1:
        changed = [f"argument {i}: {o.str_short()} -> {n.str_short()}"
                   for i, (o, n) in enumerate(zip(old, new)) if o != n]
        if len(old) != len(new):
            changed.append(f"{len(old)} -> {len(new)} array arguments")
        return "; ".join(changed)
    return f"{old!r} -> {new!r}"


def explain(fun, new_key, old_keys):
    """Log why `fun` is traced for `new_key` given the keys it was traced for before."""
    name = getattr(fun, "__qualname__", repr(fun))
    loc = user_loc()
    where = f" at {loc.site}" if loc is not None else ""
    earlier = [k for k in old_keys if isinstance(k, tuple) and len(k) == len(new_key) and len(k) == len(_FIELDS)]
    if not earlier:
        logger.warning("TRACING CACHE MISS%s of %s: never traced before (or its cache was cleared)", where, name)
        return
    def differing(k):
        return [i for i, (a, b) in enumerate(zip(k, new_key)) if a != b]

    closest = min(earlier, key=lambda k: len(differing(k)))
    reasons = [f"{_FIELDS[i]} changed: {_describe(closest[i], new_key[i], i)}" for i in differing(closest)]
    logger.warning("TRACING CACHE MISS%s of %s because, compared with the closest earlier call:\n  %s", where, name,
                   "\n  ".join(reasons) or "(no difference found)")


__all__ = ["explain"]
