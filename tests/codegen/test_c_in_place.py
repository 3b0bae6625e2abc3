"""Loop carries built over the value they replace (codegen/c_in_place.py, c_translate's loops):
the analysis accepts the element-by-element updates of an optimizer and refuses every body that
could read an element it has already overwritten; programs whose carries are built in place give
the interpreter's bits and leave the caller's arrays as they were."""
import ast
import os
import re
import shutil
import textwrap

import numpy as np
import pytest

import omnistage as fw
import omnistage.numpy as xnp
from omnistage import lax
from omnistage.codegen import c_in_place, c_tier, c_translate, c_vmath
from omnistage.codegen.emit_cpu import emit_module
from omnistage.codegen.executable import InterpretedProgram, compile_for_cpu


def _fn(source):
    return next(n for n in ast.parse(textwrap.dedent(source)).body if isinstance(n, ast.FunctionDef))


UPDATE = """
    def body(x, v, g):
        v2 = _rt.empty((4, 3), np.float32)
        x2 = _rt.empty((4, 3), np.float32)
        for _i0 in range(4):
            for _i1 in range(3):
                m = np.float32(0.9) * v[_i0, _i1]
                v2[_i0, _i1] = m + g[_i0, _i1]
            for _i1 in range(3):
                x2[_i0, _i1] = x[_i0, _i1] - np.float32(0.01) * v2[_i0, _i1]
        return (x2, v2)
"""


def test_an_optimizers_update_is_built_over_its_carries():
    fn = _fn(UPDATE)
    assert c_in_place.may_build_over(c_in_place.BodyFacts(fn), "v2", "v", 2)
    assert c_in_place.may_build_over(c_in_place.BodyFacts(fn), "x2", "x", 2)
    assert c_in_place.may_build_over(c_in_place.BodyFacts(fn), "x2", "v", 2)  # a row of v is read before that row of x2 is written
    assert not c_in_place.may_build_over(c_in_place.BodyFacts(fn), "v2", "x", 2)  # a row of x is read after that row of v2 is written
    assert c_in_place.may_build_over(c_in_place.BodyFacts(fn), "v2", "g", 2)  # each element of g read once, just before
    assert not c_in_place.may_build_over(c_in_place.BodyFacts(fn), "v2", "v", 1)  # v[_i0, _i1] is not one element of a 1-d v
    threaded = _fn(UPDATE.replace("for _i0 in range(4)", "for _i0 in numba.prange(4)"))
    assert c_in_place.may_build_over(c_in_place.BodyFacts(threaded), "x2", "x", 2)
    hinted = _fn(UPDATE.replace("            for _i1 in range(3):\n                x2",
                                "            _rt.prefetch_row(x, _i0 + 1)\n            for _i1 in range(3):\n                x2"))
    assert "prefetch_row" in ast.unparse(hinted) and c_in_place.may_build_over(c_in_place.BodyFacts(hinted), "x2", "x", 2)  # a hint reads nothing


@pytest.mark.parametrize("edit", [
    # the parameter read after the nest, or through a view of it anywhere after
    ("        return (x2, v2)", "        s = x[0, 0]\n        return (x2, v2)"),
    ("        return (x2, v2)", "        return (x2, v2, _rt.reshape(x, (3, 4)))"),
    ("        return (x2, v2)", "        t = xr[1, 1]\n        return (x2, v2)", "    def body(x, v, g):\n        xr = x[::-1]\n"),
    ("        return (x2, v2)", "        return (x2, v2, x)"),
    # read at another element than the one stored
    ("x[_i0, _i1] - np.float32(0.01)", "x[_i0, 2 - _i1] - np.float32(0.01)"),
    ("x[_i0, _i1] - np.float32(0.01)", "x[_i1, _i0] - np.float32(0.01)"),
    # stored at another element, or stored before the read
    ("x2[_i0, _i1] = x[_i0, _i1] - np.float32(0.01) * v2[_i0, _i1]",
     "x2[_i0, 0] = x[_i0, _i1] - np.float32(0.01) * v2[_i0, _i1]"),
    ("x2[_i0, _i1] = x[_i0, _i1] - np.float32(0.01) * v2[_i0, _i1]",
     "x2[_i0, _i1] = np.float32(0.0)\n                t = x[_i0, _i1]"),
    # read in a loop after the stores' loop, for the same row
    ("        return (x2, v2)", "            for _i1 in range(3):\n                t = x[_i0, _i1]\n        return (x2, v2)"),
    # each element visited more than once
    ("            for _i1 in range(3):\n                x2",
     "            for _k in range(2):\n              for _i1 in range(3):\n                x2"),
    ("                x2[_i0, _i1] = x", "                _i1 = 0\n                x2[_i0, _i1] = x"),
    # the whole result handed to something that could write it, a branch around the store
    ("                x2[_i0, _i1] = x[_i0, _i1] - np.float32(0.01) * v2[_i0, _i1]",
     "                _kn.fill(x2, x[_i0, _i1])"),
    ("                x2[_i0, _i1] = x[_i0, _i1] - np.float32(0.01) * v2[_i0, _i1]",
     "                if _i1 > 0:\n                    x2[_i0, _i1] = x[_i0, _i1]"),
    # the parameter rebound or stored into
    ("        return (x2, v2)", "        x[0, 0] = np.float32(1.0)\n        return (x2, v2)"),
])
def test_bodies_that_could_read_an_overwritten_element_are_refused(edit):
    source = UPDATE
    old, new = edit[:2]
    assert old in source
    source = source.replace(old, new, 1)
    if len(edit) > 2:  # a view bound first
        source = source.replace("    def body(x, v, g):\n", edit[2], 1)
    assert not c_in_place.may_build_over(c_in_place.BodyFacts(_fn(source)), "x2", "x", 2)
    if len(edit) > 2:
        assert c_in_place.may_build_over(c_in_place.BodyFacts(_fn(UPDATE.replace("    def body(x, v, g):\n", edit[2], 1))), "x2", "x", 2)


