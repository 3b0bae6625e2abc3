"""Runtime kernels (`codegen/kernels.py`) that generated code calls with static ints and flags
are compiled once per argument types, not once per value: a literal `3` or `True` in a call
from generated code is its own Numba type, so every distinct size or flag used to compile the
kernel again (seconds each)."""
import numpy as np
from numba.core import types

import omnistage
from omnistage import lax
from omnistage.codegen import kernels as kn


def _new_signatures(kernel, before):
    return set(kernel.signatures) - before


def _no_literals(signatures):
    return all(not isinstance(t, types.Literal) for sig in signatures for t in sig)


def _jit(fn, *args):
    return omnistage.jit(fn, backend="cpu")(*args)


def test_sort_sizes_share_one_identity_permutation():
    before = set(kn.identity_permutation.signatures)
    _jit(lambda x: lax.sort(x, dimension=0), np.arange(6.0).reshape(2, 3))
    _jit(lambda x: lax.sort(x, dimension=1), np.arange(20.0).reshape(4, 5))
    new = _new_signatures(kn.identity_permutation, before)
    assert len(new) <= 1 and _no_literals(new)


def test_permutation_sizes_share_one_lu_pivots_to_permutation():
    before = set(kn.lu_pivots_to_permutation.signatures)
    pivots = np.array([[2, 2, 2], [1, 2, 2]], np.int32)
    a = _jit(lambda p: lax.linalg.lu_pivots_to_permutation(p, permutation_size=3), pivots)
    b = _jit(lambda p: lax.linalg.lu_pivots_to_permutation(p, permutation_size=4), pivots)
    new = _new_signatures(kn.lu_pivots_to_permutation, before)
    assert len(new) <= 1 and _no_literals(new)
    np.testing.assert_array_equal(np.asarray(a), [[2, 0, 1], [1, 2, 0]])
    np.testing.assert_array_equal(np.asarray(b), [[2, 0, 1, 3], [1, 2, 0, 3]])


def test_flags_share_one_eigh_svd_and_forward_substitution():
    kernels = (kn.eigh, kn.svd, kn.forward_substitution)
    before = [set(k.signatures) for k in kernels]
    m = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]])
    for flag in (True, False):
        _jit(lambda x, flag=flag: lax.linalg.eigh(x, lower=flag), m)
        _jit(lambda x, flag=flag: lax.linalg.svd(x, full_matrices=flag), m[:, :2])
        _jit(lambda x, flag=flag: lax.linalg.triangular_solve(x, x, left_side=True, lower=True, unit_diagonal=flag), m)
    for kernel, b in zip(kernels, before):
        new = _new_signatures(kernel, b)
        assert len(new) <= 1 and _no_literals(new), (kernel.py_func.__name__, new)
