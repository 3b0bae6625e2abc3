"""The persistent compile cache (omnistage/codegen/disk_cache.py): where modules go, what they
are named after, that a fresh process loads machine code, and that every way the cache can be
damaged or unusable still gives correct results.

Fresh-process behaviour runs `sys.executable -c CHILD` with `OMNISTAGE_CACHE_DIR` pointing
into `tmp_path`; the child prints one JSON line describing what happened.
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import omnistage
from omnistage.codegen import disk_cache

from .frozen_package import freeze

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

CHILD = r'''
import json, os, sys, time, warnings
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda message, category, *a, **k: caught.append(f"{category.__name__}: {message}")
import numpy as np
import omnistage
numba_after_import = "numba" in sys.modules
FUNCS = [lambda x: x * 2.0 + 1.0, lambda x: x * x - 3.0, lambda x: (x + 1.0) * 0.5]
count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
start_at = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
while time.time() < start_at:  # concurrent children start compiling together
    time.sleep(0.001)
x = np.arange(4, dtype=np.float32)
results, times = [], []
for f in FUNCS[:count]:
    t0 = time.perf_counter()
    y = np.asarray(omnistage.jit(f)(x))
    times.append(time.perf_counter() - t0)
    results.append([y.dtype.name, y.tolist()])
modules, hits, misses = {}, 0, 0
for name, mod in list(sys.modules.items()):
    if not name.startswith("omnistage_gen_"):
        continue
    on_disk = os.path.isfile(mod.__file__)
    modules[name] = {"file": mod.__file__, "cached": mod._OMNISTAGE_CACHED,
                     "ino": os.stat(mod.__file__).st_ino if on_disk else None}
    for value in vars(mod).values():
        if hasattr(value, "stats") and hasattr(value, "py_func"):
            hits += sum(value.stats.cache_hits.values())
            misses += sum(value.stats.cache_misses.values())
print(json.dumps({
    "results": results, "first_call_s": times[0], "modules": modules, "hits": hits,
    "misses": misses, "numba_after_import": numba_after_import,
    "numba_after_jit": "numba" in sys.modules,
    "warnings": [w for w in caught if "compile cache" in w],
}))
'''

EXPECTED = [
    ["float32", [1.0, 3.0, 5.0, 7.0]],
    ["float32", [-3.0, -2.0, 1.0, 6.0]],
    ["float32", [0.5, 1.0, 1.5, 2.0]],
]


_CHILD_PATH = []


@pytest.fixture(scope="module", autouse=True)
def frozen_package(tmp_path_factory):
    """Children import a copy of omnistage taken once and run in its directory (frozen_package)."""
    _CHILD_PATH[:] = [freeze(tmp_path_factory)]
    yield _CHILD_PATH[0]
    _CHILD_PATH.clear()


def child_env(cache, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "NUMBA_"))}
    env["OMNISTAGE_CACHE_DIR"] = str(cache)
    env["OMNISTAGE_AOT"] = "0"  # these tests are about Numba's cache; test_aot.py covers libraries
    env["OMNISTAGE_C_TIER"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(_CHILD_PATH + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


def run_child(cache, count=1, start_at=0.0, **env):
    """Run CHILD in a fresh process; return (its JSON report, its full stdout)."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(count), str(start_at)],
        env=child_env(cache, **env), capture_output=True, text=True, timeout=120, cwd=_CHILD_PATH[0],
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stdout


def module_files(cache):
    return sorted(p for p in os.listdir(cache) if p.startswith("omnistage_gen_") and p.endswith(".py"))


def numba_files(cache, module):
    """Numba's index and data files of `module`: ours sit in the cache directory itself
    (numba_locator), Numba's own (a foreign run) in its __pycache__."""
    names = []
    for directory in (cache, os.path.join(cache, "__pycache__")):
        names += os.listdir(directory) if os.path.isdir(directory) else []
    return [n for n in names if n.startswith(module + ".") and n.endswith((".nbi", ".nbc"))]


def header_is_valid(text):
    header, _, body = text.partition("\n")
    return header == disk_cache._HEADER_PREFIX + hashlib.sha256(body.encode()).hexdigest()


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


