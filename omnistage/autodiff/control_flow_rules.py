"""Derivative rules of `cond`, `while_loop` and `scan` (bodies are Programs; their
derivatives are Programs staged by running the passes on them)."""
