"""Op kernels: one elementwise primitive over blocks of BLOCK elements, compiled once per
machine, for the op-by-op tier (op_tier.py).

A kernel is the one-statement program `y = prim(x0, x1, ..., **params)` on operands of
BLOCK elements, emitted, translated and compiled by the native tier's own pipeline (emit_cpu's
scalar rules, c_translate, c_vmath, c_tier.FLAGS): the scalar code a fused loop of any program
runs for that primitive, under the same floating-point rules (no contraction, no
reassociation). So a program run kernel by kernel computes the bits its fused library computes
(tests/codegen/test_op_tier.py compares them). A scalar operand is a block of copies; only the
values differ, never the code.

Its C gets a driver, `omnistage_op_blocks(buffers, blocks, steps)`, that runs the program on
`blocks` consecutive blocks (each buffer advances by its step in bytes; 0: a scalar's block);
the last, partial block is run on padded copies (Kernel.__call__).

Built by c_background's helper, idle-scheduled, the first time a program needs one (that
program compiles as before; later programs use it), and published under an `ops-` key
(aot.OP_KERNEL_KEY_PREFIX) with every check the program cache has (hash, tag, atomic writes).
The key is the one-statement program's key: a change to omnistage or its compiler makes new
kernels, as it makes new programs.

The product kernel (MATMUL, one per float dtype) is a one-statement BLAS-sized `dot_general`
whose C gets another driver, `omnistage_op_matmul(a, b, out, shapes)`: c_runtime's `os_matmul`,
the function every native library's products call, with the shapes and transpose flags given
at run time instead of written into the call. Same function, same BLAS table, same blocks: the
bits a fused library's product gives.
"""
import ast
import atexit
import contextlib
import ctypes
import threading
from typing import NamedTuple

import numpy as np

from ..core.aval import ShapedArray
from ..staging.program import Program, make_stmt, name_atom
from . import aot, gemm_pool

BLOCK = 4096  # elements: below parallel.py's threshold (one thread), a few pages per operand
DRIVER = "omnistage_op_blocks"
MATMUL = "matmul"  # the product kernel's primitive name in its Signature
MATMUL_DRIVER = "omnistage_op_matmul"
_MATMUL_SIDE = 64  # its program's square operands: big enough to reach os_matmul (emit_cpu.SMALL_PRODUCT_WORK)
_BLAS_SLOTS = {"float32": (0, "float"), "float64": (1, "double")}  # blas_table.KINDS


class Signature(NamedTuple):
    """What a kernel computes: the primitive, its operands' and result's dtype names, its
    parameters (sorted (name, value) pairs)."""

    prim: str
    ins: tuple
    out: str
    params: tuple


def signature(prim, in_dtypes, out_dtype, params):
    return Signature(prim, tuple(np.dtype(d).name for d in in_dtypes), np.dtype(out_dtype).name,
                     tuple(sorted(params.items())))


def matmul_signature(dtype):
    """The product kernel's Signature for float `dtype`."""
    name = np.dtype(dtype).name
    return Signature(MATMUL, (name, name), name, ())


def program_of(sig):
    """The one-statement Program a kernel is compiled from."""
    if sig.prim == MATMUL:
        fn = ast.parse("def op_matmul(x0, x1):\n    return (y,)\n").body[0]
        fn.body.insert(0, make_stmt(["y"], "dot_general", [name_atom("x0"), name_atom("x1")],
                                    {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
                                     "preferred_element_type": None}))
        square = ShapedArray((_MATMUL_SIDE, _MATMUL_SIDE), np.dtype(sig.out))
        return Program(fn, {"x0": square, "x1": square, "y": square})
    ins = [f"x{i}" for i in range(len(sig.ins))]
    fn = ast.parse(f"def op_{sig.prim}({', '.join(ins)}):\n    return (y,)\n").body[0]
    fn.body.insert(0, make_stmt(["y"], sig.prim, [name_atom(n) for n in ins], dict(sig.params)))
    avals = {n: ShapedArray((BLOCK,), np.dtype(d)) for n, d in zip(ins, sig.ins)}
    avals["y"] = ShapedArray((BLOCK,), np.dtype(sig.out))
    return Program(fn, avals)


def key_of(program):
    return aot.OP_KERNEL_KEY_PREFIX + aot.program_key(program)


def driver_source(buffers):
    """The block driver appended to a kernel's C (`buffers`: operands plus the result)."""
    return f"""
int32_t {DRIVER}(void **buffers, int64_t blocks, const int64_t *steps) {{
    void *b[{buffers}];
    for (int64_t k = 0; k < blocks; k++) {{
        for (int j = 0; j < {buffers}; j++) b[j] = (char *)buffers[j] + k * steps[j];
        if (omnistage_aot_main(b)) return 1;
    }}
    return 0;
}}
"""


def matmul_driver_source(dtype):
    """The product kernel's driver: os_matmul(slot, 1, 0, ...) with `shapes` = the 8 operand
    parameters emit_cpu writes into a product's call (each operand's batch, rows, columns;
    the two transpose flags), then batch, M, N."""
    slot, ct = _BLAS_SLOTS[dtype]
    return f"""
int32_t {MATMUL_DRIVER}(const char *a, const char *b, char *out, const int64_t *p) {{
    const {ct} one = 1, zero = 0;
    os_matmul({slot}, &one, &zero, sizeof({ct}), a, b, out, p[0], p[1], p[2], p[3], p[4], p[5], (int)p[6], (int)p[7],
              p[8], p[9], p[10]);
    return 0;
}}
"""


