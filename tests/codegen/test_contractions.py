"""Contractions reach BLAS without copies (codegen/contraction_layout.py and the CPU emitter's
dot_general): transposed operands are F-ordered views, transposes around a dot_general fold
into it, batched products with leading batch axes index their operands in place; every layout
gives NumPy's values, including the ones that still need a copy."""
import re

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen import contraction_layout, emit_cpu
from omnistage.staging.cleanup import cleanup

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)


@pytest.fixture(autouse=True)
def blas_products(monkeypatch):
    """These shapes are small enough for the emitter's loop nest; here they call BLAS (the
    layouts under test), except where a test asks for the nest."""
    monkeypatch.setattr(emit_cpu, "SMALL_PRODUCT_WORK", 0)


def _compiled(f, *args):
    compiled = omnistage.jit(f, backend="cpu").lower(*args).compile()
    assert type(compiled.executable).__name__ == "NumbaProgram"
    return compiled


def _copy_loops(src):
    """Loop nests in the generated source (a contraction's own batch loop excluded)."""
    return [line for line in src.splitlines() if re.match(r"\s*for _[ri]\d+ in ", line)]


def _dot(x, y, contract, batch=((), ())):
    return lax.dot_general(x, y, (contract, batch))


def _r(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


UNBATCHED = {
    # name: (function, einsum of the same, operand shapes)
    "a.T @ b": (lambda a, b: a.T @ b, "ki,kj->ij", [(7, 5), (7, 6)]),
    "a @ b.T": (lambda a, b: a @ b.T, "ik,jk->ij", [(5, 7), (6, 7)]),
    "a.T @ b.T": (lambda a, b: a.T @ b.T, "ki,jk->ij", [(7, 5), (6, 7)]),
    "(a.T @ b).T": (lambda a, b: (a.T @ b).T, "ki,kj->ji", [(7, 5), (7, 6)]),
    "two contracting axes, reversed": (lambda x, y: _dot(x, y, ((1, 2), (1, 0))), "ijk,kjl->il", [(3, 4, 5), (5, 4, 6)]),
    "free axes reordered by a transpose": (
        lambda x, w: jnp.transpose(x, (1, 0, 2)) @ w, "ijk,kl->jil", [(3, 4, 5), (5, 6)]),
    "matrix-vector, transposed": (lambda a, v: a.T @ v, "ki,k->i", [(7, 5), (7,)]),
}

BATCHED = {
    "bij,bjk->bik": (lambda x, y: jnp.einsum("bij,bjk->bik", x, y), "bij,bjk->bik", [(4, 3, 5), (4, 5, 6)]),
    "bji,bjk->bik": (lambda x, y: jnp.einsum("bji,bjk->bik", x, y), "bji,bjk->bik", [(4, 5, 3), (4, 5, 6)]),
    "bij,bkj->bik": (lambda x, y: jnp.einsum("bij,bkj->bik", x, y), "bij,bkj->bik", [(4, 3, 5), (4, 6, 5)]),
    "bij,bjk->bki": (lambda x, y: jnp.einsum("bij,bjk->bki", x, y), "bij,bjk->bki", [(4, 3, 5), (4, 5, 6)]),
    "batch axis not leading": (lambda x, y: _dot(x, y, ((2,), (1,)), ((1,), (0,))), "ibj,bjk->bik", [(3, 4, 5), (4, 5, 6)]),
}


@pytest.mark.parametrize("small_as_loops", [False, True], ids=["blas", "loop nest"])
@pytest.mark.parametrize("cases", [UNBATCHED, BATCHED], ids=["unbatched", "batched"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_every_layout_matches_numpy(rng, cases, dtype, small_as_loops, monkeypatch):
    if small_as_loops:
        monkeypatch.setattr(emit_cpu, "SMALL_PRODUCT_WORK", 512)
    args = [_r(rng, *s, dtype=dtype) + (1j * _r(rng, *s, dtype=dtype) if dtype == np.complex64 else 0)
            for _, _, shapes in cases.values() for s in shapes]

    def f(*flat):
        out, k = [], 0
        for fn, _, shapes in cases.values():
            out.append(fn(*flat[k:k + len(shapes)]))
            k += len(shapes)
        return out

    compiled = _compiled(f, *args)
    assert ("_kn.matmul" in compiled.as_text()) != small_as_loops
    got = compiled(*args)
    k = 0
    for (name, (_, spec, shapes)), g in zip(cases.items(), got):
        want = np.einsum(spec, *[a.astype(np.complex128 if dtype == np.complex64 else np.float64)
                                 for a in args[k:k + len(shapes)]])
        k += len(shapes)
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-5, atol=2e-5, err_msg=name)


@pytest.mark.parametrize("name", ["a.T @ b", "a @ b.T", "a.T @ b.T", "(a.T @ b).T", "matrix-vector, transposed"])
def test_transposed_operands_and_results_are_not_copied(rng, name):
    fn, _, shapes = UNBATCHED[name]
    args = [_r(rng, *s) for s in shapes]
    src = _compiled(fn, *args).as_text()
    assert _copy_loops(src) == [], src
    assert src.count("_kn.matmul(") == 1


@pytest.mark.parametrize("name", ["bij,bjk->bik", "bji,bjk->bik", "bij,bkj->bik", "bij,bjk->bki"])
def test_batched_products_with_leading_batch_axes_index_their_operands(rng, name):
    fn, _, shapes = BATCHED[name]
    args = [_r(rng, *s) for s in shapes]
    src = _compiled(fn, *args).as_text()
    assert _copy_loops(src) == [], src
    assert src.count("_kn.matmul(") == 1


def test_weight_gradients_of_a_dense_layer_need_no_transpose(rng):
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w))

    w, x = _r(rng, 6, 5), _r(rng, 8, 6)
    src = _compiled(omnistage.grad(loss), w, x).as_text()
    assert not any("transpose" in line or "_c[" in line for line in _copy_loops(src)), src
    g = np.asarray(omnistage.jit(omnistage.grad(loss))(w, x))
    want = x.astype(np.float64).T @ (1 - np.tanh(x.astype(np.float64) @ w) ** 2)
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)


