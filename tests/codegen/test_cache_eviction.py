"""Growth (issue #19): the disk cache is bounded with least-recently-used eviction
(codegen/cache_eviction.py), `omnistage.clear_cache()` deletes only what omnistage wrote, a
program's module is freed with its last jit cache entry, one builder builds a native library
(aot_trust.py) and a builder does not idle, and `CC` may carry flags."""
import gc
import json
import os
import subprocess
import sys
import time
import weakref

import numpy as np
import pytest

import omnistage
from omnistage.codegen import aot, aot_trust, cache_eviction, cache_integrity, disk_cache

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _our_files(cache):
    return {n for n in os.listdir(cache) if not n.startswith(".")}


# --- the size bound -------------------------------------------------------------------------------


def test_eviction_deletes_least_recently_used_files_of_ours_only(tmp_path):
    pdir = cache_integrity.private_dir(str(tmp_path / "c"))
    now = time.time()
    for i in range(10):
        pdir.write(f"omnistage_gen_{i:032x}.py", bytes(10_000))
        os.utime(tmp_path / "c" / f"omnistage_gen_{i:032x}.py", (now - 1000 + i, now - 1000))
    (tmp_path / "c" / "users_notes.txt").write_bytes(bytes(50_000))  # not ours: never deleted
    pdir.touch(f"omnistage_gen_{0:032x}.py")  # used just now: the newest
    deleted = cache_eviction.evict(pdir, limit=50_000)
    assert deleted == {f"omnistage_gen_{i:032x}.py" for i in range(1, 7)}  # down to 90% of the bound
    assert (tmp_path / "c" / "users_notes.txt").exists()
    assert set(cache_integrity.manifest(pdir)) == _our_files(tmp_path / "c") - {"users_notes.txt"}
    assert cache_eviction.evict(pdir, limit=50_000) == set()  # under the bound now


def test_the_cache_stays_under_omnistage_cache_max_mb(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(cache))
    monkeypatch.setenv("OMNISTAGE_CACHE_MAX_MB", "0.06")  # ~63 KB: about two programs (26 KB each)
    x = np.arange(6, dtype=np.float32)
    sizes = []
    for k in range(5):
        y = omnistage.jit(lambda v, k=k: v * float(k + 2) + 0.5)(x)
        np.testing.assert_array_equal(np.asarray(y), x * (k + 2) + 0.5)
        sizes.append(sum(os.path.getsize(cache / n) for n in _our_files(cache)))
    limit = 0.06 * 2**20
    largest_file = max(os.path.getsize(cache / n) for n in _our_files(cache))
    assert max(sizes) <= limit + largest_file, sizes
    assert len([n for n in _our_files(cache) if n.endswith(".py")]) < 5  # old modules went


def test_max_mb_zero_or_garbage(monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_MAX_MB", "0")
    assert cache_eviction.max_bytes() is None
    monkeypatch.setenv("OMNISTAGE_CACHE_MAX_MB", "lots")
    assert cache_eviction.max_bytes() == cache_eviction.DEFAULT_MAX_MB * 2**20


# --- clear_cache -----------------------------------------------------------------------------------


def test_clear_cache_deletes_only_the_files_omnistage_wrote(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(cache))
    x = np.arange(3, dtype=np.float32)
    omnistage.jit(lambda v: v * 9.0 + 0.125)(x)
    ours = _our_files(cache)
    assert any(n.endswith(".py") for n in ours) and any(n.endswith(".nbc") for n in ours)
    # the user keeps files of their own there, some with names like ours
    mine = {"omnistage_gen_notes.py": b"print('mine')\n", "omnistage_aot_plan.json": b"{}",
            "notes.txt": b"x", ".tmp-important": b"y"}
    for name, data in mine.items():
        (cache / name).write_bytes(data)
    assert omnistage.clear_cache() == len(ours)
    assert sorted(n for n in os.listdir(cache) if n not in (cache_integrity.KEY_NAME, cache_integrity.MANIFEST_NAME,
                                                          cache_integrity.LOCK_NAME)) == sorted(mine)
    for name, data in mine.items():
        assert (cache / name).read_bytes() == data
    # and the cache works afterwards
    np.testing.assert_array_equal(np.asarray(omnistage.jit(lambda v: v * 9.0 + 0.125)(x)), x * 9 + 0.125)


def test_clear_cache_of_a_missing_directory_is_zero(tmp_path):
    assert omnistage.clear_cache(str(tmp_path / "none")) == 0


# --- memory ---------------------------------------------------------------------------------------


def test_a_programs_module_is_freed_with_its_last_jit_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    x = np.arange(4, dtype=np.float32)
    modules, names = [], []
    for k in range(4):
        f = omnistage.jit(lambda v, k=k: v * float(k + 11) - 0.5)
        compiled = f.lower(x).compile()
        np.testing.assert_array_equal(np.asarray(compiled(x)), x * (k + 11) - 0.5)
        modules.append(weakref.ref(compiled.executable.module))
        names.append(compiled.executable.module.__name__)
        del f, compiled
    gc.collect()
    assert [m() for m in modules] == [None] * 4
    assert not [n for n in names if n in sys.modules]


def test_a_module_shared_by_two_programs_stays_until_both_go(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    x = np.arange(4, dtype=np.float32)
    f, g = [omnistage.jit(lambda v: v * 13.0) for _ in range(2)]  # two programs, one module
    cf, cg = f.lower(x).compile(), g.lower(x).compile()
    assert cf.executable.module is cg.executable.module
    name = cf.executable.module.__name__
    del f, cf
    gc.collect()
    assert name in sys.modules
    np.testing.assert_array_equal(np.asarray(cg(x)), x * 13)
    del g, cg
    gc.collect()
    assert name not in sys.modules
    # compiled again afterwards (from the disk cache): still right
    np.testing.assert_array_equal(np.asarray(omnistage.jit(lambda v: v * 13.0)(x)), x * 13)


# --- the builder ----------------------------------------------------------------------------------


def test_one_builder_per_entry_across_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    cache_integrity.private_dir(str(tmp_path))
    code = ("import sys; from omnistage.codegen import aot_trust\n"
            "print(aot_trust.being_built(sys.argv[1]))\n")
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)

    def other_process_sees_it_built():
        out = subprocess.run([sys.executable, "-c", code, "k1"], env=env, capture_output=True, text=True, timeout=60,
                             cwd=tmp_path)  # not the repository root (python -c puts the cwd first on sys.path)
        return out.stdout.strip()

    assert other_process_sees_it_built() == "False"
    with aot_trust.build_lock("k1") as mine:
        assert mine
        assert other_process_sees_it_built() == "True"
    assert other_process_sees_it_built() == "False"


def test_a_builder_skips_an_entry_another_builder_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", ""))  # main() sets it
    cache_integrity.private_dir(str(tmp_path))
    built = []
    monkeypatch.setattr(aot, "build", lambda request, work: built.append(request["key"]) or
                        {"format": aot.FORMAT, "key": request["key"], "unsupported": "test"})
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True); time.sleep(60)\n", str(tmp_path / "omnistage_aot_held.lock")],
        stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert holder.stdout.readline().strip() == "held"
        aot.main([json.dumps({"key": "held"}) + "\n", json.dumps({"key": "free"}) + "\n"])
    finally:
        holder.kill()
        holder.wait()
    assert built == ["free"]
    assert aot._read_record("free")["unsupported"] == "test" and aot._read_record("held") is None


