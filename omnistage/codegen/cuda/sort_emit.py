"""The CUDA kernels of `sort`: lax.sort's order on the device, with no host round trip.

Owns the `sort` rule merged into `emit.OPAQUE_KERNELS` (`KERNELS`). The order is the CPU
backend's (`kernels.refine_sort` with `_less`): several operands sorted together along
`dimension`, lexicographic over the first `num_keys` of them, stable, NaNs (either sign) after
everything, -0.0 equal to 0.0 (their order kept), complex keys by (real, imag).

How: every line along `dimension` gets an int64 permutation (the identity), which a bottom-up
merge sort by rank reorders. Pass `w` (run widths 1, 2, 4, ... below the line's length) is one
launch with a thread per element: the element's new position is its offset in its own run plus
the number of elements of the sibling run that go before it, found by a binary search over
the sibling (strictly less for a left-run element, less-or-equal for a right-run one, which is
what keeps the sort stable). Passes ping-pong between two permutation buffers; one gather
kernel then writes every output through the final permutation. Every thread writes its own
position, so the result does not depend on the launch geometry: no atomics, no shared memory,
and the simulator runs it too. The host loops over the passes (launches only, no readback);
the widths reach the kernel as a 1-element slice of a device array of all widths, since
kernel parameters are arrays.
"""
import numpy as np

from ..emit_cpu import _loc_comment


def _emit_sort(driver, e):
    dim = e.params["dimension"]
    shape = tuple(driver.aval(e.ins[0]).shape)
    comment = _loc_comment(e.stmt)
    for out in e.outs:
        driver.alloc(out, driver.program.avals[out], comment)
    if not int(np.prod(shape, dtype=np.int64)):
        return
    widths = _merge_widths(shape[dim])
    perm = _sorted_permutation(driver, e, shape, dim, widths) if widths else None
    _gather(driver, e, shape, dim, perm)


def _merge_widths(n):
    """Run widths of the merge passes: 1, 2, 4, ... while a run pair still has two runs."""
    widths, w = [], 1
    while w < n:
        widths.append(w)
        w *= 2
    return widths


def _sorted_permutation(driver, e, shape, dim, widths):
    """Host lines leaving the name of an int64 array of `shape` whose line along `dim` lists
    the positions of that line in sorted order."""
    base = e.outs[0]
    src, dst = driver.fresh(f"{base}_perm"), driver.fresh(f"{base}_perm_next")
    ws = driver.fresh(f"{base}_widths")
    for buf in (src, dst):
        driver.line(f"{buf} = _cu.empty({shape!r}, np.int64)  # permutation (ping-pong)")
        driver._extra(buf, shape, np.int64)
    driver.line(f"{ws} = _cu.to_device(np.array({widths!r}, dtype=np.int64))  # the passes' run widths")
    driver._extra(ws, (len(widths),), np.int64)
    _identity(driver, e, src, shape, dim)
    kernel, params = _merge_kernel(driver, e, src, dst, ws, shape, dim)
    step = driver.fresh("_pass")
    args = [dst, src, f"{ws}[{step}:{step} + 1]"] + params[3:]
    size = int(np.prod(shape, dtype=np.int64))
    driver.line(f"for {step} in range({len(widths)}):  # merge runs of width {ws}[{step}]")
    driver.line(f"{kernel}[_cu.grid({size})]({', '.join(args)})", 2)
    driver.line(f"{src}, {dst} = {dst}, {src}", 2)
    return src


def _identity(driver, e, perm, shape, dim):
    idx = [f"_i{k}" for k in range(len(shape))]
    kernel, kb = driver.grid_body(perm, shape, idx, f"{perm}_init")
    kb.line(f"{kb.target(perm, idx)} = np.int64({idx[dim]})")
    driver.finish_kernel(kernel, kb, e, [perm])
    driver.launch(kernel, f"_cu.grid({int(np.prod(shape, dtype=np.int64))})", kb)


