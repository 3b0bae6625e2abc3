"""jit's hot path for NumPy, Python-scalar and built-in-container arguments (omnistage/fast_args.py):
the same compiled program and the same values as the general path, never a wrong reuse."""
import collections

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import fast_args
from omnistage.core.config import config


def _compiles(jitted):
    return len({id(e) for e in jitted._cache.values()})


def test_numpy_array_python_scalar_and_array_share_one_program():
    f = omnistage.jit(lambda a, b: a * b + 1)
    x = np.arange(4, dtype=np.float32)
    want = x * 2.5 + 1
    np.testing.assert_array_equal(np.asarray(f(x, 2.5)), want)
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x), 2.5)), want)
    np.testing.assert_array_equal(np.asarray(f(x + 0, 2.5)), want)
    assert _compiles(f) == 1


def test_the_fast_key_sees_values_change_and_is_found_in_the_cache():
    f = omnistage.jit(lambda a, b: a - b)
    assert float(f(1.0, 3.0)) == -2.0
    assert float(f(5.0, 3.0)) == 2.0  # a cached call must read the new value
    key, values = fast_args.key_and_values((f._options, config.epoch), (5.0, 3.0), ())
    assert key in f._cache
    assert [float(v) for v in values] == [5.0, 3.0]


def test_dtypes_and_weak_types_are_part_of_the_key():
    f = omnistage.jit(lambda a: a + 1)
    assert f(1.0).dtype == np.float32  # weak float
    assert f(np.float64(1.0)).dtype == np.float32  # x64 off: canonicalized, not weak
    assert f(1).dtype == np.int32
    assert f(True).dtype == np.int32
    assert f(np.int8(1)).dtype == np.int8
    assert f(np.ones(3, np.int16)).dtype == np.int16
    assert f(np.ones(3, np.float64)).dtype == np.float32
    assert f(1 + 2j).dtype == np.complex64


def test_pytrees_of_numpy_arrays_keep_structure_and_leaf_order():
    def loss(params, batch):
        total = 0.0
        for w, b in params["layers"]:
            total = total + jnp.sum(w) * 2 + jnp.sum(b) * 3
        return total + jnp.sum(batch[0]) * 5 + params["scale"] * 7

    f = omnistage.jit(loss)
    layers = [(np.full((2, 2), 1.0, np.float32), np.full(2, 10.0, np.float32)),
              (np.full((3, 2), 100.0, np.float32), np.full(3, 1000.0, np.float32))]
    params = {"scale": np.float32(0.5), "layers": layers}
    want = 4 * 2 + 20 * 3 + 600 * 2 + 3000 * 3 + 6 * 5 + 3.5
    assert float(f(params, (np.ones(6, np.float32), None))) == want
    # the same structure with the dict written in another order: same program, same answer
    assert float(f({"layers": layers, "scale": np.float32(0.5)}, (np.ones(6, np.float32), None))) == want
    assert _compiles(f) == 1
    # another structure (a list instead of a tuple) is another program
    assert float(f(params, [np.ones(6, np.float32), None])) == want
    assert _compiles(f) == 2


def test_grad_of_numpy_pytree_matches_the_general_path():
    def loss(params, x):
        w, b = params
        return jnp.sum(jnp.tanh(x @ w + b) ** 2)

    g = omnistage.jit(omnistage.grad(loss))
    rng = np.random.default_rng(0)
    params = (rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(2).astype(np.float32))
    x = rng.standard_normal((4, 3)).astype(np.float32)
    first = g(params, x)
    again = g(params, x)  # the hot path
    assert _compiles(g) == 1
    general = g(params, x=x)  # keyword arguments take the general path (another tree: JAX traces again too)
    for a, b, c in zip(first, again, general):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        np.testing.assert_array_equal(np.asarray(a), np.asarray(c))


def test_namedtuples_take_the_fast_path_and_share_the_general_paths_program():
    Pair = collections.namedtuple("Pair", "a b")
    Other = collections.namedtuple("Other", "a b")
    f = omnistage.jit(lambda p: p.a * p.b)
    key, values = fast_args.key_and_values((), (Pair(np.ones(2), np.ones(2)),), ())
    assert len(values) == 2
    np.testing.assert_array_equal(np.asarray(f(Pair(np.full(2, 3.0, np.float32), np.full(2, 2.0, np.float32)))), [6.0, 6.0])
    np.testing.assert_array_equal(np.asarray(f(Pair(np.full(2, 4.0, np.float32), np.full(2, 2.0, np.float32)))), [8.0, 8.0])
    assert _compiles(f) == 1
    # another namedtuple class of the same fields is another structure: its own program, its own type out
    g = omnistage.jit(lambda p: p)
    assert type(g(Pair(np.ones(2, np.float32), np.ones(2, np.float32)))) is Pair
    assert type(g(Other(np.ones(2, np.float32), np.ones(2, np.float32)))) is Other


