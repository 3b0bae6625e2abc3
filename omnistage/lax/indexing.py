"""lax indexing primitives (being written)."""

__all__ = []
