"""`check_vmap`: vmap(f) against a Python loop over the examples, eagerly, under jit and in
the printed batched program (which must also pass `Program.check`)."""
import numpy as np

import omnistage
from omnistage.core import tree_util
from tests.helpers import TEST_BACKEND, assert_same, run_printed_program


def _take(x, axis, i):
    v = np.asarray(x) if axis is None else np.take(np.asarray(x), i, axis=axis)
    return omnistage.numpy.asarray(v)


def loop_reference(f, args, in_axes, out_axes=0):
    """stack([f(example i) for i]) with JAX's in_axes/out_axes meaning (flat leaves only
    for in_axes given per positional argument)."""
    axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    sizes = {np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None}
    (n,) = sizes
    outs = [f(*[_take(a, ax, i) for a, ax in zip(args, axes)]) for i in range(n)]
    leaves = [tree_util.tree_leaves(o) for o in outs]
    tree = tree_util.tree_structure(outs[0])
    axes = _out_axis_per_leaf(outs[0], out_axes)
    stacked = [np.stack([np.asarray(l[j]) for l in leaves], axis=axes[j]) for j in range(len(leaves[0]))]
    return tree_util.tree_unflatten(tree, stacked)


def _out_axis_per_leaf(out, out_axes):
    """out_axes (an int, or a tuple over a tuple output) repeated for each output leaf."""
    if isinstance(out_axes, tuple):
        return [a for o, a in zip(out, out_axes) for _ in tree_util.tree_leaves(o)]
    return [out_axes] * len(tree_util.tree_leaves(out))


def check_vmap(f, *args, in_axes=0, out_axes=0, rtol=1e-5, atol=1e-6, jit=True, printed=True):
    """vmap(f)(*args) equals the loop, eagerly and jitted; returns the eager result."""
    expected = loop_reference(f, args, in_axes, out_axes)
    # as arrays (vmap hands unmapped NumPy arguments to f untouched, as JAX does)
    args = [omnistage.numpy.asarray(a) for a in args]
    vf = omnistage.vmap(f, in_axes=in_axes, out_axes=out_axes)
    eager = vf(*args)
    assert_same(eager, expected, rtol, atol)
    if jit:
        jitted = omnistage.jit(vf, backend=TEST_BACKEND)(*args)
        assert_same(jitted, expected, rtol, atol)
    if printed:
        program = omnistage.make_jaxpr(vf)(*args)
        program.check()
        got = run_printed_program(program, *[omnistage.numpy.asarray(a) for a in tree_util.tree_leaves(args)])
        assert_same(list(got), tree_util.tree_leaves(expected), rtol, atol)
    return eager
