"""What MPI workers print for the tests: one line per check, appended to this rank's file in
$OMNISTAGE_TEST_RESULTS (a launcher merges the ranks' stdout streams without keeping lines
whole), and echoed to stdout for a person running a worker by hand."""
import os


def report(rank, kind, name, text=None):
    line = f"{rank} {kind} {name}" + (f": {text}" if text is not None else "")
    print(line, flush=True)
    directory = os.environ.get("OMNISTAGE_TEST_RESULTS")
    if directory:
        with open(os.path.join(directory, f"rank{rank}.txt"), "a") as f:
            f.write(line + "\n")