class MatmulKernel:
    """A loaded product kernel: `kernel(a, b, out, params)` fills the C-ordered (batch, M, N)
    array `out` from the C-ordered operands `a`, `b` stored as `params` says (emit_cpu's
    _blas_operand)."""

    def __init__(self, sig, library):
        self._library = library
        self._fn = library.function(MATMUL_DRIVER, ctypes.c_int32, [ctypes.c_void_p] * 4)
        self.sig = sig

    def __call__(self, a, b, out, params):
        shapes = (ctypes.c_int64 * 11)(*params, *out.shape)
        # beside a builder the GEMM pool keeps to one thread, as a library's own products do (aot)
        with gemm_pool.one_thread() if aot.building() else contextlib.nullcontext():
            self._fn(a.ctypes.data, b.ctypes.data, out.ctypes.data, shapes)
        return out


class Kernel:
    """A loaded kernel: called on NumPy operands of one shape (rank-0 ones broadcast), it
    returns the result array."""

    def __init__(self, sig, library):
        self._library = library  # keeps it loaded
        self._fn = library.function(DRIVER, ctypes.c_int32, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p])
        self._in_dtypes = [np.dtype(d) for d in sig.ins]
        self._out_dtype = np.dtype(sig.out)
        self._slots = ctypes.c_void_p * (len(sig.ins) + 1)
        self._steps = ctypes.c_int64 * (len(sig.ins) + 1)
        self.sig = sig

    def __call__(self, *args):
        shape = next((np.shape(a) for a in args if np.ndim(a)), ())
        out = np.empty(shape, self._out_dtype)
        flat_out = out.reshape(-1)
        n = flat_out.size
        operands, steps = [], []
        for a, dt in zip(args, self._in_dtypes):
            if np.ndim(a) == 0:
                operands.append(np.full(BLOCK, a, dt))
                steps.append(0)
            else:
                operands.append(np.ascontiguousarray(a, dt).reshape(-1))
                steps.append(BLOCK * dt.itemsize)
        steps = self._steps(*steps, BLOCK * self._out_dtype.itemsize)
        full, tail = divmod(n, BLOCK)
        status = 0
        if full:
            status = self._fn(self._slots(*[o.ctypes.data for o in operands], flat_out.ctypes.data), full, steps)
        if tail and not status:
            start = full * BLOCK
            padded = []
            for o, step in zip(operands, steps):
                if step:  # (zeros past the end: every kernel is defined on them, none traps)
                    p = np.zeros(BLOCK, o.dtype)
                    p[:tail] = o[start:]
                    o = p
                padded.append(o)
            last = np.empty(BLOCK, self._out_dtype)
            status = self._fn(self._slots(*[o.ctypes.data for o in padded], last.ctypes.data), 1, steps)
            flat_out[start:] = last[:tail]
        if status:
            raise MemoryError(f"omnistage: the op kernel for {self.sig.prim} could not allocate its scratch memory")
        return out


_lock = threading.Lock()
_loaded = {}  # Signature -> Kernel
_requested = set()  # signatures this process asked the helper for
_asking = []  # the threads translating requests, joined at exit


def load(sig):
    """The kernel for `sig` when this machine has compiled it, else None."""
    kernel = _loaded.get(sig)
    if kernel is None:
        program = program_of(sig)
        library = aot.load(program, native_tier=True, key=key_of(program))
        if library is None:
            return None
        kernel = _loaded.setdefault(sig, (MatmulKernel if sig.prim == MATMUL else Kernel)(sig, library))
    return kernel


def request(sigs):
    """Have the kernels for `sigs` compiled and published for later programs (c_background's
    helper), from a thread of its own: translating takes a few ms each, which no call waits for."""
    with _lock:
        todo = [s for s in dict.fromkeys(sigs) if s not in _requested]
        _requested.update(todo)
        if not todo:
            return
        thread = threading.Thread(target=_ask, args=(todo,), daemon=True, name="omnistage op kernel requests")
        _asking.append(thread)
    thread.start()


def _translated(sig):
    """(the kernel's key, its C with the driver, its record's fields), or None when the native
    tier cannot translate it (programs using it then compile as before)."""
    from . import c_tier

    program = program_of(sig)
    try:
        _, _, translated, fields = c_tier.translation_of(program)
    except c_tier.Declined:
        return None
    driver = matmul_driver_source(sig.out) if sig.prim == MATMUL else driver_source(len(sig.ins) + 1)
    return key_of(program), translated + driver, fields


def build(sig):
    """Compile and publish the kernel for `sig` now, in this process; whether it is published."""
    from . import c_tier

    job = _translated(sig)
    return job is not None and c_tier.build_optimized(*job)


def _ask(sigs):
    from . import c_background

    try:
        for sig in sigs:
            job = _translated(sig)
            if job is not None:
                c_background.request(*job)
    except Exception:  # noqa: BLE001 - a kernel not built costs later programs their tier, nothing else
        pass
    finally:
        with _lock:
            _asking.remove(threading.current_thread())


def _finish_asking():
    """At exit: the requests being translated reach the helper (it finishes after we exit)."""
    with _lock:
        threads = list(_asking)
    for thread in threads:
        thread.join(timeout=5.0)


atexit.register(_finish_asking)