# --- where, and under which name ----------------------------------------------------------


def test_cache_dir_is_created_with_mode_0700_even_under_a_permissive_umask(tmp_path, monkeypatch):
    cache = tmp_path / "deep" / "cache"
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(cache))
    old = os.umask(0)
    try:
        y = omnistage.jit(lambda x: x * 2.0 + 11.0)(np.ones(3, np.float32))
    finally:
        os.umask(old)
    np.testing.assert_array_equal(np.asarray(y), np.full(3, 13.0, np.float32))
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert len(module_files(cache)) == 1


def test_omnistage_cache_dir_overrides_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path / "mine"))
    assert disk_cache.cache_dir() == str(tmp_path / "mine")
    monkeypatch.delenv("OMNISTAGE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.cache_dir() == str(tmp_path / "xdg" / "omnistage")


def test_module_file_name_is_a_hash_of_source_and_toolchain(tmp_path, monkeypatch):
    import llvmlite
    import numba
    from llvmlite import binding as llvm

    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    compiled = omnistage.jit(lambda x: x * 2.0 + 12.0).lower(np.ones(3, np.float32)).compile()
    source = compiled.as_text()
    name = disk_cache.module_name(source)
    assert module_files(tmp_path) == [name + ".py"]
    fingerprint = disk_cache.toolchain_fingerprint()
    for part in (numba.__version__, llvmlite.__version__, llvm.get_host_cpu_name()):
        assert part in fingerprint
    assert disk_cache.module_name(source) == name  # deterministic
    assert disk_cache.module_name(source + "\n") != name
    assert disk_cache.module_name(source, fingerprint + "|other-cpu") != name


def test_toolchain_fingerprint_is_computed_once_per_process():
    assert disk_cache.toolchain_fingerprint() is disk_cache.toolchain_fingerprint()


def test_runtime_modules_generated_code_imports_are_part_of_the_name():
    source = "from omnistage.codegen import support as _rt\n"
    files = disk_cache._runtime_files(("omnistage.codegen.support",))
    assert disk_cache._module_file("omnistage.codegen.support") in files
    # vmath is reached through its package, its kernels through the package's own imports.
    vmath = disk_cache._runtime_files(("omnistage.codegen.vmath",))
    assert any(p.endswith(os.path.join("vmath", "_kernels.py")) for p in vmath)
    assert disk_cache.runtime_digest(source) != disk_cache.runtime_digest("import numpy\n") == ""


RUNTIME_CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from omnistage.codegen import disk_cache
disk_cache._TRACKED_ROOTS = ("omnistage", "rtdep")
source = """import numba
from rtdep import scale


@numba.njit(cache=_OMNISTAGE_CACHED)
def kernel(x):
    return scale(x)
"""
mod = disk_cache.load_module(source)
print(json.dumps({"value": mod.kernel(3.0), "name": mod.__name__}))
'''


def test_stale_entry_after_a_runtime_module_changes_is_not_reused(tmp_path):
    # Numba's cache keys only on the cached function's own source: without the runtime digest
    # in the name, the second process would load machine code with the old inlined `scale`.
    pkg = tmp_path / "pkgs" / "rtdep"
    pkg.mkdir(parents=True)

    def run(factor):
        (pkg / "__init__.py").write_text(
            f"import numba\n\n\n@numba.njit(inline='always')\ndef scale(x):\n    return x * {factor}\n"
        )
        proc = subprocess.run([sys.executable, "-c", RUNTIME_CHILD, str(tmp_path / "pkgs")],
                              env=child_env(tmp_path / "cache"), capture_output=True, text=True, timeout=120,
                              cwd=_CHILD_PATH[0])
        assert proc.returncode == 0, proc.stderr[-4000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    first, second = run(2.0), run(3.0)
    assert (first["value"], second["value"]) == (6.0, 9.0)
    assert first["name"] != second["name"]


def test_module_is_in_sys_modules_before_its_code_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    source = (
        "import sys\n"
        "REGISTERED = sys.modules.get(__name__) is not None and vars(sys.modules[__name__]) is globals()\n"
        f"# {tmp_path}\n"
    )
    mod = disk_cache.load_module(source)
    assert mod.REGISTERED and mod.__name__ == disk_cache.module_name(source)
    assert sys.modules[mod.__name__] is mod and mod.__file__ == str(tmp_path / (mod.__name__ + ".py"))
    assert disk_cache.load_module(source) is mod


def test_a_module_whose_code_fails_is_not_left_in_sys_modules(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    source = f"raise ValueError('boom')  # {tmp_path}\n"
    with pytest.raises(ValueError, match="boom"):
        disk_cache.load_module(source)
    assert disk_cache.module_name(source) not in sys.modules


# --- a fresh process loads machine code --------------------------------------------------


def test_fresh_process_with_warm_cache_loads_machine_code_instead_of_compiling(tmp_path):
    cold, cold_log = run_child(tmp_path, NUMBA_DEBUG_CACHE="1")
    (name,) = cold["modules"]
    assert cold["results"] == EXPECTED[:1] and cold["modules"][name]["cached"]
    assert cold["misses"] > 0 and cold["hits"] == 0 and "data saved" in cold_log
    files = numba_files(tmp_path, name)
    assert any(f.endswith(".nbi") for f in files) and any(f.endswith(".nbc") for f in files)

    warm, warm_log = run_child(tmp_path, NUMBA_DEBUG_CACHE="1")
    assert list(warm["modules"]) == [name] and warm["results"] == EXPECTED[:1]
    assert warm["hits"] > 0 and warm["misses"] == 0
    assert any("data loaded" in line and name in line for line in warm_log.splitlines())
    # (no timing assertion: cache hits/misses above prove no compile; seconds are
    # benchmarks/latency.py's job, and on a loaded CI machine they only add flakiness)


# --- files are written once, atomically ----------------------------------------------------


def test_valid_file_is_not_rewritten_by_a_second_load_in_the_same_process(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    source = omnistage.jit(lambda x: x * 2.0 + 14.0).lower(np.ones(3, np.float32)).compile().as_text()
    name = disk_cache.module_name(source)
    path = tmp_path / (name + ".py")
    before = os.stat(path)
    mod = sys.modules.pop(name)
    try:
        again = disk_cache.load_module(source)
        assert again is not mod and again.__file__ == str(path)
    finally:
        sys.modules[name] = mod
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)
    assert header_is_valid(read(path))
    assert not [p for p in os.listdir(tmp_path) if p.startswith(disk_cache._TEMP_PREFIX)]


def test_valid_file_is_not_rewritten_by_a_new_process(tmp_path):
    first, _ = run_child(tmp_path)
    (name,) = first["modules"]
    path = tmp_path / (name + ".py")
    before = os.stat(path)
    time.sleep(0.01)
    second, _ = run_child(tmp_path)
    after = os.stat(path)
    assert second["results"] == EXPECTED[:1] and second["modules"][name]["ino"] == before.st_ino
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_publishing_never_replaces_a_valid_file_that_appeared_meanwhile(tmp_path):
    # Another process may publish between our check and our write: link() keeps its file.
    text = disk_cache._with_header("X = 1\n")
    path = tmp_path / "omnistage_gen_race.py"
    path.write_text(text)
    before = os.stat(path)
    disk_cache._publish(str(tmp_path), str(path), text)
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert os.listdir(tmp_path) == [path.name]  # the temp file is gone


# --- damaged entries are detected and rebuilt ----------------------------------------------


@pytest.fixture(scope="module")
def warm_template(tmp_path_factory, frozen_package):
    """A cache directory one process has filled: (directory, module name, file text)."""
    cache = tmp_path_factory.mktemp("template")
    report, _ = run_child(cache)
    (name,) = report["modules"]
    return cache, name, read(cache / (name + ".py"))


def rebuilt_after(tmp_path, warm_template, damage):
    """Copy the warm cache, damage its module file with `damage(text) -> text`, run a fresh
    process; check the file is detected, rebuilt and the result is still right."""
    template, name, text = warm_template
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)
    path = cache / (name + ".py")
    damaged = damage(text)
    assert damaged != text
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(damaged)
    report, _ = run_child(cache)
    assert report["results"] == EXPECTED[:1] and report["modules"][name]["cached"]
    assert read(path) == text and header_is_valid(read(path))
    assert report["warnings"] == []
    return report


def test_truncated_file_is_detected_and_rebuilt(tmp_path, warm_template):
    rebuilt_after(tmp_path, warm_template, lambda text: text[: len(text) // 2])


def test_empty_file_is_detected_and_rebuilt(tmp_path, warm_template):
    rebuilt_after(tmp_path, warm_template, lambda text: "")


def test_corrupt_file_with_flipped_bytes_is_detected_and_rebuilt(tmp_path, warm_template):
    def flip(text):
        data = bytearray(text.encode())
        for i in range(len(data) // 3, len(data) // 3 + 8):
            data[i] ^= 0x01  # same size, still ASCII: only the content hash can tell
        return data.decode()

    rebuilt_after(tmp_path, warm_template, flip)


def test_binary_garbage_file_is_detected_and_rebuilt(tmp_path, warm_template):
    template, name, text = warm_template
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)
    (cache / (name + ".py")).write_bytes(b"\xff\xfe\x00garbage")
    report, _ = run_child(cache)
    assert report["results"] == EXPECTED[:1] and read(cache / (name + ".py")) == text


def foreign_version(text):
    """Other valid code under the same name, with its own correct header and the function at
    the same line (so Numba's cache files for it have the same names as ours)."""
    body = text.partition("\n")[2].replace("np.float32(2.0)", "np.float32(100.0)")
    assert "100.0" in body
    return disk_cache._with_header(body)


FOREIGN_CHILD = r'''
import sys, numpy as np
from omnistage.codegen import disk_cache
path, name = sys.argv[1], sys.argv[2]
mod = type(sys)(name)
mod.__file__, mod._OMNISTAGE_CACHED = path, True
sys.modules[name] = mod
exec(compile(open(path).read(), path, "exec"), vars(mod))
fn = [v for v in vars(mod).values() if hasattr(v, "py_func")][0]
print(fn(np.arange(4, dtype=np.float32))[0].tolist())
'''


def test_foreign_file_under_the_same_name_and_its_machine_code_are_not_used(tmp_path, warm_template):
    template, name, text = warm_template
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)
    for fname in numba_files(cache, name):  # ours: the foreign run below makes its own
        os.unlink(cache / fname)
    path = cache / (name + ".py")
    path.write_text(foreign_version(text))
    # Someone ran the foreign file with Numba caching on: its machine code sits in __pycache__.
    proc = subprocess.run([sys.executable, "-c", FOREIGN_CHILD, str(path), name], env=child_env(cache), cwd=_CHILD_PATH[0],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip().splitlines()[-1] == "[1.0, 101.0, 201.0, 301.0]"
    assert numba_files(cache, name)
    report, _ = run_child(cache)
    assert report["results"] == EXPECTED[:1]
    assert read(path) == text and report["misses"] > 0 and report["hits"] == 0


def test_stale_entry_in_an_older_format_without_header_is_rebuilt(tmp_path, warm_template):
    rebuilt_after(tmp_path, warm_template, lambda text: text.partition("\n")[2])


def test_stale_entry_whose_header_hash_does_not_match_is_rebuilt(tmp_path, warm_template):
    rebuilt_after(tmp_path, warm_template,
                  lambda text: disk_cache._HEADER_PREFIX + "0" * 64 + "\n" + text.partition("\n")[2])


def test_leftover_temp_files_of_a_killed_writer_are_harmless_and_cleared(tmp_path, warm_template):
    template, name, text = warm_template
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)
    (cache / (disk_cache._TEMP_PREFIX + "abc.py")).write_text(text[:10])
    report, _ = run_child(cache)
    assert report["results"] == EXPECTED[:1] and report["hits"] > 0
    assert disk_cache.clear(str(cache)) >= 3  # module, temp file, Numba's index and data
    assert module_files(cache) == [] and not numba_files(cache, name)


# --- unusable directories degrade to in-memory compilation ----------------------------------


def assert_in_memory_with_one_warning(report, count=3):
    assert report["results"] == EXPECTED[:count]
    assert len(report["modules"]) == count and not any(m["cached"] for m in report["modules"].values())
    assert len(report["warnings"]) == 1, report["warnings"]
    assert "RuntimeWarning" in report["warnings"][0] and "OMNISTAGE_CACHE_DIR" in report["warnings"][0]


@pytest.fixture
def lock_dir():
    """`lock_dir(directory)` makes it read-only for everyone (root too: chattr +i), or skips."""
    locked = []

    def lock(directory):
        os.chmod(directory, 0o500)
        locked.append(directory)
        if os.geteuid() == 0 and shutil.which("chattr"):
            subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
        try:
            (directory / "probe").write_text("")
        except OSError:
            return directory
        pytest.skip("cannot make a read-only directory here (root without chattr)")

    yield lock
    for directory in locked:
        if shutil.which("chattr"):
            subprocess.run(["chattr", "-i", str(directory)], capture_output=True)
        os.chmod(directory, 0o700)


@pytest.fixture
def read_only_dir(tmp_path, lock_dir):
    """An empty directory nobody can create files in."""
    (tmp_path / "ro").mkdir(mode=0o700)
    return lock_dir(tmp_path / "ro")


def test_read_only_cache_dir_compiles_in_memory_with_one_warning(read_only_dir):
    report, _ = run_child(read_only_dir, count=3)
    assert_in_memory_with_one_warning(report)
    assert os.listdir(read_only_dir) == []


def test_uncreatable_cache_dir_compiles_in_memory_with_one_warning(tmp_path):
    (tmp_path / "a_file").write_text("not a directory")
    report, _ = run_child(tmp_path / "a_file" / "cache", count=3)
    assert_in_memory_with_one_warning(report)


def test_cache_dir_others_can_write_to_is_not_used(tmp_path):
    # Numba unpickles the files next to our modules: a shared-writable directory runs others' code.
    cache = tmp_path / "shared"
    cache.mkdir()
    os.chmod(cache, 0o777)
    report, _ = run_child(cache, count=3)
    assert_in_memory_with_one_warning(report)
    assert "chmod 700" in report["warnings"][0] and os.listdir(cache) == []


def test_read_only_cache_dir_with_valid_entries_is_still_used(tmp_path, warm_template, lock_dir):
    template, name, text = warm_template
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)
    lock_dir(cache)
    # Machine code is loaded from the read-only directory; NUMBA_CACHE_DIR is not used.
    report, _ = run_child(cache, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    assert report["results"] == EXPECTED[:1] and report["warnings"] == []
    assert report["modules"][name]["cached"] and report["modules"][name]["file"] == str(cache / (name + ".py"))
    assert report["hits"] > 0 and report["misses"] == 0 and not (tmp_path / "numba").exists()


def test_new_machine_code_for_a_read_only_cache_stays_in_memory_with_one_warning(tmp_path, lock_dir):
    # A valid module in a read-only directory without Numba's files: the machine code cannot be
    # saved next to it, and it must not go anywhere else (~/.cache/numba): kept in memory.
    source = "import numba\n\n\n@numba.njit(cache=_OMNISTAGE_CACHED)\ndef double(x):\n    return 2 * x\n"
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    (cache / (disk_cache.module_name(source) + ".py")).write_text(disk_cache._with_header(source))
    lock_dir(cache)
    code = (
        "import json, warnings\n"
        "from omnistage.codegen import disk_cache\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    mod = disk_cache.load_module({source!r})\n"
        "    mod.double(1)\n"
        f"    mod2 = disk_cache.load_module({source!r} + '# another module\\n')\n"
        "print(json.dumps({'value': mod.double(21) + mod2.double(1), 'cached': mod._OMNISTAGE_CACHED,\n"
        "                  'warnings': [str(w.message) for w in caught]}))\n"
    )
    (tmp_path / "a_file").write_text("")
    env = child_env(cache, HOME=str(tmp_path / "a_file"), XDG_CACHE_HOME=str(tmp_path / "a_file" / "x"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                          cwd=_CHILD_PATH[0])
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["value"] == 44 and report["cached"] is True
    assert len(report["warnings"]) == 1 and str(cache) in report["warnings"][0], report["warnings"]
    assert sorted(os.listdir(cache)) == [disk_cache.module_name(source) + ".py"]


# --- concurrency ---------------------------------------------------------------------------


def test_concurrent_processes_compiling_the_same_function_agree(tmp_path):
    start_at = time.time() + 4.0  # after every child has imported omnistage
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, "1", str(start_at)], env=child_env(tmp_path), cwd=_CHILD_PATH[0],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err[-2000:] for _, err in outs]
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert all(r["results"] == EXPECTED[:1] and r["warnings"] == [] for r in reports)
    (name,) = {n for r in reports for n in r["modules"]}
    assert module_files(tmp_path) == [name + ".py"]
    path = tmp_path / (name + ".py")
    assert header_is_valid(read(path))
    # One file was published and everyone ran it: nobody replaced it after another had read it.
    assert {r["modules"][name]["ino"] for r in reports} == {os.stat(path).st_ino}
    assert not [p for p in os.listdir(tmp_path) if p.startswith(disk_cache._TEMP_PREFIX)]
    again, log = run_child(tmp_path, NUMBA_DEBUG_CACHE="1")
    assert again["hits"] > 0 and again["misses"] == 0, (again, log, os.listdir(tmp_path))


# --- Numba is imported lazily ----------------------------------------------------------------


def test_import_omnistage_does_not_import_numba_and_the_first_jit_call_does(tmp_path):
    report, _ = run_child(tmp_path)
    assert report["numba_after_import"] is False
    assert report["numba_after_jit"] is True


# --- identity is content, not provenance ----------------------------------------------------

USER_FILE = '''import omnistage.numpy as jnp


def f(x):
    y = jnp.sin(x) * 2.0
    return y + 1.0
'''

PROVENANCE_CHILD = r'''
import importlib.util, json, sys
import numpy as np
import omnistage
spec = importlib.util.spec_from_file_location("user_module", sys.argv[1])
user = importlib.util.module_from_spec(spec)
spec.loader.exec_module(user)
compiled = omnistage.jit(user.f).lower(np.arange(4, dtype=np.float32)).compile()
y = np.asarray(omnistage.jit(user.f)(np.arange(4, dtype=np.float32)))
module = compiled.executable.module
entry = getattr(module, compiled.executable.fn_name)
print(json.dumps({"module": module.__name__, "text": compiled.as_text(), "y": y.tolist(),
                  "hits": sum(entry.stats.cache_hits.values()),
                  "misses": sum(entry.stats.cache_misses.values())}))
'''


def run_user_file(cache, path):
    proc = subprocess.run([sys.executable, "-c", PROVENANCE_CHILD, str(path)], env=child_env(cache), cwd=_CHILD_PATH[0],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_files_differing_only_in_comments_blank_lines_and_name_share_one_cache_entry(tmp_path):
    first, moved = tmp_path / "first_file.py", tmp_path / "renamed_and_moved.py"
    first.write_text(USER_FILE)
    moved.write_text("# a comment that moves every line\n\n\n" + USER_FILE.replace("\n\n\n", "\n\n# why\n\n"))
    cache = tmp_path / "cache"
    cold = run_user_file(cache, first)
    warm = run_user_file(cache, moved)
    assert warm["module"] == cold["module"] and module_files(cache) == [cold["module"] + ".py"]
    assert cold["misses"] > 0 and warm["hits"] > 0 and warm["misses"] == 0
    assert warm["y"] == cold["y"] == pytest.approx((np.sin(np.arange(4.0)) * 2 + 1).tolist(), rel=1e-6)
    # the text a person reads keeps its own provenance; the cached file has none
    assert "first_file.py:5" in cold["text"] and "renamed_and_moved.py:9" in warm["text"]
    assert ".py:" not in read(cache / module_files(cache)[0])
