"""Ahead-of-time libraries (omnistage/codegen/aot.py): a warm fresh process runs jit programs
from native libraries without importing Numba, with results identical to the Numba path.

One cold process fills a cache (Numba path; its builder makes the libraries), then fresh
processes use it; the rest are in-process checks of keys, validation and publication."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from omnistage.codegen import aot, disk_cache

from .frozen_package import freeze

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

_CHILD_PATH = []  # the frozen copy children import and run in (frozen_package)


@pytest.fixture(scope="module", autouse=True)
def frozen_package(tmp_path_factory):
    _CHILD_PATH[:] = [freeze(tmp_path_factory)]
    yield _CHILD_PATH[0]
    _CHILD_PATH.clear()

# Programs run by every child: supported ones first (the warm child checks sys.modules after
# them), then one that keeps the Numba path (LAPACK through Numba's helper library).
PROGRAMS = r'''
import numpy as np
import omnistage
import omnistage.numpy as jnp
from omnistage import lax

x = np.linspace(-3.0, 3.0, 1000, dtype=np.float32)
m = np.arange(12, dtype=np.int32).reshape(3, 4)
z = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64)
c = np.array([0.5, -1.5, 2.0], dtype=np.float64)

def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

def fori(n, x):
    return lax.fori_loop(0, n, lambda i, acc: acc + x[i % 1000], jnp.float32(0))

SUPPORTED = {
    "selu": (selu, (x,)),
    "scalars_and_outputs": (lambda x, s: (x.sum(), x * s, jnp.arange(3), s > 1), (x, np.float32(2.5))),
    "alias": (lambda x: (x, x + 1), (m,)),
    "ints_bools": (lambda m: (m // 3, m % 5 == 0, m.T, jnp.cumsum(m, axis=1)), (m,)),
    "complex": (lambda z: z * z + 1, (z,)),
    "closure_const": (lambda v: v[:3].astype(jnp.float64) * jnp.asarray(c), (x,)),
    "fori_loop": (fori, (np.int32(37), x)),
    "sort": (lambda x: jnp.sort(x[::-1]), (x,)),
    # parallel loops in the Numba build; the library is the serial build, with the same results
    "parallel": (lambda r: jnp.exp(r - r.max(1, keepdims=True)) * 2, (np.linspace(-2, 2, 600 * 512, dtype=np.float32).reshape(600, 512),)),
    # products call BLAS through blas_table, which a library defines and the process fills
    "matmul": (lambda a, b: (a @ a, jnp.tanh(b @ b.T) @ b, (z[:, None] * z).T @ z), (np.eye(4, dtype=np.float32) * 2, np.linspace(-1, 1, 300 * 784, dtype=np.float32).reshape(300, 784))),
    # an NHWC convolution (DP-SGD's layout): runtime kernels that call each other through
    # cells in the Numba path (conv_in_layout, _spec_ordered, permuted_copy), all linked in
    "conv": (lambda x, w: jnp.tanh(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
             (np.linspace(-1, 1, 2 * 9 * 9 * 3, dtype=np.float32).reshape(2, 9, 9, 3), np.linspace(-1, 1, 3 * 3 * 3 * 4, dtype=np.float32).reshape(3, 3, 3, 4))),
}
UNSUPPORTED = {"eig": (lambda a: jnp.linalg.eigvals(a), (np.arange(9, dtype=np.float32).reshape(3, 3),))}
'''

CHILD = PROGRAMS + r'''
import json, sys
from omnistage.codegen import aot
out = {"kinds": {}}
arrays = {}
def run(table):
    for name, (fn, args) in table.items():
        compiled = omnistage.jit(fn).lower(*args).compile()
        results = compiled(*args)
        results = results if isinstance(results, tuple) else (results,)
        for i, r in enumerate(results):
            arrays[f"{name}.{i}"] = np.asarray(r)
        out["kinds"][name] = type(compiled.executable).__name__
run(SUPPORTED)
out["numba_after_supported"] = "numba" in sys.modules
run(UNSUPPORTED)
aot.wait_for_builds(timeout=240)  # a loaded machine builds slowly; the child has 300 s
np.savez(sys.argv[1], **arrays)
print(json.dumps(out))
'''


def child(cache, results, **env):
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "NUMBA_"))}
    full.update(OMNISTAGE_CACHE_DIR=str(cache), OMNISTAGE_C_TIER="0", **env)
    full["PYTHONPATH"] = os.pathsep.join(_CHILD_PATH + [p for p in [full.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, "-W", "always", "-c", CHILD, str(results)],
                          env=full, capture_output=True, text=True, timeout=300, cwd=_CHILD_PATH[0])
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def load_results(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def records(cache):
    found = {}
    for name in os.listdir(cache):
        if name.startswith("omnistage_aot_") and name.endswith(".json"):
            with open(os.path.join(cache, name)) as f:
                found[name] = json.load(f)
    return found


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache filled by one cold process (and its builder): (cache dir, cold report, results)."""
    root = tmp_path_factory.mktemp("aot")
    cache = root / "cache"
    report, _ = child(cache, root / "cold.npz")
    return cache, report, load_results(root / "cold.npz")


