"""CUDA kernels for the max/min window primitives (`lax/window_choosers.py`): one thread per
output element (grid-stride), reading the operands in place.

`reduce_window_max`/`_min` and `select_and_gather_add` (outputs of the pooled shape) scan
their window's taps in row-major order, as the CPU kernel (`kernels._window_choices`) does:
the running choice is kept unless the next tap is greater (ge; lesser for le) or the running
value is NaN; taps in padding or between base-dilated elements hold the identity.
`select_and_scatter_add` (output of the operand's shape) gathers instead of scattering, so no
atomics: each element visits the windows that contain it, in ascending window order (the
order in which the CPU kernel adds), rescans each and adds its source value where the window
chose this element. Axes no window touches (window 1, stride 1, no padding or dilation) are
indexed directly. `KERNELS` is merged into `emit.OPAQUE_KERNELS`.
"""
import numpy as np

from ..emit_cpu import dtype_expr


def _identity(select_prim, dt):
    if dt.kind == "f":
        return f"{dtype_expr(dt)}({'-' if select_prim == 'ge' else ''}np.inf)"
    info = np.iinfo(dt)
    return f"{dtype_expr(dt)}({info.min if select_prim == 'ge' else info.max})"


def _touched(p, d):
    return (p["window_dimensions"][d], p["window_strides"][d], p["padding"][d], p["base_dilation"][d],
            p["window_dilation"][d]) != (1, 1, (0, 0), 1, 1)


def _dilated(n, rate):
    return (n - 1) * rate + 1 if n > 0 else 0


def _scan(kb, e, x_aval, win_idx, on_take):
    """Lines scanning the window at output index texts `win_idx` (one per operand axis):
    opens a loop per touched axis over its taps, computes the tap's operand index and value
    `_v` (the identity where it is padding), and calls `on_take(x_idx, taps)` to write the
    lines run when the scan takes the tap. Returns the indentation levels opened."""
    p = e.params
    select_prim = p.get("select_prim") or ("ge" if e.prim == "reduce_window_max" else "le")
    x = e.ins[-1]
    opened, x_idx, tests, taps = 0, [], [], []
    for d, n in enumerate(x_aval.shape):
        if not _touched(p, d):
            x_idx.append(win_idx[d])
            taps.append("0")
            continue
        w, s, (lo, _), b, r = (p["window_dimensions"][d], p["window_strides"][d], p["padding"][d],
                               p["base_dilation"][d], p["window_dilation"][d])
        kb.line(f"for _w{d} in range({w}):")
        kb.line(f"    _p{d} = {win_idx[d]} * {s} + _w{d} * {r} - {lo}")
        kb.indent += 1
        opened += 1
        tests.append(f"0 <= _p{d} < {_dilated(n, b)}" + (f" and _p{d} % {b} == 0" if b > 1 else ""))
        x_idx.append(f"_p{d} // {b}" if b > 1 else f"_p{d}")
        taps.append(f"_w{d}")
    identity = _identity(select_prim, x_aval.dtype)
    if tests:
        kb.line(f"_real = {' and '.join(tests)}")
        kb.line("if _real:")
        kb.line(f"    _v = {kb.value(x, x_idx)}")
        kb.line("else:")
        kb.line(f"    _v = {identity}")
    else:
        kb.line("_real = True")
        kb.line(f"_v = {kb.value(x, x_idx)}")
    compare = ">=" if select_prim == "ge" else "<="
    kb.line(f"if _first or not (_acc {compare} _v or _acc != _acc):")
    kb.indent += 1
    kb.line("_first = False")
    kb.line("_acc = _v")
    on_take(x_idx, taps)
    kb.indent -= 1
    return opened, identity


def _pooled_element(driver, e, kb, idx):
    """reduce_window_max/min (the chosen value) and select_and_gather_add (the tangent there)."""
    x = e.ins[-1]
    x_aval = driver.aval(x)
    gather = e.prim == "select_and_gather_add"
    out_dt = driver.program.avals[e.outs[0]].dtype
    kb.line("_first = True")
    kb.line(f"_acc = {dtype_expr(x_aval.dtype)}(0)")
    if gather:
        kb.line(f"_t = {dtype_expr(out_dt)}(0)")

    def on_take(x_idx, taps):
        if gather:
            kb.line("if _real:")
            kb.line(f"    _t = {kb.value(e.ins[0], x_idx)}")
            kb.line("else:")
            kb.line(f"    _t = {dtype_expr(out_dt)}(0)")

    opened, _ = _scan(kb, e, x_aval, idx, on_take)
    kb.indent -= opened
    return "_t" if gather else "_acc"


def _scatter_element(driver, e, kb, idx):
    """select_and_scatter_add at operand index `idx`: the sum over the windows choosing it."""
    source, x = e.ins
    p = e.params
    x_aval, src_aval = driver.aval(x), driver.aval(source)
    out_dt = driver.program.avals[e.outs[0]].dtype
    kb.line(f"_sum = {dtype_expr(out_dt)}(0)")
    opened, win_idx, mine = 0, [], []
    for d in range(x_aval.ndim):
        if not _touched(p, d):
            win_idx.append(idx[d])
            mine.append("0")
            continue
        w, s, (lo, _), b, r = (p["window_dimensions"][d], p["window_strides"][d], p["padding"][d],
                               p["base_dilation"][d], p["window_dilation"][d])
        # tap _k of window _o lands here when _o * s + _k * r - lo == idx * b; taps descending
        # so that windows ascend (the CPU kernel's order of addition)
        kb.line(f"for _k{d} in range({w - 1}, -1, -1):")
        kb.line(f"    _q{d} = {idx[d]} * {b} + {lo} - _k{d} * {r}")
        kb.line(f"    if _q{d} >= 0 and _q{d} % {s} == 0 and _q{d} // {s} < {src_aval.shape[d]}:")
        kb.line(f"        _o{d} = _q{d} // {s}")
        kb.indent += 2
        opened += 2
        win_idx.append(f"_o{d}")
        mine.append(f"_k{d}")
    kb.line("_first = True")
    kb.line(f"_acc = {dtype_expr(x_aval.dtype)}(0)")
    kb.line("_mine = False")

    def on_take(x_idx, taps):
        kb.line(f"_mine = {' and '.join(f'{t} == {m}' for t, m in zip(taps, mine) if m != '0') or 'True'}")

    scan_opened, _ = _scan(kb, e, x_aval, win_idx, on_take)
    kb.indent -= scan_opened
    kb.line("if _mine:")
    kb.line(f"    _sum = _sum + {kb.value(source, win_idx)}")
    kb.indent -= opened
    return "_sum"


def _emit(element):
    def rule(driver, e):
        from .emit import _map_kernel

        _map_kernel(driver, e, driver.program.avals[e.outs[0]], lambda kb, idx: element(driver, e, kb, idx))

    return rule


KERNELS = {
    "reduce_window_max": _emit(_pooled_element),
    "reduce_window_min": _emit(_pooled_element),
    "select_and_gather_add": _emit(_pooled_element),
    "select_and_scatter_add": _emit(_scatter_element),
}
