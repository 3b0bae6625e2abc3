"""The CPU emitter's fusable forms (codegen/fusable_forms.py), scalar elements of row groups and the allocator settings
(codegen/host_memory.py): random bits are hashed inside the loops that use them, with results
bit-identical to the interpreter's; an iota used twice is recomputed, not stored; malloc is
tuned once, and not against the user's wishes."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import random
from omnistage.codegen import fusable_forms, host_memory
from omnistage.random._threefry import threefry2x32
from omnistage.staging.cleanup import cleanup

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _compiled_and_interpreted(f, *args):
    compiled = omnistage.jit(f, backend="cpu").lower(*args).compile()
    assert type(compiled.executable).__name__ == "NumbaProgram"
    got = [np.asarray(v) for v in omnistage.tree_util.tree_leaves(compiled(*args))]
    want = [np.asarray(v) for v in omnistage.tree_util.tree_leaves(omnistage.jit(f, backend="interpreter")(*args))]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
    return compiled.as_text()


@pytest.mark.parametrize("sampler", [
    lambda k: random.uniform(k, (3, 1000)),
    lambda k: random.normal(k, (257,)),
    lambda k: random.randint(k, (64,), -5, 9),
    lambda k: random.bits(k, (33,)),
    lambda k: random.bernoulli(k, 0.3, (10, 10)),
    lambda k: (random.split(k, 4), random.fold_in(k, 7)),
    lambda k: jnp.stack([random.uniform(s, (5,)) for s in random.split(k, 3)]),
    lambda k: omnistage.vmap(lambda s: random.normal(s, (6,)))(random.split(k, 5)),
], ids=["uniform", "normal", "randint", "bits", "bernoulli", "split_fold_in", "several_keys", "vmapped_keys"])
def test_random_programs_are_bit_identical_to_the_interpreter(sampler):
    _compiled_and_interpreted(sampler, random.PRNGKey(42))


def test_the_hash_is_computed_in_the_loop_that_uses_its_words():
    src = _compiled_and_interpreted(lambda k: random.uniform(k, (4096,)), random.PRNGKey(0))
    assert "# threefry2x32" not in src  # no loop of its own storing both words
    assert src.count("_rt.threefry2x32(") == 2 and "[0]" in src and "[1]" in src
    words = [line for line in src.splitlines() if "_rt.threefry2x32(" in line]
    assert all(line.startswith("        ") and "_rt.empty" not in line for line in words)  # inside the loop
    assert "iota_1 = _rt.empty" not in src  # the counter iota is recomputed by both words


def test_a_word_nothing_reads_is_not_computed():
    def f(k1, k2, x):
        return threefry2x32(k1, k2, x, x)[0]

    args = (np.uint32(1), np.uint32(2), np.arange(8, dtype=np.uint32))
    program = fusable_forms.rewrite(cleanup(omnistage.make_jaxpr(f)(*args)))
    text = str(program)
    assert text.count("threefry2x32_word(") == 1 and "word=0" in text
    _compiled_and_interpreted(f, *args)


def test_an_iota_with_two_users_is_fused_into_both():
    src = _compiled_and_interpreted(lambda n: (jnp.arange(4096) * n, jnp.arange(4096) + n), np.int32(3))
    assert "_rt.empty((4096,), np.int32)" in src and "iota_1 = _rt.empty" not in src


_TUNE = """
import os, sys
from omnistage.codegen import host_memory
print(host_memory.tune(), host_memory.tune())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
@pytest.mark.parametrize("env, want", [({}, "True True"), ({"OMNISTAGE_MALLOC_TUNING": "0"}, "False False"),
                                       ({"MALLOC_TRIM_THRESHOLD_": "1000000"}, "False False")])
def test_malloc_is_tuned_once_unless_the_user_says_otherwise(env, want):
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "MALLOC_"))}
    full.update(env, PYTHONPATH=ROOT, OMNISTAGE_C_TIER="0")
    out = subprocess.run([sys.executable, "-c", _TUNE], env=full, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == want


def test_compiling_a_program_tunes_malloc():
    omnistage.jit(lambda x: x + 1)(np.ones(3))
    assert host_memory._tuned is not None


def test_same_width_bitcasts_are_elementwise_and_keep_every_bit():
    from omnistage import lax

    x = np.array([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, 1e-45, -3.4e38], np.float32)
    x = np.concatenate([x, np.array([0x7FC00001, 0xFFBFFFFF], np.uint32).view(np.float32)])  # NaN payloads
    f = lambda v: (lax.bitcast_convert_type(v * 1, np.int32), lax.bitcast_convert_type(lax.bitcast_convert_type(v, np.uint32) | np.uint32(1), np.float32))  # noqa: E731
    src = _compiled_and_interpreted(f, x)
    assert ".view(" not in src and "_rt.reinterpret(" in src
    got = omnistage.jit(f)(x)
    assert np.asarray(got[0]).tobytes() == x.view(np.int32).tobytes()
    assert np.asarray(got[1]).tobytes() == (x.view(np.uint32) | 1).view(np.float32).tobytes()


def test_a_random_normal_is_one_loop_with_one_allocation():
    src = _compiled_and_interpreted(lambda k: random.normal(k, (5000,)), random.PRNGKey(1))
    entry = src.split("@numba.njit")[-1]
    assert len(re.findall(r"for _i0 in (?:numba\.p)?range\(5000\)", entry)) == 1 and entry.count("_rt.empty(") == 1


def test_an_intermediate_used_twice_inside_a_row_group_is_a_scalar():
    def f(x):
        y = x * 3 + 1
        return y * y - y, (y > 1).astype(jnp.float32)

    src = _compiled_and_interpreted(f, np.arange(-1500, 1500, dtype=np.int32))
    entry = src.split("@numba.njit")[-1]
    assert entry.count("_rt.empty(") == 2 and entry.count("for _i0") == 1  # the two results only
