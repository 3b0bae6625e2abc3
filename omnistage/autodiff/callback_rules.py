"""Derivative rules of `pure_callback` (omnistage.pure_callback): none, as in JAX: the host
function is opaque. Differentiating through one raises, pointing at `custom_jvp`/`custom_vjp`."""
from ..core.errors import add_location
from ..core.source_info import describe_here
from .rules import JVP_JOINT, VJP


def _no_derivative(*_, callback, **__):
    raise add_location(ValueError(
        f"Pure callbacks do not support JVP: pure_callback({callback.split('|')[0]}) cannot be differentiated. "
        f"Please use `omnistage.custom_jvp` or `custom_vjp` around the callback to give it a derivative."),
        describe_here())


JVP_JOINT["pure_callback"] = _no_derivative
VJP["pure_callback"] = _no_derivative
