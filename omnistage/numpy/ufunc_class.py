"""`jnp.ufunc` and `jnp.frompyfunc`, as JAX's: a NumPy-style universal function made from a
scalar function, with `__call__` (the function vectorized over broadcast arguments), `reduce`,
`accumulate`, `reduceat`, `outer` and `at`. Methods without a given fast implementation
(`call=`, `reduce=`, ... in the constructor) are built as JAX builds them: `reduce` is a
`fori_loop` folding the function along the axis, `accumulate` a `scan`, `at` a loop of
`.at[...].set` over the indexed elements, `outer` the call on broadcast operands.
Imports core, lax and this package's public functions only.
"""
import inspect
import operator

import numpy as np

from ..core import dtypes
from ..lax import control_flow as CF


def _jnp():
    from .. import numpy as jnp  # noqa: PLC0415 - this package imports this module

    return jnp


_AT_INPLACE = ("jnp.ufunc.at cannot update arrays in place (omnistage arrays are immutable): pass inplace=False "
               "to get the updated copy, or use x.at[idx].<op>(...)")


class ufunc:  # noqa: N801 - JAX's name
    """A universal function over `func` (a scalar function of `nin` arrays returning `nout`)."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.__props = {
            "func": func, "nin": operator.index(nin), "nout": operator.index(nout),
            "nargs": operator.index(nargs or nin), "identity": identity, "call": call, "reduce": reduce,
            "accumulate": accumulate, "at": at, "reduceat": reduceat,
        }
        self._call = call
        try:  # introspection (array-api-tests' signature checks) sees the function's parameters
            self.__signature__ = inspect.signature(call or func)
        except (TypeError, ValueError):
            pass

    _func = property(lambda self: self.__props["func"])
    nin = property(lambda self: self.__props["nin"])
    nout = property(lambda self: self.__props["nout"])
    nargs = property(lambda self: self.__props["nargs"])
    identity = property(lambda self: self.__props["identity"])

    def __hash__(self):
        return hash((self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs))

    def __eq__(self, other):
        return isinstance(other, ufunc) and (
            (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)
            == (other._func, other.__name__, other.identity, other.nin, other.nout, other.nargs))

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    # --- call -----------------------------------------------------------------------------

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if self._call is not None:  # jnp.add and the other built-in ufuncs: their own function
            return self._call(*args)
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__} takes {self.nin} arguments, got {len(args)}")
        return _jnp().vectorize(self._func)(*args)

    def _binary(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, arr, dtype):
        if dtype is not None:
            return dtypes.canonicalize_dtype(np.dtype(dtype))
        jnp = _jnp()
        one = jnp.ones((), arr.dtype)
        return jnp.asarray(self(one, one)).dtype

    # --- reduce ---------------------------------------------------------------------------

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """Fold the binary function along `axis` (None: all axes, flattened)."""
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        jnp = _jnp()
        if where is not None:
            where = jnp.asarray(where)
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, so to use a "
                                 f"where mask one has to specify 'initial'.")
            if where.dtype != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got dtype={where.dtype}")
        custom = self.__props["reduce"]
        if custom is not None:
            return custom(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
        return self._reduce_via_loop(jnp.asarray(a), axis, dtype, keepdims, initial, where)

    def _reduce_via_loop(self, arr, axis, dtype, keepdims, initial, where):
        jnp = _jnp()
        initial = self.identity if initial is None else initial
        dtype = self._result_dtype(arr, dtype)
        if where is not None:
            where = jnp.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError(f"{self.__name__}.reduce over a tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = arr.ravel()
            where = None if where is None else where.ravel()
            axis = 0
        else:
            axis = axis % max(arr.ndim, 1)
            final_shape = arr.shape[:axis] + ((1,) if keepdims else ()) + arr.shape[axis + 1:]
        arr = jnp.moveaxis(arr, axis, 0)
        where = None if where is None else jnp.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            return jnp.full(final_shape, initial, dtype)

        def body(i, acc):
            step = self(acc, arr[i].astype(dtype))
            return step if where is None else jnp.where(where[i], step, acc)

        start, value = (1, arr[0]) if initial is None else (0, initial)
        value = jnp.broadcast_to(jnp.asarray(value).astype(dtype), arr.shape[1:])
        result = CF.fori_loop(start, arr.shape[0], body, value)
        return result.reshape(final_shape) if keepdims else result

    # --- accumulate -----------------------------------------------------------------------

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """Running fold of the binary function along `axis`."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        custom = self.__props["accumulate"]
        if custom is not None:
            return custom(a, axis=axis, dtype=dtype)
        jnp = _jnp()
        arr = jnp.asarray(a)
        dtype = self._result_dtype(arr, dtype)
        if isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = axis % max(arr.ndim, 1)
        arr = jnp.moveaxis(arr, axis, 0)
        if arr.shape[0] == 0:
            return jnp.moveaxis(jnp.zeros(arr.shape, dtype), 0, axis)

        def step(carry, x):
            y = self(carry, x.astype(dtype))
            return y, y

        first = arr[0].astype(dtype)
        _, rest = CF.scan(step, first, arr[1:])
        return jnp.moveaxis(jnp.concatenate([first[None], rest]), 0, axis)

    # --- reduceat, outer, at --------------------------------------------------------------

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of the segments [indices[i], indices[i+1]) along `axis` (NumPy's rule: a
        segment whose end is not after its start is the element at its start)."""
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        custom = self.__props["reduceat"]
        if custom is not None:
            return custom(a, indices, axis=axis, dtype=dtype)
        jnp = _jnp()
        arr = jnp.asarray(a)
        if arr.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got shape {arr.shape}")
        idx = jnp.asarray(indices)
        if idx.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got shape {idx.shape}")
        axis = axis % arr.ndim
        dtype = arr.dtype if dtype is None else dtypes.canonicalize_dtype(np.dtype(dtype))
        arr = jnp.moveaxis(arr, axis, 0).astype(dtype)
        n = arr.shape[0]
        starts = idx
        ends = jnp.concatenate([idx[1:], jnp.array([n], idx.dtype)])
        ends = jnp.where(ends > starts, ends, starts + 1)

        def segment(start, end):
            def body(i, acc):
                return jnp.where((i > start) & (i < end), self(acc, arr[i]), acc)

            return CF.fori_loop(0, n, body, arr[start])

        out = _jnp_vmap()(segment)(starts, ends)
        return jnp.moveaxis(out, 0, axis)

    def outer(self, A, B, /, **kwargs):
        """The function on every pair (a, b): shape A.shape + B.shape."""
        self._binary("outer")
        jnp = _jnp()
        A, B = jnp.asarray(A), jnp.asarray(B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B, **kwargs)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of `a` with the function applied at `indices` (with `b` for binary ufuncs),
        repeated indices applied in turn, as NumPy's in-place `ufunc.at`; needs inplace=False."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        custom = self.__props["at"]
        if custom is not None:
            return custom(a, indices, b)
        if (b is None) != (self.nin == 1):
            raise ValueError(f"{self.__name__}.at takes b exactly when the ufunc is binary (nin={self.nin})")
        jnp = _jnp()
        a = jnp.asarray(a)
        args = () if b is None else (jnp.asarray(b),)
        if not isinstance(indices, tuple):
            indices = (indices,)
        arrays = [jnp.asarray(i) for i in indices if not isinstance(i, slice) and i is not Ellipsis and i is not None]
        if not arrays or all(i.ndim == 0 for i in arrays):
            return a.at[indices].set(self(a[indices], *args))
        shape = jnp.broadcast_shapes(*(i.shape for i in arrays))
        count = int(np.prod(shape))
        flat = [jnp.broadcast_to(jnp.asarray(i), shape).ravel() if not isinstance(i, slice) else i for i in indices]
        if args:
            arg = args[0]
            arg = jnp.broadcast_to(arg, shape + arg.shape[len(shape):]) if arg.ndim >= len(shape) else arg
            args = (arg.reshape((count,) + arg.shape[len(shape):]) if arg.ndim >= len(shape) else
                    jnp.broadcast_to(arg, (count,) + arg.shape),)

        def body(k, acc):
            idx = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            return acc.at[idx].set(self(acc[idx], *(x[k] for x in args)))

        return CF.fori_loop(0, count, body, a)


def _jnp_vmap():
    from ..api_vmap import vmap  # noqa: PLC0415 - the transformation, reached at call time like user code

    return vmap


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A `ufunc` from a scalar function of `nin` arguments returning `nout` values."""
    return ufunc(func, nin, nout, identity=identity)


__all__ = ["ufunc", "frompyfunc"]
