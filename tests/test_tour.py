"""The guided tour (`python -m omnistage`, omnistage/__main__.py) as a new user meets it: run
twice in a fresh cache (the second run finds the first's native libraries), it prints the same
text, teaches default jit's control-flow conversion before JAX's error, and explains `prange`."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# `python -m omnistage`, then wait for the native libraries its builder makes, so the second
# run surely loads them (the first run's kernel text once differed from the second's)
RUN_TOUR = """
import runpy, sys
sys.argv = ["omnistage"]
try:
    runpy.run_module("omnistage", run_name="__main__")
except SystemExit as e:
    assert not e.code, e.code
from omnistage.codegen import aot
aot.wait_for_builds(timeout=240)
"""

TIMING = re.compile(r"^  .*\s\d+\.\d{4}$", re.M)  # section 3's rows: they vary run to run


def run_tour(cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMNISTAGE_", "NUMBA_"))}
    env.update(OMNISTAGE_CACHE_DIR=str(cache / "omnistage"), NUMBA_CACHE_DIR=str(cache / "numba"),
               OMNISTAGE_AOT="1", PYTHONPATH=os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", RUN_TOUR], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@pytest.mark.slow
def test_tour_prints_the_same_text_twice_and_teaches_default_jit_first(tmp_path):
    first, second = run_tour(tmp_path), run_tour(tmp_path)
    assert TIMING.sub("", first) == TIMING.sub("", second)
    assert "Traceback" not in first
    converted = first.index("jit(count_up)(10, 20) = 30")
    error = first.index("TracerBoolConversionError")
    assert converted < first.index("python_control_flow=False") < error  # default first, then JAX's mode
    assert "while_loop(" in first[:converted]
    if "numba.prange(" in first:
        assert "`numba.prange` splits that loop" in first
