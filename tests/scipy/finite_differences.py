"""Central finite differences of NumPy/SciPy reference functions, the oracle for derivatives in
the special-function tests (tests/lax/test_special.py, tests/scipy/test_special_more.py)."""
import numpy as np


def central_difference(f, args, i, h=1e-6):
    """d f(*args) / d args[i], elementwise, by (f(x + h) - f(x - h)) / 2h."""
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h, args[i] - h
    return (np.asarray(f(*up)) - np.asarray(f(*down))) / (2 * h)
