"""Multi-process GPU pmap under Numba's CUDA simulator, with NCCL faked (tests/cuda/fake_nccl.py):
the ranks of a job are threads of this process, each with its own `NcclCommunicator` (built
the real way: NCCL id from rank 0, broadcast), and the host driver calls it between the kernel
launches on the device buffers. Each rank's outputs must be its rows of the one-process answer
(vmap over the global batch on the CPU). What this cannot check (no GPU here): NCCL itself,
CuPy's binding and the ordering on a real stream."""
import threading

import numpy as np
import pytest

import omnistage as jax
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.codegen.cuda import collectives, runtime
from omnistage.core import devices
from omnistage.distributed.nccl import NcclCommunicator, kernel_stream
from tests.cuda import fake_nccl

RANKS = 2


@pytest.fixture
def two_processes(monkeypatch):
    """This process staged as process 0 of a 2-process job (pmap binds its axis across both);
    the simulator runs one kernel at a time (the rank threads' launches take turns: a launch
    holds no collective, so this cannot deadlock)."""
    import contextlib

    if not runtime.SIMULATED:  # the fake reads device pointers as host memory: it segfaults on a GPU
        pytest.skip("NCCL is faked in host memory: these run under Numba's CUDA simulator only")
    from numba.cuda.simulator import kernel

    one_at_a_time, push = threading.Lock(), kernel._push_kernel_context

    @contextlib.contextmanager
    def serialized(mod):
        with one_at_a_time, push(mod):
            yield

    monkeypatch.setattr(kernel, "_push_kernel_context", serialized)
    saved = devices.process_layout()
    devices.set_process_layout(0, RANKS)
    try:
        yield
    finally:
        devices.set_process_layout(saved.index, saved.count, saved.local_count, saved.group)


def run_ranks(fn, size=RANKS):
    """[fn(rank) for every rank], each on its own thread with its own NCCL communicator."""
    world = fake_nccl.FakeMpiComm.world_of(size)
    results, errors = [None] * size, []

    def rank_main(rank):
        try:
            comm = NcclCommunicator.from_mpi(fake_nccl.FakeMpiComm(world, rank), nccl=fake_nccl)
            with collectives.use(comm):
                results[rank] = fn(rank)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)
            world.barrier.abort()  # the other rank must not wait in a collective forever

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    return results


def collectives_of(x):
    return dict(psum=lax.psum(x, "i"), pmean=lax.pmean(x, "i"), pmax=lax.pmax(x, "i"), pmin=lax.pmin(x, "i"),
                all_gather=lax.all_gather(x, "i"), tiled=lax.all_gather(x, "i", tiled=True),
                index=lax.axis_index("i") * 10, total=lax.psum(jnp.sum(x), "i"),
                swap=lax.ppermute(x, "i", [(0, 1), (1, 0)]), one_way=lax.ppermute(x * 2, "i", [(1, 0)]),
                stay=lax.ppermute(x, "i", [(0, 0)]))


def global_batch(dtype):
    rng = np.random.default_rng(1)
    shape = (RANKS, 3, 2)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-20, 20, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64", "int16"])
def test_gpu_pmap_collectives_give_the_one_process_answer(two_processes, count_host_copies, dtype):
    if dtype == "complex64":  # pmax/pmin have no complex form in lax
        f = lambda x: {k: v for k, v in collectives_of(x).items() if k not in ("pmax", "pmin")}  # noqa: E731
    else:
        f = collectives_of
    data = global_batch(dtype)
    compiled = jax.pmap(f, axis_name="i", backend="cuda").lower(data[:1]).compile()
    text = compiled.as_text()
    assert "_coll.allreduce(" in text and "_coll.allgather(" in text and "_coll.rank()" in text
    assert "_coll.ppermute(" in text
    assert "host_call" not in text  # no collective takes a host round trip

    copies = count_host_copies()
    fake_nccl.calls.clear()
    outs = run_ranks(lambda r: compiled(data[r:r + 1]))
    if dtype != "int16":  # int16 sums travel widened: the simulator's astype is a host copy
        assert copies == [], "a collective went through the host"
    assert {c[5] for c in fake_nccl.calls} == {kernel_stream()}  # on the kernels' stream
    assert {c[1] for c in fake_nccl.calls} == {"allReduce", "allGather", "send", "recv"}

    want = jax.jit(jax.vmap(f, axis_name="i"), backend="cpu")(data)
    for rank, got in enumerate(outs):
        for name in want:
            np.testing.assert_allclose(np.asarray(got[name]), np.asarray(want[name])[rank:rank + 1],
                                       rtol=1e-5, atol=1e-5, err_msg=f"{name} on rank {rank}")


def test_gpu_grad_through_pmean_matches_one_process(two_processes):
    rng = np.random.default_rng(2)
    w = rng.normal(size=(3, 2)).astype(np.float32)
    xs = rng.normal(size=(RANKS, 4, 3)).astype(np.float32)

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    def step(w, x):
        return lax.pmean(jax.value_and_grad(loss)(w, x), "i")

    compiled = jax.pmap(step, axis_name="i", in_axes=(None, 0), backend="cuda").lower(w, xs[:1]).compile()
    outs = run_ranks(lambda r: compiled(w, xs[r:r + 1]))
    want_value = np.mean([float(loss(w, x)) for x in xs])
    want_grad = np.mean([np.asarray(jax.grad(loss)(w, x)) for x in xs], axis=0)
    for value, grad in outs:
        np.testing.assert_allclose(np.asarray(value), [want_value], rtol=1e-5)
        np.testing.assert_allclose(np.asarray(grad)[0], want_grad, rtol=1e-5, atol=1e-6)


def test_nccl_types_counts_and_ops(two_processes):
    """The communicator's mapping, call by call: complex as pairs of reals, booleans as bytes."""
    from numba import cuda

    def calls(rank):
        comm = collectives.communicator()
        for dtype, op in (("complex64", "sum"), ("bool", "or"), ("bool", "and"), ("float64", "max")):
            src = cuda.to_device(np.array([rank, 1 - rank, 1], dtype=dtype))
            dst = cuda.device_array(3, dtype)
            comm.allreduce(src, dst, op)
            yield dtype, op, dst.copy_to_host()

    fake_nccl.calls.clear()
    outs = run_ranks(lambda r: list(calls(r)))
    got = {(d, op): v.tolist() for d, op, v in outs[0]}
    assert got[("complex64", "sum")] == [1, 1, 2]
    assert got[("bool", "or")] == [True, True, True] and got[("bool", "and")] == [False, False, True]
    assert got[("float64", "max")] == [1, 1, 1]
    mine = [c for c in fake_nccl.calls if c[0] == 0]
    assert [(c[2], c[3], c[4]) for c in mine] == [
        (6, fake_nccl.NCCL_FLOAT32, fake_nccl.NCCL_SUM), (3, fake_nccl.NCCL_UINT8, fake_nccl.NCCL_MAX),
        (3, fake_nccl.NCCL_UINT8, fake_nccl.NCCL_MIN), (3, fake_nccl.NCCL_FLOAT64, fake_nccl.NCCL_MAX)]


def test_without_a_job_the_gpu_collective_says_to_initialize(two_processes):
    compiled = jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i", backend="cuda").lower(np.ones((1, 2), np.float32)).compile()
    with pytest.raises(RuntimeError, match=r"distributed.initialize\(\)"):
        compiled(np.ones((1, 2), np.float32))


def test_missing_cupy_names_what_to_install(monkeypatch):
    import sys

    from omnistage.distributed import nccl

    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ImportError, match="CuPy built with NCCL"):
        nccl.import_nccl()
