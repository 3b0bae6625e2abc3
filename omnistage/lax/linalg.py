"""lax linalg primitives (being written)."""

__all__ = []
