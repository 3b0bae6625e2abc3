"""`jit`: decorator forms, static arguments, the per-function cache (one trace per key),
lowering and compiling, pytrees and kwargs, `disable_jit`, weak-typed Python scalars, and
the device helpers (`eval_shape`, `ShapeDtypeStruct`, `device_put`, `devices`)."""
import functools
from functools import partial

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import jit


def counting(fun):
    """Wrap `fun` so `wrapped.traces` counts how often its Python body runs."""
    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        wrapped.traces += 1
        return fun(*args, **kwargs)

    wrapped.traces = 0
    return wrapped


# --- forms ---------------------------------------------------------------------------------


def test_jit_as_decorator():
    @jit
    def f(x, y):
        return jnp.dot(x + 1, y + 1)

    x, y = np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    out = f(x, y)
    assert isinstance(out, omnistage.Array)
    np.testing.assert_allclose(np.asarray(out), (x + 1) @ (y + 1))


def test_jit_with_partial_static_argnums():
    @partial(jit, static_argnums=(1,))
    def f(x, neg):
        return -x if neg else x

    assert repr(f(1, True)) == "Array(-1, dtype=int32, weak_type=True)"
    assert repr(f(1, False)) == "Array(1, dtype=int32, weak_type=True)"


def test_jit_with_static_argnums_as_keyword_without_function():
    f = jit(static_argnums=0)(lambda n, x: x * n)
    assert f(3, jnp.ones(2)).tolist() == [3.0, 3.0]


def test_jit_of_lambda():
    assert jit(lambda x: x * 2 + 1)(jnp.arange(3)).tolist() == [1, 3, 5]


def test_jit_of_closure():
    scale = jnp.float32(3.0)
    offset = 2.0

    def f(x):
        return x * scale + offset

    assert jit(f)(jnp.ones(2)).tolist() == [5.0, 5.0]


def test_jit_of_nested_closure_factory():
    def make(k):
        @jit
        def f(x):
            return x ** k

        return f

    assert make(2)(jnp.float32(3)).item() == 9.0
    assert make(3)(jnp.float32(2)).item() == 8.0


def test_jit_method_with_static_self():
    class Model:
        def __init__(self, scale):
            self.scale = scale

        @partial(jit, static_argnums=0)
        def apply(self, x):
            return x * self.scale

        def __hash__(self):
            return hash(self.scale)

        def __eq__(self, other):
            return isinstance(other, Model) and other.scale == self.scale

    assert Model(2.0).apply(jnp.ones(2)).tolist() == [2.0, 2.0]
    assert Model(5.0).apply(jnp.ones(2)).tolist() == [5.0, 5.0]


def test_jit_method_side_effect_on_static_self_runs_at_trace_time_only():
    """The seed's Counter: `self.count += 1` under jit runs once per distinct self."""
    class Counter:
        count = 0

        @functools.partial(jit, static_argnums=(0,))
        def inc(self):
            self.count += 1

    a = Counter()
    a.inc()
    a.inc()
    assert a.count == 1
    b = Counter()
    b.inc()
    assert b.count == 1


def test_jit_of_bound_method():
    class Scale:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return x * self.k

        def apply(self, x):
            return x * self.k

    assert jit(Scale(3.0).apply)(jnp.ones(1)).tolist() == [3.0]
    assert jit(Scale(4.0))(jnp.ones(1)).tolist() == [4.0]


def test_jit_of_a_non_callable_is_a_type_error():
    with pytest.raises(TypeError):
        jit(3)


def test_jit_preserves_function_metadata():
    def my_function(x):
        """Docs."""
        return x

    f = jit(my_function)
    assert f.__name__ == "my_function" and f.__doc__ == "Docs."


# --- static arguments --------------------------------------------------------------------------


def double_above(x, threshold):
    """Python control flow on the static argument only."""
    if threshold > 0:
        return x * 2
    else:
        return x


def test_static_argnums_and_static_argnames_are_inferred_from_each_other():
    by_num = jit(double_above, static_argnums=(1,))
    by_name = jit(double_above, static_argnames=("threshold",))
    # static by position, passed by keyword (and the other way round)
    assert by_num(jnp.array(5.0), threshold=1.0).item() == 10.0
    assert by_name(jnp.array(-2.0), threshold=0.0).item() == -2.0
    assert by_name(jnp.array(5.0), 1.0).item() == 10.0
    assert by_num(jnp.array(5.0), 0.0).item() == 5.0


