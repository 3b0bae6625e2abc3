"""Index maps: how an index-only primitive (broadcast, transpose, reshape, slice, rev,
squeeze) reads its operand. Given the output element's index expressions, each map returns
the operand's index expressions, so fused loops do address arithmetic instead of copies."""
import math


def _add(a, b):
    if b in ("0", 0):
        return str(a)
    if a in ("0", 0):
        return str(b)
    return f"{a} + {b}"


def _atomic(a):
    """`a` parenthesized unless it is a name or a number (index maps compose textually)."""
    a = str(a)
    return a if a.replace("_", "").isalnum() else f"({a})"


def _mul(a, k):
    if k == 1:
        return str(a)
    if k == 0:
        return "0"
    return f"{_atomic(a)} * {k}"


def broadcast_in_dim(idx, in_shape, *, shape, broadcast_dimensions):
    return [("0" if in_shape[k] == 1 and shape[d] != 1 else idx[d]) for k, d in enumerate(broadcast_dimensions)]


def transpose(idx, in_shape, *, permutation):
    out = [None] * len(permutation)
    for j, p in enumerate(permutation):
        out[p] = idx[j]
    return out


def squeeze(idx, in_shape, *, dimensions):
    it = iter(idx)
    return ["0" if k in dimensions else next(it) for k in range(len(in_shape))]


def slice_(idx, in_shape, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(in_shape)
    return [_add(s, _mul(i, st)) for i, s, st in zip(idx, start_indices, strides)]


def rev(idx, in_shape, *, dimensions):
    return [f"{in_shape[k] - 1} - {_atomic(i)}" if k in dimensions else i for k, i in enumerate(idx)]


def reshape(idx, in_shape, *, new_sizes, dimensions=None):
    if dimensions is not None:
        from .emit_cpu import Unsupported

        raise Unsupported("reshape with `dimensions`")
    if math.prod(in_shape) == 0:
        return ["0"] * len(in_shape)  # an empty array: the loops around this never run
    squeezed_in = [d for d in in_shape if d != 1]
    squeezed_out = [d for d in new_sizes if d != 1]
    if squeezed_in == squeezed_out:
        # only size-1 dimensions come or go: map the non-trivial dims in order
        real = iter([i for i, d in zip(idx, new_sizes) if d != 1])
        return ["0" if d == 1 else next(real) for d in in_shape]
    # Dimensions come and go in groups whose sizes multiply to the same number (784 -> 28, 28
    # beside an untouched 100): each operand index depends only on its own group's output
    # indices, so an axis a reshape leaves alone costs no division.
    out = ["0"] * len(in_shape)
    for ins, outs in _reshape_groups(in_shape, new_sizes):
        terms, stride = [], 1
        for k in reversed(outs):
            terms.append(_mul(idx[k], stride))
            stride *= new_sizes[k]
        flat = " + ".join(reversed(terms))
        size = stride
        for k in ins:
            d = in_shape[k]
            stride //= d
            if stride == 1:
                out[k] = f"({flat}) % {d}" if d != size else f"({flat})"
            else:
                out[k] = f"(({flat}) // {stride}) % {d}" if stride * d != size else f"({flat}) // {stride}"
    return out


def _reshape_groups(in_shape, new_sizes):
    """[(operand dims, output dims)] with equal products, size-1 dimensions left out."""
    ins = [k for k, d in enumerate(in_shape) if d != 1]
    outs = [k for k, d in enumerate(new_sizes) if d != 1]
    groups, i, j = [], 0, 0
    while i < len(ins):
        gi, gj = [ins[i]], [outs[j]]
        pi, pj = in_shape[ins[i]], new_sizes[outs[j]]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj:
                gi.append(ins[i])
                pi *= in_shape[ins[i]]
                i += 1
            else:
                gj.append(outs[j])
                pj *= new_sizes[outs[j]]
                j += 1
        groups.append((gi, gj))
    return groups


INDEX_MAPS = {
    "broadcast_in_dim": broadcast_in_dim,
    "transpose": transpose,
    "squeeze": squeeze,
    "slice": slice_,
    "rev": rev,
    "reshape": reshape,
}


# --- the same maps on strided views ---------------------------------------------------------------
# A view is (offset, strides): element i of the value sits at flat position
# offset + sum(i[k] * strides[k]) of a materialized array (C order, in elements). Index maps
# compose on views exactly (no division, no modulo), so a chain of them over a materialized
# array is one strided copy (`kernels.strided_copy`); None: this map of this view is not one.


def c_strides(shape):
    """The C-order strides (in elements) of `shape`."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _view_transpose(view, in_shape, *, permutation):
    offset, strides = view
    return offset, tuple(strides[p] for p in permutation)


def _view_broadcast(view, in_shape, *, shape, broadcast_dimensions):
    offset, strides = view
    out = [0] * len(shape)
    for k, d in enumerate(broadcast_dimensions):
        out[d] = strides[k] if in_shape[k] != 1 else 0
    return offset, tuple(out)


def _view_squeeze(view, in_shape, *, dimensions):
    offset, strides = view
    return offset, tuple(s for k, s in enumerate(strides) if k not in dimensions)


def _view_slice(view, in_shape, *, start_indices, limit_indices, strides=None):
    offset, st = view
    steps = strides or (1,) * len(in_shape)
    return offset + sum(s * t for s, t in zip(start_indices, st)), tuple(t * p for t, p in zip(st, steps))


def _view_rev(view, in_shape, *, dimensions):
    offset, strides = view
    offset += sum((in_shape[k] - 1) * strides[k] for k in dimensions if in_shape[k] > 0)
    return offset, tuple(-s if k in dimensions else s for k, s in enumerate(strides))


def _view_reshape(view, in_shape, *, new_sizes, dimensions=None):
    """A reshape of a strided view, group by group (`_reshape_groups`): a group whose operand
    axes are laid out in C order relative to each other (a merge or split of contiguous axes,
    or axes that only gain or lose size 1) stays a strided view; else None (a copy would need
    div/mod)."""
    if dimensions is not None:
        return None
    offset, strides = view
    if math.prod(in_shape) == 0:
        return offset, (0,) * len(new_sizes)
    out = [0] * len(new_sizes)  # size-1 output axes: any stride reads the one element
    for ins, outs in _reshape_groups(in_shape, new_sizes):
        inner = strides[ins[-1]]
        if any(strides[a] != strides[b] * in_shape[b] for a, b in zip(ins, ins[1:])):
            return None
        for k, c in zip(outs, c_strides([new_sizes[k] for k in outs])):
            out[k] = inner * c
    return offset, tuple(out)


VIEW_MAPS = {
    "broadcast_in_dim": _view_broadcast,
    "transpose": _view_transpose,
    "squeeze": _view_squeeze,
    "slice": _view_slice,
    "rev": _view_rev,
    "reshape": _view_reshape,
}
