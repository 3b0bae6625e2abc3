"""What a program's first compile in a fresh process compiles besides the program itself:
nothing of Numba's own (its np.full / np.zeros / np.ascontiguousarray / astype / copy
overloads, and the subroutines behind reshape, complex arithmetic and math and the integer
max builtin, are compiled anew in every process, never cached), and vmath's kernels only once
per machine (cached like the other runtime kernels, one index entry each)."""
import json
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

from omnistage.codegen import support

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from numba.core import base, dispatcher
    compiled, subroutines, stack = [], [], []
    numba_compile = dispatcher.Dispatcher.compile

    def watched(self, sig):
        module = self.py_func.__module__
        # the nearest omnistage function on the stack is the one whose code asked for this
        owner = next((m for m in reversed(stack) if m.startswith("omnistage")), None)
        compiled.append([module, self.py_func.__qualname__, owner])
        stack.append(module)
        try:
            return numba_compile(self, sig)
        finally:
            stack.pop()

    dispatcher.Dispatcher.compile = watched
    numba_subroutine = base.BaseContext.compile_subroutine

    def watched_subroutine(self, builder, impl, sig, *args, **kwargs):
        owner = next((m for m in reversed(stack) if m.startswith("omnistage")), None)
        subroutines.append([getattr(impl, "__module__", ""), getattr(impl, "__qualname__", repr(impl)), owner])
        return numba_subroutine(self, builder, impl, sig, *args, **kwargs)

    base.BaseContext.compile_subroutine = watched_subroutine
    import omnistage, omnistage.numpy as jnp
    from omnistage import lax
    x = np.random.RandomState(0).rand(6, 40).astype(np.float32)
    w = np.random.RandomState(1).rand(4, 3, 3).astype(np.float32)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    n = np.arange(-12, 12, dtype=np.int32).reshape(4, 6)
    programs = [
        (lambda x: jnp.sum(jnp.exp(x), axis=0) + jnp.max(x, axis=1).sum(), lambda x: np.exp(x).sum(0) + x.max(1).sum()),
        (lambda x: jnp.sum(x.T, axis=1) ** 2.5, lambda x: np.sum(x.T, axis=1) ** 2.5),
        (lambda x: jnp.pad(x, ((1, 2), (0, 1)), constant_values=3.0), lambda x: np.pad(x, ((1, 2), (0, 1)), constant_values=3.0)),
        (lambda x: lax.dynamic_slice(x, (1, 2), (3, 30)) * 2, lambda x: x[1:4, 2:32] * 2),
        (lambda w: jnp.max(jnp.abs(jnp.linalg.eigvals(w)), axis=-1), lambda w: np.max(np.abs(np.linalg.eigvals(w)), axis=-1)),
        (lambda w: jnp.linalg.inv(w + 3 * jnp.eye(3)), lambda w: np.linalg.inv(w + 3 * np.eye(3))),
        (lambda w: jnp.einsum("bij,bjk->bik", w, w).reshape(4, 9).T @ w.reshape(4, 9), lambda w: np.einsum("bij,bjk->bik", w, w).reshape(4, 9).T @ w.reshape(4, 9)),
        (lambda z: z * z / (z + 1) + jnp.exp(z) + jnp.sqrt(z) + jnp.sin(z) + jnp.abs(z), lambda z: z * z / (z + 1) + np.exp(z) + np.sqrt(z) + np.sin(z) + np.abs(z)),
        (lambda n: jnp.maximum(n, 3) - jnp.minimum(n, -2), lambda n: np.maximum(n, 3) - np.minimum(n, -2)),
        # a switch index below 0 clamps to the first branch
        (lambda n: lax.switch(n[0, 0], [lambda v: v * 2, lambda v: v + 1], n), lambda n: n * 2),
    ]
    errors = []
    for f, ref in programs:
        arg = {"w": w, "z": z, "n": n}.get(f.__code__.co_varnames[0], x)
        got = np.asarray(omnistage.jit(f)(arg))
        wide = arg.astype(np.complex128 if arg.dtype.kind == "c" else np.float64)
        if not np.allclose(got, ref(wide), rtol=2e-5, atol=1e-5):
            errors.append(repr(got))
    print(json.dumps({"compiled": compiled, "subroutines": subroutines, "errors": errors}))
