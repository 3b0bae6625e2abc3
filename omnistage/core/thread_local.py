"""Per-thread state for tracing: every stack a trace pushes while it runs lives here.

A trace belongs to the thread that runs it. Tracing state kept in a plain module-level list
is seen by every thread: an eager `jnp` call in one thread would be staged into another
thread's trace and get a tracer back. `ThreadLocalStack` is a list each thread sees its own
copy of (as JAX keeps its trace state thread-local), so a module swaps `_stack = []` for
`_stack = ThreadLocalStack()` and keeps using append/pop/[-1]/truth/iteration.

Imports nothing from omnistage.
"""
import threading


class ThreadLocalStack(threading.local):
    """A stack each thread sees its own, initially empty, copy of. `items` is the calling
    thread's list (hot paths read it once and index it directly)."""

    def __init__(self):
        self.items = []

    def append(self, value):
        self.items.append(value)

    def pop(self):
        return self.items.pop()

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self):
        return len(self.items)

    def __bool__(self):
        return bool(self.items)

    def __iter__(self):
        return iter(self.items)

    def __reversed__(self):
        return reversed(self.items)

    def __contains__(self, value):
        return any(v is value for v in self.items)

    def __repr__(self):
        return f"ThreadLocalStack({self.items!r})"


__all__ = ["ThreadLocalStack"]
