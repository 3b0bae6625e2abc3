"""lax sorting primitives (being written)."""

__all__ = []
