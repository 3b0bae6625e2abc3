"""A row group's passes (codegen/row_passes.py): a reduction merged into the loop that writes
the row it reduces, only where the values cannot change, and the next row prefetched after the
first pass; the native tier's results are the same bits with and without both."""
import os
import shutil

import numpy as np
import pytest

import omnistage as fw
import omnistage.numpy as xnp
from omnistage.codegen import aot, row_passes
from omnistage.codegen.executable import compile_for_cpu

SOFTMAX_ROW = """\
        _acc = _c0_int32  # a.py:6
        for _i1 in range(512):
            _acc = _rt.kmax(_acc, x[_i0, _i1])
        _acc = _rt.unkey(_acc)
        m = np.float32(_acc)
        for _i1 in range(512):
            sub_1 = x[_i0, _i1] - m  # a.py:6
            e[_i1] = exp_float32(sub_1)
        _acc_1 = _c1_float32  # a.py:7
        for _i1 in range(512):
            _acc_1 = _rt.radd(_acc_1, e[_i1])
        s = np.float32(_acc_1)
        for _i1 in range(512):
            out[_i0, _i1] = e[_i1] / s""".split("\n")


def test_the_sum_of_a_row_is_taken_as_its_values_are_made():
    got = row_passes.fuse_reductions(SOFTMAX_ROW)
    assert got[5:11] == [
        "        _acc_1 = _c1_float32  # a.py:7",
        "        for _i1 in range(512):",
        "            sub_1 = x[_i0, _i1] - m  # a.py:6",
        "            e[_i1] = exp_float32(sub_1)",
        "            _acc_1 = _rt.radd(_acc_1, e[_i1])",
        "        s = np.float32(_acc_1)"]
    assert len(got) == len(SOFTMAX_ROW) - 1
    assert got[:5] == SOFTMAX_ROW[:5] and got[-2:] == SOFTMAX_ROW[-2:]


@pytest.mark.parametrize("old, new", [
    ("_acc_1 = _rt.radd(_acc_1, e[_i1])", "_acc_1 = _rt.radd(_acc_1, sub_1)"),  # the first loop's last scalar
    ("_acc_1 = _rt.radd(_acc_1, e[_i1])", "_acc_1 = _rt.radd(_acc_1, e[511 - _i1])"),  # another element
    ("_acc_1 = _c1_float32  # a.py:7", "_acc_1 = e[0]  # a.py:7"),  # the initial value reads the row
    ("        for _i1 in range(512):\n            _acc_1", "        for _i1 in range(511):\n            _acc_1"),
    ("e[_i1] = exp_float32(sub_1)", "e[_i1] = exp_float32(sub_1) + _acc_1"),  # the first loop reads the sum
    ("e[_i1] = exp_float32(sub_1)", "e[0] = exp_float32(sub_1)"),  # a store the rule does not read
    ("e[_i1] = exp_float32(sub_1)", "if m > 0:\n                e[_i1] = exp_float32(sub_1)"),  # not straight-line
])
def test_reductions_that_could_change_are_left_apart(old, new):
    text = "\n".join(SOFTMAX_ROW)
    assert old in text
    lines = text.replace(old, new, 1).split("\n")
    assert row_passes.fuse_reductions(lines) == lines


def test_the_next_row_is_prefetched_after_the_first_pass():
    got = row_passes.prefetch_rows(SOFTMAX_ROW)
    assert got[3] == "        _rt.prefetch_row(x, _i0 + 1)" and got[:3] == SOFTMAX_ROW[:3] and got[4:] == SOFTMAX_ROW[3:]
    one_pass = SOFTMAX_ROW[:4]
    assert row_passes.prefetch_rows(one_pass) == one_pass  # nothing after it to overlap
    written = [line.replace("out[_i0, _i1] =", "x[_i0, _i1] =") for line in SOFTMAX_ROW]
    assert row_passes.prefetch_rows(written) == written  # a row the group writes


needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OMNISTAGE_C_TIER", "1")


@needs_cc
def test_merged_and_prefetched_row_groups_give_the_same_bits(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 512)).astype(np.float32)

    def softmax(x):
        e = xnp.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True), xnp.log(e.sum(1))

    def layer_norm(x):
        mean = x.mean(1, keepdims=True)
        var = ((x - mean) ** 2).mean(1, keepdims=True)
        return (x - mean) / xnp.sqrt(var + 1e-5), xnp.tanh(x).sum(1)

    def run(f):
        native = compile_for_cpu(fw.jit(f).lower(x).program)
        assert getattr(native, "record", {}).get("tier") == "c"
        return [np.asarray(r).tobytes() for r in native(x)]

    seen = []
    fuse, prefetch = row_passes.fuse_reductions, row_passes.prefetch_rows
    monkeypatch.setattr(row_passes, "fuse_reductions", lambda lines: seen.append(fuse(lines) != lines) or fuse(lines))
    monkeypatch.setattr(row_passes, "prefetch_rows", lambda lines, outer="_i0": seen.append(prefetch(lines) != lines) or prefetch(lines))
    merged = [run(f) for f in (softmax, layer_norm)]
    assert seen.count(True) >= 3  # reductions merged and rows prefetched
    monkeypatch.setattr(row_passes, "fuse_reductions", lambda lines: list(lines))
    monkeypatch.setattr(row_passes, "prefetch_rows", lambda lines, outer="_i0": list(lines))
    monkeypatch.setattr(aot, "_sources_digest", lambda: "without the row passes")  # other libraries
    assert [run(f) for f in (softmax, layer_norm)] == merged


def test_a_row_group_member_written_through_a_reshape_keeps_its_array(monkeypatch):
    # the mean is a reshape of its fused sum: its row is the view the loop writes, which the
    # row-buffer rewrite once dropped (Numba's typing failed and the interpreter ran instead)
    import warnings
    from omnistage.codegen.executable import InterpretedProgram, NumbaProgram

    monkeypatch.setenv("OMNISTAGE_C_TIER", "0")
    x = np.random.default_rng(2).standard_normal((40, 512)).astype(np.float32)

    def f(x):
        e = xnp.exp(x - x.max(1, keepdims=True))
        mean = x.mean(1, keepdims=True)
        var = ((x - mean) ** 2).mean(1, keepdims=True)
        return e / e.sum(1, keepdims=True), (x - mean) / xnp.sqrt(var + 1e-5), xnp.log(e.sum(1))

    program = fw.jit(f).lower(x).program
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        native = NumbaProgram(program)
    assert native._fallback is None
    for g, w in zip(native(x), InterpretedProgram(program)(x)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-6)