def test_a_transpose_with_other_readers_stays():
    def f(a, b):
        t = a.T
        return t @ b, t + 1.0

    a, b = np.ones((3, 2), np.float32), np.ones((3, 4), np.float32)
    program = contraction_layout.fold_transposes(cleanup(omnistage.make_jaxpr(f)(a, b)))
    prims = [e.prim for e in program.eqns()]
    assert prims.count("transpose") == 1 and prims.count("dot_general") == 1
    (dot,) = [e for e in program.eqns() if e.prim == "dot_general"]
    assert [n.id for n in dot.ins] == ["a", "b"]  # the contraction reads a itself
    assert dot.params["dimension_numbers"] == (((0,), (0,)), ((), ()))
    program.check()


def test_an_output_transpose_becomes_swapped_operands():
    program = contraction_layout.fold_transposes(cleanup(omnistage.make_jaxpr(lambda a, b: (a @ b).T)(
        np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))))
    (dot,) = program.eqns()
    assert dot.prim == "dot_general" and [n.id for n in dot.ins] == ["b", "a"]
    assert dot.params["dimension_numbers"] == (((0,), (1,)), ((), ()))
    program.check()


@pytest.mark.parametrize("batch, rows, cols, ndim, layout", [
    ((), (0,), (1,), 2, "C"), ((), (1,), (0,), 2, "F"), ((0,), (1,), (2,), 3, "C"), ((0,), (2,), (1,), 3, "F"),
    ((1,), (0,), (2,), 3, None), ((), (0, 2), (1,), 3, None), ((), (1, 2), (0,), 3, "F"), ((), (), (0,), 1, "C"),
])
def test_matrix_layout(batch, rows, cols, ndim, layout):
    assert contraction_layout.matrix_layout(batch, rows, cols, ndim) == layout


def test_integer_contractions_with_transposed_operands(rng):
    a, b = rng.integers(-5, 5, (7, 5)).astype(np.int32), rng.integers(-5, 5, (7, 6)).astype(np.int32)
    got = _compiled(lambda a, b: a.T @ b, a, b)(a, b)
    np.testing.assert_array_equal(np.asarray(got), a.T @ b)


@pytest.mark.parametrize("fn, shapes", [
    (lambda a, b: jnp.dot(a, b), [(4,), (4,)]),  # a 0-d result
    (lambda a, b: a @ b, [(3, 4), (4,)]),
    (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
    (lambda a, b: a.T @ b, [(4, 3), (4, 2)]),
])
def test_small_products_are_loop_nests_with_numpys_values(rng, fn, shapes, monkeypatch):
    monkeypatch.setattr(emit_cpu, "SMALL_PRODUCT_WORK", 512)
    args = [_r(rng, *s) for s in shapes]
    compiled = _compiled(fn, *args)
    assert "_kn.matmul" not in compiled.as_text()
    np.testing.assert_allclose(np.asarray(compiled(*args)), fn(*[a.astype(np.float64) for a in args]), rtol=1e-5, atol=1e-6)
