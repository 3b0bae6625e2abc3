"""Gathers the op-library modules added beside the foundation (one `from X import *`
line per module, so each module owns its own names)."""
from .sorting import *  # noqa: F401,F403
from .sorting import __all__ as _sorting_all
from . import linalg  # noqa: F401  (jnp.linalg)

__all__ = [*_sorting_all, "linalg"]
