"""The clock of OMNISTAGE_PROFILE's timer marks (profile.py), callable from generated code: the
CPU's cycle counter through LLVM's `readcyclecounter` (x86: the TSC, constant rate; a platform
without one reads 0 and the profile says nothing). Imports Numba, so only instrumented modules
and profile's calibration import it."""
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def cycles(typingctx):
    """The cycle counter, as an int64."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@njit(cache=False)
def read_cycles():
    return cycles()
