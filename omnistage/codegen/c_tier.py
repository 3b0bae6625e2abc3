"""The native tier: a program's first compile through the system C compiler instead of Numba.

Why: in a fresh process Numba's import, typing, lowering and LLVM's optimization of a program's
module took 3-5x JAX's whole first call (train_step: 1.16 s of Numba and LLVM against JAX's
0.34 s). The generated module is a small, regular subset of Python; translated to C
(c_translate.py) it compiles with `cc -O2` in a tenth of that, and a process that never
imported Numba does not import it.

What it makes is an `aot` library: the same ABI (`omnistage_aot_main`), the same record, keyed
by the same program key, published in the cache the same way (hash-checked, tagged, atomic), so
a later process loads it through `aot.load` exactly like a library the background builder made
from Numba's compile. A program this tier builds has no Numba build: its results are the C
library's in every process and every call. A program's first build is a quick one (-O1; a
module under QUICK_LINES lines, -O1 with the loop vectorizer; from QUICK_LARGE_LINES, -Og) and its -O2 build follows from a
helper (c_background): the same C, the same bits.
A program it cannot translate, or a machine without a C compiler, keeps the Numba path,
unchanged.

Threads: the loops the Numba build would split over threads (`parallel.parallelize`'s rule and
rewrite: loop nests of 2^18 statements and more whose iterations share nothing) are outlined
and run in ranges on the GEMM pool's threads (c_translate.parallel_loop), the threads that run
the products' blocks; a switch in the library puts them on threads per call, as the program's
parallel.BuildChoice decides: the library is the serial and the parallel build at once, with the
same bits (aot.AotProgram).
Products run their blocks on the GEMM pool, float32 ones with the tier's own kernel (c_sgemm,
an object compiled once per machine and linked in). eig, cholesky, eigh and svd call SciPy's
LAPACK (c_lapack, lapack_table); lu and triangular solves are loops (c_linalg), sorts too
(c_sort). A `_kn` kernel statement without a rule (convolutions, windowed reductions, qr) calls
the kernel's Numba build through the library's table (numba_kernel_table; its process imports
Numba). Not translated (the Numba path stays): float16/bfloat16 boundaries, callbacks into
Python, FFTs, collectives, and every other `_rt`/`_kn` function c_translate does not know.

Bits: gcc 12 may still fuse a multiply and an add that sit side by side in one vectorized
pair (its SLP `vfmaddsub`, which ignores -ffp-contract=off); c_complex keeps its products out
of that. Generated code may get such a fused pair, as Numba's build (fastmath 'contract') may:
deterministic for a given library, one rounding instead of two.

`OMNISTAGE_C_TIER=0` turns the tier off. `OMNISTAGE_AOT=0` does not: libraries this tier
made are its compiled code, as Numba's cache is Numba's, and are loaded again; what it turns
off is Numba's background builder and loading the libraries that builder made.
"""
import ctypes
import hashlib
import os
import platform
import re
import subprocess
import sys
import tempfile
import warnings

from . import aot, blas_table, c_background, c_conv, c_copy, c_objects, c_prelude, c_sgemm, c_translate, c_vmath, c_windows, compile_log, lapack_table, memory_check, narrow_floats, parallel

# no contraction: a*b+c rounds twice, as NumPy's and the interpreter's arithmetic do; -fwrapv:
# integer arithmetic wraps as LLVM's does; no errno: sqrt is one instruction; -O2's default
# cost model ("very cheap") leaves loops that need a runtime alias check scalar (selu 7x slower);
# no trapping math: no value changes (only floating-point exception flags, which nothing reads),
# and the log family's branches become selects, so their loops vectorize
# a function without a declaration (c_prelude declares the C library's) is an error, not a guess;
# -pipe: the assembler reads the compiler's output as it comes (~3 ms of a small compile);
# 512-bit vectors where the target has them (x86: the flag means nothing without AVX-512):
# -march=native alone keeps loops at 256 bits on AVX-512 machines, and exp's polynomial loops ran
# 1.2-1.5x faster at 512 here (selu 940 -> 644 us, row softmax 2.2 -> 1.7 ms, one thread); lane
# width changes no value (no reassociation: every reduction's order is in the source)
_WIDE_VECTORS = ("-mprefer-vector-width=512",) if platform.machine().lower() in ("x86_64", "amd64") else ()
FLAGS = ("-O2", "-pipe", "-fvect-cost-model=dynamic", "-march=native", *_WIDE_VECTORS, "-ffp-contract=off", "-fno-math-errno",
         "-fno-trapping-math", "-fwrapv", "-fno-strict-aliasing", "-Werror=implicit-function-declaration",
         "-fPIC", "-shared")
