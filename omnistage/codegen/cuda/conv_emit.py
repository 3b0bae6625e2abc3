"""The CUDA kernel for `conv_general_dilated`: one thread per output element (grid-stride),
reading lhs and rhs in place through the dimension numbers (no relayout copies).

Semantics and rounding are the CPU kernel's (`kernels.conv`): operands are cast to the output
dtype, the accumulator starts at zero in that dtype and sums `lhs * rhs` over the kernel taps in
C order (outer) and the input channels (inner), skipping taps that land in padding or between
lhs-dilated elements; integers wrap. Window strides, padding (negative crops), lhs/rhs
dilation, feature and batch groups and any number of spatial dimensions (0 too) are static,
so they are folded into the index arithmetic. Floats agree with the CPU to rounding: both
compilers may contract the products and sums into fmas. Complex operands work as they are
(products and sums only); a complex operand with a real output type runs on the host.

`KERNELS` maps a primitive to its rule `rule(driver, e)` (a `HostDriver` and the statement);
`emit.py` merges it into `OPAQUE_KERNELS`."""
from ..emit_cpu import dtype_expr


def _affine(terms, offset):
    """Text of sum(var * coef) + offset, dropping unit coefficients and zero terms."""
    parts = [v if c == 1 else f"{v} * {c}" for v, c in terms if c != 0]
    text = " + ".join(parts) or "0"
    if offset:
        text += f" + {offset}" if offset > 0 else f" - {-offset}"
    return text


def _dilated(n, rate):
    return (n - 1) * rate + 1 if n > 0 else 0


def _open_taps(kb, p, la, ra, out_idx):
    """Open one loop per spatial dimension over the kernel taps, each followed by the test
    that the tap reads a real input element; returns (lhs spatial, rhs spatial) index texts
    and how many indentation levels were opened."""
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    lhs_sp, rhs_sp, opened = [], [], 0
    for d in range(la.ndim - 2):
        n, k = la.shape[lhs_spec[2 + d]], ra.shape[rhs_spec[2 + d]]
        stride, (lo, _), ld, rd = p["window_strides"][d], p["padding"][d], p["lhs_dilation"][d], p["rhs_dilation"][d]
        tap, pos = f"_k{d}", f"_p{d}"
        kb.line(f"for {tap} in range({k}):")
        kb.line(f"    {pos} = {_affine([(out_idx[out_spec[2 + d]], stride), (tap, rd)], -lo)}")
        # position in the dilated, padded input: inside, and on an lhs element (not a hole)
        test = f"0 <= {pos} < {_dilated(n, ld)}" + (f" and {pos} % {ld} == 0" if ld > 1 else "")
        kb.line(f"    if {test}:")
        kb.indent += 2
        opened += 2
        lhs_sp.append(f"{pos} // {ld}" if ld > 1 else pos)
        rhs_sp.append(tap)
    return lhs_sp, rhs_sp, opened


def _place(spec, batch, feature, spatial):
    """Operand index texts from (batch/out-feature, feature, spatial...) in spec order."""
    idx = [None] * len(spec)
    for pos, text in zip(spec, [batch, feature] + spatial):
        idx[pos] = text
    return idx


def _conv_element(driver, e, kb, idx):
    lhs, rhs = e.ins
    p = e.params
    la, ra = driver.aval(lhs), driver.aval(rhs)
    dt = driver.program.avals[e.outs[0]].dtype
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    fg, bg = p["feature_group_count"], p["batch_group_count"]
    n, o = idx[out_spec[0]], idx[out_spec[1]]
    per_group = ra.shape[rhs_spec[0]] // max(fg, bg)
    in_ch = ra.shape[rhs_spec[1]]
    group = f"({o} // {per_group})"
    # batch groups: group g reads lhs batch entries [g*N', (g+1)*N'); feature groups: channels [g*I, (g+1)*I)
    src_n = f"{group} * {la.shape[lhs_spec[0]] // bg} + {n}" if bg > 1 else n
    chan = f"{group} * {in_ch} + _c" if fg > 1 else "_c"
    T = dtype_expr(dt)
    kb.line(f"_acc = {T}(0)")
    lhs_sp, rhs_sp, opened = _open_taps(kb, p, la, ra, idx)
    kb.line(f"for _c in range({in_ch}):")
    cast = (lambda v: v) if la.dtype == dt else (lambda v: f"{T}({v})")  # noqa: E731
    x = cast(kb.value(lhs, _place(lhs_spec, src_n, chan, lhs_sp)))
    w = cast(kb.value(rhs, _place(rhs_spec, o, "_c", rhs_sp)))
    if dt.kind in "iu":  # wraps like the CPU kernel's stores into an integer array
        kb.line(f"    _acc = {T}(_acc + {T}({x} * {w}))")
    else:
        kb.line(f"    _acc = _acc + {x} * {w}")
    kb.indent -= opened
    return "_acc"


def _emit_conv(driver, e):
    from .emit import _map_kernel

    lhs, _ = e.ins
    out_aval = driver.program.avals[e.outs[0]]
    if driver.aval(lhs).dtype.kind == "c" and out_aval.dtype.kind != "c":
        return driver.emit_host_call(e)
    _map_kernel(driver, e, out_aval, lambda kb, idx: _conv_element(driver, e, kb, idx))


KERNELS = {"conv_general_dilated": _emit_conv}
