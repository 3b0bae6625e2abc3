"""NumPy's function-applying and set helpers as JAX has them: `vectorize` (through vmap),
`apply_along_axis`, `apply_over_axes`, `piecewise`, and the set operations `isin`,
`intersect1d`, `union1d`, `setdiff1d`, `setxor1d` (whose result sizes depend on the values:
they take JAX's static `size=`/`fill_value=`, or need concrete inputs without it).
Imports core, lax and this package's public functions only; vmap comes from the API layer
at call time, as user code reaches it.
"""
import functools
import re

import numpy as np


def _jnp():
    from .. import numpy as jnp  # noqa: PLC0415 - this package imports this module

    return jnp


def _vmap():
    from ..api_vmap import vmap  # noqa: PLC0415 - the transformation, reached at call time like user code

    return vmap


def _parse_signature(signature):
    args, outs = signature.replace(" ", "").split("->")
    parse = lambda side: [tuple(d for d in group.split(",") if d) for group in re.findall(r"\(([^)]*)\)", side)]  # noqa: E731
    return parse(args), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc mapped over its arguments' leading (broadcast) dimensions with vmap; with a
    generalized-ufunc `signature` like '(n),(n)->()', the named core dimensions are kept."""
    vmap = _vmap()

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        jnp = _jnp()
        excluded_pos = {i for i in excluded if isinstance(i, int)}
        fixed_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}
        if mapped_kwargs:
            raise NotImplementedError("vectorize: keyword arguments must be listed in excluded.")
        positions = [i for i in range(len(args)) if i not in excluded_pos]
        arrays = [jnp.asarray(args[i]) for i in positions]
        cores = [()] * len(arrays) if signature is None else _parse_signature(signature)[0]
        if len(cores) != len(arrays):
            raise TypeError(f"vectorize: signature {signature!r} names {len(cores)} inputs, got {len(arrays)}.")
        loops = [a.shape[:a.ndim - len(c)] for a, c in zip(arrays, cores)]
        batch = jnp.broadcast_shapes(*loops) if loops else ()
        arrays = [jnp.broadcast_to(a, batch + a.shape[a.ndim - len(c):]) for a, c in zip(arrays, cores)]

        def call(*mapped):
            full = list(args)
            for i, v in zip(positions, mapped):
                full[i] = v
            return pyfunc(*full, **fixed_kwargs)

        f = call
        for _ in range(len(batch)):
            f = vmap(f)
        return f(*arrays)

    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to every 1-D slice of arr along axis (vmapped over the others)."""
    jnp = _jnp()
    vmap = _vmap()
    arr = jnp.asarray(arr)
    axis = axis % arr.ndim
    f = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for i in range(1, arr.ndim - axis):
        f = vmap(f, in_axes=i, out_axes=-1)
    for _ in range(axis):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) repeatedly over axes, keeping the reduced axes (NumPy's rule)."""
    jnp = _jnp()
    a = jnp.asarray(a)
    for axis in [axes] if isinstance(axes, int) else axes:
        b = func(a, axis)
        a = b if b.ndim == a.ndim else jnp.expand_dims(b, axis)
    return a


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) where condlist[i] (the last function, if one extra, elsewhere)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    condlist = jnp.asarray(condlist, dtype=bool)
    if condlist.ndim == x.ndim:
        condlist = condlist[None]
    n = condlist.shape[0]
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    if len(funclist) == n:
        funclist = list(funclist) + [0]
    out = jnp.zeros_like(x)
    default = funclist[-1]
    out = jnp.full_like(x, default) if not callable(default) else default(x, *args, **kw).astype(x.dtype)
    for cond, f in zip(reversed(list(condlist)), reversed(funclist[:-1])):
        value = f(x, *args, **kw) if callable(f) else f
        out = jnp.where(cond, jnp.asarray(value, dtype=x.dtype), out)
    return out


# --- sets ------------------------------------------------------------------------------------


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element is in test_elements (a comparison against all of them)."""
    jnp = _jnp()
    element, test = jnp.asarray(element), jnp.ravel(jnp.asarray(test_elements))
    if test.size == 0:
        found = jnp.zeros(element.shape, bool)
    else:
        found = jnp.any(element[..., None] == test, axis=-1)
    return ~found if invert else found


def _unique_1d(x, size, fill_value):
    jnp = _jnp()
    return jnp.unique(jnp.ravel(x), size=size, fill_value=fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    jnp = _jnp()
    return _unique_1d(jnp.concatenate([jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))]), size, fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """Sorted values in both arrays; size= makes it traceable (padded with fill_value)."""
    jnp = _jnp()
    if return_indices:
        raise NotImplementedError("intersect1d(return_indices=True) is not supported.")
    a = jnp.ravel(jnp.asarray(ar1))
    b = jnp.ravel(jnp.asarray(ar2))
    both = isin(a, b)
    if size is None:
        values = np.asarray(a)[np.asarray(both)]
        return jnp.asarray(np.unique(values))
    return _masked_unique(a, both, size, fill_value)


def _masked_unique(values, mask, size, fill_value):
    """Sorted unique values where mask, padded to `size` with fill_value (default: the
    smallest of them, as jnp.unique pads)."""
    jnp = _jnp()
    n = values.shape[0]
    order = jnp.lexsort((values, ~mask))  # the selected values first, ascending
    v, m = values[order], mask[order]
    first = m & jnp.concatenate([jnp.ones(1, bool), v[1:] != v[:-1]])
    pick = jnp.argsort(~first, stable=True)[:size]
    if size > n:
        pick = jnp.concatenate([pick, jnp.zeros(size - n, pick.dtype)])
    out = v[pick]
    fill = out[0] if fill_value is None else jnp.asarray(fill_value, dtype=out.dtype)
    return jnp.where(jnp.arange(size) < jnp.sum(first), out, fill)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ar1 not in ar2; size= makes it traceable."""
    jnp = _jnp()
    a = jnp.ravel(jnp.asarray(ar1))
    keep = ~isin(a, ar2)
    if size is None:
        return jnp.asarray(np.unique(np.asarray(a)[np.asarray(keep)]))
    return _masked_unique(a, keep, size, fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the arrays."""
    jnp = _jnp()
    a = jnp.unique(jnp.ravel(jnp.asarray(ar1))) if size is None else jnp.ravel(jnp.asarray(ar1))
    b = jnp.unique(jnp.ravel(jnp.asarray(ar2))) if size is None else jnp.ravel(jnp.asarray(ar2))
    both = jnp.concatenate([a, b])
    keep = jnp.concatenate([~isin(a, b), ~isin(b, a)])
    if size is None:
        return jnp.asarray(np.unique(np.asarray(both)[np.asarray(keep)]))
    return _masked_unique(both, keep, size, fill_value)


__all__ = [
    "vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "isin", "union1d", "intersect1d",
    "setdiff1d", "setxor1d",
]