_declined = {}  # program key -> why this process found it untranslatable (OMNISTAGE_AOT_DEBUG prints it)


enabled = aot.native_tier_enabled


def compile_program(program, key=None):
    """`program` as an aot.AotProgram compiled through C now, or None (the caller takes the
    Numba path): not translatable, no C compiler, or the compiler failed. `key`: its
    aot.program_key, when the caller has it."""
    if not enabled() or narrow_floats.needs_widening(program):
        return None
    cc = aot.compiler()
    if cc is None:
        return None
    key = key or aot.program_key_or_none(program)
    if key is None:  # no key, no library
        return None
    if key in _declined or aot.known_unsupported(program, key):
        return None
    if not aot.enabled():  # else the caller's aot.load already looked for this tier's library
        cached = aot.load(program, native_tier=True, key=key)
        if cached is not None:
            return cached
    quick = _load_quick(program, key)
    if quick is not None:
        return quick
    try:
        source, entry, translated, fields = translation_of(program)
    except Declined as e:
        return _decline(key, program, str(e), e.translated)
    memory_check.check_source(source, program.name)  # an array bigger than the machine: say where
    try:
        small = _small(source, entry)
        if small or not c_background.enabled():
            return _build(program, key, cc, translated, QUICK if small else FLAGS, fields)
        # the quick build answers now; the optimized one follows (c_background: the same bits).
        # (Compiled side by side, the two took a first call 50-100 ms longer here: two vCPUs
        # that share a core.)
        lines = source.count("\n")
        quick = QUICK_VECTORIZED if lines < QUICK_LINES else QUICK if lines < QUICK_LARGE_LINES else QUICK_LARGE
        built = _build(program, quick_key(key), cc, translated, quick, {**fields, "optimize": translated})
        if built is not None:
            c_background.optimize(key, translated, fields, built)
        return built
    except OSError as e:  # an unusable cache directory, a full disk: the Numba path says so once and compiles in memory
        return _decline(key, program, f"{type(e).__name__}: {e}")


class Declined(Exception):
    """The native tier cannot build this program (the message says why; `translated`: its C,
    when the compiler is what refused it)."""

    def __init__(self, reason, translated=None):
        super().__init__(reason)
        self.translated = translated


def translation_of(program):
    """(the generated module, its entry function's name, its C, the library record's fields) for `program`; raises
    Declined when it is not translatable or needs what this machine lacks (BLAS, LAPACK, a
    Numba kernel)."""
    try:
        from .emit_cpu import Unsupported as NoLowering, emit_module

        source, entry = emit_module(program, c_vmath.lookup, threads=None)
        compile_log.note_source(source)
        # loops the Numba build would run on every core run on the GEMM pool's threads
        threaded = _threaded(source) if parallel.likely_enabled() else None
        ins, outs = aot.signature(program)
        translation = c_translate.translate(threaded or source, entry, ins, outs, c_vmath.NAMES.values())
        translated, uses_gemm, uses_lapack = translation
    except (c_translate.Unsupported, NoLowering) as e:
        raise Declined(f"{type(e).__name__}: {e}") from None
    except Exception as e:  # noqa: BLE001 - a translator bug must not cost the user their result
        warnings.warn(f"omnistage: translating {program.name!r} to C failed ({type(e).__name__}: {e}); "
                      f"compiling it with Numba instead. Please report this with the output of "
                      f"jit(f).lower(...).as_text().", RuntimeWarning, stacklevel=3)
        raise Declined(f"{type(e).__name__}: {e}") from None
    if uses_gemm and not blas_table.fill():
        raise Declined("no BLAS")
    if uses_lapack and not lapack_table.fill():
        raise Declined("no LAPACK")
    kernels = translation.numba_kernels
    if kernels:  # its Numba kernels must exist (imports Numba; loads or compiles each once per machine)
        from . import numba_kernel_table

        try:
            for name, signature in kernels:
                numba_kernel_table.address(name, signature)
        except LookupError as e:
            raise Declined(str(e)) from None
    threads = threaded is not None
    # (parallel loops run on the GEMM pool, whose entries are in the BLAS table)
    fields = {"blas_table": uses_gemm or threads, "lapack_table": uses_lapack, "pooled": uses_gemm or threads,
              "threads": threads, "tier": "c", **({"numba_kernels": kernels} if kernels else {})}
    return source, entry, translated, fields