def _merge_kernel(driver, e, src, dst, ws, shape, dim):
    """One merge pass as a kernel (dst, src, width, keys...): the run width comes from
    `ws[0]`, so one kernel serves every pass. Returns (kernel name, its parameters)."""
    n = shape[dim]
    idx = [f"_i{k}" for k in range(len(shape))]
    at = lambda pos: [pos if k == dim else i for k, i in enumerate(idx)]  # noqa: E731
    kernel, kb = driver.grid_body(dst, shape, idx, f"{e.outs[0]}_merge")
    kb._use(src)
    kb._use(ws)
    k = idx[dim]
    kb.line(f"_w = {ws}[0]")
    kb.line(f"_run = {k} - {k} % _w  # where this element's run starts")
    kb.line(f"_left = ({k} // _w) % 2 == 0")
    kb.line("_sib = _run + _w if _left else _run - _w  # the run it merges with")
    kb.line("_base = _run if _left else _sib  # where the merged pair starts")
    # the sibling's bounds, clipped to the line (a last left run may have no sibling)
    kb.line(f"_a = _sib if _sib < {n} else np.int64({n})")
    kb.line(f"_b = _sib + _w if _sib + _w < {n} else np.int64({n})")
    kb.line("_a0 = _a")
    kb.line(f"_me = {kb.read(src, at(k))}")
    keys = e.ins[:e.params["num_keys"]]
    mine = _key_locals(kb, keys, at("_me"), "_x")
    kb.line("while _a < _b:")
    kb.indent += 1
    kb.line("_m = (_a + _b) // 2")
    kb.line(f"_o = {kb.read(src, at('_m'))}")
    theirs = _key_locals(kb, keys, at("_o"), "_y")
    # ties: a left element goes before its right-run equals, a right one after its left-run equals
    before = f"({_lex_less(driver, keys, theirs, mine)} if _left else not {_lex_less(driver, keys, mine, theirs)})"
    kb.line(f"if {before}:")
    kb.line("    _a = _m + np.int64(1)")
    kb.line("else:")
    kb.line("    _b = _m")
    kb.indent -= 1
    kb._memo = {}  # locals set inside the loop are not values at this point
    kb.line(f"{kb.target(dst, at(f'_base + ({k} - _run) + (_a - _a0)'))} = _me")
    driver.finish_kernel(kernel, kb, e, [dst, src, ws])
    return kernel, kb.params


def _key_locals(kb, keys, idx, prefix):
    """Locals holding each key's element at `idx` (read once, compared several times)."""
    names = []
    for j, key in enumerate(keys):
        name = f"{prefix}{j}"
        kb.line(f"{name} = {kb.value(key, idx)}")
        names.append(name)
    return names


def _lex_less(driver, keys, a, b):
    """Whether the key tuple `a` goes strictly before `b`: lexicographic, complex keys as
    (real, imag), each part by `_less`."""
    parts = []
    for key, x, y in zip(keys, a, b):
        kind = np.dtype(driver.aval(key).dtype).kind
        if kind == "c":
            parts += [(f"{x}.real", f"{y}.real", "f"), (f"{x}.imag", f"{y}.imag", "f")]
        else:
            parts.append((x, y, kind))
    x, y, kind = parts[-1]
    expr = _less(x, y, kind)
    for x, y, kind in reversed(parts[:-1]):
        expr = f"({_less(x, y, kind)} or (not {_less(y, x, kind)} and {expr}))"
    return expr


def _less(x, y, kind):
    """`kernels._less` for one real part: NaNs after everything, -0.0 equal to 0.0."""
    if kind == "b":
        return f"(not {x} and {y})"  # False before True, without ordering bools
    if kind in "iu":
        return f"({x} < {y})"
    return f"({x} < {y} or ({y} != {y} and {x} == {x}))"


def _gather(driver, e, shape, dim, perm):
    """One kernel writing every output: out[..., k, ...] = x[..., perm[..., k, ...], ...]
    (the operand itself when lines are too short to need a permutation)."""
    idx = [f"_i{k}" for k in range(len(shape))]
    kernel, kb = driver.grid_body(e.outs[0], shape, idx, f"{e.outs[0]}_gather")
    src = idx
    if perm is not None:
        kb.line(f"_src = {kb.read(perm, idx)}")
        src = [("_src" if k == dim else i) for k, i in enumerate(idx)]
    for out, x in zip(e.outs, e.ins):
        kb._use(out)
        kb.line(f"{kb.target(out, idx)} = {kb.value(x, src)}")
    driver.finish_kernel(kernel, kb, e, list(e.outs))
    note = "  # through the sorted permutation" if perm else "  # lines of one element: a copy"
    driver.launch(kernel, f"_cu.grid({int(np.prod(shape, dtype=np.int64))})", kb, note)


KERNELS = {"sort": _emit_sort}
