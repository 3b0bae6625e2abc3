"""Gathers the op-library modules added beside the foundation (one `from X import *`
line per module, so each module owns its own names)."""

__all__ = []
