"""The Numba executable's boundary (omnistage/codegen/executable.py): one compiled signature
per program, whatever layout its inputs come in."""
import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)


def entry(compiled):
    """The Numba dispatcher a Compiled runs."""
    ex = compiled.executable
    return getattr(ex.module, ex.fn_name)


def layouts():
    """One (4, 6) float32 matrix in every layout users hand us."""
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    return {
        "zeros (stride 0)": jnp.zeros((4, 6)),
        "broadcast": jnp.broadcast_to(jnp.arange(6.0), (4, 6)),
        "transposed view": np.ascontiguousarray(base.T).T,
        "sliced": np.arange(48, dtype=np.float32).reshape(4, 12)[:, ::2],
        "numpy": base,
        "fortran": np.asfortranarray(base),
        "computed": omnistage.jit(lambda x: x + 1.0)(base),
        "writable numpy view": np.ones((8, 6), np.float32)[::2],
    }


def test_inputs_of_one_shape_and_dtype_compile_once_whatever_their_layout():
    f = omnistage.jit(lambda x: jnp.sin(x) * 2.0 + x, backend="cpu")
    cases = layouts()
    first = next(iter(cases.values()))
    compiled = f.lower(first).compile()
    for name, x in cases.items():
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(np.asarray(x)) * 2 + np.asarray(x), rtol=1e-6, err_msg=name)
    assert len(entry(compiled).signatures) == 1
    assert f._cache_size() >= 1 and all(
        len(entry(c).signatures) == 1 for c in {id(c): c for c in f._cache.values()}.values())


def test_scalars_and_arrays_together_compile_once():
    f = omnistage.jit(lambda x, s: x * s, backend="cpu")
    compiled = f.lower(jnp.zeros(5), 2.0).compile()
    for x in (jnp.zeros(5), np.arange(5.0, dtype=np.float32), np.arange(10.0, dtype=np.float32)[::2]):
        for s in (2.0, np.float32(3), jnp.float32(4)):
            np.testing.assert_allclose(np.asarray(f(x, s)), np.asarray(x) * np.float32(s))
    assert len(entry(compiled).signatures) == 1


def test_lower_compile_returns_a_ready_executable_and_the_next_call_compiles_nothing():
    f = omnistage.jit(lambda x: jnp.cos(x) - 1.0, backend="cpu")
    x = jnp.arange(7.0)
    compiled = f.lower(x).compile()
    dispatcher = entry(compiled)
    assert len(dispatcher.signatures) == 1  # compiled before any call
    before = dict(dispatcher.stats.cache_misses), dict(dispatcher.stats.cache_hits)
    np.testing.assert_allclose(np.asarray(f(x)), np.cos(np.arange(7.0)) - 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(compiled(x)), np.cos(np.arange(7.0)) - 1.0, rtol=1e-6)
    assert (dict(dispatcher.stats.cache_misses), dict(dispatcher.stats.cache_hits)) == before
    assert len(dispatcher.signatures) == 1 and f._cache_size() >= 1


def test_a_wrong_dtype_at_the_boundary_is_still_an_error():
    compiled = omnistage.jit(lambda x: x * 2.0, backend="cpu").lower(jnp.zeros(3)).compile()
    with pytest.raises(TypeError):
        compiled.executable(np.zeros(3, np.float64))


def test_an_input_not_in_c_order_is_copied_before_the_call_not_after_a_failed_one():
    compiled = omnistage.jit(lambda x: x * 2.0, backend="cpu").lower(jnp.zeros(4)).compile()
    ex, calls = compiled.executable, []
    fn = ex._fn
    ex._fn = lambda *args: calls.append(args) or fn(*args)
    np.testing.assert_array_equal(np.asarray(compiled(jnp.ones(4))), np.full(4, 2.0, np.float32))
    assert len(calls) == 1 and calls[0][0].flags.c_contiguous  # no failed first try (~40 us)
