"""`omnistage.version`: the package's version (JAX's `jax.version` module holds `__version__`)."""
__version__ = "0.1.0"
_version = __version__