def test_cold_process_uses_numba_and_builds_a_library_per_supported_program(filled):
    cache, report, _ = filled
    assert set(report["kinds"].values()) == {"NumbaProgram"}
    recs = list(records(cache).values())
    libs = [r for r in recs if "library" in r]
    assert len(libs) == len(report["kinds"]) - 1
    assert [r["unsupported"] for r in recs if "unsupported" in r] and all(
        os.path.isfile(cache / r["library"]) and r["library"].startswith(r["module"]) for r in libs)


def test_warm_process_runs_libraries_without_importing_numba_with_identical_results(filled, tmp_path):
    cache, _, cold = filled
    report, _ = child(cache, tmp_path / "warm.npz")
    kinds = report["kinds"]
    assert kinds.pop("eig") == "NumbaProgram"  # LAPACK needs Numba's helper library
    assert set(kinds.values()) == {"AotProgram"}
    assert report["numba_after_supported"] is False
    warm = load_results(tmp_path / "warm.npz")
    assert warm.keys() == cold.keys()
    for name in cold:
        assert warm[name].dtype == cold[name].dtype and warm[name].shape == cold[name].shape, name
        assert warm[name].tobytes() == cold[name].tobytes(), name


TIER_UP = PROGRAMS + r'''
import sys
from omnistage.codegen import aot
from omnistage.codegen import parallel
parallel.TIER_UP_S = 0.0
fn, args = SUPPORTED["parallel"]
compiled = omnistage.jit(fn).lower(*args).compile()
first = np.asarray(compiled(*args))  # the rent: one call
numba_after_first = "numba" in sys.modules
second = np.asarray(compiled(*args))  # starts loading the parallel build, runs the library
compiled.executable.tier_up_thread.join()
third = np.asarray(compiled(*args))
print(type(compiled.executable).__name__, numba_after_first, "numba" in sys.modules,
      first.tobytes() == second.tobytes() == third.tobytes(), compiled.executable._parallel is not None)
'''


def test_a_parallel_program_moves_from_its_serial_library_to_numba_after_enough_calls(filled):
    cache, _, _ = filled
    assert [r for r in records(cache).values() if r.get("parallel")]  # the builder marked it
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "NUMBA_"))}
    full.update(OMNISTAGE_CACHE_DIR=str(cache), OMNISTAGE_C_TIER="0", PYTHONPATH=os.pathsep.join(_CHILD_PATH + [full.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", TIER_UP], env=full, capture_output=True, text=True, timeout=300,
                          cwd=_CHILD_PATH[0])
    assert proc.returncode == 0, proc.stderr[-4000:]
    kind, numba_after_first, numba_after_second, same, moved = proc.stdout.split()
    assert kind == "AotProgram" and numba_after_first == "False"
    assert numba_after_second == "True" and same == "True" and moved == "True"


def test_corrupt_library_is_not_loaded_and_is_rebuilt(filled, tmp_path):
    cache, _, cold = filled
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(cache), str(copy)], check=True)
    lib = next(r["library"] for r in records(copy).values() if r.get("module") and "selu" in _source(copy, r))
    with open(copy / lib, "r+b") as f:
        f.truncate(100)
    report, _ = child(copy, tmp_path / "a.npz")
    assert report["kinds"]["selu"] == "NumbaProgram" and report["kinds"]["alias"] == "AotProgram"
    assert os.path.getsize(copy / lib) > 100  # the builder replaced it
    report, _ = child(copy, tmp_path / "b.npz")
    assert report["kinds"]["selu"] == "AotProgram"
    assert load_results(tmp_path / "b.npz")["selu.0"].tobytes() == cold["selu.0"].tobytes()


def _source(cache, record):
    with open(cache / (record["module"] + ".py")) as f:
        return f.read()


