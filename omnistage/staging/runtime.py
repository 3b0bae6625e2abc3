"""The namespace printed programs import: `from omnistage.staging.runtime import *`.

It provides `np` and every registered primitive by name (as a `Primitive`, so running a
printed program eagerly gives Arrays, and running it under a trace stages it again).
"""
import numpy as np

from ..core import primitive as _primitive


def __getattr__(name):
    if name == "__all__":
        return ["np", *sorted(_primitive.registry)]
    try:
        return _primitive.registry[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
