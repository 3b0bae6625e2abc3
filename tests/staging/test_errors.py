"""Errors about traced values (`omnistage.errors`): JAX's classes and base classes, and
messages that name the user's file, line and source text, the argument the value depends
on, and the line where the value became traced."""
import inspect
from functools import partial

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import errors

jit_no_rewrite = partial(omnistage.jit, python_control_flow=False)


def _line_of(fun, needle):
    """Absolute line number of the first line of `fun`'s source containing `needle`."""
    lines, first = inspect.getsourcelines(fun)
    for i, line in enumerate(lines):
        if needle in line:
            return first + i
    raise AssertionError(f"{needle!r} not in the source of {fun.__name__}")


def _assert_names_location(message, fun, needle):
    line = _line_of(fun, needle)
    assert __file__ in message, message
    assert f"line {line}" in message, message
    assert needle in message, message


# --- the class hierarchy -----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [
    errors.ConcretizationTypeError, errors.TracerBoolConversionError,
    errors.TracerIntegerConversionError, errors.TracerArrayConversionError,
    errors.UnexpectedTracerError,
])
def test_error_is_a_type_error_as_in_jax(cls):
    assert issubclass(cls, TypeError)


def test_tracer_bool_conversion_error_is_a_concretization_error():
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)


def test_non_concrete_boolean_index_error_is_an_index_error():
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)


def test_error_classes_are_importable_from_omnistage_errors():
    names = ["ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
             "TracerArrayConversionError", "NonConcreteBooleanIndexError", "UnexpectedTracerError"]
    for name in names:
        assert isinstance(getattr(omnistage.errors, name), type)


# --- ConcretizationTypeError -------------------------------------------------------------------


def _reshape_with_traced_size(x):
    return x.reshape(jnp.array(x.shape).prod())


def test_reshape_to_a_traced_size_raises_concretization_error():
    f = omnistage.jit(_reshape_with_traced_size)
    with pytest.raises(errors.ConcretizationTypeError) as info:
        f(jnp.ones((2, 3)))
    message = str(info.value)
    _assert_names_location(message, _reshape_with_traced_size, "x.reshape(jnp.array(x.shape).prod())")
    assert "_reshape_with_traced_size" in message  # the function being traced
    assert "became traced" in message


def test_concretization_error_points_at_the_line_where_the_value_became_traced():
    def f(x):
        size = jnp.prod(jnp.array(x.shape))
        return x.reshape((size,))

    with pytest.raises(errors.ConcretizationTypeError) as info:
        omnistage.jit(f)(jnp.ones((3, 4)))
    message = str(info.value)
    traced_at = _line_of(f, "size = jnp.prod")
    used_at = _line_of(f, "return x.reshape")
    assert f"line {traced_at}" in message and f"line {used_at}" in message
    after = message[message.index("became traced"):]
    assert f"line {traced_at}" in after.split("\n", 2)[1], message


def test_the_numpy_fix_works():
    """The seed's fix: use numpy for static shape computations."""
    f = omnistage.jit(lambda x: x.reshape((np.prod(x.shape),)))
    out = f(jnp.ones((2, 3)))
    assert out.shape == (6,) and out.tolist() == [1.0] * 6


def test_float_of_tracer_is_a_concretization_error():
    with pytest.raises(errors.ConcretizationTypeError):
        omnistage.jit(lambda x: float(x))(1.0)


def test_item_of_tracer_is_a_concretization_error():
    with pytest.raises(errors.ConcretizationTypeError):
        omnistage.jit(lambda x: x.item())(jnp.ones(1))
    with pytest.raises(errors.ConcretizationTypeError):
        omnistage.jit(lambda x: x.tolist())(jnp.ones(1))


# --- TracerBoolConversionError -----------------------------------------------------------------


def _branch_on_positive(x):
    if x > 0:
        return x
    return -x


def test_if_on_traced_value_raises_tracer_bool_conversion_error():
    with pytest.raises(errors.TracerBoolConversionError) as info:
        jit_no_rewrite(_branch_on_positive)(1.0)
    message = str(info.value)
    assert "Attempted boolean conversion of traced array with shape bool[]" in message
    _assert_names_location(message, _branch_on_positive, "if x > 0:")
    assert "argument x" in message


