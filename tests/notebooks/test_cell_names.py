"""Code typed into a Jupyter cell is named `In[n]` in provenance comments and messages, not by
the temporary file ipykernel compiles the cell from. No Jupyter needed: a stand-in IPython
module with IPython's `format_code_name` plays the kernel."""
import linecache
import sys
import types

import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen import provenance
from omnistage.core.source_info import file_label, file_path

CELL_FILE = "/tmp/ipykernel_4242/1071896056.py"
CELL_SOURCE = (
    "def f(x):\n"
    "    return jnp.sin(x) * 2\n"
    "\n"
    "def g(x):\n"
    "    return x if x > 0 else -x\n"
    "\n"
    "def h(x):\n"
    "    if x.sum() > 0:\n"
    "        y = x\n"
    "    else:\n"
    "        y = x[:2]\n"
    "    return y\n"
)


@pytest.fixture
def notebook_cell(monkeypatch):
    """Run CELL_SOURCE as cell In[3] of a stand-in IPython shell; returns its namespace."""
    class Compiler:
        def format_code_name(self, name):  # as IPython.core.compilerop.CachingCompiler's
            return ("Cell", "In[3]") if name == CELL_FILE else None

    shell = types.SimpleNamespace(compile=Compiler())
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    lines = CELL_SOURCE.splitlines(keepends=True)
    monkeypatch.setitem(linecache.cache, CELL_FILE, (len(CELL_SOURCE), None, lines, CELL_FILE))
    namespace = {"jnp": jnp}
    exec(compile(CELL_SOURCE, CELL_FILE, "exec"), namespace)
    return namespace


def test_a_cell_file_is_named_by_its_cell(notebook_cell):
    assert file_label(CELL_FILE) == file_path(CELL_FILE) == "In[3]"
    assert file_label("/home/me/model.py") == "model.py"
    assert file_path("/home/me/model.py") == "/home/me/model.py"


def test_without_ipython_files_keep_their_names(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert file_label(CELL_FILE) == "1071896056.py"


def test_staged_and_derived_statements_name_the_cell_line(notebook_cell):
    f = notebook_cell["f"]
    text = str(omnistage.make_jaxpr(f)(1.0))
    assert "# In[3]:2" in text and "1071896056" not in text
    grad_text = str(omnistage.make_jaxpr(omnistage.grad(f))(1.0))
    assert "# In[3]:2 (vjp)" in grad_text


def test_generated_kernel_comments_name_the_cell_line(notebook_cell):
    kernel = omnistage.jit(notebook_cell["f"]).lower(1.0).compile().as_text()
    assert "  # In[3]:2" in kernel and "1071896056" not in kernel
    assert provenance.strip("    y = np.sin(x)  # In[3]:2\n") == "    y = np.sin(x)\n"


def test_control_flow_messages_name_the_cell(notebook_cell):
    g = notebook_cell["g"]
    with pytest.raises(TypeError) as info:
        omnistage.jit(g, python_control_flow=False)(1.0)
    message = str(info.value)
    assert "In[3]:4" in message and "Cell In[3], line 5, in g" in message
    assert "1071896056" not in message


def test_control_flow_rewrite_errors_name_the_cell(notebook_cell):
    with pytest.raises(TypeError) as info:
        omnistage.jit(notebook_cell["h"])(jnp.ones(3))
    message = str(info.value)
    assert "the `if` at In[3]:8" in message and 'File "In[3]", line 8' in message
    assert "1071896056" not in message
