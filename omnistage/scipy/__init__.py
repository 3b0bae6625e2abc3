"""`omnistage.scipy`, as `jax.scipy`: `special`, `stats`, `linalg`, `optimize`. Compositions of
omnistage.numpy and lax, so every function jits, differentiates and batches."""
from . import linalg, optimize, special, stats  # noqa: F401
