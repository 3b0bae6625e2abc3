"""Calls from generated programs into omnistage's runtime kernels through function pointers.

A Numba function that calls another njit function links the callee's LLVM IR into its own
module and optimizes and compiles the two together (so the callee can be inlined). For the
whole-array kernels (`kernels.eig`, `kernels.strided_copy`, ...) that is pure cost: a program
calling `eig` re-optimized and re-emitted LAPACK-driving code of a few thousand IR lines in
every program that used it (~1 s of LLVM per program), although the kernel's machine code was
already compiled once per machine and cached.

`entry_kernel` makes a kernel whose callers reach it through a pointer instead:
- typing is Numba's (the kernel is an ordinary dispatcher, `cache=True`);
- each compiled overload's native entry (Numba's calling convention: status, return slot,
  exception info, arguments) is stored in a cell, an 8-byte slot registered in LLVM's symbol
  table under a name derived from the kernel's module, name and argument types;
- a caller's IR only declares that cell as an external global, loads it and calls through it:
  nothing of the kernel is linked in, so the caller's compile does not grow with the kernel;
- the caller's compile result lists the cell in Numba's `reload_init`, so when the caller's
  machine code is later loaded from Numba's disk cache (another process), the kernel overload
  is loaded (or compiled) and its cell registered *before* the caller's object code is linked.

Errors, exceptions and reference counting are those of a direct call: the callee is the same
native function a linked call would reach. The AOT builder (`aot.py`), which must produce a
self-contained library, switches pointer calls off (`set_linked(True)`) and links kernels in.

Imports Numba: only the code generator imports this module, lazily.
"""
import ctypes
import hashlib
import importlib
from typing import NamedTuple

from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import cgutils, imputils, types
from numba.core.registry import CPUDispatcher

_PREFIX = "omnistage_kernel_"
_cells = {}  # symbol -> ctypes.c_void_p holding the native entry's address (kept alive here)
_linked = False  # True: callers link kernels in (the AOT builder's process)


def set_linked(value):
    """Process-wide switch, for overloads compiled from now on (the AOT builder links every
    kernel call). Returns the previous setting, for the caller to restore."""
    global _linked
    previous, _linked = _linked, bool(value)
    return previous


class Rebind(NamedTuple):
    """One kernel overload, named so another process finds it again: its cell's `symbol`, and
    (called) a `reload_init` entry of a caller, making sure the cell exists before the caller's
    cached machine code is linked. A tuple of names and Numba types: Numba pickles it by value
    into the caller's cache index."""

    module: str
    qualname: str
    argtypes: tuple

    @property
    def symbol(self):
        """Stable across processes (the names and types are)."""
        text = f"{self.module}:{self.qualname}({', '.join(map(str, self.argtypes))})"
        return _PREFIX + hashlib.sha256(text.encode()).hexdigest()[:32]

    def __call__(self):
        if self.symbol in _cells:
            return
        dispatcher = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            dispatcher = getattr(dispatcher, part)
        dispatcher.compile(self.argtypes)  # loads from Numba's cache, or compiles; binds the cell


def _bind(name, address):
    cell = _cells.get(name)
    if cell is None:
        cell = _cells[name] = ctypes.c_void_p(address)
        llvm.add_symbol(name, ctypes.addressof(cell))
    else:
        cell.value = address


def _pointer_call(cres, rebind):
    """The lowering of a call to `cres`'s overload: load its cell, call the entry (as Numba's
    `imputils.user_function`, with the callee read from the cell instead of declared)."""
    fndesc, name = cres.fndesc, rebind.symbol

    def imp(context, builder, sig, args):
        module = builder.module
        fnty = context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
        cell = module.globals.get(name)
        if cell is None:
            cell = ir.GlobalVariable(module, fnty.as_pointer(), name=name)
            cell.linkage = "external"
        callee = builder.load(cell)
        status, retval = context.call_conv.call_function(builder, callee, fndesc.restype, fndesc.argtypes, args)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        retval = imputils.fix_returning_optional(context, builder, sig, status, retval)
        context.active_code_library._reload_init.add(rebind)
        return imputils.impl_ret_new_ref(context, builder, fndesc.restype, retval)

    imp.signature = fndesc.argtypes
    imp.libs = ()
    return imp


class EntryKernel(CPUDispatcher):
    """A dispatcher whose compiled overloads are called through their cells (see the module
    docstring); with `set_linked(True)` before an overload is added, callers link it as usual.

    `read_only` (argument positions) are arrays the kernel only reads: a writable array there
    is typed as read-only, so a program's inputs (read-only at the boundary) and its own
    intermediates (writable) share one overload instead of compiling the kernel twice."""

    read_only = ()
    on_overload = None  # called with each overload's argument types once it is added

    def get_call_template(self, args, kws):
        if self.read_only:
            args = tuple(a.copy(readonly=True) if i in self.read_only and isinstance(a, types.Array) and a.mutable
                         else a for i, a in enumerate(args))
        return super().get_call_template(args, kws)

    def add_overload(self, cres):
        super().add_overload(cres)
        if cres.objectmode:
            return
        rebind = Rebind(self.py_func.__module__, self.py_func.__qualname__, tuple(cres.signature.args))
        # bound in linked mode too: a kernel loaded from the cache there may call this one
        # through its cell (LLVM aborts the process on a symbol it cannot resolve)
        _bind(rebind.symbol, cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))
        if self.on_overload is not None:
            self.on_overload(tuple(cres.signature.args))
        if _linked:
            return
        ctx = self.targetctx
        ctx.remove_user_function(cres.entry_point)
        impl = _pointer_call(cres, rebind)
        ctx._defns[cres.entry_point].append(impl, impl.signature)


def entry_kernel(cache=True, read_only=(), pipeline_class=None, **options):
    """Like `numba.njit(cache=cache, pipeline_class=..., **options)`, for functions that
    generated programs call (runtime kernels, and a generated module's control-flow bodies);
    `read_only`: see `EntryKernel`."""

    def wrap(fn):
        extra = {} if pipeline_class is None else {"pipeline_class": pipeline_class}
        dispatcher = EntryKernel(py_func=fn, locals={}, targetoptions=dict(options, nopython=True), **extra)
        dispatcher.read_only = tuple(read_only)
        if cache:
            dispatcher.enable_caching()
        return dispatcher

    return wrap
