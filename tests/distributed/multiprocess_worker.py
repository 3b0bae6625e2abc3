"""Worker of test_multiprocess.py, run as `mpiexec -n 2 python multiprocess_worker.py`: many
checks per launch (MPI jobs are slow to start and compile on a 2-core machine).

Every rank builds the same global data; pmap gets this process's rows, and its outputs are
compared with the one-process reference: `vmap` with the same axis name over the global rows
(inside a job, vmap stays local to its process), whose rows for this process are the expected
local shard. Reports (`report.py`) `<rank> ok <name>` or `<rank> FAIL <name>: <why>`, then `done`.
"""

import numpy as np

import omnistage as jax
from tests.distributed.report import checker, report
import omnistage.numpy as jnp
from omnistage import lax

jax.config.update("jax_enable_x64", True)
jax.distributed.initialize()
RANK, P, L = jax.process_index(), jax.process_count(), jax.local_device_count()
N = P * L  # the global mapped axis
MINE = slice(RANK * L, (RANK + 1) * L)


check = checker(RANK)


def close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    tol = {"float32": 1e-6, "complex64": 1e-6, "bfloat16": 1e-2}.get(np.dtype(dtype).name, 1e-12)
    np.testing.assert_allclose(got.astype(want.dtype if want.dtype.name != "bfloat16" else np.float32),
                               want.astype(np.float32) if want.dtype.name == "bfloat16" else want,
                               rtol=tol, atol=tol)


rng = np.random.default_rng(0)
DTYPES = ["float32", "float64", "int32", "complex64", "complex128", "bfloat16"]


def global_data(dtype, shape=(N, 3, 2)):
    dt = jnp.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(-50, 50, shape).astype(dt)
    if dt.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dt)
    return rng.normal(size=shape).astype(dt)


DATA = [global_data(dt) for dt in DTYPES]


def collectives(*xs):
    out = []
    for x in xs:
        out.append(dict(
            psum=lax.psum(x, "i"), pmax=lax.pmax(x, "i"), pmin=lax.pmin(x, "i"), pmean=lax.pmean(x, "i"),
            all_gather=lax.all_gather(x, "i"), all_gather_axis1=lax.all_gather(x, "i", axis=1),
            all_gather_tiled=lax.all_gather(x, "i", tiled=True), axis_index=lax.axis_index("i"),
            psum_scalar=lax.psum(jnp.sum(x), "i"),
        ))
    return out


pmapped = jax.pmap(collectives, axis_name="i")


@check("devices")
def _():
    assert P == 2 and L == 1, (P, L)
    assert [d.process_index for d in jax.devices()] == [0, 1]
    assert [d.id for d in jax.devices()] == [0, 1]
    assert jax.local_devices() == [jax.devices()[RANK]] and jax.device_count() == 2
    assert jnp.ones(2).device == jax.devices()[RANK]


@check("compiled kernel calls MPI")
def _():
    compiled = pmapped.lower(*[x[MINE] for x in DATA]).compile()
    text = compiled.as_text()
    assert compiled.backend == "numba_cpu", compiled.backend
    for call in ("_mpi.allreduce", "_mpi.allgather(", "_mpi.rank()", "from omnistage.codegen import mpi_kernels as _mpi"):
        assert call in text, call


got = pmapped(*[x[MINE] for x in DATA])
want = jax.vmap(collectives, axis_name="i")(*DATA)
for dtype, g, w in zip(DTYPES, got, want):
    for name in g:
        @check(f"{name} {dtype}")
        def _():
            close(g[name], np.asarray(w[name])[MINE], dtype)


@check("pmax/pmin propagate a NaN from another process")
def _():
    x = np.arange(N, dtype=np.float32).reshape(N, 1)
    x[N - 1] = np.nan  # the last process's row
    hi, lo = jax.pmap(lambda v: (lax.pmax(v, "i"), lax.pmin(v, "i")), axis_name="i")(x[MINE])
    assert np.isnan(np.asarray(hi)).all() and np.isnan(np.asarray(lo)).all()


