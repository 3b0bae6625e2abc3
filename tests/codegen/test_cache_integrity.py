"""The compile cache cannot be poisoned or left broken (issue #19; codegen/cache_integrity.py,
numba_locator.py, aot_trust.py): every file kind, damaged every way, still gives the right
result in the damaged process and a working cache in the next one; foreign files are never
unpickled or loaded; a full disk or read-only directory keeps code in memory; nothing is
written outside the private directory; a second user cannot plant code.

Fresh-process cases run CHILD with OMNISTAGE_CACHE_DIR in tmp_path and read its JSON report.
"""
import errno
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen import cache_integrity, disk_cache

from .frozen_package import freeze

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = r'''
import json, os, sys, warnings
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda m, c, filename, lineno, *a, **k: caught.append([f"{c.__name__}: {m}", filename, lineno])
import numpy as np
import omnistage, omnistage.numpy as jnp
from omnistage.codegen import aot
x = np.linspace(-2.0, 2.0, 301, dtype=np.float32)[::-1].copy()
h = np.linspace(-8.0, 8.0, 4096).astype(np.float16)
# sort: generated code calling the runtime module `kernels`; h: float16 inputs and outputs this
# big cross the boundary through the runtime module `support`, called from Python
programs = {"f": (lambda x: jnp.sort(x) * 2.0 + 1.0, x), "g": (lambda x: jnp.sort(x) * 4.0 - 1.0, x),
            "h": (lambda x: x * 8.0, h)}
report = {"y": {}, "kind": {}}
for name, (fn, arg) in programs.items():
    compiled = omnistage.jit(fn).lower(arg).compile()
    report["y"][name] = np.asarray(compiled(arg)).astype(np.float32).tolist()
    report["kind"][name] = type(compiled.executable).__name__
hits = misses = 0
for modname, mod in list(sys.modules.items()):
    if modname.startswith("omnistage_gen_") or modname in ("omnistage.codegen.kernels", "omnistage.codegen.support"):
        for v in list(vars(mod).values()):
            if hasattr(v, "stats") and hasattr(v, "py_func"):
                hits += sum(v.stats.cache_hits.values()); misses += sum(v.stats.cache_misses.values())
aot.wait_for_builds(timeout=240)
report.update(hits=hits, misses=misses, warnings=[w for w in caught if "omnistage" in w[0]])
print(json.dumps(report))
'''

_X = np.linspace(-2.0, 2.0, 301, dtype=np.float32)[::-1]
EXPECTED = {"f": (np.sort(_X) * np.float32(2) + np.float32(1)).tolist(),
            "g": (np.sort(_X) * np.float32(4) - np.float32(1)).tolist(),
            "h": (np.linspace(-8.0, 8.0, 4096).astype(np.float16) * np.float16(8)).astype(np.float32).tolist()}


_CHILD_PATH = [ROOT]


@pytest.fixture(scope="module", autouse=True)
def frozen_package(tmp_path_factory):
    """Children import a copy of omnistage taken once and run in its directory (frozen_package):
    an edit of a runtime module during the long tests would restamp entries between runs."""
    _CHILD_PATH[:] = [freeze(tmp_path_factory)]
    yield _CHILD_PATH[0]
    _CHILD_PATH[:] = [ROOT]


