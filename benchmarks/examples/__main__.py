"""`python -m benchmarks.examples`: the runner (run.py)."""
import sys

from benchmarks.examples.run import main

sys.exit(main())
