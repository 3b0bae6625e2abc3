"""`omnistage.dtypes`: bfloat16, canonicalize_dtype, float0, result_type (see core/dtypes.py)."""
from .core.dtypes import (  # noqa: F401
    bfloat16, canonicalize_dtype, float0, issubdtype, promote_types, result_type,
)
