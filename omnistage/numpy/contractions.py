"""Products in `omnistage.numpy`: matmul (`@`), dot, vdot, inner, outer, tensordot, einsum,
kron, cross, vecdot, matvec/vecmat, and convolve/correlate.

Every contraction lowers to `lax.dot_general` plus static index arithmetic (transpose,
reshape, squeeze, a strided slice for diagonals); reductions of labels that appear once are
`reduce_sum`. Broadcast batch dimensions of size 1 are squeezed out and carried as free
dimensions instead of being materialized. convolve/correlate lower to
`lax.conv_general_dilated`. Imports core and lax only.
"""
import math
import operator

import numpy as np

from ..core import dtypes
from .. import lax
from . import shapes, ufuncs
from ._promote import check_arraylike, promote_dtypes, promote_dtypes_inexact
from .eager_programs import wrap_module_functions


def _convert_to(x, dtype):
    return x if dtype is None else lax.convert_element_type(x, dtype)


# --- matmul / dot ------------------------------------------------------------------------


def _batch_roles(a_batch, b_batch):
    """For right-aligned batch shapes, classify every output batch position.

    Returns (out_batch, roles) where roles[i] is 'both' (a dot_general batch dimension),
    'a' or 'b' (present with its full size in one operand only; the other operand's size-1
    or missing dimension is squeezed away), or 'none' (size 1 or missing in both)."""
    out_batch = lax.broadcast_shapes(a_batch, b_batch)
    n = len(out_batch)
    a_full = (None,) * (n - len(a_batch)) + tuple(a_batch)
    b_full = (None,) * (n - len(b_batch)) + tuple(b_batch)
    roles = []
    for d, da, db in zip(out_batch, a_full, b_full):
        if da == d and db == d:
            roles.append("both")
        elif da == d and d != 1:
            roles.append("a")
        elif db == d and d != 1:
            roles.append("b")
        else:
            roles.append("none")
    return out_batch, roles


def matmul(a, b, /, *, precision=None, preferred_element_type=None):
    """`a @ b` with NumPy's rules: 1-D operands promoted, leading dims broadcast as batch."""
    check_arraylike("matmul", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: inputs must be at least 1-D, got shapes {a.shape} and {b.shape}; use "
            f"jnp.multiply (or *) to scale by a scalar."
        )
    a_core, b_core = min(a.ndim, 2), min(b.ndim, 2)
    k_a, k_b = a.shape[-1], b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise TypeError(
            f"matmul: contracting dimensions differ: {k_a} != {k_b} (shapes {a.shape} and "
            f"{b.shape}); a's last axis must match b's second-to-last (or only) axis."
        )
    out_batch, roles = _batch_roles(a.shape[:-2], b.shape[:-2])
    nbatch = len(out_batch)
    a = _drop_size_one_batch(a, roles, "a", a_core, nbatch)
    b = _drop_size_one_batch(b, roles, "b", b_core, nbatch)
    # a is now (both..., a-only..., [m], k), b is (both..., b-only..., k, [n])
    n_both = roles.count("both")
    batch_dims = tuple(range(n_both))
    dims = (((a.ndim - 1,), (b.ndim - (1 if b_core == 1 else 2),)), (batch_dims, batch_dims))
    out = lax.dot_general(a, b, dims, preferred_element_type=preferred_element_type)
    return _restore_batch_order(out, roles, a_core == 2, b_core == 2)


def _drop_size_one_batch(x, roles, mine, core, nbatch):
    """Keep x's batch axes with role 'both' or `mine`, ordered 'both' first."""
    lead = nbatch - (x.ndim - core)
    axes = [i - lead for i in range(lead, nbatch)]
    keep_both = [i - lead for i in range(lead, nbatch) if roles[i] == "both"]
    keep_own = [i - lead for i in range(lead, nbatch) if roles[i] == mine]
    drop = [ax for ax in axes if ax not in keep_both and ax not in keep_own]
    perm = keep_both + keep_own + [ax for ax in axes if ax in drop] + list(range(x.ndim - core, x.ndim))
    x = lax.transpose(x, perm)
    if drop:
        start = len(keep_both) + len(keep_own)
        x = lax.squeeze(x, tuple(range(start, start + len(drop))))
    return x