# --- whole programs through the native tier --------------------------------------------------

needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OMNISTAGE_C_TIER", "1")


def _in_place_lines(source, entry, ins, outs):
    c, _, _ = c_translate.translate(c_tier._threaded(source) or source, entry, ins, outs, c_vmath.NAMES.values())
    return re.findall(r"if \((v_\w+) == (os_slot\d+) \|\| \1 == (os_slot\d+)\) os_dst\d+ = \1;", c)


@needs_cc
def test_a_training_loop_updates_its_state_in_place_with_the_interpreters_bits():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((300, 70)).astype(np.float32)
    m = rng.standard_normal((300, 70)).astype(np.float32)
    x = rng.standard_normal((300, 70)).astype(np.float32)

    def train(w, m, x):
        def body(i, s):
            w, m = s
            m = 0.9 * m + x * w
            return w - 0.01 * m, m
        return lax.fori_loop(0, 9, body, (w, m))

    program = fw.jit(train).lower(w, m, x).program
    native = compile_for_cpu(program)
    assert getattr(native, "record", {}).get("tier") == "c"
    kept = [a.copy() for a in (w, m, x)]
    got = [np.asarray(g) for g in native(w, m, x)]
    for a, b in zip((w, m, x), kept):  # the first iteration reads the caller's arrays and never writes them
        assert a.tobytes() == b.tobytes()
    want = [np.asarray(v) for v in InterpretedProgram(program)(w, m, x)]
    assert [g.tobytes() for g in got] == [v.tobytes() for v in want]
    again = [np.asarray(g) for g in native(w, m, x)]
    assert [g.tobytes() for g in again] == [v.tobytes() for v in want]

    source, entry = emit_module(native.program, c_vmath.lookup, threads=None)
    ins, outs = [((300, 70), "float32")] * 3, [((300, 70), "float32")] * 2
    assert len(_in_place_lines(source, entry, ins, outs)) == 2  # both carries


@needs_cc
def test_carries_that_must_not_overwrite_what_they_replace_keep_their_two_slots():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 33)).astype(np.float32)
    b = rng.standard_normal((64, 33)).astype(np.float32)

    def swap(a, b):  # (a, b) -> (b, a + b): the old b is also the new a
        return lax.fori_loop(0, 6, lambda i, s: (s[1], s[0] + s[1]), (a, b))

    def reversed_rows(a, b):  # reads b's elements in another order than it writes the new b
        return lax.fori_loop(0, 5, lambda i, s: (s[0] * 0.5, s[1][::-1] + s[0]), (a, b))

    def read_after(a, b):  # the old a read after the new a is built
        def body(i, s):
            a, b = s
            new = a * 0.5 + 1.0
            return new, b + new.sum() + a.sum()
        return lax.fori_loop(0, 4, body, (a, b))

    for f in (swap, reversed_rows, read_after):
        program = fw.jit(f).lower(a, b).program
        native = compile_for_cpu(program)
        assert getattr(native, "record", {}).get("tier") == "c"
        got = [np.asarray(g) for g in native(a, b)]
        want = [np.asarray(v) for v in InterpretedProgram(program)(a, b)]
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-5)
        source, entry = emit_module(native.program, c_vmath.lookup, threads=None)
        ins = outs = [((64, 33), "float32")] * 2
        lines = _in_place_lines(source, entry, ins, outs)
        if f is swap:
            assert not lines  # the new b would overwrite the old b, the new a
        if f is read_after:
            assert len(lines) <= 1  # never the first carry (the values above say which)
