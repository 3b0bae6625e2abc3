"""The CUDA lowering of the cross-process steps of a multi-process pmap (`process_allreduce`,
`process_allgather`, `process_ppermute`, `process_index`): one call of the GPU communicator
between the kernel launches of the host driver, on the device buffers (NCCL on the kernels' stream; see
`collectives`), instead of a host round trip:

    process_allreduce_1 = _cu.empty((3,), np.float32)  # <user file:line>
    _coll.allreduce(reduce_sum_1, process_allreduce_1, 'sum')  # ncclAllReduce (sum)

`KERNELS` maps each primitive to its rule `rule(driver, e)`; `emit.py` merges it into
`OPAQUE_KERNELS`."""
from ..provenance import loc_comment

IMPORT = "from omnistage.codegen.cuda import collectives as _coll"


def _emit_allreduce(driver, e):
    (x,), (out,) = e.ins, e.outs
    op = e.params["op"]
    driver.module.require(IMPORT)
    driver.alloc(out, driver.program.avals[out], loc_comment(e.stmt))
    driver.line(f"_coll.allreduce({driver.operand(x)}, {out}, {op!r})  # ncclAllReduce ({op})")


def _emit_allgather(driver, e):
    (x,), (out,) = e.ins, e.outs
    driver.module.require(IMPORT)
    driver.alloc(out, driver.program.avals[out], loc_comment(e.stmt))
    driver.line(f"_coll.allgather({driver.operand(x)}, {out})  # ncclAllGather")


def _emit_ppermute(driver, e):
    (x,), (out,) = e.ins, e.outs
    driver.module.require(IMPORT)
    driver.alloc(out, driver.program.avals[out], loc_comment(e.stmt))
    driver.line(f"_coll.ppermute({driver.operand(x)}, {out}, {tuple(tuple(p) for p in e.params['perm'])!r})"
                f"  # ncclSend/ncclRecv")


def _emit_process_index(driver, e):
    (out,) = e.outs
    driver.module.require(IMPORT)
    driver.line(f"{out} = _coll.rank(){loc_comment(e.stmt)}")


KERNELS = {
    "process_allreduce": _emit_allreduce,
    "process_allgather": _emit_allgather,
    "process_index": _emit_process_index,
    "process_ppermute": _emit_ppermute,
}
