"""Support helpers (`_rt.threefry2x32`, `_rt.fmax`, ...) are inlined into the program's loops
whatever the program's size: a helper left as a call keeps its loop scalar (a 100x784
bernoulli draw after three matmuls ran 15x slower than the same loop alone)."""
import pytest
import re
import time

import numpy as np

import omnistage
import omnistage.numpy as jnp
from omnistage import random
from omnistage.codegen.executable import NumbaProgram

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)


def _sample(key, w1, w2, w3):
    code_key, img_key = random.split(key)
    h = jnp.maximum(random.normal(code_key, (100, 10)) @ w1, 0.0)
    h = jnp.maximum(h @ w2, 0.0)
    logits = h @ w3
    images = random.bernoulli(img_key, jnp.logaddexp(0.0, logits)).reshape(100, 28, 28)
    return jnp.vstack([jnp.hstack([images[r * 10 + c].T for c in range(10)]) for r in range(10)]).T


def test_no_support_helper_is_left_a_call_in_a_big_program():
    rng = np.random.RandomState(0)
    w1, w2, w3 = (rng.standard_normal(s).astype(np.float32) * 0.1 for s in ((10, 64), (64, 64), (64, 784)))
    unique = float(time.time_ns() % 997 + 2)  # a program no earlier run cached (cached code has no IR)
    key = random.PRNGKey(7)
    compiled = omnistage.jit(lambda k, a, b, c: _sample(k, a * unique, b, c), backend="cpu").lower(key, w1, w2, w3).compile()
    grid = np.asarray(compiled(key, w1 / unique, w2, w3))
    assert grid.shape == (280, 280) and grid.dtype == np.bool_ and 0.2 < grid.mean() < 0.8
    program = compiled.executable
    assert isinstance(program, NumbaProgram) and program.cache_status == "compiled (cache miss)"
    (llvm,) = program._fn.inspect_llvm().values()
    left = set(re.findall(r"call [^@\n]*@_ZN9omnistage7codegen7support\d+(\w+?)B\d", llvm))
    assert not left, f"support helpers still called, not inlined: {sorted(left)}"