def test_static_argnames_as_a_single_string():
    @partial(jit, static_argnames=("n"))  # the seed's spelling: a string, not a tuple
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    assert repr(g(10, 20)) == "Array(30, dtype=int32, weak_type=True)"


def test_negative_static_argnums():
    f = jit(lambda x, n: x * n, static_argnums=-1)
    assert f(jnp.ones(2), 4).tolist() == [4.0, 4.0]


def test_static_values_change_retraces():
    body = counting(double_above)
    f = jit(body, static_argnames="threshold")
    assert f(jnp.array(5.0), threshold=0.0).item() == 5.0
    f(jnp.array(1.0), threshold=0.0)
    assert body.traces == 1
    assert f(jnp.array(5.0), threshold=10.0).item() == 10.0
    assert body.traces == 2
    f(jnp.array(1.0), threshold=10.0)
    assert body.traces == 2


def test_unhashable_static_argument_is_an_error_naming_the_argument():
    f = jit(lambda x, options: x * len(options), static_argnums=1)
    with pytest.raises((TypeError, ValueError)) as info:
        f(jnp.ones(2), ["a", "b"])
    message = str(info.value)
    assert "options" in message
    assert "hash" in message.lower()


def test_unhashable_static_keyword_argument_is_an_error_naming_the_argument():
    f = jit(lambda x, table=None: x, static_argnames="table")
    with pytest.raises((TypeError, ValueError)) as info:
        f(jnp.ones(2), table={"a": 1})
    assert "table" in str(info.value)


def test_non_array_argument_that_is_not_static_is_a_type_error():
    f = jit(lambda x, name: x)
    with pytest.raises(TypeError) as info:
        f(jnp.ones(2), "hello")
    assert "static" in str(info.value)


# --- the cache -----------------------------------------------------------------------------------


def test_one_trace_per_key():
    body = counting(lambda x, y: x * y + 1)
    f = jit(body)
    for _ in range(5):
        f(jnp.ones(3), jnp.ones(3))
    assert body.traces == 1
    f(jnp.zeros(3), jnp.full(3, 7.0))  # new values, same avals
    assert body.traces == 1


def test_jit_twice_shares_the_cache():
    """The seed: jit(print_hello) a second time does not print again."""
    body = counting(lambda x: x + 1)
    jit(body)(jnp.ones(2))
    jit(body)(jnp.ones(2))
    assert body.traces == 1
    jit(body)(jnp.ones(3))
    assert body.traces == 2


def test_temporary_lambdas_each_trace():
    """The seed's anti-pattern: jit(lambda ...) inside a loop retraces every time."""
    traces = []

    def loop_body(i):
        traces.append(1)
        return i + 1

    i = 0
    for _ in range(3):
        i = jit(lambda x: loop_body(x))(i)
    assert len(traces) == 3
    traces.clear()
    for _ in range(3):
        i = jit(loop_body)(i)
    assert len(traces) <= 2  # int first, then a weak int32 Array: at most two keys
    assert int(i) == 6


@pytest.mark.parametrize("first,second", [
    ((np.ones(3, np.float32),), (np.ones(4, np.float32),)),  # shape
    ((np.ones(3, np.float32),), (np.ones(3, np.int32),)),  # dtype
    ((jnp.float32(1.0),), (1.0,)),  # weak type
    ((jnp.ones(2),), ((jnp.ones(2),),)),  # pytree structure
    (({"a": jnp.ones(2)},), ({"b": jnp.ones(2)},)),  # dict keys
    (([jnp.ones(2)],), ((jnp.ones(2),),)),  # list vs tuple
])
def test_new_avals_or_structure_retrace(first, second):
    body = counting(lambda t: omnistage.tree_util.tree_map(lambda v: v * 2, t))
    f = jit(body)
    f(*first)
    f(*first)
    assert body.traces == 1
    f(*second)
    assert body.traces == 2
    f(*second)
    f(*first)
    assert body.traces == 2


