"""Smoke tests for benchmarks/cpu.py: the script runs in --quick mode and prints its table, its
first-call section and its targets, with and without JAX, so it cannot rot unnoticed.

The script runs in a subprocess (it sets thread environment variables before importing NumPy)
with the omnistage cache in a temporary directory.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "cpu.py")
CASE_NAMES = ["selu", "norm", "softmax", "mlp", "mlp_small", "sum_arange", "fori_sum", "dispatch"]

# `import jax` raises ImportError in this process, as if JAX were not installed
WITHOUT_JAX = (
    "import runpy, sys; sys.modules['jax'] = None; sys.argv = [{script!r}] + sys.argv[1:]; "
    "runpy.run_path({script!r}, run_name='__main__')"
)


def run_script(tmp_path, *args, without_jax=False):
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"))
    cmd = [sys.executable] + (["-c", WITHOUT_JAX.format(script=SCRIPT)] if without_jax else [SCRIPT]) + list(args)
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def table_rows(out):
    """{case name: row cells} from the printed table."""
    lines = out.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("case "))
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows[line.split()[0]] = line
    return rows


def jax_available():
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def test_quick_run_prints_every_case_first_call_and_targets(tmp_path):
    out = run_script(tmp_path, "--quick")
    rows = table_rows(out)
    assert list(rows) == CASE_NAMES
    for name, row in rows.items():
        assert (" numba " in row) or (" numpy-interp " in row), row
    assert "omnistage cold (empty cache dirs)" in out
    assert "omnistage warm (cache filled)" in out
    assert "Targets (issue 3):" in out
    for target in ("steady time <= JAX's", ">= 8x NumPy on selu", "warm-cache fresh-process first call",
                   "cold compile of selu", "dispatch overhead <= JAX's"):
        line = next(line for line in out.splitlines() if target in line)
        assert any(word in line for word in ("met", "MISSED", "n/a")), line
    assert "differs from NumPy" not in out  # every implementation computed the same thing
    if jax_available():
        assert "JAX (no persistent cache)" in out
        assert "n/a" not in rows["selu"]


def test_without_jax_prints_na_in_its_columns(tmp_path):
    out = run_script(tmp_path, "--quick", "--cases", "selu,dispatch", without_jax=True)
    rows = table_rows(out)
    assert list(rows) == ["selu", "dispatch"]
    for row in rows.values():
        cells = row.split()
        assert cells.count("n/a") >= 3, row  # JAX time, ratio to JAX, the <= JAX mark
    assert "jax n/a" in out
    assert "JAX not importable" in out


def test_unknown_case_name_is_rejected_with_the_choices():
    done = subprocess.run([sys.executable, SCRIPT, "--cases", "selu,nope"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unknown case(s) nope" in done.stderr and "softmax" in done.stderr


def test_compile_time_script_runs_a_case(tmp_path):
    """benchmarks/compile_time.py times a program's first call in fresh processes."""
    script = os.path.join(ROOT, "benchmarks", "compile_time.py")
    done = subprocess.run([sys.executable, script, "--cases", "scan_grad"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr[-3000:]
    row = next(line for line in done.stdout.splitlines() if line.startswith("scan_grad "))
    assert "errors" not in row and (" s " in row or " ms " in row), row


def test_eager_script_prints_every_call(tmp_path):
    """benchmarks/eager.py times eager jnp calls against NumPy (and JAX when installed)."""
    script = os.path.join(ROOT, "benchmarks", "eager.py")
    env = dict(os.environ, OMNISTAGE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, script, "--quick"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    for call in ("a + b (64x64)", "col / one ((7,1) by (1,1))", "mean(a, axis=0)", "cholesky (7x7)", "zeros((64, 64))"):
        line = next(line for line in done.stdout.splitlines() if line.startswith(call))
        assert len(line.split()) >= len(call.split()) + 2, line  # omnistage and NumPy timings at least
