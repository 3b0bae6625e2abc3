"""Numba lowerings of the opaque primitives: the ones that are neither elementwise, index
maps nor reductions (indexing with traced indices, padding, cumulative scans, sorting, linear
algebra, convolution, bitcasts). Each rule `rule(em, e)` appends the statements computing
`e`'s outputs to the njit function body (see `emit_cpu.Emitter`), as arrays named exactly
`e.outs`; it is registered by primitive name in `emit_cpu.OPAQUE_RULES`.

Small operations are emitted as loop nests right here; bigger ones call the generic njit
kernels of `kernels.py` (reached as `_kn.<name>`) on C-contiguous arrays whose batch
dimensions are flattened, with static parameters as ints or tuples of ints.

Every rule reproduces the primitive's NumPy implementation (the interpreter) exactly for
integer results, and never reads or writes out of bounds: dynamic indices are clamped
(gather, dynamic_slice, dynamic_update_slice) or their updates dropped (scatter).

Imported by `emit_cpu` (last line), which owns the emitter; imports nothing else of the
code generator's.
"""
import ast
import math

import numpy as np

from ..staging import literals
from . import blas_threads, emit_cpu, index_maps, parallel
from .emit_cpu import _loc_comment, dtype_expr, zeros_expr


# --- helpers --------------------------------------------------------------------------------


def _name(atom):
    return ast.unparse(atom)


def _scalar(em, atom):
    """Expression for the value of a rank-0 operand: a typed literal, or `x[()]` (the emitter
    hands opaque rules their rank-0 operands as 0-d arrays)."""
    return _name(atom) if literals.is_literal(atom) else f"{_name(atom)}[()]"


def _shape_tuple(shape):
    return repr(tuple(int(d) for d in shape))


def _out_aval(em, name):
    return em.program.avals[name]


def _contiguous(em, atom):
    """A C-contiguous expression for operand `atom` (a rank-0 one, literals too, becomes a 0-d
    array)."""
    return f"_rt.contiguous({_name(atom)})"


def _as_3d(em, atom, axis):
    """(outer, n, inner) C-contiguous view of `atom` around `axis`, and those sizes."""
    shape = em.aval(atom).shape
    dims = (math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]))
    var = em.fresh(f"{_name(atom)}_3d")
    em.line(f"{var} = _rt.reshape(_rt.contiguous({_name(atom)}), {_shape_tuple(dims)})")
    return var, dims


# NumPy's linalg computes in double precision whatever the input; so do the LAPACK-based
# lowerings, which then match its results (signs, eigenvalue order) and round to the output.
_LAPACK_WIDE = {"float32": "float64", "complex64": "complex128"}


def _wide(dtype):
    """The dtype a LAPACK-based kernel computes and writes `dtype` results in."""
    name = np.dtype(dtype).name
    return np.dtype(_LAPACK_WIDE.get(name, name))


def _as_batch(em, atom, trailing, widen=False):
    """(batch, *last `trailing` dims) C-contiguous reshaping of `atom`; `widen` converts
    float32/complex64 to the 64-bit dtype LAPACK then works in."""
    aval = em.aval(atom)
    shape = aval.shape
    dims = (math.prod(shape[: len(shape) - trailing]),) + tuple(shape[len(shape) - trailing:])
    var = em.fresh(f"{_name(atom)}_b")
    wide = _LAPACK_WIDE.get(aval.dtype.name) if widen else None
    source = f"_rt.astype({_name(atom)}, {dtype_expr(wide)})" if wide else f"_rt.contiguous({_name(atom)})"
    em.line(f"{var} = _rt.reshape({source}, {_shape_tuple(dims)})")
    return var, dims


def _copy_into(em, out, atom):
    """`out = <a fresh copy of atom>` (any rank; literals allowed)."""
    aval = em.aval(atom)
    if aval.ndim == 0:
        em.line(f"{out} = _rt.empty((), {dtype_expr(aval.dtype)})")
        em.line(f"{out}[()] = {_scalar(em, atom)}")
    else:
        em.line(f"{out} = _rt.copy({_name(atom)})")


def _kernel_int(value):
    """A static int argument of a `_kn` kernel, typed int64 rather than as a literal: Numba
    compiles a kernel called with a literal `3` (or `True`) once per distinct value."""
    return f"np.int64({int(value)})"


