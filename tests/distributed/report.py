"""What MPI workers print for the tests: one line per check, appended to this rank's file in
$OMNISTAGE_TEST_RESULTS (a launcher merges the ranks' stdout streams without keeping lines
whole), and echoed to stdout for a person running a worker by hand."""
import os
import traceback


def report(rank, kind, name, text=None):
    line = f"{rank} {kind} {name}" + (f": {text}" if text is not None else "")
    print(line, flush=True)
    directory = os.environ.get("OMNISTAGE_TEST_RESULTS")
    if directory:
        with open(os.path.join(directory, f"rank{rank}.txt"), "a") as f:
            f.write(line + "\n")


def checker(rank):
    """`@check(name)` for a worker of rank `rank`: runs the decorated function at once and
    reports `ok`, or `FAIL` with its traceback on one line."""
    def check(name):
        def run(fn):
            try:
                fn()
            except Exception:  # noqa: BLE001 - reported to the test, which fails
                report(rank, "FAIL", name, traceback.format_exc().strip().replace("\n", " | "))
            else:
                report(rank, "ok", name)

        return run

    return check