def child_env(cache, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "NUMBA_"))}
    env.update(OMNISTAGE_CACHE_DIR=str(cache), OMNISTAGE_AOT="0", OMNISTAGE_LOG_COMPILES="0", OMNISTAGE_C_TIER="0")
    env["PYTHONPATH"] = os.pathsep.join(_CHILD_PATH + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


def run_child(cache, user=None, umask=None, **env):
    """(report, returncode, stderr) of CHILD in a fresh process."""
    def preexec():
        if umask is not None:
            os.umask(umask)
        if user is not None:
            os.setgid(user[1])
            os.setuid(user[0])

    # cwd: `python -c` puts it first on sys.path, and the repository root would shadow the copy
    proc = subprocess.run([sys.executable, "-c", CHILD], env=child_env(cache, **env), capture_output=True,
                          text=True, timeout=400, preexec_fn=preexec if (user or umask is not None) else None,
                          cwd=_CHILD_PATH[0])
    lines = proc.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
    return report, proc.returncode, proc.stderr


def outcome(report, returncode):
    """'survived' (right values), 'wrong' (a value differs), or 'lost' (no result: crash)."""
    if returncode != 0 or report is None:
        return "lost"
    return "survived" if report["y"] == EXPECTED else "wrong"


# --- the fault matrix ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache one process filled, native libraries included: (directory, its file names)."""
    cache = tmp_path_factory.mktemp("warm") / "cache"
    report, rc, err = run_child(cache, OMNISTAGE_AOT="1")
    assert outcome(report, rc) == "survived", err[-3000:]
    return cache


def _module_names(cache):
    """{'f': module, 'g': module, 'h': module}: which generated module computes which program."""
    names = {}
    for name in os.listdir(cache):
        if name.startswith("omnistage_gen_") and name.endswith(".py"):
            text = (cache / name).read_text()
            program = next(p for p, c in (("f", "(2.0)"), ("g", "(4.0)"), ("h", "(8.0)")) if c in text)
            names[program] = name[:-3]
    return names


def kind_files(cache):
    """For each file kind, (the file of program f, the same kind's file of program g)."""
    mods = _module_names(cache)
    names = os.listdir(cache)

    def pick(program, pred):
        found = sorted(n for n in names if pred(n, mods[program]))
        assert found, (program, names)
        return found[0]

    records = {}
    for n in names:
        if n.startswith("omnistage_aot_") and n.endswith(".json"):
            rec = json.loads((cache / n).read_text())
            if "library" in rec:
                records["f" if rec["module"] == mods["f"] else "g"] = (n, rec["library"])
    # the runtime function the float16 program calls from Python (its files are read whenever
    # it runs), and another runtime function's files to swap in
    runtime = sorted(n for n in names if n.startswith("support.float16_bits_to_float32-"))
    other = sorted(n for n in names if n.startswith("support.float32_to_float16_bits-"))
    runtime_index, other_index = [[n for n in ns if n.endswith(".nbi")][0] for ns in (runtime, other)]
    runtime_data, other_data = [[n for n in ns if n.endswith(".nbc")][0] for ns in (runtime, other)]
    return {
        "module .py": (mods["f"] + ".py", mods["g"] + ".py"),
        "Numba index .nbi": (pick("f", lambda n, m: n.startswith(m + ".") and n.endswith(".nbi")),
                             pick("g", lambda n, m: n.startswith(m + ".") and n.endswith(".nbi"))),
        "Numba data .nbc": (pick("f", lambda n, m: n.startswith(m + ".") and n.endswith(".nbc")),
                            pick("g", lambda n, m: n.startswith(m + ".") and n.endswith(".nbc"))),
        "runtime index .nbi": (runtime_index, other_index),
        "runtime data .nbc": (runtime_data, other_data),
        "library record .json": (records["f"][0], records["g"][0]),
        "native library .so": (records["f"][1], records["g"][1]),
        "key": (cache_integrity.KEY_NAME, None),
        "manifest": (cache_integrity.MANIFEST_NAME, None),
    }


class Evil:
    """Unpickling this creates the marker file: proof that a planted pickle ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _flip(position):
    def fault(data, ctx):
        if not data:
            return b"\x01"
        i = min(max(int(len(data) * position), 0), len(data) - 1)
        return data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:]
    return fault


def _planted(data, ctx):
    """What a foreign writer would put there: a pickle that runs code (Numba files, records,
    key, manifest) or another valid library (.so)."""
    if ctx["kind"] == "native library .so":
        return ctx["other"]
    payload = pickle.dumps(Evil(ctx["marker"]))
    if ctx["kind"].endswith(".nbi"):
        import numba

        return pickle.dumps(numba.__version__) + payload
    return payload


FAULTS = {
    "truncated": lambda data, ctx: data[: len(data) // 2],
    "empty": lambda data, ctx: b"",
    "bit flip (start)": _flip(0.02),
    "bit flip (middle)": _flip(0.5),
    "bit flip (end)": _flip(0.98),
    "garbage": lambda data, ctx: np.random.default_rng(len(data)).bytes(max(len(data), 64)),
    "planted": _planted,
    "swapped with another entry's file": lambda data, ctx: ctx["other"] if ctx["other"] is not None else data[::-1],
    "symbolic link": None,  # replaced by a link to a copy of the valid file elsewhere
    "mode 0644": None,
    "other owner": None,
}
KINDS = ["module .py", "Numba index .nbi", "Numba data .nbc", "runtime index .nbi", "runtime data .nbc",
         "library record .json", "native library .so", "key", "manifest"]
FAST = {("Numba data .nbc", "bit flip (middle)"), ("Numba index .nbi", "truncated"),
        ("native library .so", "planted"), ("runtime data .nbc", "planted")}


def apply_fault(cache, kind, fault, tmp_path):
    files = kind_files(cache)
    name, other_name = files[kind]
    path = cache / name
    marker = tmp_path / "planted-code-ran"
    ctx = {"kind": kind, "marker": marker,
           "other": (cache / other_name).read_bytes() if other_name else None}
    if fault == "symbolic link":
        elsewhere = tmp_path / ("elsewhere-" + name)
        shutil.copy2(path, elsewhere)
        path.unlink()
        os.symlink(elsewhere, path)
    elif fault == "mode 0644":
        os.chmod(path, 0o644)
    elif fault == "other owner":
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root")
        os.chown(path, 65534, 65534)
    else:
        damaged = FAULTS[fault](path.read_bytes(), ctx)
        path.write_bytes(damaged)
    return name, marker


def _fault_params():
    for kind in KINDS:
        for fault in FAULTS:
            marks = () if (kind, fault) in FAST else (pytest.mark.slow,)
            yield pytest.param(kind, fault, marks=marks, id=f"{kind}-{fault}")


@pytest.mark.parametrize("kind,fault", list(_fault_params()))
def test_a_damaged_cache_file_gives_the_right_result_and_heals(warm, tmp_path, kind, fault):
    cache = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(warm), str(cache)], check=True)
    name, marker = apply_fault(cache, kind, fault, tmp_path)
    aot = "1" if kind in ("library record .json", "native library .so") else "0"
    report, rc, err = run_child(cache, OMNISTAGE_AOT=aot)
    assert outcome(report, rc) == "survived", (outcome(report, rc), err[-3000:])
    assert not marker.exists(), "a planted pickle was unpickled"
    assert len(report["warnings"]) <= 1, report["warnings"]
    for message, filename, _line in report["warnings"]:
        assert str(cache) in message and filename == "<string>"  # the user's code, not ours
    # The next process finds a working cache: machine code loaded, nothing compiled.
    again, rc, err = run_child(cache, OMNISTAGE_AOT=aot)
    assert outcome(again, rc) == "survived", err[-3000:]
    assert again["warnings"] == [], again["warnings"]
    if aot == "1":
        assert again["kind"]["f"] == again["kind"]["g"] == "AotProgram", again["kind"]
    else:
        assert again["hits"] > 0 and again["misses"] == 0, again
    assert not os.path.islink(cache / name)


def test_a_record_claiming_a_planted_library_is_not_loaded(warm, tmp_path):
    # The record is rewritten to name another library and its hash, keeping its old tag.
    cache = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(warm), str(cache)], check=True)
    files = kind_files(cache)
    rec_f, lib_g = files["library record .json"][0], files["native library .so"][1]
    record = json.loads((cache / rec_f).read_text())
    planted = cache / "planted.so"
    shutil.copy(cache / lib_g, planted)
    import hashlib

    record.update(library="planted.so", sha256=hashlib.sha256(planted.read_bytes()).hexdigest())
    (cache / rec_f).write_text(json.dumps(record))
    report, rc, err = run_child(cache, OMNISTAGE_AOT="1")
    assert outcome(report, rc) == "survived", err[-3000:]
    assert report["kind"]["f"] == "NumbaProgram" and len(report["warnings"]) == 1
    assert planted.exists()  # not ours: not deleted either


# --- directories ---------------------------------------------------------------------------------


def test_files_and_directories_are_private_under_umask_000(tmp_path):
    cache = tmp_path / "new" / "cache"
    report, rc, err = run_child(cache, umask=0)
    assert outcome(report, rc) == "survived", err[-3000:]
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    for name in os.listdir(cache):
        st = os.lstat(cache / name)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, (name, oct(st.st_mode))


def test_numba_files_never_leave_the_private_directory(tmp_path):
    # NUMBA_CACHE_DIR set, a read-only __pycache__ where Numba would write, HOME elsewhere:
    # Numba's files for our code go to the private directory and nowhere else.
    cache, numba_dir, home = tmp_path / "cache", tmp_path / "numba", tmp_path / "home"
    cache.mkdir(mode=0o700)
    (cache / "__pycache__").mkdir(mode=0o500)
    home.mkdir()
    report, rc, err = run_child(cache, NUMBA_CACHE_DIR=str(numba_dir), HOME=str(home),
                                XDG_CACHE_HOME=str(home / ".cache"))
    assert outcome(report, rc) == "survived", err[-3000:]
    assert report["warnings"] == [] and report["misses"] > 0
    assert not numba_dir.exists() and not (home / ".cache").exists()
    assert os.listdir(cache / "__pycache__") == []
    assert any(n.endswith(".nbc") for n in os.listdir(cache))


def test_a_users_numba_locator_list_does_not_place_our_files(tmp_path):
    # NUMBA_CACHE_LOCATOR_CLASSES replaces Numba's locator list (ours included): our
    # functions' files still go to the private directory, tagged, and are used from there.
    cache, home = tmp_path / "cache", tmp_path / "home"
    home.mkdir()
    env = dict(NUMBA_CACHE_LOCATOR_CLASSES="UserWideCacheLocator,InTreeCacheLocator",
               HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    report, rc, err = run_child(cache, **env)
    assert outcome(report, rc) == "survived", err[-3000:]
    assert report["warnings"] == [] and report["misses"] > 0
    assert not (home / ".cache").exists() and not (cache / "__pycache__").exists()
    nbc = [n for n in os.listdir(cache) if n.endswith(".nbc")]
    pdir = cache_integrity.private_dir(str(cache))
    assert nbc and all(pdir.untagged(n, pdir.read(n)) for n in nbc)  # tagged with our key
    again, rc, err = run_child(cache, **env)
    assert outcome(again, rc) == "survived", err[-3000:]
    assert again["hits"] > 0 and again["misses"] == 0 and again["warnings"] == []


@pytest.mark.parametrize("damage", ["mode 0777", "other owner", "symbolic link to a shared directory"])
def test_a_cache_directory_others_control_is_not_used(tmp_path, damage):
    cache = tmp_path / "cache"
    if damage == "symbolic link to a shared directory":
        shared = tmp_path / "shared"
        shared.mkdir()
        os.chmod(shared, 0o777)
        os.symlink(shared, cache)
    else:
        cache.mkdir(mode=0o700)
        if damage == "mode 0777":
            os.chmod(cache, 0o777)
        elif os.geteuid() == 0:
            os.chown(cache, 65534, 65534)
        else:
            pytest.skip("changing a directory's owner needs root")
    report, rc, err = run_child(cache)
    assert outcome(report, rc) == "survived", err[-3000:]
    assert len(report["warnings"]) == 1 and "cannot be used" in report["warnings"][0][0]
    assert report["warnings"][0][1] == "<string>"
    assert [n for n in os.listdir(cache) if not n.startswith("__")] == []


@pytest.mark.parametrize("unsafe", ["world-writable parent", "group-writable grandparent", "parent of another user"])
def test_a_cache_below_a_directory_others_control_is_not_used(tmp_path, monkeypatch, unsafe):
    # As OpenSSH's StrictModes: whoever may rename entries of a parent can swap the cache.
    top = tmp_path / "top"
    cache = top / "mid" / "cache"
    cache.mkdir(parents=True, mode=0o700)
    bad = {"world-writable parent": top / "mid", "group-writable grandparent": top,
           "parent of another user": top / "mid"}[unsafe]
    if unsafe == "parent of another user":
        if os.geteuid() != 0:
            pytest.skip("changing a directory's owner needs root")
        os.chown(bad, 65534, 65534)
    else:
        os.chmod(bad, 0o777 if unsafe.startswith("world") else 0o770)
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(cache))
    x = np.arange(5, dtype=np.float32)
    c = 9041.5 + len(unsafe)  # a program of its own: a module already loaded is not stored again
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = omnistage.jit(lambda v: v * c - 3.0)(x)
    np.testing.assert_array_equal(np.asarray(y), x * np.float32(c) - np.float32(3.0))
    ours = [str(w.message) for w in caught if "omnistage" in str(w.message)]
    assert len(ours) == 1 and f"parent directory {bad} " in ours[0] and "in memory" in ours[0], ours
    assert os.listdir(cache) == []  # nothing written below the unsafe directory


def test_a_sticky_world_writable_parent_like_tmp_is_fine(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    pdir = cache_integrity.private_dir(str(shared / "cache"))
    pdir.write("probe", b"data")
    assert (shared / "cache" / "probe").read_bytes() == b"data"


def test_a_directory_swapped_after_the_check_is_not_used(tmp_path):
    path = tmp_path / "cache"
    pdir = cache_integrity.private_dir(str(path))
    os.rename(path, tmp_path / "checked")
    path.mkdir()
    os.chmod(path, 0o777)  # what a directory-swap race puts there
    pdir.write("probe", b"data")
    assert (tmp_path / "checked" / "probe").read_bytes() == b"data" and not (path / "probe").exists()
    with pytest.raises(cache_integrity.CacheUnusable):
        cache_integrity.private_dir(str(path))


def test_tags_bind_contents_and_name(tmp_path):
    pdir = cache_integrity.private_dir(str(tmp_path / "c"))
    tagged = pdir.tagged("a.nbc", b"payload")
    assert pdir.untagged("a.nbc", tagged) == b"payload"
    for name, data in [("b.nbc", tagged), ("a.nbc", tagged[:-1]), ("a.nbc", tagged[:-1] + b"q"),
                       ("a.nbc", b"payload"), ("a.nbc", b"")]:
        with pytest.raises(cache_integrity.DamagedEntry):
            pdir.untagged(name, data)


# --- write errors ---------------------------------------------------------------------------------


def _enospc_for(predicate, monkeypatch):
    real = cache_integrity.PrivateDir.write

    def write(self, name, data, replace=True):
        if predicate(name):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, name, data, replace)

    monkeypatch.setattr(cache_integrity.PrivateDir, "write", write)


def _fresh_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(cache))
    monkeypatch.setattr(cache_integrity, "_warned", set())
    return cache


def test_a_full_disk_when_saving_machine_code_keeps_it_in_memory_with_one_warning(tmp_path, monkeypatch):
    cache = _fresh_cache(tmp_path, monkeypatch)
    _enospc_for(lambda name: name.endswith((".nbi", ".nbc")), monkeypatch)
    x = np.arange(5, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = omnistage.jit(lambda v: v * 3.0 + 0.25)(x)
        z = omnistage.jit(lambda v: v * 5.0 - 0.25)(x)
    np.testing.assert_array_equal(np.asarray(y), x * 3 + 0.25)
    np.testing.assert_array_equal(np.asarray(z), x * 5 - 0.25)
    ours = [w for w in caught if "compile cache" in str(w.message)]
    assert len(ours) == 1 and "disk is full" in str(ours[0].message) and str(cache) in str(ours[0].message)
    assert ours[0].filename == __file__  # the user's line
    assert not [n for n in os.listdir(cache) if n.endswith((".nbi", ".nbc"))]


def test_a_full_disk_for_every_write_compiles_in_memory_with_one_warning(tmp_path, monkeypatch):
    cache = _fresh_cache(tmp_path, monkeypatch)
    _enospc_for(lambda name: True, monkeypatch)
    x = np.arange(5, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = omnistage.jit(lambda v: v * 7.0 + 0.5)(x)
    np.testing.assert_array_equal(np.asarray(y), x * 7 + 0.5)
    ours = [w for w in caught if "compile cache" in str(w.message)]
    assert len(ours) == 1 and ours[0].filename == __file__, [str(w.message) for w in ours]
    assert [n for n in os.listdir(cache) if not n.startswith(".")] == []


def test_a_small_tmpfs_runs_out_of_space_and_results_stay_right(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=0700", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        report, rc, err = run_child(mount)
        assert outcome(report, rc) == "survived", err[-3000:]
        assert len(report["warnings"]) == 1 and "disk is full" in report["warnings"][0][0]
        again, rc, err = run_child(mount)
        assert outcome(again, rc) == "survived", err[-3000:]
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


# --- a second user ---------------------------------------------------------------------------------


INTRUDER = "omnistage_intruder"


@pytest.fixture(scope="module")
def intruder():
    """(uid, gid) of a second local user (created with useradd); skipped unless root."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd to create a second user")
    import pwd

    try:
        entry = pwd.getpwnam(INTRUDER)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/false", INTRUDER], check=True)
        entry = pwd.getpwnam(INTRUDER)
    return entry.pw_uid, entry.pw_gid


