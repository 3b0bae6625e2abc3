"""Worker of test_cpu_devices.py: pmap over several CPU devices per process (the count set by
OMNISTAGE_CPU_DEVICES or XLA_FLAGS, argv[1] the count expected), alone or under
`mpiexec -n 2` (then the collectives also cross processes), against the one-process vmap of
the global batch. Reports (`report.py`) one line per check, then `done`."""
import os
import sys

import numpy as np

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.distributed import launcher
from tests.distributed.report import checker, report

if launcher.detect(os.environ) is not None:
    jax.distributed.initialize()
RANK, P, L = jax.process_index(), jax.process_count(), jax.local_device_count("cpu")
N = P * L
MINE = slice(RANK * L, (RANK + 1) * L)


check = checker(RANK)


@check("devices")
def _():
    assert L == int(sys.argv[1]), (L, sys.argv[1])
    assert [d.id for d in jax.local_devices(backend="cpu")] == list(range(RANK * L, (RANK + 1) * L))
    assert [d.process_index for d in jax.devices("cpu")] == [p for p in range(P) for _ in range(L)]


def collectives(x):
    return dict(psum=lax.psum(x, "i"), pmean=lax.pmean(x, "i"), pmax=lax.pmax(x, "i"), pmin=lax.pmin(x, "i"),
                all_gather=lax.all_gather(x, "i"), index=lax.axis_index("i"),
                ring=lax.ppermute(x, "i", [(k, (k + 1) % N) for k in range(N)]),
                nested=jax.vmap(lambda r: lax.psum(r, ("i", "j")), axis_name="j")(x))


rng = np.random.default_rng(0)
for dtype in ("float32", "int32"):
    data = (rng.normal(size=(N, 3, 2)) * 10).astype(dtype)

    @check(f"collectives {dtype}")
    def _():
        got = jax.pmap(collectives, axis_name="i")(data[MINE])
        want = jax.vmap(collectives, axis_name="i")(data)
        for name in want:
            np.testing.assert_allclose(np.asarray(got[name]), np.asarray(want[name])[MINE], rtol=1e-6,
                                       err_msg=name)


@check("grad through pmean")
def _():
    w = rng.normal(size=(2, 3)).astype(np.float32)
    xs = rng.normal(size=(N, 4, 2)).astype(np.float32)

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    value, grad = jax.pmap(lambda w, x: lax.pmean(jax.value_and_grad(loss)(w, x), "i"), axis_name="i",
                           in_axes=(None, 0))(w, xs[MINE])
    np.testing.assert_allclose(np.asarray(value), np.full(L, np.mean([float(loss(w, x)) for x in xs])), rtol=1e-5)
    want = np.mean([np.asarray(jax.grad(loss)(w, x)) for x in xs], axis=0)
    np.testing.assert_allclose(np.asarray(grad), np.broadcast_to(want, (L,) + want.shape), rtol=1e-5, atol=1e-6)


@check("an axis longer than the devices is an error")
def _():
    try:
        jax.pmap(lambda x: x, axis_name="i")(np.ones((L + 1, 2), np.float32))
    except ValueError as e:
        assert f"only {L} omnistage device" in str(e), e
    else:
        raise AssertionError("no error")


report(RANK, "ok", "done")
