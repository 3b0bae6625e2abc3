"""Execute every notebook in this folder headless, as CI does, and print each one's run time.

    python notebooks/run.py                  # run them all; fail on the first broken cell
    python notebooks/run.py tour jit         # only the notebooks whose names contain these
    python notebooks/run.py --write          # also save the outputs into the .ipynb files

Needs the notebooks extra (`pip install -e ".[notebooks]"`). Each notebook runs in a fresh
kernel (this interpreter's ipykernel) with its own folder as the working directory, and has
`--timeout` seconds in all (its cells share them). A failure names the notebook, the cell
(index, id and its first line) and the error. A cell tagged `raises-exception` shows an error
on purpose; it fails the run if it raises none, so a behaviour a notebook explains (JAX's
error, omnistage's fix) cannot change unnoticed.

All notebooks of one run share a private, initially empty compile cache (set
`OMNISTAGE_CACHE_DIR` yourself to reuse one), so the times printed are cold-cache times and
nothing is written into ~/.cache.
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours its tracebacks


def _cell_label(nb, index):
    cell = nb.cells[index]
    first = next((line for line in cell.source.splitlines() if line.strip()), "")
    return f"cell {index} (id {cell.get('id', '?')}): {first[:70]}"


def _missing_errors(nb):
    """Cells tagged raises-exception whose outputs show no error."""
    return [i for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and "raises-exception" in cell.metadata.get("tags", [])
            and not any(out.get("output_type") == "error" for out in cell.get("outputs", []))]


def use_this_python_as_kernel(folder):
    """Make kernel `python3` this interpreter (a kernelspec in `folder`, first on JUPYTER_PATH),
    whatever kernelspecs the user has installed: the notebooks run with the omnistage we test."""
    spec_dir = os.path.join(folder, "kernels", "python3")
    os.makedirs(spec_dir, exist_ok=True)
    with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "Python 3", "language": "python"}, f)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [folder, os.environ.get("JUPYTER_PATH")]))


def run_notebook(path, timeout, write):
    """Execute `path`; return (seconds, None) or (seconds, message naming the failing cell)."""
    import nbclient
    import nbformat
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    deadline = time.monotonic() + timeout
    current = [None]

    def on_cell_start(cell, cell_index):
        current[0] = cell_index

    client = nbclient.NotebookClient(
        nb, timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        kernel_name="python3", resources={"metadata": {"path": os.path.dirname(path)}},
        on_cell_start=on_cell_start)
    start = time.perf_counter()
    failure = None
    try:
        client.execute()
    except CellTimeoutError:
        failure = f"ran past its {timeout} s budget in {_cell_label(nb, current[0])}"
    except CellExecutionError as e:
        failure = f"{_cell_label(nb, current[0])} raised {e.ename}: {e.evalue}\n{_ANSI.sub('', str(e))}"
    except DeadKernelError as e:
        failure = f"the kernel died in {_cell_label(nb, current[0])}: {e}"
    seconds = time.perf_counter() - start
    if failure is None:
        missing = _missing_errors(nb)
        if missing:
            failure = "; ".join(f"{_cell_label(nb, i)} is tagged raises-exception but raised nothing"
                                for i in missing)
    if failure is None and write:
        nbformat.validate(nb)
        nbformat.write(nb, path)
    return seconds, failure


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only notebooks whose file names contain one of these")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per notebook (default 300)")
    parser.add_argument("--write", action="store_true", help="save the executed outputs into the notebooks")
    args = parser.parse_args(argv)

    paths = sorted(glob.glob(os.path.join(HERE, "*.ipynb")))
    if args.names:
        paths = [p for p in paths if any(n in os.path.basename(p) for n in args.names)]
    if not paths:
        sys.exit("no notebook matched")

    scratch = tempfile.mkdtemp(prefix="omnistage-notebooks-")
    use_this_python_as_kernel(os.path.join(scratch, "jupyter"))
    if "OMNISTAGE_CACHE_DIR" not in os.environ:  # the kernels inherit this environment
        os.environ["OMNISTAGE_CACHE_DIR"] = os.path.join(scratch, "omnistage")
        os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(scratch, "numba"))
        os.environ.setdefault("OMNISTAGE_AOT", "0")  # no detached builders writing after we clean up
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    total = time.perf_counter()
    failures = []
    try:
        for path in paths:
            name = os.path.relpath(path)
            seconds, failure = run_notebook(path, args.timeout, args.write)
            print(f"{name}: {seconds:.1f} s" + ("" if failure is None else "  FAILED"), flush=True)
            if failure is not None:
                failures.append(f"{name}: {failure}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(paths)} notebooks in {time.perf_counter() - total:.1f} s")
    if failures:
        print("\n\n".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
