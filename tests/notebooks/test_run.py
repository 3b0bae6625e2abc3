"""notebooks/run.py, the CI step for the notebooks: a failure names the notebook and the cell,
a cell tagged raises-exception must raise, and --write saves the outputs. Runs tiny notebooks
in a real kernel (skipped without the notebooks extra)."""
import importlib.util
import os
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

RUN_PY = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "notebooks", "run.py")


def load_runner():
    spec = importlib.util.spec_from_file_location("notebooks_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_notebook(path, cells):
    """cells: (source, tags) pairs."""
    nb = nbformat.v4.new_notebook()
    for i, (source, tags) in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source, id=f"cell-{i}")
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    nbformat.write(nb, str(path))


def test_a_good_notebook_runs_and_its_outputs_are_saved(tmp_path):
    path = tmp_path / "good.ipynb"
    write_notebook(path, [("import omnistage.numpy as jnp\nprint(jnp.arange(3) * 2)", None),
                          ("1 / 0", ["raises-exception"])])
    seconds, failure = load_runner().run_notebook(str(path), timeout=120, write=True)
    assert failure is None and seconds > 0
    saved = nbformat.read(str(path), as_version=4)
    assert saved.cells[0].outputs[0].text == "[0 2 4]\n"
    assert saved.cells[1].outputs[0].ename == "ZeroDivisionError"
    assert saved.cells[0].id == "cell-0"


def test_a_failing_cell_is_named(tmp_path):
    path = tmp_path / "bad.ipynb"
    write_notebook(path, [("x = 1", None), ("# the broken one\nundefined_name", None), ("y = 2", None)])
    _, failure = load_runner().run_notebook(str(path), timeout=120, write=True)
    assert "cell 1 (id cell-1): # the broken one" in failure and "NameError" in failure
    assert "\x1b[" not in failure  # no terminal colours in CI logs
    assert not nbformat.read(str(path), as_version=4).cells[0].get("outputs")  # not written


def test_a_cell_that_should_raise_but_does_not_fails(tmp_path):
    path = tmp_path / "quiet.ipynb"
    write_notebook(path, [("1 + 1", ["raises-exception"])])
    _, failure = load_runner().run_notebook(str(path), timeout=120, write=False)
    assert "cell 0 (id cell-0): 1 + 1 is tagged raises-exception but raised nothing" in failure


def test_the_kernel_is_this_python_whatever_kernelspecs_are_installed(tmp_path, monkeypatch):
    stray = tmp_path / "user" / "kernels" / "python3"  # a user's python3 spec naming another Python
    stray.mkdir(parents=True)
    (stray / "kernel.json").write_text('{"argv": ["/nonexistent/python", "-m", "ipykernel_launcher", '
                                       '"-f", "{connection_file}"], "display_name": "x", "language": "python"}')
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "user"))
    runner = load_runner()
    runner.use_this_python_as_kernel(str(tmp_path / "ours"))
    path = tmp_path / "which.ipynb"
    write_notebook(path, [("import sys\nprint(sys.executable)", None)])
    _, failure = runner.run_notebook(str(path), timeout=120, write=True)
    assert failure is None
    assert nbformat.read(str(path), as_version=4).cells[0].outputs[0].text.strip() == sys.executable