def test_bool_conversion_error_names_the_argument_it_depends_on():
    """The seed: `-x if neg else x` under jit depends on the argument neg."""
    def f(x, neg):
        return -x if neg else x

    with pytest.raises(errors.TracerBoolConversionError) as info:
        jit_no_rewrite(f)(1, True)
    assert "argument neg" in str(info.value)
    assert "argument x" not in str(info.value)


def test_bool_conversion_error_is_catchable_as_concretization_and_type_error():
    with pytest.raises(errors.ConcretizationTypeError):
        jit_no_rewrite(_branch_on_positive)(2.0)
    with pytest.raises(TypeError):
        jit_no_rewrite(_branch_on_positive)(3.0)


def test_while_on_traced_value_raises_tracer_bool_conversion_error():
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    with pytest.raises(errors.TracerBoolConversionError) as info:
        jit_no_rewrite(g)(10, 20)
    assert "argument n" in str(info.value)
    _assert_names_location(str(info.value), g, "while i < n:")


def test_and_or_not_on_traced_values_raise():
    with pytest.raises(errors.TracerBoolConversionError):
        jit_no_rewrite(lambda x: (x > 0) and (x < 1))(0.5)
    with pytest.raises(errors.TracerBoolConversionError):
        jit_no_rewrite(lambda x: not x)(True)


def test_static_argument_makes_the_branch_work():
    f = omnistage.jit(lambda x, neg: -x if neg else x, static_argnums=(1,))
    assert int(f(1, True)) == -1 and int(f(1, False)) == 1


# --- TracerIntegerConversionError --------------------------------------------------------------


def _range_of_traced(x, n):
    total = x
    for _ in range(n):
        total = total + 1
    return total


def test_range_of_traced_value_raises_tracer_integer_conversion_error():
    with pytest.raises(errors.TracerIntegerConversionError) as info:
        jit_no_rewrite(_range_of_traced)(1.0, 3)
    message = str(info.value)
    assert "__index__" in message
    _assert_names_location(message, _range_of_traced, "for _ in range(n):")
    assert "argument n" in message


def test_int_of_traced_value_raises_tracer_integer_conversion_error():
    def f(n):
        k = int(n)
        return jnp.ones(3) * k

    with pytest.raises(errors.TracerIntegerConversionError) as info:
        omnistage.jit(f)(3)
    assert "__int__" in str(info.value)
    _assert_names_location(str(info.value), f, "k = int(n)")


def test_indexing_a_python_list_with_a_tracer_raises():
    with pytest.raises(errors.TracerIntegerConversionError):
        omnistage.jit(lambda i: jnp.float32([1.0, 2.0, 3.0][i]))(1)


# --- TracerArrayConversionError ----------------------------------------------------------------


def _numpy_on_tracer(x):
    y = np.asarray(x)
    return jnp.asarray(y)


def test_np_asarray_of_tracer_raises_tracer_array_conversion_error():
    with pytest.raises(errors.TracerArrayConversionError) as info:
        omnistage.jit(_numpy_on_tracer)(jnp.ones(3))
    message = str(info.value)
    assert "__array__" in message
    _assert_names_location(message, _numpy_on_tracer, "y = np.asarray(x)")


def test_numpy_ufunc_on_tracer_raises_tracer_array_conversion_error():
    with pytest.raises(errors.TracerArrayConversionError):
        omnistage.jit(lambda x: np.sin(np.asarray(x)))(jnp.ones(3))


# --- NonConcreteBooleanIndexError --------------------------------------------------------------


def get_negatives(x):
    return x[x < 0]


def test_boolean_mask_indexing_works_eagerly():
    x = jnp.array([1.0, -2.0, 3.0, -0.5])
    out = get_negatives(x)
    assert out.tolist() == [-2.0, -0.5] and out.dtype == np.float32


def test_where_is_the_shape_preserving_alternative():
    x = jnp.array([1.0, -2.0, 3.0])
    out = omnistage.jit(lambda x: jnp.where(x < 0, x, 0.0))(x)
    assert out.tolist() == [0.0, -2.0, 0.0]


