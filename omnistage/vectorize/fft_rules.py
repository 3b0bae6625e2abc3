"""Batching rule of `fft`: the transform acts on trailing dimensions, so the examples' axis
only has to stand before them (moved to the front when it is among them)."""
from ..core.array import aval_of
from .rules import bind, move_axis, register


@register("fft")
def _fft(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    if d >= aval_of(x).ndim - len(fft_lengths):
        x, d = move_axis(x, d, 0), 0
    return bind("fft", x, fft_type=fft_type, fft_lengths=fft_lengths), d
