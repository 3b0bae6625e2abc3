"""`aot.building()`: whether this process's library builder is still compiling one of its
requests; a parallel build's calls run serially meanwhile (executable._builder_busy)."""
import subprocess
import sys

from omnistage.codegen import aot, executable


def test_building_while_a_live_builder_has_an_unpublished_request(monkeypatch, tmp_path):
    monkeypatch.setenv("OMNISTAGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(aot, "_BUSY_CHECK_S", 0.0)
    monkeypatch.setattr(aot, "_busy", [float("-inf"), False])
    monkeypatch.setattr(aot, "_requested", set())
    monkeypatch.setattr(aot, "_builder", None)
    assert not aot.building() and not executable._builder_busy()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        monkeypatch.setattr(aot, "_builder", proc)
        assert not aot.building()  # alive, but asked for nothing
        aot._requested.add("0" * 32)
        assert aot.building() and executable._builder_busy()
        path = aot._record_path("0" * 32)
        with open(path, "w") as f:
            f.write("{}")  # published (valid or not: the builder is done with it)
        assert not aot.building()
        aot._requested.add("1" * 32)
        assert aot.building()
    finally:
        proc.kill()
        proc.wait()
    assert not aot.building()  # the builder is gone
