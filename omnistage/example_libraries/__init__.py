"""JAX's example libraries, for omnistage: `stax` (neural-network layers as (init, apply)
pairs) and `optimizers` (gradient-descent optimizers as (init, update, get_params))."""
