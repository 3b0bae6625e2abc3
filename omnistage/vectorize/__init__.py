"""Batching (`vmap`) as a pass over Programs.

`batching.batch_call` replays a per-example Program on batched values, rewriting each
statement with its rule from `rules.BATCH`; `omnistage.api_vmap` is the user API on top.
Imports staging and lax only (never autodiff or codegen).
"""
from . import all_rules  # noqa: F401 - fills the rule table
from .batching import BatchAxis, batch_call, batch_program
from .rules import BATCH

__all__ = ["BATCH", "BatchAxis", "batch_call", "batch_program"]
