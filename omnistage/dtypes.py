"""`omnistage.dtypes`: bfloat16, canonicalize_dtype, result_type (see core/dtypes.py)."""
from .core.dtypes import (  # noqa: F401
    bfloat16, canonicalize_dtype, issubdtype, promote_types, result_type,
)
