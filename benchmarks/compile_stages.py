"""Where a first call's time goes: stage timers for `compile_time.py --breakdown`.

`install()` wraps omnistage's compile stages (tracing, clean-up, emission, module loading, the
Numba compile) and listens to Numba's own events, so `report()` can split the Numba compile into
its passes and LLVM. Times are exclusive (a stage nested in another is counted once, in the
innermost one), so the parts add up to the first call:

  trace      staging the Python function into a Program (control-flow conversion included)
  passes     clean-up passes on the Program (DCE, CSE, simplification)
  emit       generating the Numba module's source
  runtime    importing Numba and loading omnistage's runtime kernels (vmath, support)
  load       hashing, writing and executing the module (the cache write)
  typing     Numba's type inference (bodies called from the entry are compiled inside it)
  lowering   Numba's lowering to LLVM IR
  llvm       LLVM optimization and machine code
  numba      Numba's other passes (bytecode, IR, rewrites) and its cache lookups and writes
  to_c       the native tier's translation of the module to C (codegen/c_translate.py)
  cc         the native tier's C compile, publishing and loading of the library (c_tier)
  other      the rest of the call (dispatch, argument handling)
"""
import time
from collections import defaultdict

_stack = []  # [stage, start, child time]
totals = defaultdict(float)

_PASS_STAGE = {"nopython_type_inference": "typing", "native_lowering": "lowering"}


def _enter(stage):
    _stack.append([stage, time.perf_counter(), 0.0])


def _leave():
    stage, start, child = _stack.pop()
    spent = time.perf_counter() - start
    totals[stage] += spent - child
    if _stack:
        _stack[-1][2] += spent


def _timed(stage, fn):
    def wrapper(*args, **kwargs):
        _enter(stage)
        try:
            return fn(*args, **kwargs)
        finally:
            _leave()

    return wrapper


def _patch(module, name, stage):
    if hasattr(module, name):  # older versions lack some stages: they count as `other`
        setattr(module, name, _timed(stage, getattr(module, name)))


def install():
    """Wrap the stages (call before the first jit call)."""
    from omnistage import api
    from omnistage.codegen import c_tier, c_translate, disk_cache, emit_cpu, executable

    api.JitFunction._trace = _timed("trace", api.JitFunction._trace)
    _patch(api, "cleanup", "passes")
    _patch(emit_cpu, "emit_module", "emit")
    _patch(executable, "vmath_lookup", "runtime")
    _patch(executable, "_vmath_lookup", "runtime")  # older versions
    _patch(disk_cache, "load_module", "load")
    _patch(executable, "_compile_once", "numba")
    _patch(c_translate, "translate", "to_c")
    _patch(c_tier, "_build", "cc")

    from numba.core import event

    class Passes(event.Listener):
        def on_start(self, ev):
            # "nopython_type_inference [fn]"
            _enter(_PASS_STAGE.get(ev.data["name"].split(" [")[0], "numba"))

        def on_end(self, ev):
            _leave()

    class Llvm(event.Listener):
        def on_start(self, ev):
            _enter("llvm")

        def on_end(self, ev):
            _leave()

    event.register("numba:run_pass", Passes())
    event.register("numba:llvm_lock", Llvm())


def report(first_call_s):
    """{stage: seconds} for the first call, `other` being what no stage accounts for."""
    out = {k: round(v, 4) for k, v in totals.items()}
    out["other"] = round(first_call_s - sum(totals.values()), 4)
    return out