def test_a_builder_with_nothing_to_do_leaves(tmp_path):
    read, write = os.pipe()
    try:
        with os.fdopen(read, "rb", buffering=0) as stream:
            os.write(write, b'{"key": "a"}\n')
            start = time.monotonic()
            lines = list(aot_trust.requests_until_idle(stream, 0.3))
            assert lines == ['{"key": "a"}'] and time.monotonic() - start < 30
    finally:
        os.close(write)


def test_the_builder_process_exits_when_idle_with_its_input_still_open(tmp_path):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    code = "import sys; from omnistage.codegen import aot; aot._BUILDER_IDLE_S = 0.5; sys.exit(aot.main(sys.stdin))"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        assert proc.wait(timeout=60) == 0  # its input is never closed
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()


# --- the C compiler ----------------------------------------------------------------------------------


def test_cc_may_carry_flags(monkeypatch):
    import shutil

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("CC", f"{os.path.basename(cc)} -O2 -g0")
    assert aot.compiler() == [cc, "-O2", "-g0"]
    monkeypatch.setenv("CC", "no-such-compiler -O2")
    assert aot.compiler() is None
    monkeypatch.setenv("CC", "")
    assert aot.compiler() == ([shutil.which("cc")] if shutil.which("cc") else None)


@pytest.mark.parametrize("damage", ["garbage", "symbolic link", "deleted"])
def test_clear_cache_recognises_its_files_when_the_manifest_is_damaged(tmp_path, monkeypatch, damage):
    cache = tmp_path / "cache"
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(cache))
    x = np.arange(3, dtype=np.float32)
    omnistage.jit(lambda v: v * 9.0 - float(len(damage) + 100 * (damage == "deleted")))(x)  # one per case
    ours = _our_files(cache)
    manifest = cache / cache_integrity.MANIFEST_NAME
    (cache / "omnistage_gen_notes.py").write_text("# omnistage generated module sha256=0\nmine\n")
    if damage == "garbage":
        manifest.write_bytes(b"\x00not a manifest\nomnistage_gen_notes.py 00 00\n\xff \xc3\xa9 \xc3\xa9\n")
    elif damage == "symbolic link":
        manifest.unlink()
        manifest.symlink_to(tmp_path / "elsewhere")
    if damage != "deleted":
        assert omnistage.clear_cache() == len(ours)
        assert _our_files(cache) == {"omnistage_gen_notes.py"}
    else:
        # nothing says the manifest was lost: the files stay (never a guess at what is ours)
        manifest.unlink()
        assert omnistage.clear_cache() == 0 and _our_files(cache) == ours | {"omnistage_gen_notes.py"}


def test_a_process_closes_its_idle_builders_input(tmp_path, monkeypatch):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(aot, "_IDLE_EXIT_S", 0.3)
    monkeypatch.setattr(aot, "_builder_command", lambda: [sys.executable, "-c", "import sys; sys.stdin.read()"])
    proc = aot._spawn({"key": "k"})
    assert proc is not None and proc.poll() is None
    assert proc.wait(timeout=60) == 0  # the timer closed its input: it saw the end and left
    assert aot._builder is None and proc in aot._retired
    aot.wait_for_builds(timeout=5)
    assert aot._retired == []
