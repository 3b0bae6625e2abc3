"""`omnistage.lax`: the primitives with strict typing (no implicit promotion).

Every function here binds a primitive from the core registry, or (composites, special) composes
them. Imports core only.
Each submodule owns one area and exports through `__all__`.
"""
from . import (
    elementwise, shapes, reductions, contractions, indexing, cumulative, sorting, linalg, convolution,
    control_flow, parallel, stop_gradient as _stop_gradient_module, windowed, transposed_convolution, fourier,
)
from . import composites  # noqa: E402 - JAX's lax ops built from the primitives above
from . import xla_indexing  # noqa: E402 - XLA's gather/scatter signatures, scatter_apply
from . import conveniences  # noqa: E402 - last: it exports every registered primitive as <name>_p
from . import special  # noqa: E402 - compositions over the modules above (and conveniences' full_like)


from .elementwise import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .contractions import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .cumulative import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .convolution import *  # noqa: F401,F403
from .control_flow import *  # noqa: F401,F403
from .stop_gradient import *  # noqa: F401,F403
from .parallel import *  # noqa: F401,F403
from .windowed import *  # noqa: F401,F403
from .transposed_convolution import *  # noqa: F401,F403
from .fourier import *  # noqa: F401,F403
from .conveniences import *  # noqa: F401,F403
from .composites import *  # noqa: F401,F403
from .xla_indexing import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403

__all__ = [
    name
    for mod in (
        elementwise, shapes, reductions, contractions, indexing, cumulative, sorting, linalg, convolution,
        control_flow, parallel, _stop_gradient_module, windowed, transposed_convolution, fourier, conveniences,
        special, composites, xla_indexing,
    )
    for name in mod.__all__
]