@check("a collective of an unmapped input leaves the input intact")
def _():
    counts = np.array([3, 1, 4], np.int32) * (RANK + 1)  # differs by process: pmax must reduce
    f = jax.pmap(lambda x, c: (lax.pmax(c, "i"), lax.psum(c, "i") + x), axis_name="i", in_axes=(0, None))
    hi, total = f(np.zeros((L, 3), np.int32), counts)
    assert "_mpi.allreduce(_rt.reshape(_rt.contiguous(" in f.lower(np.zeros((L, 3), np.int32), counts).compile().as_text()
    np.testing.assert_array_equal(np.asarray(hi), [[6, 2, 8]])
    np.testing.assert_array_equal(np.asarray(total), [[9, 3, 12]])
    np.testing.assert_array_equal(counts, np.array([3, 1, 4]) * (RANK + 1))


W = rng.normal(size=(3, 4)).astype(np.float32)
X = rng.normal(size=(N, 5, 3)).astype(np.float32)


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


@check("grad through pmean")
def _():
    step = jax.pmap(lambda w, x: lax.pmean(jax.value_and_grad(loss)(w, x), "i"), axis_name="i",
                    in_axes=(None, 0), out_axes=None)
    value, grad = step(W, X[MINE])
    want_value = np.mean([float(loss(W, x)) for x in X])
    want_grad = np.mean([np.asarray(jax.grad(loss)(W, x)) for x in X], axis=0)
    np.testing.assert_allclose(float(value), want_value, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(grad), want_grad, rtol=1e-5, atol=1e-6)


@check("grad of a psum (its transpose)")
def _():
    f = jax.grad(lambda w, x: lax.psum(loss(w, x), "i") * lax.pmean(jnp.sum(x), "i"))
    got_ = jax.pmap(f, axis_name="i", in_axes=(None, 0))(W, X[MINE])
    want_ = jax.vmap(f, axis_name="i", in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(np.asarray(got_), np.asarray(want_)[MINE], rtol=1e-5, atol=1e-5)


@check("grad taken outside pmap: the processes' gradients add up to the one-process gradient")
def _():
    from mpi4py import MPI

    def through_psum(mapper):
        return lambda w, x: mapper(lambda x: lax.psum(jnp.sum(x * w), "i"), axis_name="i")(x).sum()

    def through_all_gather(mapper):
        return lambda w, x: (mapper(lambda x: lax.all_gather(x * w, "i"), axis_name="i")(x) ** 2).sum()

    w = np.float32(1.5)
    for build in (through_psum, through_all_gather):
        mine = float(jax.grad(build(jax.pmap))(w, X[MINE]))
        want = float(jax.grad(build(jax.vmap))(w, X))
        np.testing.assert_allclose(sum(MPI.COMM_WORLD.allgather(mine)), want, rtol=1e-5)


@check("vmap inside pmap, reducing over both axes")
def _():
    def f(x):
        inner = jax.vmap(lambda r: (lax.psum(r, ("i", "j")), lax.pmax(r, "j"), lax.axis_index("i") * 10 + lax.axis_index("j")),
                         axis_name="j")
        return inner(x)

    got_ = jax.pmap(f, axis_name="i")(X[MINE])
    want_ = jax.vmap(f, axis_name="i")(X)
    for g_, w_ in zip(got_, want_):
        np.testing.assert_allclose(np.asarray(g_), np.asarray(w_)[MINE], rtol=1e-5, atol=1e-5)


@check("jit of pmap, random keys per device")
def _():
    def f(key, x):
        k = jax.random.fold_in(key, lax.axis_index("i"))
        return x + jax.random.normal(k, x.shape), lax.psum(jax.random.uniform(k, ()), "i")

    key = jax.random.PRNGKey(3)
    got_ = jax.jit(lambda k, x: jax.pmap(f, axis_name="i", in_axes=(None, 0))(k, x))(key, X[MINE])
    want_ = jax.vmap(f, axis_name="i", in_axes=(None, 0))(key, X)
    for g_, w_ in zip(got_, want_):
        np.testing.assert_allclose(np.asarray(g_), np.asarray(w_)[MINE], rtol=1e-6, atol=1e-6)


@check("a mapped axis longer than local_device_count() is an error")
def _():
    try:
        jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i")(np.ones((2, 3), np.float32))
    except ValueError as e:
        assert "devices" in str(e), e
    else:
        raise AssertionError("no error")


@check("initialize twice is an error")
def _():
    try:
        jax.distributed.initialize()
    except RuntimeError as e:
        assert "only be called once" in str(e), e
    else:
        raise AssertionError("no error")


report(RANK, "ok", "done")