# --- UnexpectedTracerError ---------------------------------------------------------------------

_escaped = []


def test_tracer_stored_in_a_global_list_raises_when_used_later():
    @omnistage.jit
    def leak(x):
        _escaped.append(x)
        return x + 1.0

    leak(1.0)
    tracer = _escaped.pop()
    with pytest.raises(errors.UnexpectedTracerError) as info:
        tracer + 1.0
    message = str(info.value)
    assert "leak" in message
    assert __file__ in message and "tracer + 1.0" in message


def test_tracer_stored_in_a_module_global_raises_when_passed_to_jnp():
    def init(x):
        global _leaked_global
        _leaked_global = x * 2.0
        return x

    omnistage.jit(init)(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        jnp.sin(_leaked_global)


def test_tracer_stored_in_a_dict_raises_when_used_inside_another_jit():
    store = {}

    @omnistage.jit
    def f(x):
        store["x"] = x
        return x

    f(jnp.ones(2))

    @omnistage.jit
    def g(y):
        return y + store["x"]

    with pytest.raises(errors.UnexpectedTracerError):
        g(jnp.ones(2))


def test_tracer_captured_by_a_closure_raises_when_the_closure_runs_later():
    closures = []

    @omnistage.jit
    def f(x):
        closures.append(lambda: x * 3.0)
        return x

    f(2.0)
    with pytest.raises(errors.UnexpectedTracerError):
        closures[0]()


def test_escaped_tracer_bool_is_an_unexpected_tracer_error():
    saved = []
    omnistage.jit(lambda x: saved.append(x) or x)(jnp.ones(()))
    with pytest.raises(errors.UnexpectedTracerError):
        bool(saved[0])
    with pytest.raises(errors.UnexpectedTracerError):
        np.asarray(saved[0])


def test_escaped_tracer_names_the_line_that_created_it():
    saved = []

    def f(x):
        y = jnp.sin(x)
        saved.append(y)
        return x

    omnistage.jit(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError) as info:
        saved[0] * 2.0
    _assert_names_location(str(info.value), f, "y = jnp.sin(x)")


def test_printing_an_escaped_tracer_does_not_raise():
    """The seed prints an escaped key: its repr is a Traced<...> string, not an error."""
    saved = []
    omnistage.jit(lambda x: saved.append(x) or x)(jnp.ones(2))
    text = repr(saved[0])
    assert text.startswith("Traced<") and "float32[2]" in text


# --- shape errors name the user's line -----------------------------------------------------------


def _bad_add(x, y):
    return x + y


def test_lax_mixed_dtypes_raise_type_error_naming_the_line():
    from omnistage import lax

    def f(x):
        return lax.add(x, 1.0)

    with pytest.raises(TypeError) as info:
        omnistage.jit(f)(jnp.ones(2, jnp.int32))
    _assert_names_location(str(info.value), f, "return lax.add(x, 1.0)")


def test_lax_add_of_int_and_float_python_scalars_raises_type_error():
    from omnistage import lax

    with pytest.raises(TypeError):
        lax.add(1, 1.0)
    assert lax.add(jnp.float32(1), 1.0).dtype == np.float32


def test_boolean_mask_indexing_under_jit_raises_non_concrete_boolean_index_error():
    x = jnp.array([1.0, -2.0, 3.0, -0.5])
    with pytest.raises(errors.NonConcreteBooleanIndexError) as info:
        omnistage.jit(get_negatives)(x)
    message = str(info.value)
    assert "boolean indices must be concrete" in message
    _assert_names_location(message, get_negatives, "return x[x < 0]")


def test_shape_mismatch_is_reported_at_trace_time_with_both_shapes():
    with pytest.raises((TypeError, ValueError)) as info:
        omnistage.jit(_bad_add)(jnp.ones((2, 3)), jnp.ones((4,)))
    message = str(info.value)
    assert "(2, 3)" in message and "(4,)" in message
    _assert_names_location(message, _bad_add, "return x + y")