quick_key = aot.quick_key


def _load_quick(program, key):
    """The program's quick build from the cache (a process that ran it exited before its
    optimized build was published), asking for the optimized build again; or None."""
    loaded = aot.load(program, native_tier=True, key=quick_key(key))
    if loaded is not None and isinstance(loaded.record.get("optimize"), str) and c_background.enabled():
        fields = {k: v for k, v in loaded.record.items() if k in _FIELDS}
        c_background.optimize(key, loaded.record["optimize"], fields, loaded)
    return loaded


_FIELDS = ("blas_table", "lapack_table", "pooled", "threads", "tier", "numba_kernels")


def _build(program, key, cc, translated, flags, fields):
    """Compile `translated` with `flags`, publish the library under `key` with `fields` in its
    record, and load it; None (declined) when the compiler fails."""
    with tempfile.TemporaryDirectory(prefix="omnistage-c-") as work:
        if flags is QUICK_VECTORIZED:  # a quick build that vectorizes: the optimized build's bits
            lib, errors = _compile_without_fused_pairs(cc, flags, translated, work)
        else:
            lib, errors = _compile(cc, flags, translated, work)
        if lib is None:  # a translation the compiler rejects is our bug: Numba's path still works
            return _decline(key, program, f"the C compiler failed: {' | '.join(errors[:3])}", translated)
        aot.publish(key, os.path.join(work, lib), lib, fields)
    loaded = aot.load(program, native_tier=True, key=key)
    if loaded is not None:
        loaded.cache_status = "compiled (cache miss) by the C compiler" + (f" ({flags[0]}; the optimized build follows)" if "optimize" in fields else "")
    return loaded


def build_optimized(key, translated, fields):
    """The optimized build of a program whose quick build runs (c_background's helper):
    compiled with FLAGS and published under `key`; whether it was. Where GCC fused a
    multiply-add pair in vectorized code regardless of -ffp-contract=off (its SLP
    `vfmaddsub`/`vfmsubadd` pattern: the one way an optimization level changes a value here),
    it is compiled without vectorization instead, so both builds give the same bits."""
    cc = aot.compiler()
    if cc is None:
        return False
    with tempfile.TemporaryDirectory(prefix="omnistage-c-") as work:
        lib, _ = _compile_without_fused_pairs(cc, FLAGS, translated, work)
        if lib is None:
            return False
        aot.publish(key, os.path.join(work, lib), lib, fields)
    if not aot.published(key):
        return False
    aot.discard(quick_key(key))  # (its process, if still running, keeps what it loaded)
    return True


_FUSED_PAIR = re.compile(r"\bvfm(addsub|subadd)")


