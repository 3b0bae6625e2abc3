"""`with_jvp`: a lax composition with a closed-form derivative rule (JAX's rule for the same
function), so that differentiating it gives the exact formula rather than the derivative of
an approximation (and no NaN from a branch that `select` discards).

The rule is `custom_jvp.defjvps`'s form: one partial per operand, `partial(tangent, result,
*operands)`, None where there is no derivative. `custom_jvp` belongs to autodiff, a layer
above lax, so it is built at the first call (as lax.control_flow stages its bodies through
staging, imported when called). Imports core and lax only at import time.
"""


class with_jvp:  # noqa: N801 - used like a function decorator factory
    """`value` with derivative rules `partials`; called like `value`."""

    def __init__(self, value, *partials):
        self.value, self.partials, self.built = value, partials, None
        self.__name__, self.__doc__ = value.__name__, value.__doc__

    def __call__(self, *args):
        fn = self.built
        if fn is None:
            from ..autodiff.custom import custom_jvp

            fn = custom_jvp(self.value)
            fn.defjvps(*self.partials)
            self.built = fn
        return fn(*args)


__all__ = ["with_jvp"]