def test_without_a_c_compiler_the_numba_path_stays_with_one_warning(tmp_path):
    cache = tmp_path / "cache"
    report, stderr = child(cache, tmp_path / "r.npz", CC=str(tmp_path / "no-such-cc"))
    assert set(report["kinds"].values()) == {"NumbaProgram"}
    assert stderr.count("RuntimeWarning") == 1 and "C compiler" in stderr
    assert records(cache) == {}


def test_disabled_by_environment(filled, tmp_path):
    cache, _, _ = filled
    report, _ = child(cache, tmp_path / "r.npz", OMNISTAGE_AOT="0")
    assert set(report["kinds"].values()) == {"NumbaProgram"}


# --- in-process: keys, validation, publication ---------------------------------------------


def _program(fn, *args):
    import omnistage

    return omnistage.jit(fn).lower(*args).compile().executable.program


def _double(v):
    return v * 2


def _triple(v):
    return v * 3


def test_program_key_changes_with_program_avals_and_toolchain(monkeypatch, tmp_path):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    x = np.ones(4, np.float32)
    key = aot.program_key(_program(_double, x))
    assert aot.program_key(_program(_double, x)) == key
    assert aot.program_key(_program(_triple, x)) != key
    assert aot.program_key(_program(_double, x.astype(np.int32))) != key
    assert aot.program_key(_program(_double, np.ones(5, np.float32))) != key
    monkeypatch.setenv("NUMBA_OPT", "1")
    aot.toolchain_key.cache_clear()
    try:
        assert aot.program_key(_program(_double, x)) != key
    finally:
        monkeypatch.delenv("NUMBA_OPT")
        aot.toolchain_key.cache_clear()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "elsewhere"))  # where Numba caches: not machine code
    aot.toolchain_key.cache_clear()
    try:
        assert aot.program_key(_program(_double, x)) == key
    finally:
        aot.toolchain_key.cache_clear()


def test_a_library_whose_hash_differs_from_its_record_is_not_loaded(filled, tmp_path, monkeypatch):
    cache, _, _ = filled
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(cache), str(copy)], check=True)
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(copy))
    monkeypatch.setenv("OMNISTAGE_AOT", "1")  # tests/conftest.py turns libraries off in-process
    program = _program(lambda m: (m, m + 1), np.arange(12, dtype=np.int32).reshape(3, 4))
    # the same program as "alias" but traced here: other file:line, so another key
    assert aot.load(program) is None
    name = f"omnistage_aot_{aot.program_key(program)}.json"
    lib = next(r for r in records(copy).values() if "library" in r)
    from omnistage.codegen import aot_trust

    def write(record, tagged=True):
        record = {k: v for k, v in record.items() if k != "tag"}
        (copy / name).write_text(json.dumps(aot_trust.signed(record, name) if tagged else record))

    write(dict(lib, key=aot.program_key(program)))
    assert isinstance(aot.load(program), aot.AotProgram)  # (not called: another program's library)
    write(dict(lib, key=aot.program_key(program)), tagged=False)  # no tag: not ours, deleted
    with pytest.warns(RuntimeWarning, match="damaged or foreign"):
        assert aot.load(program) is None
    assert not (copy / name).exists()
    write(dict(lib, key=aot.program_key(program), sha256="0" * 64))
    assert aot.load(program) is None


def test_publication_keeps_an_identical_file_and_replaces_a_different_one(tmp_path):
    path = tmp_path / "lib.so"
    disk_cache._publish(str(tmp_path), str(path), b"\x7fELF one", suffix=".so")
    inode = os.stat(path).st_ino
    disk_cache._publish(str(tmp_path), str(path), b"\x7fELF one", suffix=".so")
    assert os.stat(path).st_ino == inode
    disk_cache._publish(str(tmp_path), str(path), b"\x7fELF two", suffix=".so")
    assert path.read_bytes() == b"\x7fELF two"
    # no temporary file left (the dot files are the cache's key, manifest and lock)
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == ["lib.so"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


def test_a_library_with_a_big_product_runs_its_blocks_on_the_gemm_pool(filled):
    """The 300x784 product's library calls the GEMM pool's kernel and its record says so (the
    process then runs it alone while a builder works); the small programs' do not."""
    cache, _, _ = filled
    from omnistage.codegen import parallel

    libs = [r for r in records(cache).values() if "library" in r]
    pooled = [r for r in libs if r.get("pooled")]
    if parallel.likely_enabled():
        assert len(pooled) == 1 and len(libs) > 1
    else:
        assert not pooled
