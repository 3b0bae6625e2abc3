"""`len()` and iteration over the leading axis, shared by `Array` and tracers."""


class LeadingAxisSequence:
    """Mixin: an array is a sequence of its slices along axis 0 (0-d arrays are not)."""

    __slots__ = ()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))
