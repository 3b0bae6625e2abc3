"""`promote_args_inexact` for the scipy modules: arguments as arrays of one inexact dtype, as
JAX's helper of that name (integers and bools become the default float)."""
from .. import numpy as jnp
from ..core import dtypes


def promote_args_inexact(*args):
    arrays = [jnp.asarray(a) for a in args]
    dt = dtypes.to_inexact(jnp.result_type(*args))
    return [a if a.dtype == dt else a.astype(dt) for a in arrays]
