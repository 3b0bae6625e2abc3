"""Numba CPU lowering of `pure_callback` (omnistage.pure_callback): the host function runs in
an object-mode block, which boxes the operands (rank-0 ones as 0-d arrays) and calls the
primitive's implementation through `support.pure_callback`; the results come back as flat
C-contiguous arrays of the declared dtypes and are reshaped:

    with numba.objmode(y_flat='float32[::1]'):  # pure_callback  model.py:12
        y_flat, = _rt.pure_callback(x, callback='host_sin#0', result_avals=(((3,), 'float32'),), vmap_method=None)
    y = _rt.reshape(y_flat, (3,))

float16/bfloat16 operands or results (computed as float32 in compiled code) have no lowering:
such a program runs on the interpreter (`Unsupported`). Registered in `emit_cpu.OPAQUE_RULES`
(emit_cpu imports this module).
"""
import ast

import numpy as np

from . import emit_cpu
from .provenance import loc_comment

_NUMBA_TYPE = {"bool": "boolean"}  # Numba's names of NumPy dtypes, where they differ
_NARROW = ("float16", "bfloat16")


def _array_type(dtype):
    name = np.dtype(dtype).name
    return f"{_NUMBA_TYPE.get(name, name)}[::1]"


def _emit_pure_callback(em, e):
    dtypes = [em.aval(a).dtype for a in e.ins] + [em.program.avals[o].dtype for o in e.outs]
    if any(np.dtype(d).name in _NARROW for d in dtypes):
        raise emit_cpu.Unsupported("pure_callback on float16/bfloat16 values")
    em.module.calls_python = True
    flats = [em.fresh(f"{out}_flat") for out in e.outs]
    declared = ", ".join(f"{f}={_array_type(em.program.avals[o].dtype)!r}" for f, o in zip(flats, e.outs))
    args = ", ".join([ast.unparse(a) for a in e.ins] + [f"{k}={v!r}" for k, v in e.params.items()])
    em.line(f"with numba.objmode({declared}):  # pure_callback{loc_comment(e.stmt)}")
    targets = f"{', '.join(flats)}{',' if len(flats) == 1 else ''} = " if flats else ""
    em.line(f"    {targets}_rt.pure_callback({args})")
    for flat, out in zip(flats, e.outs):
        shape = tuple(int(d) for d in em.program.avals[out].shape)
        em.line(f"{out} = _rt.reshape({flat}, {shape!r})")


emit_cpu.OPAQUE_RULES["pure_callback"] = _emit_pure_callback