def _kernel_bool(value):
    """A static flag argument of a `_kn` kernel, non-literal (see `_kernel_int`)."""
    return f"np.bool_({bool(value)})"


def _index(names):
    return ", ".join(names) if names else "()"


def _loops(em, bounds, base):
    """Open `for` loops over `bounds` (ints or (lo, hi) pairs); returns the loop variables."""
    names = []
    for k, b in enumerate(bounds):
        lo, hi = (0, b) if isinstance(b, int) else b
        n = f"{base}{k}"
        em.line(f"for {n} in range({hi}):" if lo == 0 else f"for {n} in range({lo}, {hi}):")
        em.indent += 1
        names.append(n)
    return names


def _close(em, depth):
    em.indent -= depth


def _clamped_start(em, atom, limit):
    """int64 expression of a rank-0 start index clamped into [0, limit] (limit >= 0)."""
    return f"_rt.clamp_index(np.int64({_scalar(em, atom)}), {limit + 1})"


# --- combining functions by dtype -------------------------------------------------------------


def _is_float(dt):
    return np.dtype(dt).kind == "f"


def _is_bool(dt):
    return np.dtype(dt).kind == "b"


def _add(dt, a, b):
    return f"({a} | {b})" if _is_bool(dt) else f"{a} + {b}"


def _mul(dt, a, b):
    return f"({a} & {b})" if _is_bool(dt) else f"{a} * {b}"


def _max(dt, a, b):
    if _is_bool(dt):
        return f"({a} | {b})"
    return f"_rt.fmax({a}, {b})" if _is_float(dt) else f"max({a}, {b})"


def _min(dt, a, b):
    if _is_bool(dt):
        return f"({a} & {b})"
    return f"_rt.fmin({a}, {b})" if _is_float(dt) else f"min({a}, {b})"


def _logaddexp(dt, a, b):
    return f"_rt.logaddexp({a}, {b}, {dtype_expr(dt)}({float(np.log(2.0))!r}))"


# --- dynamic_slice / dynamic_update_slice ------------------------------------------------------


def _emit_dynamic_slice(em, e):
    x, *starts = e.ins
    (out,) = e.outs
    shape, sizes = em.aval(x).shape, e.params["slice_sizes"]
    em.line(f"# dynamic_slice{_loc_comment(e.stmt)}")
    if not shape:
        return _copy_into(em, out, x)
    em.line(f"{out} = _rt.copy({_name(x)}[{_clamped_window(em, out, starts, shape, sizes)}])")


def _emit_dynamic_update_slice(em, e):
    x, update, *starts = e.ins
    (out,) = e.outs
    shape, ushape = em.aval(x).shape, em.aval(update).shape
    em.line(f"# dynamic_update_slice{_loc_comment(e.stmt)}")
    if not shape:
        return _copy_into(em, out, update)
    _copy_into(em, out, x)
    em.line(f"{out}[{_clamped_window(em, out, starts, shape, ushape)}] = {_name(update)}")


def _clamped_window(em, out, starts, shape, sizes):
    """Slice text `a:a + n, ...` for a window of `sizes` at `starts` clamped into `shape`
    (XLA's rule for dynamic slices), binding each clamped start to a local first."""
    lo = []
    for d, (s, dim, z) in enumerate(zip(starts, shape, sizes)):
        v = em.fresh(f"{out}_start{d}")
        em.line(f"{v} = {_clamped_start(em, s, dim - z)}")
        lo.append(v)
    return ", ".join(f"{v}:{v} + {z}" for v, z in zip(lo, sizes))


# --- gather / scatter --------------------------------------------------------------------------


def _rest_axes(ndim, axes):
    return [d for d in range(ndim) if d not in axes]


def _operand_index(ndim, axes, coords, rest):
    """Index expressions of the operand element at `coords` (on `axes`) and `rest` elsewhere."""
    idx, it = [None] * ndim, iter(rest)
    for a, c in zip(axes, coords):
        idx[a] = c
    return [next(it) if i is None else i for i in idx]


