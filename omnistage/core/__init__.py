"""Core types shared by every layer: config, dtypes and promotion, abstract values, the
primitive registry and `bind`, the trace stack, `Array`, pytrees and errors.

Imports numpy only; never imports the op libraries, staging, or any later layer.
"""
