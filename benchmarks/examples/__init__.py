"""Ports of JAX's example programs (jax-ml/jax `examples/`) on synthetic data of the original
shapes, each runnable on JAX or on omnistage (`--backend jax|omnistage`), and a runner that
times both side by side: `python -m benchmarks.examples` (see run.py)."""