def _emit_gather(em, e):
    x, indices = e.ins
    (out,) = e.outs
    axes = tuple(e.params["axes"])
    xa, ia, oa = em.aval(x), em.aval(indices), _out_aval(em, out)
    dt = dtype_expr(oa.dtype)
    em.line(f"# gather{_loc_comment(e.stmt)}")
    if any(xa.shape[a] == 0 for a in axes) or oa.size == 0:
        # nothing to clamp into: zeros, as the implementation (and XLA) returns
        em.line(f"{out} = {zeros_expr(oa.shape, oa.dtype)}")
        return
    em.line(f"{out} = _rt.empty({_shape_tuple(oa.shape)}, {dt})")
    batch = _loops(em, list(ia.shape[:-1]), "_g")
    coords = []
    for j, a in enumerate(axes):
        c = em.fresh(f"_c{j}")
        em.line(f"{c} = _rt.clamp_index(np.int64({_name(indices)}[{_index(batch + [str(j)])}]), {xa.shape[a]})")
        coords.append(c)
    rest = _loops(em, [xa.shape[d] for d in _rest_axes(xa.ndim, axes)], "_r")
    src = _operand_index(xa.ndim, axes, coords, rest)
    value = _scalar(em, x) if xa.ndim == 0 else f"{_name(x)}[{_index(src)}]"
    em.line(f"{out}[{_index(batch + rest)}] = {value}")
    _close(em, len(batch) + len(rest))


# scatter primitive: how an update combines into the operand element
_SCATTER_COMBINE = {
    "scatter": lambda dt, old, new: new,
    "scatter_add": _add,
    "scatter_mul": _mul,
    "scatter_min": _min,
    "scatter_max": _max,
}


def _emit_scatter(em, e):
    x, indices, updates = e.ins
    (out,) = e.outs
    axes = tuple(e.params["axes"])
    xa, ia = em.aval(x), em.aval(indices)
    em.line(f"# {e.prim}{_loc_comment(e.stmt)}")
    _copy_into(em, out, x)
    if em.aval(updates).size == 0:
        return
    batch = _loops(em, list(ia.shape[:-1]), "_g")
    coords = []
    for j, a in enumerate(axes):
        c = em.fresh(f"_c{j}")
        em.line(f"{c} = np.int64({_name(indices)}[{_index(batch + [str(j)])}])")
        coords.append(c)
    if coords:  # out-of-bounds index rows are dropped (JAX's default for updates)
        em.line("if " + " and ".join(f"0 <= {c} < {xa.shape[a]}" for c, a in zip(coords, axes)) + ":")
        em.indent += 1
    rest = _loops(em, [xa.shape[d] for d in _rest_axes(xa.ndim, axes)], "_r")
    target = f"{out}[{_index(_operand_index(xa.ndim, axes, coords, rest))}]"
    upd = f"{_name(updates)}[{_index(batch + rest)}]" if em.aval(updates).ndim else _scalar(em, updates)
    em.line(f"{target} = {_SCATTER_COMBINE[e.prim](xa.dtype, target, upd)}")
    _close(em, len(batch) + len(rest) + bool(coords))


# --- pad ------------------------------------------------------------------------------------------


