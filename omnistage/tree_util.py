"""`omnistage.tree_util`: pytree utilities (see core/tree_util.py)."""
from .core.tree_util import *  # noqa: F401,F403
from .core.tree_util import __all__  # noqa: F401
