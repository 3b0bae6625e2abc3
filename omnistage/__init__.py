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
# JAX's remaining top-level names (issue 21)
from . import flatten_util, tree, version  # noqa: E402
from .api import clear_caches  # noqa: E402
from .api_transpose import linear_transpose  # noqa: E402
from .api_runtime import device_get, ensure_compile_time_eval, named_call, named_scope, typeof  # noqa: E402
from .checkpoint import checkpoint, checkpoint_policies, remat  # noqa: E402
from .callbacks import pure_callback  # noqa: E402
from .closures import closure_convert, custom_gradient  # noqa: E402
from .config_flags import (  # noqa: E402
    check_tracer_leaks, checking_leaks, debug_infs, debug_key_reuse, debug_nans, default_device,
    default_matmul_precision, enable_checks, enable_x64, explain_cache_misses, log_compiles, no_execution,
    no_tracing, numpy_dtype_promotion, numpy_rank_promotion,
)
from .core.devices import Device  # noqa: E402
from .core.dtypes import float0  # noqa: E402

jacobian = jacrev  # JAX's alias

# lax.custom_root / custom_linear_solve are built on the autodiff layer, which lax may not import
from .custom_solvers import custom_linear_solve as _custom_linear_solve, custom_root as _custom_root  # noqa: E402

lax.custom_root, lax.custom_linear_solve = _custom_root, _custom_linear_solve

from .version import __version__  # noqa: E402

__all__ = [
    "Array", "ShapeDtypeStruct", "block_until_ready", "config", "default_backend", "device_count",
    "device_put", "devices", "disable_jit", "errors", "eval_shape", "jit", "lax",
    "local_device_count", "local_devices", "make_jaxpr", "numpy", "process_count",
    "process_index", "random", "tree_util", "dtypes", "grad", "hessian", "jacfwd", "jacrev",
    "jvp", "linearize", "value_and_grad", "vjp", "custom_jvp", "custom_vjp", "nn", "vmap", "pmap",
    "clear_cache", "flatten_util", "tree", "version", "clear_caches", "device_get", "ensure_compile_time_eval",
    "named_call", "named_scope", "typeof", "checkpoint", "checkpoint_policies", "remat", "closure_convert",
    "custom_gradient", "pure_callback",
    "linear_transpose",
    "check_tracer_leaks", "checking_leaks", "debug_infs", "debug_key_reuse", "debug_nans", "default_device",
    "default_matmul_precision", "enable_checks", "enable_x64", "explain_cache_misses", "log_compiles",
    "no_execution", "no_tracing", "numpy_dtype_promotion", "numpy_rank_promotion", "Device", "float0", "jacobian",
]
