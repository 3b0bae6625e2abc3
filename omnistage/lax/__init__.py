"""`omnistage.lax`: the primitives with strict typing (no implicit promotion).

Every function here binds a primitive from the core registry. Imports core only.
"""
from .elementwise import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .contractions import *  # noqa: F401,F403
from .elementwise import __all__ as _a1
from .shapes import __all__ as _a2
from .reductions import __all__ as _a3
from .contractions import __all__ as _a4

__all__ = [*_a1, *_a2, *_a3, *_a4]
