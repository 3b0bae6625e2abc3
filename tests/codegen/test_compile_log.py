"""What the compiler says on stderr (omnistage/codegen/compile_log.py): a note when a compile
runs long, every compile with OMNISTAGE_LOG_COMPILES=1 or jax_log_compiles, nothing with =0."""
import time

import numpy as np
import pytest

import omnistage
from omnistage.codegen import compile_log

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)


@pytest.fixture
def quick_note(monkeypatch):
    """The 'still compiling' note after 10 ms instead of seconds."""
    monkeypatch.setattr(compile_log, "SLOW_S", 0.01)


def slow_compile(program):
    with compile_log.compiling(program) as built:
        compile_log.note_source("line\n" * 42)
        time.sleep(0.3)
        built(None)


def staged(fun, *args):
    return omnistage.make_jaxpr(fun)(*args)


def test_a_long_compile_says_once_which_function_and_how_big(quick_note, monkeypatch, capsys):
    monkeypatch.delenv("OMNISTAGE_LOG_COMPILES", raising=False)

    def loss(x):
        return (omnistage.numpy.sin(x) * 2.0).sum()

    slow_compile(staged(loss, np.ones(3, np.float32)))
    err = capsys.readouterr().err
    assert err.count("omnistage:") == 1
    assert "compiling 'loss' (3 statements, 42 lines of generated code) is taking more than" in err
    assert "OMNISTAGE_LOG_COMPILES=0" in err


def test_a_quick_compile_says_nothing_by_default(monkeypatch, capsys):
    monkeypatch.delenv("OMNISTAGE_LOG_COMPILES", raising=False)
    omnistage.jit(lambda x: x * 3.0 - 1.0)(np.ones(3, np.float32))
    assert "omnistage:" not in capsys.readouterr().err


def test_zero_silences_even_a_long_compile(quick_note, monkeypatch, capsys):
    monkeypatch.setenv("OMNISTAGE_LOG_COMPILES", "0")
    slow_compile(staged(lambda x: x + 1.0, np.ones(3, np.float32)))
    assert capsys.readouterr().err == ""


def test_one_logs_every_compile_with_its_time_and_cache_status(monkeypatch, capsys):
    monkeypatch.setenv("OMNISTAGE_LOG_COMPILES", "1")

    def scaled(x):
        return x * 5.0 + 2.0

    omnistage.jit(scaled, backend="cpu")(np.ones(4, np.float32))
    omnistage.jit(scaled, backend="interpreter")(np.ones(4, np.float32))
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("omnistage: compiled 'scaled'")]
    assert len(lines) == 2
    assert " s: compiled (cache miss)" in lines[0] or " s: machine code loaded from the disk cache" in lines[0]
    assert "lines of generated code" in lines[0] and lines[1].endswith("interpreted (nothing to compile)")


def test_jax_log_compiles_config_flag_logs_every_compile(monkeypatch, capsys):
    monkeypatch.delenv("OMNISTAGE_LOG_COMPILES", raising=False)
    omnistage.config.update("jax_log_compiles", True)
    try:
        omnistage.jit(lambda x: x * 7.0)(np.ones(2, np.float32))
    finally:
        omnistage.config.update("jax_log_compiles", False)
    assert "omnistage: compiled 'lambda_'" in capsys.readouterr().err
