"""jnp products (matmul/@, dot, vdot, vecdot, inner, outer, tensordot, einsum, kron, cross),
convolve/correlate and lax.conv_general_dilated against NumPy: values and JAX's dtypes, each
run eagerly, under jit, from the printed program and through the checked interpreter."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from tests.helpers import check_staged, TEST_BACKEND

TOL = dict(rtol=2e-5, atol=2e-5)


def rand(rng, shape, dtype="float32"):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(-4, 5, shape).astype(dt)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def assert_matches(got, want, dtype, **tol):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, np.asarray(want).astype(got.dtype), **(tol or TOL))


# --- matmul / dot ------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((2, 3), (4, 3, 5)), ((4, 2, 3), (4, 3, 5)), ((1, 5, 2, 3), (4, 1, 3, 2)),
    ((6, 1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4)), ((2, 2, 3), (3,)), ((0, 2, 3), (3, 4)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_broadcasts_batches_and_handles_vectors(rng, sa, sb):
    a, b = rand(rng, sa), rand(rng, sb)
    out = check_staged(jnp.matmul, a, b, **TOL)
    assert_matches(out, a @ b, "float32")


@pytest.mark.parametrize("dtype", ["int32", "bool", "complex64", "int8"])
def test_matmul_keeps_integer_bool_and_complex_dtypes(rng, dtype):
    a, b = rand(rng, (2, 3, 4), dtype), rand(rng, (4, 2), dtype)
    out = check_staged(jnp.matmul, a, b)
    assert_matches(out, a @ b, dtype)


def test_matmul_promotes_mixed_dtypes_like_jax(rng):
    a, b = rand(rng, (2, 3), "int32"), rand(rng, (3,), "float32")
    assert_matches(check_staged(jnp.matmul, a, b), a @ b, "float32")
    p, q = rand(rng, (2, 3), "bool"), rand(rng, (3, 2), "int8")
    assert_matches(check_staged(jnp.matmul, p, q), p.astype(np.int8) @ q, "int8")


def test_matmul_float64_under_x64(x64, rng):
    a, b = rand(rng, (3, 2, 4), "float64"), rand(rng, (4, 5), "float64")
    assert_matches(check_staged(jnp.matmul, a, b, rtol=1e-12, atol=1e-12), a @ b, "float64", rtol=1e-12, atol=1e-12)


def test_matmul_operator_on_arrays_and_tracers(rng):
    a, b = rand(rng, (2, 3)), rand(rng, (3, 4))
    out = check_staged(lambda x, y: x @ y, jnp.asarray(a), jnp.asarray(b))
    assert_matches(out, a @ b, "float32")
    assert_matches(a @ jnp.asarray(b), a @ b, "float32")


def test_matmul_preferred_element_type(rng):
    a, b = rand(rng, (2, 3), "int8"), rand(rng, (3, 2), "int8")
    out = check_staged(lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32), a, b)
    assert_matches(out, a.astype(np.float32) @ b, "float32")


def test_matmul_errors_name_both_shapes():
    with pytest.raises(TypeError, match=r"\(2, 3\).*\(4, 5\)"):
        jnp.matmul(jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(ValueError, match="at least 1-D"):
        jnp.matmul(jnp.ones(()), jnp.ones((3,)))
    with pytest.raises(ValueError, match="broadcasting"):
        jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((5, 3, 4)))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (4, 3, 2)), ((), (3,)), ((2, 3), ())])
def test_dot_follows_numpy_for_every_rank(rng, sa, sb):
    a, b = rand(rng, sa), rand(rng, sb)
    assert_matches(check_staged(jnp.dot, a, b), np.dot(a, b), "float32")


def test_dot_misaligned_shapes_raise():
    with pytest.raises(TypeError, match="not aligned"):
        jnp.dot(jnp.ones((2, 3)), jnp.ones((2, 3)))


def test_vdot_conjugates_first_argument_and_flattens(rng):
    a, b = rand(rng, (2, 3), "complex64"), rand(rng, (3, 2), "complex64")
    assert_matches(check_staged(jnp.vdot, a, b), np.vdot(a, b), "complex64")


def test_vecdot_conjugates_and_broadcasts(rng):
    a, b = rand(rng, (4, 1, 3), "complex64"), rand(rng, (5, 3), "complex64")
    want = np.sum(np.conj(a) * b, axis=-1)
    assert_matches(check_staged(jnp.vecdot, a, b), want, "complex64")


def test_matvec_and_vecmat(rng):
    m, v = rand(rng, (2, 3, 4)), rand(rng, (4,))
    assert_matches(check_staged(jnp.matvec, m, v), m @ v, "float32")
    w = rand(rng, (3,))
    assert_matches(check_staged(jnp.vecmat, w, m), np.einsum("j,bjk->bk", w, m), "float32")


def test_inner_outer_and_tensordot(rng):
    a, b = rand(rng, (2, 3)), rand(rng, (4, 3))
    assert_matches(check_staged(jnp.inner, a, b), np.inner(a, b), "float32")
    assert_matches(check_staged(jnp.outer, a, b), np.outer(a, b), "float32")
    x, y = rand(rng, (2, 3, 4)), rand(rng, (4, 3, 5))
    f = lambda u, v: jnp.tensordot(u, v, axes=([1, 2], [1, 0]))  # noqa: E731
    assert_matches(check_staged(f, x, y), np.tensordot(x, y, axes=([1, 2], [1, 0])), "float32")
    z = rand(rng, (3, 4, 2))
    assert_matches(check_staged(jnp.tensordot, x, z), np.tensordot(x, z), "float32")
    assert_matches(jnp.tensordot(x, y, 0), np.tensordot(x, y, 0), "float32")


def test_tensordot_mismatch_names_axes_and_shapes():
    with pytest.raises(TypeError, match=r"axis 1 of a .*\(2, 3\)"):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((4, 2)), axes=([1], [0]))


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 1, 2)), ((2,), (3,)), ((2, 2), (2, 2))])
def test_kron(rng, sa, sb):
    a, b = rand(rng, sa), rand(rng, sb)
    assert_matches(check_staged(jnp.kron, a, b), np.kron(a, b), "float32")


def test_cross_of_3_and_2_vectors(rng):
    a, b = rand(rng, (4, 3)), rand(rng, (4, 3))
    assert_matches(check_staged(jnp.cross, a, b), np.cross(a, b), "float32")
    f = lambda u, v: jnp.cross(u, v, axisa=0, axisb=0, axisc=0)  # noqa: E731
    assert_matches(check_staged(f, a.T, b.T), np.cross(a.T, b.T, axisa=0, axisb=0, axisc=0), "float32")
    two = a[:, :2]
    assert_matches(check_staged(jnp.cross, two, b), np.cross(np.pad(two, [(0, 0), (0, 1)]), b), "float32")
    assert_matches(jnp.cross(two, b[:, :2]), two[:, 0] * b[:, 1] - two[:, 1] * b[:, 0], "float32")


# --- einsum ------------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]), ("...ij,...jk", [(5, 2, 3), (3, 4)]), ("iij,jk,kl->il", [(3, 3, 4), (4, 5), (5, 2)]),
    ("abc,cd,de,ea->b", [(2, 3, 4), (4, 5), (5, 6), (6, 2)]), ("i,i,i", [(3,), (3,), (3,)]),
    ("ijk,ikj->ij", [(2, 3, 3), (2, 3, 3)]), ("iii->i", [(2, 2, 2)]), ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]), ("i,j->ij", [(2,), (3,)]), ("ij,ij->", [(2, 3), (2, 3)]),
    ("", [()]), (",", [(), ()]), ("ab,bc->", [(2, 3), (3, 4)]), ("Ba,aC", [(2, 3), (3, 4)]),
    ("i...->...", [(3, 2, 4)]), ("ij,j", [(3, 1), (5,)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUMS)
def test_einsum_matches_numpy(rng, spec, shapes):
    ops = [rand(rng, s) for s in shapes]
    # NumPy broadcasts size-1 dimensions only under '...'; JAX (and omnistage) for any label
    numpy_ops = [np.broadcast_to(ops[0], (3, 5)), ops[1]] if spec == "ij,j" else ops
    want = np.einsum(spec, *numpy_ops)
    out = check_staged(lambda *xs: jnp.einsum(spec, *xs), *ops, **TOL)
    assert_matches(out, want, "float32", rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("optimize", [False, True, "greedy", ["einsum_path", (1, 2), (0, 1)]])
def test_einsum_optimize_choices_agree(rng, optimize):
    ops = [rand(rng, s) for s in [(3, 4), (4, 5), (5, 2)]]
    out = jnp.einsum("ij,jk,kl->il", *ops, optimize=optimize)
    assert_matches(out, ops[0] @ ops[1] @ ops[2], "float32", rtol=1e-4, atol=1e-4)


def test_einsum_interleaved_sublists(rng):
    x = rand(rng, (3, 3))
    assert_matches(jnp.einsum(x, [0, 1], x, [1, 2], [0, 2]), x @ x, "float32")
    assert_matches(jnp.einsum(x, [0, 0]), np.trace(x), "float32")


def test_einsum_dtypes_follow_promotion(rng):
    i = rand(rng, (3, 3), "int32")
    assert_matches(check_staged(lambda a: jnp.einsum("ij,jk", a, a), i), i @ i, "int32")
    b = rand(rng, (3, 3), "bool")
    assert_matches(check_staged(lambda a: jnp.einsum("ij,jk", a, a), b), b @ b, "bool")
    assert_matches(check_staged(lambda a: jnp.einsum("ij->", a), b), b.any(), "bool")
    c = rand(rng, (3, 3), "complex64")
    f = rand(rng, (3, 2))
    assert_matches(check_staged(lambda a, g: jnp.einsum("ij,jk", a, g), c, f), c @ f, "complex64")
    out = jnp.einsum("ij,jk", i, i, preferred_element_type=jnp.float32)
    assert_matches(out, i @ i, "float32")


def test_einsum_float64_under_x64(x64, rng):
    a, b = rand(rng, (2, 3), "float64"), rand(rng, (3,), "float64")
    assert_matches(check_staged(lambda x, y: jnp.einsum("ij,j->i", x, y), a, b), a @ b, "float64")


@pytest.mark.parametrize("spec,shapes,match", [
    ("ij,jk", [(2, 3), (4, 5)], "subscript 'j' has size 3 in one operand and 4"),
    ("ij,jk", [(2, 3)], "2 operand"),
    ("ijk", [(2, 3)], "dimension"),
    ("ij->k", [(2, 3)], "'k' does not appear"),
    ("i1", [(2, 3)], "invalid subscript"),
])
def test_einsum_errors(spec, shapes, match):
    with pytest.raises(ValueError, match=match):
        jnp.einsum(spec, *[jnp.ones(s) for s in shapes])


@st.composite
def einsum_problems(draw):
    """Random valid subscripts: 1-3 operands over a small label alphabet with random sizes,
    repeated labels, optional ellipsis and implicit or explicit output."""
    labels = "abcde"
    sizes = {l: draw(st.integers(1, 3)) for l in labels}
    n_ops = draw(st.integers(1, 3))
    use_ell = draw(st.booleans())
    ell_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))) if use_ell else ()
    specs, shapes = [], []
    for _ in range(n_ops):
        subs = draw(st.lists(st.sampled_from(labels), min_size=0, max_size=3))
        spec = "".join(subs)
        shape = tuple(sizes[l] for l in subs)
        if use_ell and draw(st.booleans()):
            k = draw(st.integers(0, len(ell_shape)))
            spec, shape = "..." + spec, ell_shape[len(ell_shape) - k:] + shape
        specs.append(spec)
        shapes.append(shape)
    used = sorted(set("".join(specs)) - {"."})
    if draw(st.booleans()):
        out = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
        if any("..." in s for s in specs):
            out = "..." + out
        subscripts = ",".join(specs) + "->" + out
    else:
        subscripts = ",".join(specs)
    return subscripts, shapes


@settings(max_examples=50, deadline=None)
@given(problem=einsum_problems(), seed=st.integers(0, 2**16))
def test_einsum_random_subscripts_match_numpy(problem, seed):
    subscripts, shapes = problem
    rng = np.random.default_rng(seed)
    ops = [rand(rng, s, "float64") for s in shapes]
    want = np.einsum(subscripts, *ops)
    got = jnp.einsum(subscripts, *[o.astype(np.float32) for o in ops])
    assert_matches(got, want, "float32", rtol=1e-4, atol=1e-4)
    jitted = omnistage.jit(lambda *xs: jnp.einsum(subscripts, *xs), backend=TEST_BACKEND)(*[o.astype(np.float32) for o in ops])
    assert_matches(jitted, want, "float32", rtol=1e-4, atol=1e-4)


# --- convolve / correlate ----------------------------------------------------------------


def test_convolve_seed_example_is_float32_like_jax():
    out = check_staged(jnp.convolve, jnp.array([1, 2, 1]), jnp.ones(10))
    assert_matches(out, np.convolve([1, 2, 1], np.ones(10)), "float32")


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("na,nv", [(5, 3), (3, 5), (4, 4), (6, 1), (7, 2)])
def test_convolve_and_correlate_match_numpy(rng, mode, na, nv):
    a, v = rand(rng, (na,), "complex64"), rand(rng, (nv,), "complex64")
    conv = check_staged(lambda x, y: jnp.convolve(x, y, mode), a, v)
    assert_matches(conv, np.convolve(a, v, mode), "complex64")
    corr = check_staged(lambda x, y: jnp.correlate(x, y, mode), a, v)
    assert_matches(corr, np.correlate(a, v, mode), "complex64")


def test_convolve_integer_inputs_with_preferred_element_type(rng):
    a, v = rand(rng, (6,), "int32"), rand(rng, (3,), "int32")
    out = check_staged(lambda x, y: jnp.convolve(x, y, preferred_element_type=jnp.int32), a, v)
    assert_matches(out, np.convolve(a, v), "int32")


def test_convolve_rejects_bad_inputs():
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.convolve(jnp.ones((2, 2)), jnp.ones(3))
    with pytest.raises(ValueError, match="mode"):
        jnp.convolve(jnp.ones(4), jnp.ones(3), mode="middle")


def reference_conv(lhs, rhs, strides, padding, lhs_dil, rhs_dil, groups=1):
    """Direct-loop NCHW/OIHW convolution (any spatial rank) as the oracle."""
    n, c = lhs.shape[:2]
    o, i = rhs.shape[:2]
    nsp = lhs.ndim - 2
    dil_shape = [(d - 1) * ld + 1 for d, ld in zip(lhs.shape[2:], lhs_dil)]
    x = np.zeros((n, c, *dil_shape), lhs.dtype)
    x[(slice(None), slice(None)) + tuple(slice(None, None, ld) for ld in lhs_dil)] = lhs
    full = [(lo, hi) for lo, hi in padding]
    pad_pos = [(max(lo, 0), max(hi, 0)) for lo, hi in full]
    x = np.pad(x, [(0, 0), (0, 0)] + pad_pos)
    x = x[(slice(None), slice(None)) + tuple(slice(max(-lo, 0), x.shape[2 + k] - max(-hi, 0)) for k, (lo, hi) in enumerate(full))]
    kd = [(k - 1) * rd + 1 for k, rd in zip(rhs.shape[2:], rhs_dil)]
    out_sp = [(xs - kk) // s + 1 for xs, kk, s in zip(x.shape[2:], kd, strides)]
    out = np.zeros((n, o, *out_sp), np.result_type(lhs, rhs))
    per = o // groups
    for pos in itertools.product(*[range(d) for d in out_sp]):
        window = x[(slice(None), slice(None)) + tuple(slice(p * s, p * s + kk, rd) for p, s, kk, rd in zip(pos, strides, kd, rhs_dil))]
        for g in range(groups):
            w = window[:, g * i:(g + 1) * i]
            k = rhs[g * per:(g + 1) * per]
            out[(slice(None), slice(g * per, (g + 1) * per)) + pos] = np.tensordot(w, k, axes=(list(range(1, nsp + 2)), list(range(1, nsp + 2))))
    return out


CONVS = [
    dict(lhs=(2, 4, 7, 6), rhs=(3, 4, 3, 2), strides=(1, 1), padding="SAME"),
    dict(lhs=(2, 4, 9, 8), rhs=(6, 4, 3, 2), strides=(2, 3), padding="VALID"),
    dict(lhs=(1, 2, 8, 8), rhs=(3, 2, 2, 3), strides=(2, 1), padding=[(1, -1), (2, 0)], lhs_dil=(2, 1), rhs_dil=(1, 2)),
    dict(lhs=(2, 4, 6, 5), rhs=(6, 2, 3, 3), strides=(1, 1), padding="SAME", groups=2),
    dict(lhs=(1, 2, 9), rhs=(3, 2, 4), strides=(2,), padding=[(3, 3)], rhs_dil=(2,)),
    dict(lhs=(1, 2, 5, 4, 3), rhs=(3, 2, 2, 2, 2), strides=(1, 2, 1), padding="SAME"),
]


@pytest.mark.parametrize("case", CONVS)
def test_conv_general_dilated_matches_direct_loops(rng, case):
    lhs, rhs = rand(rng, case["lhs"]), rand(rng, case["rhs"])
    nsp = lhs.ndim - 2
    lhs_dil, rhs_dil = case.get("lhs_dil", (1,) * nsp), case.get("rhs_dil", (1,) * nsp)
    groups = case.get("groups", 1)
    padding = case["padding"]

    def f(x, w):
        return lax.conv_general_dilated(x, w, case["strides"], padding, lhs_dil, rhs_dil, feature_group_count=groups)

    out = check_staged(f, lhs, rhs, **TOL)
    if isinstance(padding, str):
        window = [(k - 1) * r + 1 for k, r in zip(rhs.shape[2:], rhs_dil)]
        padding = lax.padtype_to_pads(lhs.shape[2:], window, case["strides"], padding)
    want = reference_conv(lhs, rhs, case["strides"], padding, lhs_dil, rhs_dil, groups)
    assert_matches(out, want, "float32", rtol=1e-4, atol=1e-4)


def test_conv_string_dimension_numbers_match_nchw(rng):
    x, w = rand(rng, (2, 3, 7, 6)), rand(rng, (4, 3, 3, 2))
    want = lax.conv_general_dilated(x, w, (1, 2), "SAME")
    f = lambda a, b: lax.conv_general_dilated(a, b, (1, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))  # noqa: E731
    out = check_staged(f, x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0))
    assert_matches(out, np.asarray(want).transpose(0, 2, 3, 1), "float32", rtol=1e-5, atol=1e-5)


def test_conv_integer_and_complex_dtypes(rng):
    x, w = rand(rng, (1, 2, 6), "int32"), rand(rng, (2, 2, 3), "int32")
    out = check_staged(lambda a, b: lax.conv(a, b, (1,), "VALID"), x, w)
    assert_matches(out, reference_conv(x, w, (1,), [(0, 0)], (1,), (1,)), "int32")
    xc, wc = rand(rng, (1, 2, 6), "complex64"), rand(rng, (2, 2, 3), "complex64")
    out = check_staged(lambda a, b: lax.conv(a, b, (1,), "SAME"), xc, wc)
    assert_matches(out, reference_conv(xc, wc, (1,), [(1, 1)], (1,), (1,)), "complex64")


def test_conv_shape_errors_are_explained():
    with pytest.raises(TypeError, match=r"feature dimension \(3\).*\(2\)"):
        lax.conv(jnp.ones((1, 3, 5, 5)), jnp.ones((2, 2, 3, 3)), (1, 1), "SAME")
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv(jnp.ones((1, 2, 5)), jnp.ones((2, 2, 3), jnp.int32), (1,), "SAME")
    with pytest.raises(TypeError, match="same rank"):
        lax.conv(jnp.ones((1, 2, 5)), jnp.ones((2, 2, 3, 3)), (1,), "SAME")


def test_outer_keeps_the_sign_of_a_zero_product():
    # as JAX (a[:, None] * b[None, :]): 0 * -0 is -0; a contraction-free dot_general gave +0
    a, b = np.array([0.0, 2.0], np.float32), np.array([-0.0, 3.0], np.float32)
    for f in (jnp.outer, jnp.linalg.outer, omnistage.jit(jnp.outer)):
        got = np.asarray(f(a, b))
        np.testing.assert_array_equal(got, np.outer(a, b))
        assert np.signbit(got[0, 0])
    assert jnp.outer(jnp.array([True]), jnp.array([False])).dtype == np.bool_
