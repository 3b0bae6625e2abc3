"""The threefry2x32 primitive: the published known-answer vectors, every backend, and the
transformations (vmap batches it, grad treats it as constant)."""
import numpy as np
import pytest

import omnistage
from omnistage import random
from omnistage.random._threefry import threefry2x32

# Salmon et al.'s Random123 known-answer tests for threefry2x32_20 (key, counter -> output)
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def _u32(*v):
    return np.array(v, np.uint32)


@pytest.mark.parametrize("backend", ["eager", "cpu", "interpreter"])
def test_known_answers(backend):
    k1, k2, x1, x2 = (_u32(*col) for col in zip(*[(k[0], k[1], x[0], x[1]) for k, x, _ in KNOWN_ANSWERS]))
    want = np.array([y for _, _, y in KNOWN_ANSWERS], np.uint32).T
    fn = threefry2x32 if backend == "eager" else omnistage.jit(threefry2x32, backend=backend)
    y1, y2 = fn(k1, k2, x1, x2)
    assert np.asarray(y1).dtype == np.uint32
    np.testing.assert_array_equal(np.asarray(y1), want[0])
    np.testing.assert_array_equal(np.asarray(y2), want[1])


def test_rank0_operands_broadcast_and_shapes_follow_the_counters():
    x = np.arange(12, dtype=np.uint32).reshape(3, 4)
    f = omnistage.jit(lambda k1, x: threefry2x32(k1, np.uint32(7), np.uint32(0), x))
    y1, y2 = f(np.uint32(5), x)
    assert y1.shape == (3, 4)
    e1, e2 = threefry2x32(np.full((3, 4), 5, np.uint32), np.full((3, 4), 7, np.uint32), np.zeros((3, 4), np.uint32), x)
    np.testing.assert_array_equal(np.asarray(y1), np.asarray(e1))
    np.testing.assert_array_equal(np.asarray(y2), np.asarray(e2))
    empty = omnistage.jit(lambda x: threefry2x32(np.uint32(1), np.uint32(2), np.uint32(0), x))(np.zeros((0, 3), np.uint32))
    assert empty[0].shape == (0, 3)


def test_bad_operands_are_rejected():
    with pytest.raises(TypeError, match="uint32"):
        threefry2x32(np.int32(1), np.uint32(2), np.uint32(3), np.uint32(4))


def test_one_statement_per_hash_and_vmap_matches_a_loop():
    keys = random.split(random.PRNGKey(3), 5)
    draw = lambda k: random.uniform(k, (3,))  # noqa: E731
    program = omnistage.make_jaxpr(omnistage.vmap(draw))(keys)
    prims = [e.prim for e in program.eqns()]
    assert prims.count("threefry2x32") == 1 and "shift_left" not in prims
    batched = np.asarray(omnistage.jit(omnistage.vmap(draw))(keys))
    np.testing.assert_array_equal(batched, np.stack([np.asarray(draw(k)) for k in keys]))


def test_grad_through_a_draw_treats_the_hash_as_constant():
    def loss(scale, key):
        return (scale * random.normal(key, (4,))).sum()

    key = random.PRNGKey(0)
    g = omnistage.grad(loss)(np.float32(2.0), key)
    np.testing.assert_allclose(np.asarray(g), np.asarray(random.normal(key, (4,))).sum(), rtol=1e-6)
