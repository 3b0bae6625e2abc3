"""The base class of traced values. Staging (`omnistage.staging`) subclasses it; operators
and array methods are installed on it by the op library, the same ones `Array` gets.

Every conversion to a concrete Python or NumPy value raises JAX's error, with a message
that says which line asked for the value and where the value became traced.
"""
from . import errors
from .sequence_protocol import LeadingAxisSequence


class Tracer(LeadingAxisSequence):
    """A stand-in for an array during a trace: knows its aval, not its value."""

    __slots__ = ("_trace", "aval", "_loc", "_deps")
    __array_priority__ = 1000
    __hash__ = None  # unhashable, as in JAX

    def __init__(self, trace, aval, loc=None, deps=frozenset()):
        self._trace = trace
        self.aval = aval
        self._loc = loc
        self._deps = deps

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __repr__(self):
        return f"Traced<{self.aval}>with<{type(self._trace).__name__}>"

    # --- conversions to concrete values: JAX's errors -----------------------------------

    def _provenance(self):
        return self._trace.provenance(self) if self._trace is not None else ""

    def _concretization(self, cls, summary):
        from .source_info import describe_here

        here = describe_here("The problem arose at this line of your code:")
        parts = [summary, self._provenance(), here or ""]
        exc = cls("\n".join(p for p in parts if p))
        exc._omnistage_located = True  # already names the user's line
        return exc

    def __bool__(self):
        self._check_live()
        raise self._concretization(
            errors.TracerBoolConversionError,
            f"Attempted boolean conversion of traced array with shape {self.aval.str_short()}.",
        )

    def __index__(self):
        self._check_live()
        raise self._concretization(
            errors.TracerIntegerConversionError,
            f"The __index__() method was called on traced array with shape {self.aval.str_short()}.",
        )

    def __int__(self):
        self._check_live()
        raise self._concretization(
            errors.TracerIntegerConversionError,
            f"The __int__() method was called on traced array with shape {self.aval.str_short()}.",
        )

    def __float__(self):
        self._check_live()
        raise self._concretization(
            errors.ConcretizationTypeError,
            f"Abstract tracer value encountered where concrete value is expected: "
            f"float() was called on traced array with shape {self.aval.str_short()}.",
        )

    def __complex__(self):
        self._check_live()
        raise self._concretization(
            errors.ConcretizationTypeError,
            f"Abstract tracer value encountered where concrete value is expected: "
            f"complex() was called on traced array with shape {self.aval.str_short()}.",
        )

    def __array__(self, dtype=None, copy=None):
        self._check_live()
        raise self._concretization(
            errors.TracerArrayConversionError,
            f"The numpy.ndarray conversion method __array__() was called on traced array with "
            f"shape {self.aval.str_short()}. A traced value cannot become a NumPy array; use "
            f"omnistage.numpy instead of numpy on traced values.",
        )

    def item(self, *args):
        self._check_live()
        raise self._concretization(
            errors.ConcretizationTypeError,
            f"Abstract tracer value encountered where concrete value is expected: .item() was "
            f"called on traced array with shape {self.aval.str_short()}.",
        )

    def tolist(self):
        self._check_live()
        raise self._concretization(
            errors.ConcretizationTypeError,
            f"Abstract tracer value encountered where concrete value is expected: .tolist() was "
            f"called on traced array with shape {self.aval.str_short()}.",
        )

    def concretization_error(self, what):
        """A ConcretizationTypeError for an operation (`what`) that needs this value."""
        self._check_live()
        return self._concretization(
            errors.ConcretizationTypeError,
            f"Abstract tracer value encountered where concrete value is expected: {what} "
            f"(traced array with shape {self.aval.str_short()}).",
        )

    # --- escaped tracers ---------------------------------------------------------------

    def _check_live(self):
        if self._trace is not None and getattr(self._trace, "finished", False):
            raise self._escaped_error()

    def _escaped_error(self):
        from .source_info import describe_here

        if self._loc is not None:
            made = f" It was created at:\n{self._loc.describe()}"
        elif self._deps:
            made = f" It was the traced argument {', '.join(sorted(self._deps))} of that function."
        else:
            made = ""
        fn = getattr(self._trace, "describe_function", lambda: "a function")()
        here = describe_here("It was used here:")
        if getattr(self._trace, "finished", True):
            when = "after the trace ended"
        else:  # a trace is its thread's own: other threads compute eagerly or trace for themselves
            when = "by another thread while that trace was running (each thread traces for itself)"
        msg = (
            f"Encountered an unexpected tracer: {self!r}. A value traced while staging {fn} "
            f"escaped that trace (stored in a global, a container or a closure) and was used "
            f"{when}.{made}"
        )
        return errors.UnexpectedTracerError(msg + ("\n" + here if here else ""))
