"""omnistage: a source-to-source compiler for numerical Python with JAX's API.

`import omnistage as jax`-style code works: `omnistage.jit`, `omnistage.numpy` (jnp),
`omnistage.lax`, `omnistage.tree_util`. Importing omnistage never imports Numba; the
first compiled `jit` call does.
"""
from .core.config import config, disable_jit
from .core.array import Array
from .core.devices import (
    default_backend, device_count, devices, local_device_count, local_devices, process_count,
    process_index,
)
from . import lax, numpy, random, tree_util, errors, dtypes, debug
from .api import (
    Compiled, Lowered, ShapeDtypeStruct, block_until_ready, device_put, eval_shape, jit,
    make_jaxpr,
)
from .autodiff.custom import custom_jvp, custom_vjp
from . import nn  # noqa: E402 - uses custom_jvp
from .api_grad import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from .api_vmap import vmap
from .api_pmap import pmap
from . import distributed  # multi-process mode on MPI (imports mpi4py only when initialized)
from .codegen.cache_eviction import clear_cache  # beyond JAX: empties the on-disk compile cache

__version__ = "0.1.0"

__all__ = [
    "Array", "ShapeDtypeStruct", "block_until_ready", "config", "default_backend", "device_count",
    "device_put", "devices", "disable_jit", "errors", "eval_shape", "jit", "lax",
    "local_device_count", "local_devices", "make_jaxpr", "numpy", "process_count",
    "process_index", "random", "tree_util", "dtypes", "grad", "hessian", "jacfwd", "jacrev",
    "jvp", "linearize", "value_and_grad", "vjp", "custom_jvp", "custom_vjp", "nn", "vmap", "pmap",
    "clear_cache",
]