def test_numpy_array_and_omnistage_array_share_a_key():
    body = counting(lambda x: x + 1)
    f = jit(body)
    f(np.ones(3, np.float32))
    f(jnp.ones(3))
    assert body.traces == 1


def test_side_effects_run_at_trace_time_only(capsys):
    @jit
    def f(x, y):
        print("Running f():")
        print(f"  x = {x}")
        result = jnp.dot(x + 1, y + 1)
        print(f"  result = {result}")
        return result

    x, y = np.random.randn(3, 4), np.random.randn(4)
    f(x, y)
    out = capsys.readouterr().out
    assert "Running f():" in out
    assert "float32[3, 4]" in out or "f32[3,4]" in out
    f(np.random.randn(3, 4), np.random.randn(4))
    assert capsys.readouterr().out == ""


def test_print_hello_seed(capsys):
    def print_hello():
        print("Hello!")

    jit_print_hello = jit(print_hello)
    jit_print_hello()
    jit_print_hello()
    jit(print_hello)()
    assert capsys.readouterr().out == "Hello!\n"


def test_global_list_append_happens_once():
    global_list = []

    def log2(x):
        global_list.append(x)
        ln_x = jnp.log(x)
        ln_2 = jnp.log(2.0)
        return ln_x / ln_2

    f = jit(log2)
    assert abs(f(8.0).item() - 3.0) < 1e-6
    f(4.0)
    assert len(global_list) == 1


def test_clear_cache_retraces():
    body = counting(lambda x: x)
    f = jit(body)
    f(jnp.ones(1))
    f.clear_cache()
    f(jnp.ones(1))
    assert body.traces == 2


# --- lower / compile ---------------------------------------------------------------------------


def test_lower_as_text_is_the_staged_python_source():
    def f(x):
        ln_x = jnp.log(x)
        return ln_x * 2.0

    lowered = jit(f).lower(jnp.ones(3))
    text = lowered.as_text()
    assert isinstance(text, str)
    assert text == str(omnistage.make_jaxpr(f)(jnp.ones(3)))
    assert "ln_x = log(x)" in text
    compile(text, "<lowered>", "exec")


def test_compile_as_text_and_call():
    f = jit(lambda x, y: x @ y + 1.0)
    x, y = jnp.ones((2, 3)), jnp.ones((3, 2))
    compiled = f.lower(x, y).compile()
    text = compiled.as_text()
    assert isinstance(text, str) and text.strip()
    np.testing.assert_allclose(np.asarray(compiled(x, y)), np.full((2, 2), 4.0))


def test_lower_with_static_args_and_shape_dtype_structs():
    f = jit(lambda x, n: x * n, static_argnums=1)
    text = f.lower(omnistage.ShapeDtypeStruct((2, 2), jnp.float32), 3).as_text()
    assert "np.float32(3.0)" in text or "np.int32(3)" in text


def test_lower_does_not_run_the_function_eagerly():
    body = counting(lambda x: x + 1)
    jit(body).lower(omnistage.ShapeDtypeStruct((4,), np.float32))
    assert body.traces == 1


# --- arguments, results, pytrees -----------------------------------------------------------------


def test_keyword_arguments():
    f = jit(lambda x, y=2.0, *, z: x * y + z)
    assert f(jnp.ones(2), z=jnp.ones(2)).tolist() == [3.0, 3.0]
    assert f(jnp.ones(2), y=3.0, z=1.0).tolist() == [4.0, 4.0]
    assert f(x=jnp.ones(2), z=0.0).tolist() == [2.0, 2.0]


def test_default_arguments_are_used():
    def selu(x, alpha=1.67, lambda_=1.05):
        return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    x = jnp.arange(-3.0, 3.0)
    np.testing.assert_allclose(np.asarray(jit(selu)(x)), np.asarray(selu(x)), rtol=1e-6)


def test_pytree_inputs_and_outputs():
    @jit
    def f(params, batch):
        h = batch["x"] @ params["w"] + params["b"]
        return {"out": h, "stats": (h.mean(), [h.sum()])}

    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
    out = f(params, {"x": jnp.ones((4, 3))})
    assert set(out) == {"out", "stats"}
    assert out["out"].shape == (4, 2)
    assert isinstance(out["stats"], tuple) and isinstance(out["stats"][1], list)
    assert out["stats"][0].item() == 3.0 and out["stats"][1][0].item() == 24.0


