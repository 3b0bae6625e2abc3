"""Collectives over named axes: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `axis_index`,
`ppermute`.

They mean something only inside a transformation that binds the axis name (`vmap(...,
axis_name='i')`; later `pmap`): the batching pass (`omnistage.vectorize`) rewrites each
into a reduction, broadcast or iota over its batch dimension, so no collective ever reaches
code generation. The names currently bound live in a small stack (`axis_env`), pushed by
`vmap` while it stages and batches a function; a collective whose name is not bound raises
`NameError` with JAX's message, eagerly and while staging alike.

Primitive forms (params are literals so programs print as Python):

    y = psum(x, axis_name=('i',))          # also pmax, pmin: the reduction over the axes
    y = all_gather(x, axis_name=('i',), axis=0, tiled=False)
    i = axis_index(axis_name='i')          # int32 scalar: this example's position
    y = ppermute(x, axis_name=('i',), perm=((0, 1), (1, 0)))  # (source, destination) pairs

Multi-process `pmap` binds its axis name marked with the number of processes it spans
(`spanning`): each process holds `size` examples of a global axis of `size * processes`, so
`axis_size` (and all_gather's shape) is the global size, and the batching pass adds one
cross-process step after its local reduction, with the primitives below. They are the only
collectives that reach code generation (one MPI call inside the compiled kernel):

    y = process_allreduce(x, op='sum')       # also 'max', 'min', 'or', 'and': over every process
    y = process_allgather(x, processes=2)    # every process's x, concatenated along axis 0
    p = process_index()                      # int32 scalar: this process's index
    y = process_ppermute(x, perm=((0, 3),))  # rows: this process's examples; perm: global

Their NumPy implementations (the interpreter's) call the `ProcessGroup` that
`distributed.initialize()` puts in `core.devices`' layout. Imports core only.
"""
import contextlib

import numpy as np

from ..core import dtypes
from ..core import tree_util
from ..core.array import Array
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ..core.thread_local import ThreadLocalStack
from . import elementwise as E
from ._rules import operands

# --- the axis environment --------------------------------------------------------------------

# (name, size) of every named axis bound by an enclosing transformation, innermost last;
# per thread, as the trace that binds it.
_axis_env = ThreadLocalStack()


@contextlib.contextmanager
def extend_axis_env(name, size):
    """Bind axis `name` (of `size` examples) for the collectives staged inside."""
    if name is None:
        yield
        return
    _axis_env.append((name, int(size)))
    try:
        yield
    finally:
        _axis_env.pop()


def bound_axis_names():
    return [n for n, _ in _axis_env]


def axis_size(name):
    """The size of the innermost binding of axis `name` (NameError when unbound): the global
    size, every process's examples, for an axis that spans processes."""
    for n, size in reversed(_axis_env):
        if n == name:
            return size * processes_spanned(n)
    raise _unbound(name)


class _SpanningStr(str):
    processes = 1


class _SpanningInt(int):
    processes = 1


def spanning(name, processes):
    """Axis name `name` marked as spanning `processes` processes (multi-process pmap binds its
    axis with it); it equals, and hashes as, the user's name."""
    if processes == 1 or name is None:
        return name
    marked = (_SpanningStr if isinstance(name, str) else _SpanningInt)(name)
    marked.processes = int(processes)
    return marked


def processes_spanned(name):
    """How many processes the examples of axis `name` are spread over (1: this one only)."""
    return getattr(name, "processes", 1)


def _unbound(name):
    return NameError(
        f"unbound axis name: {name}. The following axis names (e.g. defined by pmap) are "
        f"available to collective operations: {bound_axis_names()}"
    )


def _check_bound(names):
    bound = bound_axis_names()
    for n in names:
        if n not in bound:
            raise _unbound(n)


def _names_tuple(axis_name):
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        if not isinstance(n, (str, int)) or isinstance(n, bool):
            raise TypeError(
                f"axis names must be strings (or ints), got {n!r} of type {type(n).__name__}; "
                f"name the axis with vmap(..., axis_name='i')"
            )
    return names


# --- primitives ------------------------------------------------------------------------------


def _reduce_abstract(x, *, axis_name):
    _check_bound(axis_name)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _unbound_impl(*args, axis_name, **params):
    # Reached only if a collective survives outside every transformation binding its axis.
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    _check_bound(names)
    raise NotImplementedError(
        f"collective over axis {names} has no standalone implementation: it runs only inside "
        f"vmap(..., axis_name=...), which rewrites it"
    )


psum_p = Primitive("psum", _reduce_abstract, _unbound_impl)
pmax_p = Primitive("pmax", _reduce_abstract, _unbound_impl)
pmin_p = Primitive("pmin", _reduce_abstract, _unbound_impl)


def _all_gather_abstract(x, *, axis_name, axis, tiled):
    _check_bound(axis_name)
    n = 1
    for name in axis_name:
        n *= axis_size(name)
    if tiled:
        if x.ndim == 0:
            raise ValueError("all_gather with tiled=True requires an operand of rank >= 1, got a scalar")
        if not 0 <= axis < x.ndim:
            raise ValueError(f"all_gather axis {axis} is out of bounds for an operand of shape {x.shape}")
        shape = x.shape[:axis] + (n * x.shape[axis],) + x.shape[axis + 1:]
    else:
        if not 0 <= axis <= x.ndim:
            raise ValueError(f"all_gather axis {axis} is out of bounds for an operand of shape {x.shape}")
        shape = x.shape[:axis] + (n,) + x.shape[axis:]
    return ShapedArray(shape, x.dtype, x.weak_type)


all_gather_p = Primitive("all_gather", _all_gather_abstract, _unbound_impl)


def _axis_index_abstract(*, axis_name):
    _check_bound((axis_name,))
    return ShapedArray((), np.dtype("int32"))


