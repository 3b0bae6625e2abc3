"""The exceptions users see (`omnistage.errors`), with JAX's names and base classes,
plus the helper that stamps the user's file and line onto an exception."""


class OmnistageTypeError(TypeError):
    """Base of the TypeErrors omnistage raises about traced values."""


class ConcretizationTypeError(OmnistageTypeError):
    """A traced (abstract) value was used where a concrete Python value is needed."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a traced value (an `if`, `while`, `and`, `or` on it)."""


class TracerIntegerConversionError(OmnistageTypeError):
    """`int()` / `__index__` of a traced value."""


class TracerArrayConversionError(OmnistageTypeError):
    """`np.asarray(tracer)`: a traced value cannot become a NumPy array."""


class NonConcreteBooleanIndexError(IndexError):
    """Boolean-mask indexing with a traced mask: the result's shape would depend on values."""


class UnexpectedTracerError(OmnistageTypeError):
    """A tracer escaped the trace that made it and was used after that trace ended."""


def add_location(exc, where):
    """Append `where` (a description of the user's statement) to `exc`'s message, once."""
    if where is None or getattr(exc, "_omnistage_located", False):
        return exc
    try:
        first = str(exc.args[0]) if exc.args else ""
        exc.args = (f"{first}\n{where}",) + tuple(exc.args[1:])
        exc._omnistage_located = True
    except (AttributeError, TypeError):  # pragma: no cover - exotic exception types
        pass
    return exc
