"""Programs for the CUDA sort kernels and the width-changing bitcasts, merged into
`programs.PROGRAMS` (simulator tests against the CPU backend, and the PTX check): (name,
function, argument factory) entries, small shapes. Lengths are not powers of two (a last run
without a sibling), include 1 (no merge pass), and the keys hold NaNs, -0.0 next to 0.0 and
ties, where stability shows."""
import numpy as np

import omnistage.lax as lax
import omnistage.numpy as jnp


def _floats_with_specials():
    x = np.random.default_rng(5).integers(-3, 4, (4, 7)).astype(np.float32)  # many ties
    x[0, [1, 4]] = np.nan
    x[1, 2], x[1, 5] = -0.0, 0.0
    x[2, :] = [0.0, -0.0, 0.0, np.nan, -np.nan, -np.inf, np.inf]
    x[3, 0] = -np.nan
    return x


def float_sorts(x):
    # the -0.0/0.0 order only shows through an argsort or a payload (they compare equal)
    return jnp.sort(x, axis=1), jnp.sort(x * 2.0, axis=0), jnp.argsort(x, axis=1), jnp.argsort(x, axis=0)


def sort_with_payload(k, v):
    return lax.sort((k, v), dimension=1, num_keys=1)


def sort_two_keys(a, b, v):
    return lax.sort((a, b, v), dimension=0, num_keys=2)


def int_and_bool_keys(n, x):
    b = n > 0
    return (jnp.sort(n, axis=2), jnp.argsort(n, axis=0), lax.sort((b, x), dimension=1, num_keys=1),
            jnp.argsort(b.astype(jnp.int8), axis=1))


def short_lines(x, y):
    # length 1: no merge pass; length 2 and 3: one and two passes
    return jnp.sort(x, axis=0), jnp.argsort(x, axis=1), lax.sort((y, y * 2.0), dimension=0, num_keys=1)


def complex_key(re, im, v):
    z = lax.complex(re, im)
    return lax.sort((z, v), dimension=0, num_keys=1), jnp.sort(z)


def width_changing_bitcasts(x, b):
    as_bytes = lax.bitcast_convert_type(x, jnp.uint8)
    halves = lax.bitcast_convert_type(x, jnp.int16)
    return (as_bytes, lax.bitcast_convert_type(b, jnp.float32), lax.bitcast_convert_type(halves, jnp.float32),
            lax.bitcast_convert_type(as_bytes, jnp.float32) + 1.0, lax.bitcast_convert_type(x[0, 0], jnp.uint8))


def _re_im():
    re = np.array([1.0, np.nan, 1.0, -0.0, 0.0, 1.0], np.float32)
    im = np.array([2.0, 0.0, -1.0, 3.0, np.nan, 2.0], np.float32)
    return re, im, np.arange(6, dtype=np.int32)


PROGRAMS = [
    ("sort_floats", float_sorts, lambda: (_floats_with_specials(),)),
    ("sort_payload", sort_with_payload,
     lambda: (_floats_with_specials(), np.arange(28, dtype=np.int32).reshape(4, 7))),
    ("sort_two_keys", sort_two_keys,
     lambda: (np.array([2, 1, 2, 1, 2, 0], np.int32), np.array([0.5, np.nan, -1, 0.5, -1, 3], np.float32),
              np.arange(6, dtype=np.float32))),
    ("sort_int_bool_keys", int_and_bool_keys,
     lambda: (np.random.default_rng(2).integers(-2, 3, (3, 2, 5)).astype(np.int32),
              np.arange(30, dtype=np.float32).reshape(3, 2, 5))),
    ("sort_short_lines", short_lines,
     lambda: (np.array([[3.0, -1.0, 2.0]], np.float32), np.array([[1.0], [np.nan]], np.float32))),
    ("sort_complex_key", complex_key, _re_im),
    ("bitcast_widths", width_changing_bitcasts,
     lambda: (np.array([[1.5, -0.0, np.nan], [3e-39, -2.0, 1e30]], np.float32),
              np.arange(24, dtype=np.uint8).reshape(2, 3, 4))),
]
