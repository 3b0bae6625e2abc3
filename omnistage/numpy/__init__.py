"""`omnistage.numpy` (jnp): the NumPy API with JAX's semantics, built on `omnistage.lax`.

Each submodule owns one area and exports through `__all__`; this file only gathers them.
Imports core and lax; never staging or later layers.
"""
import numpy as _np

from ..core.array import Array as ndarray
from ..core.dtypes import result_type, promote_types, issubdtype, canonicalize_dtype
from ._scalar_types import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .ufuncs import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .contractions import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from . import _methods  # noqa: F401  (installs operators on Array and tracers)
from .sorting import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from . import linalg  # noqa: F401  (jnp.linalg)
from . import fft  # noqa: F401  (jnp.fft)
from .index_tricks import *  # noqa: F401,F403
from .polynomials import *  # noqa: F401,F403
from .functional import *  # noqa: F401,F403
from .ufunc_class import *  # noqa: F401,F403
from .ufunc_instances import *  # noqa: F401,F403 - jnp.add etc. as jnp.ufunc objects, as in JAX
from .array_api import *  # noqa: F401,F403
from .array_api import __array_api_version__, __array_namespace_info__  # noqa: F401 - dunders skip *

from ._scalar_types import dtype  # noqa: E402 - np.dtype, with 'bfloat16' loading ml_dtypes
finfo = _np.finfo
iinfo = _np.iinfo
generic, number, inexact, floating, complexfloating = _np.generic, _np.number, _np.inexact, _np.floating, _np.complexfloating
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
bool = bool_  # noqa: A001 - NumPy 2 spells it both ways
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None


def __getattr__(name):  # jnp.bfloat16 imports ml_dtypes when first asked for (core.dtypes.bfloat16_type)
    if name == "bfloat16":
        from ._scalar_types import bfloat16_scalar_type

        return bfloat16_scalar_type()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