class _Scaled:
    """A registered node whose aux data (the scale) is part of the structure."""

    def __init__(self, value, scale):
        self.value, self.scale = value, scale


omnistage.tree_util.register_pytree_node(
    _Scaled, lambda s: ((s.value,), s.scale), lambda scale, children: _Scaled(children[0], scale))


def test_registered_nodes_take_the_fast_path_keyed_by_their_aux_data():
    traces = []

    def f(s):
        traces.append(s.scale)
        return s.value * s.scale

    jitted = omnistage.jit(f)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(jitted(_Scaled(x, 2.0))), x * 2)
    key, values = fast_args.key_and_values((jitted._options, config.epoch), (_Scaled(x, 2.0),), ())
    assert key in jitted._cache and len(values) == 1
    np.testing.assert_array_equal(np.asarray(jitted(_Scaled(x + 1, 2.0))), (x + 1) * 2)
    np.testing.assert_array_equal(np.asarray(jitted(_Scaled(x, 3.0))), x * 3)  # new aux: new program
    assert traces == [2.0, 3.0]


def test_a_registered_node_with_unhashable_aux_takes_the_general_path():
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(TypeError):  # (the cache lookup raises it; jit then takes the general path)
        hash(fast_args.key_and_values((), (_Scaled(x, [2.0]),), ())[0])
    jitted = omnistage.jit(lambda s: s.value * s.scale[0])
    np.testing.assert_array_equal(np.asarray(jitted(_Scaled(x, [2.0]))), x * 2)
    np.testing.assert_array_equal(np.asarray(jitted(_Scaled(x, [5.0]))), x * 5)


def test_an_optimizer_state_takes_the_fast_path():
    from omnistage.example_libraries import optimizers

    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    step = omnistage.jit(lambda i, st: opt_update(i, get_params(st), st))
    st = opt_init({"w": np.ones(3, np.float32), "b": [np.zeros(2, np.float32)]})
    assert fast_args.key_and_values((), (0, st), ()) is not None
    for i in range(3):
        st = step(i, st)
    assert _compiles(step) == 1
    x, velocity = np.ones(3), np.zeros(3)
    for _ in range(3):  # momentum on the loss whose gradient is x itself
        velocity = 0.9 * velocity + x
        x = x - 0.1 * velocity
    np.testing.assert_allclose(np.asarray(get_params(st)["w"]), x, rtol=1e-6)


def test_static_arguments_are_keyed_by_value():
    f = omnistage.jit(lambda x, n: x * n, static_argnums=1)
    x = np.ones(3, np.float32)
    assert float(f(x, 2)[0]) == 2.0
    assert float(f(x, 3)[0]) == 3.0
    assert float(f(x, 2)[0]) == 2.0
    with pytest.raises((TypeError, ValueError)):
        f(x, [1, 2])  # unhashable static: the general path's error


def test_x64_changes_the_key():
    f = omnistage.jit(lambda a: a * 2)
    assert f(np.ones(2)).dtype == np.float32
    with omnistage.enable_x64() if hasattr(omnistage, "enable_x64") else _x64():
        assert f(np.ones(2)).dtype == np.float64
        assert f(1.0).dtype == np.float64
    assert f(np.ones(2)).dtype == np.float32


class _x64:
    def __enter__(self):
        omnistage.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        omnistage.config.update("jax_enable_x64", False)


def test_a_mutated_numpy_argument_is_read_again():
    f = omnistage.jit(lambda a: a.sum())
    x = np.ones(4, np.float32)
    assert float(f(x)) == 4.0
    x[:] = 2.0
    assert float(f(x)) == 8.0


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_an_output_aliasing_a_numpy_input_is_copied_and_the_input_stays_writable(backend):
    f = omnistage.jit(lambda x, y: (x, y.reshape(2, 2), y * 2), backend=backend)
    for _ in range(2):  # the first call finds the aliases, the second uses them
        x = np.ones(3, np.float32)
        y = np.arange(4, dtype=np.float32)
        a, b, c = f(x, y)
        assert x.flags.writeable and y.flags.writeable
        x[:] = 7.0
        y[:] = -1.0
        np.testing.assert_array_equal(np.asarray(a), np.ones(3, np.float32))
        np.testing.assert_array_equal(np.asarray(b), np.arange(4, dtype=np.float32).reshape(2, 2))
    # omnistage Arrays are immutable: passing them through needs no copy
    arr = jnp.asarray(np.ones(3, np.float32))
    out, _, _ = f(arr, jnp.asarray(np.arange(4, dtype=np.float32)))
    np.testing.assert_array_equal(np.asarray(out), np.ones(3, np.float32))
