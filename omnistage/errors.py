"""`omnistage.errors`: the exceptions raised about traced values (see core/errors.py)."""
from .core.errors import (  # noqa: F401
    ConcretizationTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
