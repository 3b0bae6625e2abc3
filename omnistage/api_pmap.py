"""`pmap`: JAX's parallel map, on the devices omnistage has (one CPU device per process, or
N with `OMNISTAGE_CPU_DEVICES=N` / `XLA_FLAGS=--xla_force_host_platform_device_count=N`).

In one process, `pmap(f, axis_name)` is `jit(vmap(f, in_axes, out_axes, axis_name))` over a
mapped axis of size at most `local_device_count()` (as JAX: a larger axis is an error naming
the device count). The slices of a process's devices run in one compiled kernel: its loop
nests over the device axis are split over threads (`codegen.parallel`'s prange) when big
enough, and a collective over them is a reduction in the kernel, before any MPI step. Collectives (`lax.psum`, `pmean`, ...) by `axis_name` work as under vmap,
so single-device code written for pmap (the seeds' distributed training step) runs unchanged.

In a multi-process job (`distributed.initialize()` under mpiexec or srun), as in JAX, each
process passes its local shard (mapped axis of size `local_device_count()`; every process
passes the same shapes, or their collectives do not match) and gets its local shard of the outputs back; the axis name is bound marked as
spanning every process (`lax.parallel.spanning`), so the batching pass combines each
collective's local result across processes (one MPI call inside the compiled kernel).
"""
import functools

from .api import jit
from .api_vmap import _flat_in_axes, vmap
from .core import devices as core_devices
from .core import tree_util
from .lax import parallel
from .staging.convert import convert


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """Map `fun` over the leading axis of its arguments, one slice per device."""
    if fun is None:
        return functools.partial(
            pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
            static_broadcasted_argnums=static_broadcasted_argnums, devices=devices, backend=backend,
            axis_size=axis_size, donate_argnums=donate_argnums,
        )
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) else tuple(static_broadcasted_argnums)
    target = convert(fun)  # `inner` is omnistage's code: the user's control flow is converted here

    def mapped(*args, **kwargs):
        # runs once per jit cache key (shapes are part of it), so the device check costs
        # nothing on later calls
        st = {i: args[i] for i in static}
        dyn = [a for i, a in enumerate(args) if i not in st]
        dyn_axes = in_axes
        if st and isinstance(in_axes, (tuple, list)):
            dyn_axes = tuple(a for i, a in enumerate(in_axes) if i not in st)
        n_devices, processes = _device_layout(devices, backend)
        _check_size(_flat_in_axes(tuple(dyn_axes) if isinstance(dyn_axes, list) else dyn_axes, dyn, kwargs),
                    tree_util.tree_leaves((tuple(dyn), kwargs)), axis_size, n_devices, backend)
        name = axis_name
        if processes > 1:
            name = parallel.spanning(axis_name, processes)

        def inner(*dyn_args, **kw):
            it = iter(dyn_args)
            return target(*[st[i] if i in st else next(it) for i in range(len(args))], **kw)

        return vmap(inner, dyn_axes, out_axes, axis_name=name, axis_size=axis_size)(*dyn, **kwargs)

    mapped.__name__ = getattr(fun, "__name__", "pmapped")
    return functools.wraps(fun)(jit(mapped, static_argnums=static, backend=backend))


def _check_size(axes, leaves, axis_size, n_devices, backend):
    sizes = {_shape(x)[a] for x, a in zip(leaves, axes) if a is not None}
    size = axis_size if axis_size is not None else (max(sizes) if sizes else None)
    if size is not None and size > n_devices:
        raise ValueError(_too_few_devices(size, n_devices, _platform(backend)))


def _platform(backend):
    # the devices pmap maps over: the backend's, by default the CPU's (as JAX's default
    # backend), which also keeps a CPU pmap from probing CUDA (importing numba.cuda)
    return core_devices.default_backend() if backend is None else backend


def _too_few_devices(size, n, platform):
    here = ", ".join(repr(d) for d in core_devices.local_devices(backend=platform))
    return (
        f"pmap maps one slice of the mapped axis per device: an axis of size {size} requires {size} "
        f"logical devices, but only {n} omnistage device{'s are' if n != 1 else ' is'} available to "
        f"this process ({here}; omnistage.local_device_count({platform!r}) = {n}). "
        f"Map at most {n} slices with pmap, or use vmap for the whole axis (or reshape it to "
        f"({n}, {size} // {n}, ...) and vmap inside pmap)."
    )


def _device_layout(devices, backend):
    """(devices of this process to map over, number of processes the mapped axis spans)."""
    if devices is None:
        return core_devices.local_device_count(_platform(backend)), core_devices.process_count()
    here = core_devices.process_index()
    return sum(d.process_index == here for d in devices), len({d.process_index for d in devices})


def _shape(x):
    return tuple(getattr(x, "shape", ()))


__all__ = ["pmap"]