def test_function_returning_none_and_empty_containers():
    assert jit(lambda x: None)(jnp.ones(1)) is None
    assert jit(lambda x: ((), {}))(jnp.ones(1)) == ((), {})


def test_returning_an_input_unchanged():
    x = jnp.arange(3)
    out = jit(lambda x: x)(x)
    assert out.tolist() == [0, 1, 2] and out.dtype == np.int32


def test_non_array_output_is_a_type_error():
    with pytest.raises(TypeError):
        jit(lambda x: "text")(jnp.ones(1))


def test_outputs_are_immutable_arrays():
    out = jit(lambda x: x + 1)(jnp.ones(2))
    with pytest.raises(TypeError):
        out[0] = 5


# --- dtypes of arguments ---------------------------------------------------------------------------


def test_python_scalars_are_weak_typed_arguments():
    f = jit(lambda x: x)
    assert repr(f(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    assert repr(f(3)) == "Array(3, dtype=int32, weak_type=True)"
    assert repr(f(True)) == "Array(True, dtype=bool)"
    assert f(1j).dtype == np.complex64 and f(1j).weak_type


def test_weak_python_scalar_argument_does_not_promote_a_narrow_array():
    f = jit(lambda x, s: x * s)
    assert f(jnp.ones(2, jnp.float16), 3.0).dtype == np.float16
    assert f(jnp.ones(2, jnp.int8), 3).dtype == np.int8


def test_jit_under_x64_gives_64_bit(x64):
    out = jit(lambda x, y: x * y)(np.ones(2), 2.0)
    assert out.dtype == np.float64


# --- disable_jit -----------------------------------------------------------------------------------


def test_disable_jit_runs_python_every_call():
    body = counting(lambda x: x * 2)
    f = jit(body)
    with omnistage.disable_jit():
        f(jnp.ones(2))
        out = f(jnp.ones(2))
    assert body.traces == 2
    assert out.tolist() == [2.0, 2.0]


def test_disable_jit_gives_concrete_values_to_python_control_flow():
    @jit
    def f(x):
        if x > 0:  # concrete under disable_jit
            return x
        return -x

    with omnistage.disable_jit():
        assert f(jnp.float32(-2.0)).item() == 2.0


def test_disable_jit_restores_the_flag():
    with omnistage.disable_jit():
        pass
    body = counting(lambda x: x)
    f = jit(body)
    f(jnp.ones(1))
    f(jnp.ones(1))
    assert body.traces == 1


# --- nesting -----------------------------------------------------------------------------------


def test_jit_of_jit_inlines():
    inner = jit(lambda x: jnp.sin(x) * 2)
    outer = jit(lambda x: inner(x) + 1)
    np.testing.assert_allclose(np.asarray(outer(jnp.ones(2))), np.sin(1.0) * 2 + 1, rtol=1e-6)
    prims = [e.prim for e in omnistage.make_jaxpr(lambda x: inner(x) + 1)(jnp.ones(2)).eqns()]
    assert "sin" in prims


def test_jitted_loop_body_called_from_python_loop():
    @jit
    def loop_body(prev_i):
        return prev_i + 1

    def g(x, n):
        i = 0
        while i < n:
            i = loop_body(i)
        return x + i

    assert int(g(10, 20)) == 30


# --- helpers: eval_shape, ShapeDtypeStruct, device_put, devices, block_until_ready ------------------


def test_eval_shape_returns_shape_dtype_structs_without_running():
    body = counting(lambda x, y: (x @ y, {"s": x.sum()}))
    out = omnistage.eval_shape(body, omnistage.ShapeDtypeStruct((2, 3), jnp.float32), jnp.ones((3, 4)))
    assert body.traces == 1
    mat, rest = out
    assert isinstance(mat, omnistage.ShapeDtypeStruct)
    assert mat.shape == (2, 4) and mat.dtype == np.float32
    assert rest["s"].shape == () and rest["s"].dtype == np.float32


def test_eval_shape_of_python_scalar_keeps_weak_type():
    out = omnistage.eval_shape(lambda x: x * 2, 1.0)
    assert out.shape == () and out.dtype == np.float32 and out.weak_type


def test_shape_dtype_struct():
    s = omnistage.ShapeDtypeStruct((2, 3), jnp.float32)
    assert s.shape == (2, 3) and s.dtype == np.float32 and s.ndim == 2 and s.size == 6
    assert s == omnistage.ShapeDtypeStruct([2, 3], np.float32)
    assert s != omnistage.ShapeDtypeStruct((2, 3), np.int32)
    assert hash(s) == hash(omnistage.ShapeDtypeStruct((2, 3), "float32"))
    assert "shape=(2, 3)" in repr(s) and "float32" in repr(s)


def test_device_put():
    x = omnistage.device_put(np.ones(2))
    assert isinstance(x, omnistage.Array) and repr(x) == "Array([1., 1.], dtype=float32)"
    assert repr(omnistage.device_put(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    tree = omnistage.device_put({"a": np.zeros(3, np.int64), "b": [1]})
    assert tree["a"].dtype == np.int32 and isinstance(tree["b"][0], omnistage.Array)
    y = jnp.ones(3)
    assert omnistage.device_put(y, omnistage.devices()[0]) is y or \
        omnistage.device_put(y).tolist() == [1.0, 1.0, 1.0]


def test_devices():
    devices = omnistage.devices()
    assert len(devices) >= 1
    assert omnistage.device_count() == len(devices)
    assert omnistage.local_device_count() >= 1
    assert omnistage.process_count() == 1
    assert jnp.ones(2).device in devices


def test_block_until_ready_on_results():
    f = jit(lambda x: {"a": x * 2, "b": (x,)})
    out = f(jnp.ones(2))
    assert omnistage.block_until_ready(out)["a"] is out["a"]
    assert out["a"].block_until_ready() is out["a"]


def test_norm_compiled_matches_norm():
    """The seed: `np.allclose(norm(X), norm_compiled(X), atol=1E-6)`."""
    def norm(X):
        X = X - X.mean(0)
        return X / X.std(0)

    norm_compiled = jit(norm)
    np.random.seed(1701)
    X = jnp.array(np.random.rand(1000, 10))
    assert np.allclose(norm(X), norm_compiled(X), atol=1e-6)
    assert norm_compiled(X).block_until_ready().shape == (1000, 10)


def test_numpy_float64_argument_is_canonicalized_and_strong():
    out = jit(lambda x: x)(np.ones(2))
    assert out.dtype == np.float32 and out.weak_type is False
    out = jit(lambda x: x)(np.float64(1.0))
    assert out.dtype == np.float32 and out.weak_type is False


def test_constant_outputs_are_canonical_and_python_scalars_weak():
    """JAX: returning a Python float gives a weak float32; a NumPy float64 array gives float32."""
    out = jit(lambda x: (x, 2.0))(1.0)
    assert repr(out[1]) == "Array(2., dtype=float32, weak_type=True)"
    assert jit(lambda x: np.ones(2))(1.0).dtype == np.float32
    assert jit(lambda x: np.int64(3))(1.0).dtype == np.int32


def test_a_program_without_inputs_is_computed_once_and_its_results_stay_read_only():
    f = jit(lambda n: jnp.sum(jnp.arange(n)), static_argnums=0)
    compiled = f.lower(10_000_000).compile()
    runs = []
    run = compiled._run._executable
    compiled._run._executable = lambda: runs.append(1) or run()
    assert [int(compiled.call_tree([])) for _ in range(3)] == [int(compiled.call_tree([]))] * 3 and runs == [1]
    first = f(10_000_000)
    assert int(first) == int(np.arange(10_000_000, dtype=np.int32).sum(dtype=np.int32))
    assert int(f(10_000_000)) == int(first)
    g = jit(lambda n: jnp.ones((n, 3)) * 2, static_argnums=0)
    a, b = g(4), g(4)
    with pytest.raises(ValueError):
        np.asarray(a)[0, 0] = 5.0  # (one buffer serves every call's result)
    np.testing.assert_array_equal(np.asarray(b), np.full((4, 3), 2.0, np.float32))
    # Python callbacks are not folded: they run at every call
    calls = []
    h = jit(lambda: omnistage.pure_callback(lambda: calls.append(1) or np.float32(1), np.float32(0)) + jnp.zeros(2))
    h(), h()
    assert len(calls) == 2