def _pad_source_range(n, out_n, lo, interior):
    """Source indices i of one dimension whose padded position lo + i*(interior+1) lands in
    [0, out_n): negative edge padding crops."""
    step = interior + 1
    first = min(n, 0 if lo >= 0 else -(lo // step))  # ceil(-lo / step)
    last = min(n, -(-(out_n - lo) // step))  # ceil((out_n - lo) / step)
    return first, max(first, last)


def _emit_pad(em, e):
    x, value = e.ins
    (out,) = e.outs
    xa, oa = em.aval(x), _out_aval(em, out)
    config = e.params["padding_config"]
    fill = f"_rt.full({_shape_tuple(oa.shape)}, {_scalar(em, value)}, {dtype_expr(oa.dtype)})"
    em.line(f"{out} = {fill}{_loc_comment(e.stmt)}")
    if xa.ndim == 0:
        em.line(f"{out}[()] = {_scalar(em, x)}")
        return
    ranges = [_pad_source_range(n, m, lo, it) for n, m, (lo, _, it) in zip(xa.shape, oa.shape, config)]
    if any(a >= b for a, b in ranges):
        return
    view = em.view_of(x) if em.copies_by_kernel(xa.size) else None
    if view is not None:  # the interior: one copy-kernel call (emit_cpu.Emitter.copy_views)
        base, (offset, strides) = view
        out_strides = index_maps.c_strides(oa.shape)
        shape = [b - a for a, b in ranges]
        src = (offset + sum(a * st for (a, _), st in zip(ranges, strides)), strides)
        dst = (sum((lo + a * (it + 1)) * st for (a, _), (lo, _, it), st in zip(ranges, config, out_strides)),
               tuple(st * (it + 1) for (_, _, it), st in zip(config, out_strides)))
        em.copy_views(base, [(src, shape, dst)], out)
        return
    src = _loops(em, ranges, "_p")
    dst = [_lin(i, it + 1, lo) for i, (lo, _, it) in zip(src, config)]
    em.line(f"{out}[{_index(dst)}] = {em.value(x, src)}")  # x may be index maps fused in
    _close(em, len(src))


def _lin(i, step, offset):
    term = i if step == 1 else f"{i} * {step}"
    if offset == 0:
        return term
    return f"{term} + {offset}" if offset > 0 else f"{term} - {-offset}"


# --- cumulative reductions -----------------------------------------------------------------------

_CUMULATIVE_COMBINE = {
    "cumsum": _add,
    "cumprod": _mul,
    "cummax": _max,
    "cummin": _min,
    "cumlogsumexp": _logaddexp,
}


def _emit_cumulative(em, e):
    (x,) = e.ins
    (out,) = e.outs
    axis, reverse = e.params["axis"], e.params["reverse"]
    oa = _out_aval(em, out)
    em.line(f"# {e.prim}{_loc_comment(e.stmt)}")
    x3, (outer, n, inner) = _as_3d(em, x, axis)
    o3 = em.fresh(f"{out}_3d")
    em.line(f"{o3} = _rt.empty({_shape_tuple((outer, n, inner))}, {dtype_expr(oa.dtype)})")
    if n:
        first, rest, prev = (n - 1, f"range({n - 2}, -1, -1)", "_k + 1") if reverse else (0, f"range(1, {n})", "_k - 1")
        combine = _CUMULATIVE_COMBINE[e.prim](oa.dtype, f"{o3}[_o, {prev}, _j]", f"{x3}[_o, _k, _j]")
        em.line(f"for _o in range({outer}):")
        em.line(f"    for _j in range({inner}):")
        em.line(f"        {o3}[_o, {first}, _j] = {x3}[_o, {first}, _j]")
        em.line(f"    for _k in {rest}:")
        em.line(f"        for _j in range({inner}):")
        em.line(f"            {o3}[_o, _k, _j] = {combine}")
    em.line(f"{out} = _rt.reshape({o3}, {_shape_tuple(oa.shape)})")


# --- sort -------------------------------------------------------------------------------------------


def _emit_sort(em, e):
    dim, num_keys = e.params["dimension"], e.params["num_keys"]
    shape = em.aval(e.ins[0]).shape
    em.line(f"# sort{_loc_comment(e.stmt)}")
    views = [_as_3d(em, x, dim)[0] for x in e.ins]
    dims = (math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:]))
    perm = em.fresh(f"{e.outs[0]}_perm")
    em.line(f"{perm} = _kn.identity_permutation({', '.join(_kernel_int(d) for d in dims)})")
    # least significant key first: each stable pass keeps the order of the passes before it
    for x, view in reversed(list(zip(e.ins[:num_keys], views[:num_keys]))):
        parts = [f"{view}.imag", f"{view}.real"] if em.aval(x).dtype.kind == "c" else [view]
        for part in parts:
            em.line(f"_kn.refine_sort({perm}, {part})")
    for out, view in zip(e.outs, views):
        em.line(f"{out} = _rt.reshape(_kn.take_along({view}, {perm}), {_shape_tuple(shape)})")


# --- debug.print -----------------------------------------------------------------------------------


def _emit_debug_print(em, e):
    """Formatting is Python's: the print runs in an object-mode block, which boxes the operands
    (rank 0 ones as 0-d arrays) and calls the primitive's implementation."""
    args = [_name(a) for a in e.ins] + [f"{k}={v!r}" for k, v in e.params.items()]
    em.module.calls_python = True
    em.line(f"with numba.objmode():  # debug.print{_loc_comment(e.stmt)}")
    em.line(f"    _rt.debug_print({', '.join(args)})")
    em.line(f"{e.outs[0]} = _rt.full((), True, np.bool_)")


# --- bitcast_convert_type ---------------------------------------------------------------------------


def _emit_bitcast(em, e):
    (x,) = e.ins
    (out,) = e.outs
    xa, oa = em.aval(x), _out_aval(em, out)
    flat = f"_rt.reshape({_contiguous(em, x)}, ({xa.size},))"
    em.line(f"{out} = _rt.reshape({flat}.view({dtype_expr(oa.dtype)}), {_shape_tuple(oa.shape)}){_loc_comment(e.stmt)}")


# --- linear algebra --------------------------------------------------------------------------------


def _alloc(em, name, shape, dtype):
    em.line(f"{name} = _rt.empty({_shape_tuple(shape)}, {dtype_expr(dtype)})")


def _batched_outputs(em, e, batch, shapes_dtypes):
    """Fresh (batch, ...) 64-bit output buffers for a LAPACK-based kernel (one kernel
    specialization per input dtype, whatever the output precision); returns their names."""
    names = []
    for out, (tail, dtype) in zip(e.outs, shapes_dtypes):
        buf = em.fresh(f"{out}_b")
        _alloc(em, buf, (batch,) + tuple(tail), _wide(dtype))
        names.append(buf)
    return names


def _unbatch(em, e, bufs, rounded=True):
    """Outputs from the kernel's (batch, ...) buffers: reshaped, and rounded from the 64-bit
    buffers of LAPACK-based kernels to float32/complex64 where the output is."""
    for out, buf in zip(e.outs, bufs):
        aval = _out_aval(em, out)
        cast = rounded and _wide(aval.dtype) != aval.dtype
        source = f"_rt.astype({buf}, {dtype_expr(aval.dtype)})" if cast else buf
        em.line(f"{out} = _rt.reshape({source}, {_shape_tuple(aval.shape)})")


def _emit_cholesky(em, e):
    em.line(f"# cholesky{_loc_comment(e.stmt)}")
    a, (b, n, _) = _as_batch(em, e.ins[0], 2, widen=True)
    (buf,) = _batched_outputs(em, e, b, [((n, n), _out_aval(em, e.outs[0]).dtype)])
    em.line(f"_kn.cholesky({a}, {buf})")
    _unbatch(em, e, [buf])


def _emit_eigh(em, e):
    em.line(f"# eigh{_loc_comment(e.stmt)}")
    a, (b, n, _) = _as_batch(em, e.ins[0], 2, widen=True)
    v, w = (_out_aval(em, o) for o in e.outs)
    bufs = _batched_outputs(em, e, b, [((n, n), v.dtype), ((n,), w.dtype)])
    em.line(f"_kn.eigh({a}, {_kernel_bool(e.params['lower'])}, {bufs[0]}, {bufs[1]})")
    _unbatch(em, e, bufs)


def _emit_eig(em, e):
    em.line(f"# eig{_loc_comment(e.stmt)}")
    a, (b, n, _) = _as_batch(em, e.ins[0], 2, widen=True)
    left, right = e.params["compute_left_eigenvectors"], e.params["compute_right_eigenvectors"]
    cdt = _out_aval(em, e.outs[0]).dtype
    base = e.outs[0]
    w, vl, vr = em.fresh(f"{base}_w"), em.fresh(f"{base}_vl"), em.fresh(f"{base}_vr")
    _alloc(em, w, (b, n), _wide(cdt))
    _alloc(em, vl, (b if left else 0, n, n), _wide(cdt))
    _alloc(em, vr, (b if (left or right) else 0, n, n), _wide(cdt))  # left vectors come from vr
    em.line(f"_kn.eig({a}, {w}, {vl}, {vr})")
    _unbatch(em, e, [w] + ([vl] if left else []) + ([vr] if right else []))


def _emit_svd(em, e):
    em.line(f"# svd{_loc_comment(e.stmt)}")
    x = em.aval(e.ins[0])
    a, (b, m, n) = _as_batch(em, e.ins[0], 2, widen=True)
    full, compute_uv = e.params["full_matrices"], e.params["compute_uv"]
    k = min(m, n)
    ucols, vrows = (m, n) if (full and compute_uv) else (k, k)
    base = e.outs[0]
    u, s, vh = em.fresh(f"{base}_u"), em.fresh(f"{base}_s"), em.fresh(f"{base}_vh")
    _alloc(em, u, (b, m, ucols), _wide(x.dtype))
    _alloc(em, s, (b, k), _wide(_out_aval(em, e.outs[1 if compute_uv else 0]).dtype))
    _alloc(em, vh, (b, vrows, n), _wide(x.dtype))
    em.line(f"_kn.svd({a}, {_kernel_bool(full and compute_uv)}, {u}, {s}, {vh})")
    _unbatch(em, e, [u, s, vh] if compute_uv else [s])


def _emit_qr(em, e):
    em.line(f"# qr{_loc_comment(e.stmt)}")
    x = em.aval(e.ins[0])
    a, (b, m, n) = _as_batch(em, e.ins[0], 2, widen=True)
    k = m if e.params["full_matrices"] else min(m, n)
    bufs = _batched_outputs(em, e, b, [((m, k), x.dtype), ((k, n), x.dtype)])
    em.line(f"_kn.qr({a}, {bufs[0]}, {bufs[1]})")
    _unbatch(em, e, bufs)


def _emit_lu(em, e):
    em.line(f"# lu{_loc_comment(e.stmt)}")
    a, _ = _as_batch(em, e.ins[0], 2)
    bufs = [em.fresh(f"{o}_b") for o in e.outs]
    em.line(f"{', '.join(bufs)} = _kn.lu({a})")
    _unbatch(em, e, bufs, rounded=False)


def _emit_lu_pivots_to_permutation(em, e):
    em.line(f"# lu_pivots_to_permutation{_loc_comment(e.stmt)}")
    pivots, _ = _as_batch(em, e.ins[0], 1)
    buf = em.fresh(f"{e.outs[0]}_b")
    em.line(f"{buf} = _kn.lu_pivots_to_permutation({pivots}, {_kernel_int(e.params['permutation_size'])})")
    _unbatch(em, e, [buf], rounded=False)


def _emit_triangular_solve(em, e):
    """Every variant is rewritten as "lower-triangular m, solve m x = rhs on the left", as the
    NumPy implementation does: transposes and reversals are static, copied by loop nests."""
    p = e.params
    em.line(f"# triangular_solve{_loc_comment(e.stmt)}")
    dt = em.aval(e.ins[0]).dtype
    a, a_shape = _as_batch(em, e.ins[0], 2)
    rhs, rhs_shape = _as_batch(em, e.ins[1], 2)
    low, swap = p["lower"], (0, 2, 1)
    if p["conjugate_a"]:
        em.line(f"{a} = np.conj({a})")
    if p["transpose_a"]:
        a, a_shape, low = em.relayout(a, a_shape, dt, swap), _swapped(a_shape), not low
    if not p["left_side"]:
        a, a_shape, low = em.relayout(a, a_shape, dt, swap), _swapped(a_shape), not low
        rhs, rhs_shape = em.relayout(rhs, rhs_shape, dt, swap), _swapped(rhs_shape)
    if not low:  # reversing rows and columns turns upper-triangular into lower
        a = em.relayout(a, a_shape, dt, flip=(1, 2))
        rhs = em.relayout(rhs, rhs_shape, dt, flip=(1,))
    x = em.fresh(f"{e.outs[0]}_x")
    em.line(f"{x} = _kn.forward_substitution({a}, {rhs}, {_kernel_bool(p['unit_diagonal'])})")
    if not low:
        x = em.relayout(x, rhs_shape, dt, flip=(1,))
    if not p["left_side"]:
        x = em.relayout(x, rhs_shape, dt, swap)
    em.line(f"{e.outs[0]} = _rt.reshape({x}, {_shape_tuple(_out_aval(em, e.outs[0]).shape)})")


def _swapped(shape):
    return (shape[0], shape[2], shape[1])


# --- conv_general_dilated ----------------------------------------------------------------------------


def _emit_conv(em, e):
    """One kernel call: the kernel reads the operands and writes the result in their own
    layouts (dimension numbers), so a convolution adds no loop nests to the program."""
    lhs, rhs = e.ins
    (out,) = e.outs
    p = e.params
    oa = _out_aval(em, out)
    lhs_spec, rhs_spec, out_spec = (tuple(int(i) for i in s) for s in p["dimension_numbers"])
    em.line(f"# conv_general_dilated{_loc_comment(e.stmt)}")
    if oa.size == 0:
        em.line(f"{out} = {zeros_expr(oa.shape, oa.dtype)}")
        return
    lhs_shape, rhs_shape = em.aval(lhs).shape, em.aval(rhs).shape
    out_sp = [oa.shape[i] for i in out_spec[2:]]
    spec_shape = (oa.shape[out_spec[0]], oa.shape[out_spec[1]], *out_sp)
    out_perm = tuple(int(i) for i in np.argsort(out_spec))
    # a convolution without spatial dimensions is one with a single 1-wide spatial one
    ones = lambda v, fill: tuple(int(i) for i in v) or (fill,)  # noqa: E731
    params = (
        (len(oa.shape),) + lhs_spec + rhs_spec + out_perm + spec_shape
        + ones([lhs_shape[i] for i in lhs_spec[2:]], 1) + ones([rhs_shape[i] for i in rhs_spec[2:]], 1)
        + ones(out_sp, 1) + ones(p["window_strides"], 1) + ones([lo for lo, _ in p["padding"]], 0)
        + ones(p["lhs_dilation"], 1) + ones(p["rhs_dilation"], 1)
        + (p["feature_group_count"], p["batch_group_count"])
    )
    if oa.dtype.kind in "fc":
        # the kernel multiplies floats with BLAS (the native tier's emission, threads=None, asks
        # without importing Numba, as emit_cpu's products)
        blas_threads.configure(parallel.likely_enabled() if em.module.threads is None else None)
    _alloc(em, out, oa.shape, oa.dtype)
    em.line(f"_kn.conv_in_layout({_contiguous(em, lhs)}, {_contiguous(em, rhs)}, {out}, {em.module.param_array(params)})")


# --- reduce_window_max/min and their derivatives (lax/window_choosers.py) -----------------------


def _window_identity(select_prim, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return f"{dtype_expr(dt)}({'-' if select_prim == 'ge' else ''}np.inf)"
    info = np.iinfo(dt)
    return f"{dtype_expr(dt)}({info.min if select_prim == 'ge' else info.max})"


def _emit_window_chooser(em, e, select_prim, operands):
    """One kernel call; `operands` are the kernel's array arguments before `out`."""
    (out,) = e.outs
    p = e.params
    oa = _out_aval(em, out)
    x = e.ins[-1]  # the operand that chooses
    em.line(f"# {e.prim}{_loc_comment(e.stmt)}")
    _alloc(em, out, oa.shape, oa.dtype)
    params = (p["window_dimensions"] + p["window_strides"] + tuple(lo for lo, _ in p["padding"]) + p["base_dilation"]
              + p["window_dilation"] + (int(select_prim == "ge"),))
    arrays = ", ".join(_contiguous(em, a) for a in operands)
    identity = _window_identity(select_prim, em.aval(x).dtype)
    em.line(f"_kn.{_WINDOW_KERNELS[e.prim]}({arrays}, {out}, {em.module.param_array(params)}, {identity})")


_WINDOW_KERNELS = {
    "reduce_window_max": "reduce_window_chooser", "reduce_window_min": "reduce_window_chooser",
    "select_and_gather_add": "select_and_gather_add", "select_and_scatter_add": "select_and_scatter_add",
}


def _emit_reduce_window(em, e):
    _emit_window_chooser(em, e, "ge" if e.prim == "reduce_window_max" else "le", e.ins)


def _emit_select_and(em, e):
    _emit_window_chooser(em, e, e.params["select_prim"], e.ins)


OPAQUE_RULES = {
    "dynamic_slice": _emit_dynamic_slice,
    "dynamic_update_slice": _emit_dynamic_update_slice,
    "gather": _emit_gather,
    **{name: _emit_scatter for name in _SCATTER_COMBINE},
    "pad": _emit_pad,
    **{name: _emit_cumulative for name in _CUMULATIVE_COMBINE},
    "sort": _emit_sort,
    "bitcast_convert_type": _emit_bitcast,
    "debug_print": _emit_debug_print,
    "cholesky": _emit_cholesky,
    "eigh": _emit_eigh,
    "eig": _emit_eig,
    "svd": _emit_svd,
    "qr": _emit_qr,
    "lu": _emit_lu,
    "lu_pivots_to_permutation": _emit_lu_pivots_to_permutation,
    "triangular_solve": _emit_triangular_solve,
    "conv_general_dilated": _emit_conv,
    "reduce_window_max": _emit_reduce_window,
    "reduce_window_min": _emit_reduce_window,
    "select_and_gather_add": _emit_select_and,
    "select_and_scatter_add": _emit_select_and,
}

emit_cpu.OPAQUE_RULES.update(OPAQUE_RULES)
