"""`promote_args_inexact` for the scipy modules: arguments as arrays of one inexact dtype, as
JAX's helper of that name (integers and bools become the default float); `promote_args_real`
also rejects complex values and broadcasts the arguments to one shape."""
import numpy as np

from .. import numpy as jnp
from ..core import dtypes


def promote_args_inexact(*args):
    arrays = [jnp.asarray(a) for a in args]
    dt = dtypes.to_inexact(jnp.result_type(*args))
    return [a if a.dtype == dt else a.astype(dt) for a in arrays]


def promote_args_real(name, *args):
    """As promote_args_inexact, then broadcast to one shape; complex raises ValueError (as JAX)."""
    arrays = promote_args_inexact(*args)
    if np.dtype(arrays[0].dtype).kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return jnp.broadcast_arrays(*arrays) if len(arrays) > 1 else arrays
