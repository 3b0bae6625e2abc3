"""lax convolution primitives (being written)."""

__all__ = []