""")


def _run(cache):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(cache), OMNISTAGE_LOG_COMPILES="0", OMNISTAGE_AOT="0")
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_programs_compile_nothing_of_numba_and_vmath_once_per_machine(tmp_path):
    first = _run(tmp_path)
    assert first["errors"] == []
    generated = [c for c in first["compiled"] if c[0].startswith("omnistage_gen_")]
    assert len(generated) >= 10
    # Numba functions that a generated program's own code asked for (a runtime kernel's
    # np.empty is its own business: it is compiled once and cached with the kernel)
    numba_own = [c for c in first["compiled"] if c[0].startswith("numba.") and (c[2] or "").startswith("omnistage_gen_")]
    assert numba_own == []
    # nor a subroutine of Numba's (compile_subroutine: per process, never cached) in them
    assert [c for c in first["subroutines"] if (c[2] or "").startswith("omnistage_gen_")] == []
    assert any(c[1].startswith("exp_float32") for c in first["compiled"])
    # a second process with the same cache: programs and vmath kernels come from the cache
    for name in os.listdir(tmp_path):
        if name.startswith("omnistage_gen_") and name.endswith((".nbi", ".nbc")):
            os.unlink(tmp_path / name)
    second = _run(tmp_path)
    assert second["errors"] == []
    vmath_files = sorted(n for n in os.listdir(tmp_path) if n.startswith("_kernels.") and n.endswith(".nbc"))
    assert vmath_files and all(".1.nbc" in n for n in vmath_files), vmath_files  # one entry each, not one per process


# --- the allocation intrinsics generated code uses instead of NumPy functions ---------------


@numba.njit
def _full(value):
    return support.full((2, 3), value, np.float32), support.full((), value, np.bool_), support.full((4,), value, np.complex64)


@numba.njit
def _contiguous(a):
    return support.contiguous(a), support.contiguous(a[::2, 1:]), support.contiguous(a.T), support.contiguous(a[0, 0])


@numba.njit
def _copies(a):
    return support.copy(a), support.copy(a[:, ::-1]), support.astype(a.T, np.float32), support.astype(a[1:], np.complex128)


def test_full_fills_every_element_with_the_cast_value():
    f32, b, c64 = _full(2.5)
    assert f32.dtype == np.float32 and f32.flags.c_contiguous and (f32 == 2.5).all() and f32.shape == (2, 3)
    assert b.shape == () and b.dtype == np.bool_ and bool(b)
    assert c64.dtype == np.complex64 and (c64 == 2.5).all()
    zero, no, _ = _full(0)
    assert (zero == 0).all() and not bool(no)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
def test_contiguous_returns_c_arrays_equal_to_numpys(dtype):
    a = (np.arange(20).reshape(4, 5) * 1.5).astype(dtype)
    same, sliced, transposed, scalar = _contiguous(a)
    assert np.shares_memory(same, a)  # already C: no copy, as np.ascontiguousarray
    for got, want in [(sliced, a[::2, 1:]), (transposed, a.T)]:
        assert got.flags.c_contiguous and got.dtype == a.dtype
        np.testing.assert_array_equal(got, want)
    assert scalar.shape == () and scalar == a[0, 0]


def test_copy_and_astype_are_fresh_c_arrays():
    a = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    copied, flipped, narrowed, widened = _copies(a)
    assert not np.shares_memory(copied, a)
    np.testing.assert_array_equal(copied, a)
    np.testing.assert_array_equal(flipped, a[:, ::-1])
    assert narrowed.dtype == np.float32 and narrowed.flags.c_contiguous
    np.testing.assert_array_equal(narrowed, a.T.astype(np.float32))  # the same rounding as NumPy
    assert widened.dtype == np.complex128
    np.testing.assert_array_equal(widened, a[1:].astype(np.complex128))
