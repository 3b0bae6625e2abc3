"""A fake of CuPy's `cupy.cuda.nccl` module for tests without a GPU: the calls
`omnistage.distributed.nccl.NcclCommunicator` makes (get_unique_id, NcclCommunicator(size, uid,
rank), allReduce/allGather/send/recv on raw device pointers, groupStart/groupEnd), with the ranks of a job as threads of this
process. Under Numba's CUDA simulator device memory is host memory, so the fake reads and
writes the buffers through the very pointers, counts and NCCL datatypes the communicator
computes: a wrong pointer, count, type or op gives a wrong answer here too.

`FakeMpiComm` is the sliver of mpi4py's communicator that building one needs (rank, size,
bcast of the NCCL id), for the same threads.
"""
import ctypes
import itertools
import threading

import numpy as np

# NCCL's enum values (nccl.h)
NCCL_INT8, NCCL_UINT8, NCCL_INT32, NCCL_UINT32, NCCL_INT64, NCCL_UINT64 = 0, 1, 2, 3, 4, 5
NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64 = 6, 7, 8
NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN = 0, 1, 2, 3

_NUMPY = {NCCL_INT8: np.int8, NCCL_UINT8: np.uint8, NCCL_INT32: np.int32, NCCL_UINT32: np.uint32,
          NCCL_INT64: np.int64, NCCL_UINT64: np.uint64, NCCL_FLOAT16: np.float16, NCCL_FLOAT32: np.float32,
          NCCL_FLOAT64: np.float64}
_REDUCE = {NCCL_SUM: np.add.reduce, NCCL_PROD: np.multiply.reduce, NCCL_MAX: np.maximum.reduce,
           NCCL_MIN: np.minimum.reduce}

available = True
_ids = itertools.count()
_worlds = {}
_worlds_lock = threading.Lock()
calls = []  # (rank, name, count, datatype, op or None, stream) of every collective


class _World:
    def __init__(self, size):
        self.size = size
        self.barrier = threading.Barrier(size, timeout=60)
        self.slots = [None] * size
        self.mail = {}  # (sender, receiver) -> bytes sent and not yet received, in order
        self.mail_ready = threading.Condition()


def _world(uid, size):
    with _worlds_lock:
        return _worlds.setdefault(uid, _World(size))


def get_unique_id():
    return (next(_ids),) + (0,) * 127  # CuPy's is a tuple of 128 ints


def _view(pointer, count, datatype):
    dtype = np.dtype(_NUMPY[datatype])
    buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(pointer)
    return np.frombuffer(buffer, dtype=dtype, count=count)


class NcclCommunicator:
    def __init__(self, ndev, commId, rank):
        self.world, self._rank = _world(commId, ndev), rank

    def rank_id(self):
        return self._rank

    def size(self):
        return self.world.size

    def _exchange(self, value):
        w = self.world
        w.slots[self._rank] = value
        w.barrier.wait()
        everyone = list(w.slots)
        w.barrier.wait()  # every rank has read before anyone writes (in-place calls)
        return everyone

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
        calls.append((self._rank, "allReduce", count, datatype, op, stream))
        everyone = self._exchange(_view(sendbuf, count, datatype).copy())
        _view(recvbuf, count, datatype)[:] = _REDUCE[op](np.stack(everyone))

    def allGather(self, sendbuf, recvbuf, count, datatype, stream):
        calls.append((self._rank, "allGather", count, datatype, None, stream))
        everyone = self._exchange(_view(sendbuf, count, datatype).copy())
        _view(recvbuf, count * self.world.size, datatype)[:] = np.concatenate(everyone)


    # point-to-point: a send is buffered at once (so a group's sends never wait), a receive
    # waits for its peer's next message

    def send(self, sendbuf, count, datatype, peer, stream):
        calls.append((self._rank, "send", count, datatype, peer, stream))
        w = self.world
        with w.mail_ready:
            w.mail.setdefault((self._rank, peer), []).append(_view(sendbuf, count, datatype).copy())
            w.mail_ready.notify_all()

    def recv(self, recvbuf, count, datatype, peer, stream):
        calls.append((self._rank, "recv", count, datatype, peer, stream))
        w = self.world
        with w.mail_ready:
            if not w.mail_ready.wait_for(lambda: w.mail.get((peer, self._rank)), timeout=60):
                raise TimeoutError(f"rank {self._rank} waited for a message from rank {peer}")
            _view(recvbuf, count, datatype)[:] = w.mail[(peer, self._rank)].pop(0)


_group_depth = threading.local()


def groupStart():
    _group_depth.n = getattr(_group_depth, "n", 0) + 1


def groupEnd():
    _group_depth.n -= 1


class FakeMpiComm:
    """Rank `rank` of `size` threads: Get_rank, Get_size and bcast, as mpi4py's communicator."""

    def __init__(self, world, rank):
        self.world, self.rank = world, rank

    @classmethod
    def world_of(cls, size):
        return _World(size)

    def Get_rank(self):
        return self.rank

    def Get_size(self):
        return self.world.size

    def bcast(self, value, root=0):
        if self.rank == root:
            self.world.slots[root] = value
        self.world.barrier.wait()
        value = self.world.slots[root]
        self.world.barrier.wait()
        return value
