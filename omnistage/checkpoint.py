"""`checkpoint` / `remat` and `checkpoint_policies`, with JAX's API.

What it does here: JAX's `checkpoint` tells reverse mode to recompute the function's
intermediates in the backward pass instead of storing them, to save memory on accelerators.
omnistage differentiates the whole program as source and compiles forward and backward passes
into one function, where the code generator already decides what to keep (fusion recomputes
cheap elementwise values, and loops keep what their adjoints read); so `checkpoint(f)`
computes and differentiates exactly as `f` does. Its arguments are checked as JAX checks
them: `static_argnums` positions must be given and must not be traced values, `policy` must
be None or a policy (any callable, e.g. from `checkpoint_policies`); `prevent_cse` is accepted.
`grad`, `jvp`, `vmap` and `jit` of a checkpointed function all work.
"""
import functools
import types

from .core.errors import add_location
from .core.source_info import describe_here
from .core.tracer import Tracer
from .staging.convert import convert


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """`fun`, marked for rematerialization (computed as `fun` here: see the module docstring)."""
    if not callable(fun):
        raise TypeError(f"checkpoint: the function to checkpoint must be callable, got {type(fun).__name__}")
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be None or a function from jax.checkpoint_policies, got {policy!r}")
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if not all(isinstance(i, int) for i in nums):
        raise TypeError(f"checkpoint: static_argnums must be an int or a tuple of ints, got {static_argnums!r}")

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        for i in nums:
            j = i % len(args) if -len(args) <= i < len(args) else None
            if j is None:
                raise add_location(ValueError(
                    f"checkpoint of {getattr(fun, '__name__', fun)} has static_argnums={nums}, but was called "
                    f"with only {len(args)} positional arguments"), describe_here())
            if isinstance(args[j], Tracer):
                raise add_location(TypeError(
                    f"checkpoint of {getattr(fun, '__name__', fun)}: argument {j} is in static_argnums but "
                    f"got a traced value (of shape {args[j].shape}); static arguments must be Python values"),
                    describe_here())
        return convert(fun)(*args, **kwargs)

    remat_fun.policy, remat_fun.prevent_cse, remat_fun.static_argnums = policy, bool(prevent_cse), nums
    return remat_fun


remat = checkpoint


def checkpoint_name(x, name):
    """`x`, named for the name-based policies (`save_only_these_names`, ...); the identity here."""
    return x


# --- policies: (primitive, *avals, **params) -> whether its output may be saved -------------


def _prim_name(prim):
    return getattr(prim, "name", prim)


def everything_saveable(*_, **__):
    return True


def nothing_saveable(*_, **__):
    return False


def dots_saveable(prim, *_, **__):
    return _prim_name(prim) == "dot_general"


def dots_with_no_batch_dims_saveable(prim, *_, **params):
    if _prim_name(prim) != "dot_general":
        return False
    (_, (lhs_batch, rhs_batch)) = params.get("dimension_numbers", ((), ((), ())))
    return not lhs_batch and not rhs_batch


def _names_policy(keep):
    def policy(prim, *_, **params):
        return _prim_name(prim) == "name" and keep(params.get("name"))

    return policy


def save_only_these_names(*names):
    return _names_policy(lambda n: n in names)


def save_any_names_but_these(*names):
    return _names_policy(lambda n: n not in names)


def save_anything_except_these_names(*names):
    def policy(prim, *avals, **params):
        return not (_prim_name(prim) == "name" and params.get("name") in names)

    return policy


def save_from_both_policies(policy_1, policy_2):
    def policy(prim, *avals, **params):
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)

    return policy


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Host offloading is a device-memory feature; here: save the dots without batch dimensions."""
    return dots_with_no_batch_dims_saveable


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src, offload_dst):
    return save_only_these_names(*names_which_can_be_saved, *names_which_can_be_offloaded)


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies"]
