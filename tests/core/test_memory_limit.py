"""An array bigger than this machine's memory is refused before it is allocated, naming the
user's line, shape and dtype (core/memory_limit.py): in eager operations, in grad and vmap
without jit, and in the NumPy interpreter; shapes here are far beyond any machine, and
nothing of that size is ever allocated."""
import os

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.core.memory_limit import IntermediateTooLargeError, memory_limit

HERE = os.path.basename(__file__)
BIG = 10**6  # an outer product of two BIG vectors: 10^12 float32, 3.6 TiB


def _line_of(fn, offset):
    return f"{HERE}:{fn.__code__.co_firstlineno + offset}"


def _assert_names_it(message, where, shape="(1000000, 1000000)"):
    assert shape in message and "float32" in message and "TiB" in message
    assert where in message
    assert "lax.map" in message  # and how to fix it


def outer_sum(a):
    z = a[:, None] * a[None, :]
    return jnp.exp(z).sum()


def test_an_eager_operation_bigger_than_memory_names_the_users_line():
    x = jnp.ones(BIG, np.float32)
    with pytest.raises(IntermediateTooLargeError) as info:
        outer_sum(x)
    assert isinstance(info.value, MemoryError)
    _assert_names_it(str(info.value), _line_of(outer_sum, 1))
    assert "z = a[:, None] * a[None, :]" in str(info.value)  # the line itself, too


def test_grad_without_jit_names_the_users_line():
    with pytest.raises(IntermediateTooLargeError) as info:
        omnistage.grad(outer_sum)(np.ones(BIG, np.float32))
    _assert_names_it(str(info.value), _line_of(outer_sum, 1))


def test_vmap_without_jit_names_the_users_line():
    def outer_total(a):
        return jnp.outer(a, a).sum()

    with pytest.raises(IntermediateTooLargeError) as info:
        omnistage.vmap(outer_total)(np.ones((3, BIG), np.float32))
    _assert_names_it(str(info.value), _line_of(outer_total, 1), "(3, 1000000, 1000000)")


def test_the_interpreter_names_the_statement_before_running_it():
    with pytest.raises(IntermediateTooLargeError) as info:
        omnistage.jit(outer_sum, backend="interpreter")(np.ones(BIG, np.float32))
    _assert_names_it(str(info.value), _line_of(outer_sum, 1))


def test_arrays_that_fit_are_untouched():
    x = jnp.ones(1000, np.float32)
    np.testing.assert_allclose(float(outer_sum(x)), np.e * 10**6, rtol=1e-5)
    limit = memory_limit()
    assert limit is None or 2**26 < limit <= os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