def _restore_batch_order(out, roles, has_m, has_n):
    """dot_general gives (both..., a-only..., [m], b-only..., [n]); reorder to NumPy's
    (batch... in broadcast order, [m], [n]), inserting size-1 axes for 'none' roles."""
    both = [i for i, r in enumerate(roles) if r == "both"]
    a_only = [i for i, r in enumerate(roles) if r == "a"]
    b_only = [i for i, r in enumerate(roles) if r == "b"]
    pos = {}
    order = both + a_only
    for j, i in enumerate(order):
        pos[i] = j
    m_axis = len(order) if has_m else None
    base = len(order) + int(has_m)
    for j, i in enumerate(b_only):
        pos[i] = base + j
    n_axis = base + len(b_only) if has_n else None
    present = sorted(pos, key=lambda i: i)
    perm = [pos[i] for i in present] + [ax for ax in (m_axis, n_axis) if ax is not None]
    out = lax.transpose(out, perm)
    if len(present) != len(roles):
        shape = []
        it = iter(out.shape[: len(present)])
        for i in range(len(roles)):
            shape.append(next(it) if i in pos else 1)
        out = lax.reshape(out, tuple(shape) + out.shape[len(present):])
    return out


def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's dot: scalar product for 0-d, else contract a's last with b's second-to-last."""
    check_arraylike("dot", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _convert_to(ufuncs.multiply(a, b), preferred_element_type)
    b_axis = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[b_axis]:
        raise TypeError(
            f"dot: shapes {a.shape} and {b.shape} are not aligned: a's last axis ({a.shape[-1]}) "
            f"must match b's {'only' if b.ndim == 1 else 'second-to-last'} axis ({b.shape[b_axis]})."
        )
    return lax.dot_general(a, b, (((a.ndim - 1,), (b_axis,)), ((), ())), preferred_element_type=preferred_element_type)


def vdot(a, b, /, *, precision=None, preferred_element_type=None):
    """Flattened dot product, conjugating the first argument."""
    check_arraylike("vdot", a, b)
    a, b = promote_dtypes(a, b)
    if a.size != b.size:
        raise ValueError(f"vdot: inputs must have the same number of elements, got shapes {a.shape} and {b.shape}.")
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        a = lax.conj(a)
    a, b = lax.reshape(a, (a.size,)), lax.reshape(b, (b.size,))
    return lax.dot_general(a, b, (((0,), (0,)), ((), ())), preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugated dot product of vectors along `axis`, broadcasting the other axes."""
    check_arraylike("vecdot", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        x1 = lax.conj(x1)
    x1 = _move_axis_last(x1, axis, "vecdot")
    x2 = _move_axis_last(x2, axis, "vecdot")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"vecdot: axis {axis} sizes differ: {x1.shape[-1]} != {x2.shape[-1]} (shapes {x1.shape} and {x2.shape}).")
    out = matmul(lax.expand_dims(x1, (x1.ndim - 1,)), lax.expand_dims(x2, (x2.ndim,)), preferred_element_type=preferred_element_type)
    return lax.reshape(out, out.shape[:-2])


def _move_axis_last(x, axis, name):
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for shape {x.shape}")
    axis %= x.ndim
    return lax.transpose(x, [i for i in range(x.ndim) if i != axis] + [axis])


def matvec(x1, x2, /):
    """Matrix-vector product: x1 (..., m, n) with x2 (..., n) gives (..., m)."""
    check_arraylike("matvec", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    out = matmul(x1, lax.expand_dims(x2, (x2.ndim,)))
    return lax.squeeze(out, (out.ndim - 1,))


def vecmat(x1, x2, /):
    """Conjugated vector-matrix product: x1 (..., n) with x2 (..., n, m) gives (..., m)."""
    check_arraylike("vecmat", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        x1 = lax.conj(x1)
    out = matmul(lax.expand_dims(x1, (x1.ndim - 1,)), x2)
    return lax.squeeze(out, (out.ndim - 2,))


def inner(a, b, /, *, precision=None, preferred_element_type=None):
    """Sum product over the last axes of a and b."""
    check_arraylike("inner", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _convert_to(ufuncs.multiply(a, b), preferred_element_type)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: last dimensions differ: {a.shape[-1]} != {b.shape[-1]} (shapes {a.shape} and {b.shape}).")
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())), preferred_element_type=preferred_element_type)


def outer(a, b, out=None):
    """Outer product of the flattened inputs: shape (a.size, b.size)."""
    check_arraylike("outer", a, b)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = promote_dtypes(a, b)
    # each element one product, as JAX's a[:, None] * b[None, :]: a contraction-free
    # dot_general through BLAS adds the product to +0, which loses a -0 (0 * -0)
    return ufuncs.multiply(lax.reshape(a, (a.size, 1)), lax.reshape(b, (1, b.size)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Contract the last `axes` axes of a with the first of b, or explicit axis pairs."""
    check_arraylike("tensordot", a, b)
    a, b = promote_dtypes(a, b)
    a_axes, b_axes = _tensordot_axes(a, b, axes)
    for i, j in zip(a_axes, b_axes):
        if a.shape[i] != b.shape[j]:
            raise TypeError(
                f"tensordot: axis {i} of a (size {a.shape[i]}) and axis {j} of b (size "
                f"{b.shape[j]}) differ; shapes {a.shape} and {b.shape}, axes={axes}."
            )
    return lax.dot_general(a, b, ((a_axes, b_axes), ((), ())), preferred_element_type=preferred_element_type)


def _tensordot_axes(a, b, axes):
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise TypeError(f"tensordot: axes={n} must be between 0 and min(a.ndim, b.ndim) for shapes {a.shape} and {b.shape}.")
        return tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    try:
        a_axes, b_axes = axes
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of axis sequences, got {axes!r}.") from None
    a_axes = (a_axes,) if isinstance(a_axes, (int, np.integer)) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, (int, np.integer)) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
        raise TypeError(f"tensordot: axes pair lengths differ: {a_axes} and {b_axes}.")
    return _canonical(a_axes, a.ndim, "tensordot"), _canonical(b_axes, b.ndim, "tensordot")


def _canonical(axes, ndim, name):
    out = []
    for ax in axes:
        ax = operator.index(ax)
        if not -ndim <= ax < ndim:
            raise ValueError(f"{name}: axis {ax} is out of bounds for an array of dimension {ndim}")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {tuple(axes)}")
    return tuple(out)


def kron(a, b):
    """Kronecker product: blocks a[i, j] * b."""
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    nd = max(a.ndim, b.ndim)
    a = lax.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = lax.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    prod = lax.dot_general(a, b, (((), ()), ((), ())))  # (a dims..., b dims...)
    interleave = [ax for i in range(nd) for ax in (i, nd + i)]
    return lax.reshape(lax.transpose(prod, interleave), tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors along the given axes, broadcasting the rest
    (2-vectors get a zero z component; two 2-vectors give the scalar z component)."""
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(a, b)
    a, b = _move_axis_last(a, axisa, "cross"), _move_axis_last(b, axisb, "cross")
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(
            f"cross: incompatible dimensions for cross product (dimension must be 2 or 3), got "
            f"shapes {a.shape} and {b.shape} along axes {axisa} and {axisb}."
        )
    a0, a1, a2 = _components(a)
    b0, b1, b2 = _components(b)
    z = ufuncs.subtract(ufuncs.multiply(a0, b1), ufuncs.multiply(a1, b0))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    x = ufuncs.subtract(ufuncs.multiply(a1, b2), ufuncs.multiply(a2, b1))
    y = ufuncs.subtract(ufuncs.multiply(a2, b0), ufuncs.multiply(a0, b2))
    return shapes.moveaxis(shapes.stack([x, y, z], axis=-1), -1, axisc)


def _components(v):
    """The x, y, z components of vectors along the last axis (z = 0 for 2-vectors)."""
    if v.shape[-1] == 2:
        v = lax.pad(v, np.zeros((), v.dtype), [(0, 0, 0)] * (v.ndim - 1) + [(0, 1, 0)])
    return [lax.index_in_dim(v, i, v.ndim - 1, keepdims=False) for i in range(3)]


# --- einsum ------------------------------------------------------------------------------


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None):
    """Einstein summation (NumPy's subscripts incl. '...' and implicit output, or the
    interleaved operand/sublist form), lowered to pairwise dot_general contractions in a
    greedy order (`optimize=False`: left to right; or an explicit einsum_path list)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_to_subscripts(subscripts, operands)
    check_arraylike("einsum", *operands)
    ops = promote_dtypes(*operands)
    if preferred_element_type is not None:
        ops = [lax.convert_element_type(x, preferred_element_type) for x in ops]
    in_labels, out_labels = parse_subscripts(subscripts, [x.ndim for x in ops])
    sizes = _label_sizes(subscripts, in_labels, ops)
    terms = [_prepare_operand(x, labels, sizes, in_labels, i, out_labels) for i, (x, labels) in enumerate(zip(ops, in_labels))]
    for group in _contraction_path(optimize, terms, out_labels, sizes):
        terms = _contract_group(terms, group, out_labels)
    x, labels = terms[0]
    x, labels = _sum_labels(x, labels, [l for l in labels if l not in out_labels])
    return lax.transpose(x, [labels.index(l) for l in out_labels])


def _interleaved_to_subscripts(first, rest):
    """einsum(op0, sub0, op1, sub1, ..., [sub_out]) -> ('subscripts', operands)."""
    args = (first,) + tuple(rest)
    out_sub = args[-1] if len(args) % 2 else None
    if out_sub is not None:
        args = args[:-1]
    ops, subs = list(args[0::2]), list(args[1::2])

    def spell(sub):
        parts = []
        for s in sub:
            if s is Ellipsis:
                parts.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < len(_LETTERS):
                parts.append(_LETTERS[int(s)])
            else:
                raise ValueError(f"einsum: sublist entries must be integers in [0, 52) or Ellipsis, got {s!r}.")
        return "".join(parts)

    spec = ",".join(spell(s) for s in subs)
    if out_sub is not None:
        spec += "->" + spell(out_sub)
    return spec, ops


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def parse_subscripts(subscripts, ndims):
    """Labels of each operand and of the output. Ellipsis dimensions get labels '.0', '.1',
    ... aligned from the right (so they broadcast like NumPy's)."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    in_specs = inputs.split(",")
    if len(in_specs) != len(ndims):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(in_specs)} operand(s) but "
            f"{len(ndims)} operand(s) were given."
        )
    ell_ranks = [nd - (len(s) - 3) if "..." in s else 0 for s, nd in zip(in_specs, ndims)]
    n_ell = max(ell_ranks, default=0)
    in_labels = [_spell_labels(s, nd, k, n_ell, subscripts) for s, nd, k in zip(in_specs, ndims, ell_ranks)]
    if arrow:
        out_labels = _spell_labels(output, None, n_ell, n_ell, subscripts)
        _check_output(out_labels, in_labels, subscripts)
    else:
        counts = {}
        for labels in in_labels:
            for l in labels:
                counts[l] = counts.get(l, 0) + 1
        ell = [f".{i}" for i in range(n_ell)]
        out_labels = ell + sorted(l for l, c in counts.items() if c == 1 and not l.startswith("."))
    return in_labels, out_labels


def _spell_labels(spec, ndim, ell_rank, n_ell, subscripts):
    if spec.count("...") > 1 or "." in spec.replace("...", ""):
        raise ValueError(f"einsum: invalid ellipsis in subscripts {subscripts!r}.")
    head, has_ell, tail = spec.partition("...")
    for c in head + tail:
        if not c.isalpha() or not c.isascii():
            raise ValueError(f"einsum: invalid subscript {c!r} in {subscripts!r}; use letters a-z, A-Z.")
    if ndim is not None and (ell_rank < 0 or (not has_ell and len(spec) != ndim)):
        raise ValueError(
            f"einsum: operand subscripts {spec!r} name {len(head + tail)} dimension(s) but the "
            f"operand has {ndim} (subscripts {subscripts!r})."
        )
    ell = [f".{i}" for i in range(n_ell - ell_rank, n_ell)] if has_ell else []
    return list(head) + ell + list(tail)


def _check_output(out_labels, in_labels, subscripts):
    seen = {l for labels in in_labels for l in labels}
    for l in out_labels:
        if l not in seen and not l.startswith("."):
            raise ValueError(f"einsum: output subscript {l!r} does not appear in the inputs of {subscripts!r}.")
    if len(set(out_labels)) != len(out_labels):
        raise ValueError(f"einsum: output subscripts repeat a label in {subscripts!r}.")


def _label_sizes(subscripts, in_labels, ops):
    """Each label's size; size-1 occurrences broadcast against the others."""
    sizes = {}
    for labels, x in zip(in_labels, ops):
        for l, d in zip(labels, x.shape):
            old = sizes.get(l, 1)
            if d != old and 1 not in (d, old):
                name = "an ellipsis dimension" if l.startswith(".") else f"subscript {l!r}"
                raise ValueError(
                    f"einsum: {name} has size {old} in one operand and {d} in another "
                    f"(subscripts {subscripts!r}, shapes {', '.join(str(o.shape) for o in ops)})."
                )
            sizes[l] = max(old, d)
    return sizes


def _prepare_operand(x, labels, sizes, in_labels, index, out_labels):
    """Squeeze broadcast size-1 axes, take diagonals of repeated labels, and sum labels no
    other operand or the output needs. Returns (array, labels)."""
    labels = list(labels)
    drop = [i for i, l in enumerate(labels) if x.shape[i] == 1 and sizes[l] != 1]
    if drop:
        x = lax.squeeze(x, drop)
        labels = [l for i, l in enumerate(labels) if i not in drop]
    while len(set(labels)) != len(labels):
        l = next(l for l in labels if labels.count(l) > 1)
        i = labels.index(l)
        j = labels.index(l, i + 1)
        x = diagonal_of_axes(x, i, j)
        labels = [m for k, m in enumerate(labels) if k not in (i, j)] + [l]
    needed = set(out_labels).union(*(set(o) for k, o in enumerate(in_labels) if k != index))
    return _sum_labels(x, labels, [l for l in labels if l not in needed])


def diagonal_of_axes(x, axis1, axis2):
    """The diagonal of axes axis1, axis2 (equal sizes) as x's new last axis, without a
    gather: move them last, flatten the pair, and take every (n+1)-th element."""
    n = x.shape[axis1]
    rest = [i for i in range(x.ndim) if i not in (axis1, axis2)]
    x = lax.transpose(x, rest + [axis1, axis2])
    x = lax.reshape(x, x.shape[:-2] + (n * n,))
    return lax.slice_in_dim(x, 0, n * n, n + 1, x.ndim - 1) if n > 1 else x


def _sum_labels(x, labels, summed):
    if not summed:
        return x, labels
    axes = tuple(labels.index(l) for l in summed)
    x = lax.reduce_or(x, axes) if x.dtype == np.bool_ else lax.reduce_sum(x, axes)
    return x, [l for l in labels if l not in summed]


def _contract_pair(a, la, b, lb, keep):
    """dot_general of two labelled operands; labels in `keep` survive."""
    shared = [l for l in la if l in lb]
    batch = [l for l in shared if l in keep]
    contract = [l for l in shared if l not in keep]
    a, la = _sum_labels(a, la, [l for l in la if l not in lb and l not in keep])
    b, lb = _sum_labels(b, lb, [l for l in lb if l not in la and l not in keep])
    dims = (
        (tuple(la.index(l) for l in contract), tuple(lb.index(l) for l in contract)),
        (tuple(la.index(l) for l in batch), tuple(lb.index(l) for l in batch)),
    )
    out = lax.dot_general(a, b, dims)
    labels = batch + [l for l in la if l not in shared] + [l for l in lb if l not in shared]
    return out, labels


def _contract_group(terms, group, out_labels):
    """Contract the operands at positions `group` (left to right); the result goes last."""
    picked = [terms[i] for i in group]
    rest = [t for i, t in enumerate(terms) if i not in group]
    keep = set(out_labels).union(*(set(l) for _, l in rest))
    x, labels = picked[0]
    for k, (y, ly) in enumerate(picked[1:], start=1):
        later = set().union(*(set(l) for _, l in picked[k + 1:]))
        x, labels = _contract_pair(x, labels, y, ly, keep | later)
    return rest + [(x, labels)]


def _contraction_path(optimize, terms, out_labels, sizes):
    """A list of operand-position groups to contract, each result appended at the end."""
    n = len(terms)
    if n == 1:
        return []
    if isinstance(optimize, (list, tuple)):
        path = [tuple(g) for g in optimize if not isinstance(g, str)]
        return path
    if optimize is False or optimize is None or optimize == "none":
        return [(0, 1)] + [(0, 1)] * (n - 2)
    return _greedy_path([list(l) for _, l in terms], out_labels, sizes)


def _greedy_path(label_lists, out_labels, sizes):
    """Repeatedly contract the pair giving the smallest intermediate (then the cheapest)."""
    path = []
    labels = list(label_lists)
    while len(labels) > 1:
        best = None
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                others = [l for k, l in enumerate(labels) if k not in (i, j)]
                keep = set(out_labels).union(*(set(o) for o in others))
                union = set(labels[i]) | set(labels[j])
                result = [l for l in union if l in keep]
                key = (math.prod(sizes[l] for l in result), math.prod(sizes[l] for l in union), i, j)
                if best is None or key < best[0]:
                    best = (key, result)
        (_, _, i, j), result = best
        path.append((i, j))
        labels = [l for k, l in enumerate(labels) if k not in (i, j)] + [result]
    return path


# --- convolve / correlate ----------------------------------------------------------------


def _conv1d(name, a, v, mode, precision, preferred_element_type):
    check_arraylike(name, a, v)
    if np.ndim(a) != 1 or np.ndim(v) != 1:
        raise ValueError(f"{name}() only supports 1-dimensional inputs, got shapes {np.shape(a)} and {np.shape(v)}.")
    if preferred_element_type is None:
        a, v = promote_dtypes_inexact(a, v)  # NumPy's convolutions are floating point
    else:
        a, v = promote_dtypes(a, v)
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}.")
    reverse = False
    if name == "correlate":
        if dtypes.issubdtype(v.dtype, np.complexfloating):
            v = lax.conj(v)
        if a.shape[0] < v.shape[0]:
            a, v, reverse = v, a, True
    else:
        if a.shape[0] < v.shape[0]:
            a, v = v, a
        v = lax.rev(v, (0,))  # convolution is correlation with the flipped kernel
    n = v.shape[0]
    pads = {"valid": (0, 0), "same": (n // 2, n - n // 2 - 1), "full": (n - 1, n - 1)}
    if mode not in pads:
        raise ValueError(f"{name}: mode must be one of ['full', 'same', 'valid'], got {mode!r}.")
    out = lax.conv_general_dilated(
        lax.reshape(a, (1, 1) + a.shape), lax.reshape(v, (1, 1) + v.shape), (1,), [pads[mode]],
        preferred_element_type=preferred_element_type,
    )
    out = lax.reshape(out, out.shape[2:])
    return lax.rev(out, (0,)) if reverse else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of 1-D sequences (floating point unless
    preferred_element_type is given, as in JAX)."""
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of 1-D sequences, conjugating v (NumPy's definition)."""
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)


# Called eagerly, each is one cached program over its two operands (numpy/eager_programs.py).
wrap_module_functions(globals(), (
    "matmul", "dot", "vdot", "vecdot", "matvec", "vecmat", "inner", "outer", "tensordot", "kron",
    "cross",
), operands=2)

__all__ = [
    "matmul", "dot", "vdot", "vecdot", "matvec", "vecmat", "inner", "outer", "tensordot",
    "einsum", "kron", "cross", "convolve", "correlate",
]
