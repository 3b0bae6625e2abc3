"""lax control_flow primitives (being written)."""

__all__ = []
