"""`omnistage.dtypes`: bfloat16, canonicalize_dtype, float0, result_type (see core/dtypes.py)."""
from .core.dtypes import (  # noqa: F401
    canonicalize_dtype, float0, issubdtype, promote_types, result_type,
)


def __getattr__(name):  # bfloat16 imports ml_dtypes when first asked for (core.dtypes.bfloat16_type)
    if name == "bfloat16":
        from .core.dtypes import bfloat16_type

        return bfloat16_type()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