def _compile_without_fused_pairs(cc, flags, translated, work):
    """`_compile` with vectorizing `flags`, through assembly: where GCC fused a multiply-add pair
    regardless of -ffp-contract=off (its SLP `vfmaddsub`/`vfmsubadd`), the library is compiled
    without vectorization instead, so it rounds as scalar code does (the assembler runs anyway:
    ~1 ms more than compiling straight to the library)."""
    asm, errors = _compile(cc, flags, translated, work, assembly=True)
    if asm is None:
        return None, errors
    with open(os.path.join(work, asm), encoding="utf-8", errors="replace") as f:
        fused = _FUSED_PAIR.search(f.read())
    if fused:
        return _compile(cc, flags + ("-fno-tree-vectorize", "-fno-tree-slp-vectorize"), translated, work)
    return _compile(cc, flags, translated, work, assembled=asm)


def _compile(cc, flags, translated, work, assembly=False, assembled=None):
    """(the file name of the library compiled from `translated` in directory `work`, or None;
    the compiler's error lines). `assembly`: its assembly text instead (nothing linked);
    `assembled`: that text's file, linked instead of compiling `translated` again.

    On a machine's first program that links an object (c_objects), the program is compiled to
    an object (or its assembly) while the missing objects compile, then linked: the two compiles
    share the cores (the same machine code as one command makes)."""
    units = [(unit, name) for unit, name in _LINKED if unit.STUB in translated]
    early = None
    if assembled is None and any(c_objects.pending(u.STEM, u.SOURCE, cc, FLAGS) for u, _ in units):
        with open(os.path.join(work, "program.c"), "w", encoding="utf-8") as f:
            f.write(translated)
        early_out = "program.s" if assembly else "program.o"
        early = subprocess.Popen([*(f for f in (*cc, *flags) if f != "-shared"), "-S" if assembly else "-c", "-o", early_out,
                                  "program.c"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    objects = []
    for unit, name in units:  # float32 products, convolutions, pools: objects compiled once per machine
        kernel = c_objects.object_bytes(unit.STEM, unit.SOURCE, cc, FLAGS)
        if kernel is None:  # (it does not compile alone: compiled with the program, the same code)
            translated += unit.SOURCE
        else:
            objects.append((name, kernel))
    if early is not None:
        early_errors = early.communicate()[1]
        if any(unit.SOURCE in translated for unit, _ in units):  # compiled with the program after all
            early = None
        elif early.returncode != 0:
            return None, [line for line in early_errors.splitlines() if "error" in line]
    digest = hashlib.sha256("\0".join([translated, *cc, *flags, *(hashlib.sha256(d).hexdigest() for _, d in objects)]).encode()).hexdigest()[:32]
    if early is None:
        with open(os.path.join(work, "program.c"), "w", encoding="utf-8") as f:
            f.write(translated)
    if assembly:
        out = "program.s"
        if early is not None:
            return out, []
        done = subprocess.run([*cc, *flags, "-S", "-o", out, "program.c"], cwd=work, capture_output=True, text=True)
    else:
        out = f"omnistage_c_{digest}.so"
        for name, data in objects:  # the checked bytes, copied where only this build reads them
            with open(os.path.join(work, name), "wb") as f:
                f.write(data)
        source = "program.o" if early is not None else assembled or "program.c"
        command = [*cc, *flags, "-o", out, source, *(name for name, _ in objects)]
        done = subprocess.run(command + list(_link_flags()), cwd=work, capture_output=True, text=True)
        if done.returncode != 0 and _link_flags() != _USUAL_LINK:  # (a compiler without libgcc: the usual link from now on)
            _link.append(_USUAL_LINK)
            done = subprocess.run(command + list(_USUAL_LINK), cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        return None, [line for line in done.stderr.splitlines() if "error" in line]
    return out, []


_LINKED = ((c_sgemm, "sgemm.o"), (c_conv, "conv.o"), (c_windows, "windows.o"), (c_copy, "copy.o"))
_USUAL_LINK = ("-lm",)
_link = []  # the link flags this process found usable


def _link_flags():
    """How a library is linked: against nothing but libgcc when this process's global symbol
    scope (the Python executable's libc and libm, where a library's undefined references are
    looked up first when it is loaded) has every C library function a module may call
    (c_prelude.FUNCTIONS): the linker then reads neither libc.so nor libm.so, 14 -> 4 ms of
    every compile. Elsewhere (not Linux, a process without libm in that scope) the usual -lm."""
    if not _link:
        flags = _USUAL_LINK
        if sys.platform.startswith("linux"):
            try:
                scope = ctypes.CDLL(None)
                if all(hasattr(scope, name) for name in c_prelude.FUNCTIONS):
                    flags = ("-nostdlib", "-lgcc")
            except OSError:
                pass
        _link.append(flags)
    return _link[-1]


def _entry_span(source, entry):
    """(the module's lines, where `entry`'s body starts, where it ends); an empty span if the
    module has no `entry`."""
    lines = source.split("\n")
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith(f"def {entry}(")), len(lines))
    return lines, start, _body_end(lines, start)


def _body_end(lines, start):
    """Where the function body starting at line `start` ends: the next unindented line."""
    return next((i for i in range(start, len(lines)) if lines[i].strip() and not lines[i].startswith(" ")), len(lines))


# a program's first build: answers sooner (c_background compiles the optimized one meanwhile)
QUICK = ("-O1",) + FLAGS[1:]
# ...when its generated module has at least this many lines: from ~80 lines on -O1 saved
# 95-780 ms (mnist's update 95, advi's 115-line objective 158, mnist_vae's 318-line evaluate
# 530, the private SGD step 780). A smaller one's quick build vectorizes its loops: plain -O1
# saved it little (selu 67 -> 57 ms) while its calls ran up to 12x slower until the optimized
# build came (selu's exp loop, scalar); -O1 with the loop vectorizer runs selu's loop as fast as
# -O2 and compiles in 0.7-0.8x its time (selu 94 -> 73 ms, scan_grad 211 -> 146 ms).
QUICK_LINES = 80
QUICK_VECTORIZED = ("-O1", "-ftree-loop-vectorize") + FLAGS[1:]
# ...and from this many lines on, -Og: half of -O1's compile time for control's iLQR programs
# (620-1002 lines: first calls 397 -> 328 and 719 -> 480 ms, JAX 451 and 714) while their calls
# run 1.1-1.6x slower until the optimized build lands (mpc_predict on the LQR cost 143 -> 234 us).
QUICK_LARGE_LINES = 400
QUICK_LARGE = ("-Og",) + FLAGS[1:]

# A program whose whole run is at most this many statements (no helper functions, static loops)
# is compiled with -O1: its call costs its dispatch, not its loops, and -O1 compiles in about
# half the time (the seeds' normal((2, 3)): 0.16 s instead of 0.30). The bits are the same: no
# optimization level reassociates or contracts here (-ffp-contract=off, explicit lane sums).
SMALL_WORK = 4096


def _small(source, entry):
    if source.count("\ndef ") != 1:
        return False
    lines, start, end = _entry_span(source, entry)
    work = parallel.static_work(lines[start:end])
    return work is not None and work <= SMALL_WORK


def _threaded(source):
    """The module with the loops the Numba build would split over threads (parallel.parallelize's
    rule and rewrite; it imports nothing) marked `numba.prange`, in every function (a
    control-flow body's too: a training loop's optimizer update in a fori_loop), for the GEMM
    pool's threads (c_translate.parallel_loop). None when there are none."""
    lines = source.split("\n")
    out, changed, i = [], False, 0
    while i < len(lines):
        if not lines[i].startswith("def "):
            out.append(lines[i])
            i += 1
            continue
        end = _body_end(lines, i + 1)
        body, marked = parallel.parallelize(lines[i + 1:end])
        out += [lines[i], *body]
        changed, i = changed or marked, end
    return "\n".join(out) if changed else None


def _decline(key, program, reason, translated=None):
    _declined[key] = reason
    if os.environ.get("OMNISTAGE_AOT_DEBUG"):
        print(f"omnistage: native tier declined {program.name!r}: {reason}", file=sys.stderr)
        if translated is not None:
            with tempfile.NamedTemporaryFile("w", suffix=".c", prefix="omnistage-declined-", delete=False) as f:
                f.write(translated)
            print(f"omnistage: its C is in {f.name}", file=sys.stderr)
    return None
