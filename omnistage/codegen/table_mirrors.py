"""Copies of a process-wide table of int64s inside loaded native libraries, kept equal to it.

Compiled code reads some process data through an external symbol (the MPI handles of
`mpi_handles`, the BLAS functions of `blas_table`) that the JIT resolves to the process's own
table. A native library (`aot`) cannot see LLVM's symbol table, so it defines the symbol itself;
the process registers that copy here and writes it whenever the table changes.

Imports only ctypes (llvmlite's IR builder when `declare` is called).
"""
import ctypes
import threading


class Mirrors:
    """The library copies of `table` (a ctypes array)."""

    def __init__(self, table):
        self.table = table
        self._addresses = []
        self._lock = threading.Lock()

    def add(self, address):
        """Keep the copy at `address` equal to the table from now on; it gets the entries at once."""
        with self._lock:
            if address not in self._addresses:
                self._addresses.append(address)
            self._copy(address)

    def sync(self):
        """Write the table's entries into every copy (after the table changed)."""
        with self._lock:
            for address in self._addresses:
                self._copy(address)

    def _copy(self, address):
        ctypes.memmove(address, ctypes.addressof(self.table), ctypes.sizeof(self.table))


def declare(builder, symbol, length):
    """The table `symbol` (`length` int64s) in the module `builder` writes, as an external
    global: the JIT resolves it to the process's table, a library defines its own (aot)."""
    from llvmlite import ir

    gv = builder.module.globals.get(symbol)
    if gv is None:
        gv = ir.GlobalVariable(builder.module, ir.ArrayType(ir.IntType(64), length), symbol)
        gv.linkage = "external"
    return gv