axis_index_p = Primitive("axis_index", _axis_index_abstract, _unbound_impl)


def _ppermute_abstract(x, *, axis_name, perm):
    _check_bound(axis_name)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


ppermute_p = Primitive("ppermute", _ppermute_abstract, _unbound_impl)

COLLECTIVES = ("psum", "pmax", "pmin", "all_gather", "axis_index", "ppermute")


# --- across processes ------------------------------------------------------------------------


def process_group():
    """The collectives across this job's processes (the interpreter's), set up by
    distributed.initialize()."""
    from ..core import devices

    group = devices.process_layout().group
    if group is None:
        raise RuntimeError(
            "this program was staged for a multi-process pmap, but this process is not part of "
            "a multi-process job: call omnistage.distributed.initialize() first")
    return group


PROCESS_OPS = ("sum", "max", "min", "or", "and")


def _process_allreduce_abstract(x, *, op):
    if op not in PROCESS_OPS:
        raise ValueError(f"process_allreduce: op must be one of {PROCESS_OPS}, got {op!r}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _process_allgather_abstract(x, *, processes):
    if x.ndim == 0:
        raise ValueError("process_allgather needs an operand of rank >= 1 (it concatenates along axis 0)")
    return ShapedArray((processes * x.shape[0],) + x.shape[1:], x.dtype, x.weak_type)


process_allreduce_p = Primitive(
    "process_allreduce", _process_allreduce_abstract, lambda x, *, op: process_group().allreduce(x, op))
process_allgather_p = Primitive(
    "process_allgather", _process_allgather_abstract, lambda x, *, processes: process_group().allgather(x))
process_index_p = Primitive(
    "process_index", lambda: ShapedArray((), np.dtype("int32")), lambda: np.int32(process_group().index))


def _process_ppermute_abstract(x, *, perm):
    if x.ndim == 0:
        raise ValueError("process_ppermute needs an operand of rank >= 1 (this process's examples along axis 0)")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _process_ppermute_impl(x, *, perm):
    # the interpreter's: gather every process's examples, keep what arrives here
    x = np.asarray(x)
    group, local = process_group(), x.shape[0]
    everyone = group.allgather(x)
    out = np.zeros_like(x)
    for source, dest in perm:
        if dest // local == group.index:
            out[dest % local] = everyone[source]
    return out


process_ppermute_p = Primitive("process_ppermute", _process_ppermute_abstract, _process_ppermute_impl)


# --- user functions --------------------------------------------------------------------------


def _no_groups(axis_index_groups, name):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{name}: axis_index_groups is not supported")


def _reducer(prim):
    def reduce(x, axis_name, *, axis_index_groups=None):
        _no_groups(axis_index_groups, prim.name)
        names = _names_tuple(axis_name)

        def leaf(v):
            (v,) = operands(v)
            return prim.bind(v, axis_name=names)

        return tree_util.tree_map(leaf, x)

    reduce.__name__ = prim.name
    reduce.__doc__ = f"The {prim.name[1:]} of `x` (a pytree) over the examples of the named axis."
    return reduce


psum = _reducer(psum_p)
pmax = _reducer(pmax_p)
pmin = _reducer(pmin_p)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` (a pytree) over the named axis (integers give floats, as jnp.mean)."""
    _no_groups(axis_index_groups, "pmean")
    names = _names_tuple(axis_name)
    _check_bound(names)
    # the number of examples is static (the axes' sizes): no collective to count them, which
    # across processes would be one more MPI call per pmean
    count = 1
    for name in names:
        count *= axis_size(name)

    def leaf(v):
        (v,) = operands(v)
        if not dtypes.is_inexact(v.dtype):
            v = E.convert_element_type(v, dtypes.canonicalize_dtype(np.float64))
        total = psum_p.bind(v, axis_name=names)
        return E.div(total, Array(np.asarray(count, v.dtype), True))

    return tree_util.tree_map(leaf, x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every example's `x` stacked along a new `axis` (concatenated along it if `tiled`)."""
    _no_groups(axis_index_groups, "all_gather")
    names = _names_tuple(axis_name)

    def leaf(v):
        (v,) = operands(v)
        ax = int(axis)
        ndim_out = v.ndim if tiled else v.ndim + 1
        if ax < 0:
            ax += ndim_out
        return all_gather_p.bind(v, axis_name=names, axis=ax, tiled=bool(tiled))

    return tree_util.tree_map(leaf, x)


def ppermute(x, axis_name, perm):
    """`x` (a pytree) sent along the named axis: for each (source, destination) pair of `perm`
    (indices along the axis, each at most once as a source and once as a destination), the
    example at `destination` gets the source's `x`; examples that receive nothing get zeros."""
    (name,) = _one_name(axis_name, "ppermute")
    _check_bound((name,))
    pairs = _check_perm(perm, axis_size(name))

    def leaf(v):
        (v,) = operands(v)
        return ppermute_p.bind(v, axis_name=(name,), perm=pairs)

    return tree_util.tree_map(leaf, x)


def _one_name(axis_name, what):
    names = _names_tuple(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{what} over several axis names {names} at once; permute over one name")
    return names


def _check_perm(perm, size):
    """`perm` as a tuple of (source, destination) int pairs, checked against the axis size."""
    try:
        pairs = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute's perm must be a sequence of (source, destination) pairs of ints, got {perm!r}") from None
    sources, dests = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    for s, d in pairs:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(f"ppermute permutation indices must be in [0, {size}) (the axis size), got {perm}.")
    return pairs


def axis_index(axis_name):
    """This example's int32 position along the named axis."""
    (name,) = _names_tuple(axis_name)
    return axis_index_p.bind(axis_name=name)


__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "ppermute"]