def _as(user, argv, **kw):
    def preexec():
        os.setgid(user[1])
        os.setuid(user[0])
    return subprocess.run(argv, preexec_fn=preexec, capture_output=True, text=True, **kw)


@pytest.fixture
def shared_tmp():
    """A directory both users can reach (pytest's tmp_path sits below a 0700 directory)."""
    import pathlib
    import tempfile

    path = pathlib.Path(tempfile.mkdtemp(prefix="omnistage-two-users-"))
    os.chmod(path, 0o1777)  # shared like /tmp
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_second_user_cannot_plant_code(shared_tmp, intruder, warm):
    tmp_path = shared_tmp
    shared = tmp_path / "shared-numba"
    marker = tmp_path / "intruder-code-ran"
    _as(intruder, ["mkdir", "-m", "777", str(shared)], check=True)
    # The intruder plants pickles that run code under every name Numba would look for in a
    # shared NUMBA_CACHE_DIR for the victim's modules (computed as Numba computes them).
    from numba.core.caching import UserProvidedCacheLocator

    cache = tmp_path / "victim"
    subprocess.run(["cp", "-a", str(warm), str(cache)], check=True)
    evil_index = pickle.dumps(__import__("numba").__version__) + pickle.dumps(Evil(marker))
    for name in os.listdir(cache):
        if name.endswith((".nbi", ".nbc")):
            sub = shared / UserProvidedCacheLocator.get_suitable_cache_subpath(str(cache / "x.py"))
            _as(intruder, ["mkdir", "-p", "-m", "777", str(sub)], check=True)
            (sub / name).write_bytes(evil_index if name.endswith(".nbi") else pickle.dumps(Evil(marker)))
            os.chmod(sub / name, 0o666)
    # ... and tries to write into the victim's cache directory: refused by the system.
    attempt = _as(intruder, ["sh", "-c", f"echo x > {cache}/omnistage_gen_planted.py"])
    assert attempt.returncode != 0 and not (cache / "omnistage_gen_planted.py").exists()
    report, rc, err = run_child(cache, NUMBA_CACHE_DIR=str(shared))
    assert outcome(report, rc) == "survived", err[-3000:]
    assert report["hits"] > 0 and report["warnings"] == [] and not marker.exists()
    # A cache directory the intruder made for the victim (theirs, mode 0755) is not used.
    theirs = tmp_path / "theirs"
    _as(intruder, ["mkdir", "-m", "755", str(theirs)], check=True)
    report, rc, err = run_child(theirs)
    assert outcome(report, rc) == "survived", err[-3000:]
    assert len(report["warnings"]) == 1 and "owned by uid" in report["warnings"][0][0]
    assert os.listdir(theirs) == [] and not marker.exists()
