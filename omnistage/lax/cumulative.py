"""lax cumulative primitives (being written)."""

__all__ = []
