"""Derivative rules of the collectives (`omnistage.lax.parallel`), as JAX defines them:
`psum` is linear and its own transpose (each participant's cotangent is the sum of all of
theirs); `pmax`/`pmin` split the derivative evenly among the participants that attain the
extreme; `all_gather` is linear, its transpose sums the gathered cotangents over the axis
and keeps this participant's slice. The cross-process steps of a multi-process pmap follow
the same rules: `process_allreduce` (a sum; its max/min/or/and forms only see integers and
booleans, which have no derivative) is its own transpose, and `process_allgather`'s transpose
keeps this process's rows of the cotangents summed over every process. `ppermute` (and the
cross-process `process_ppermute`) is linear; its transpose sends the cotangents back: the same
permutation with each pair reversed."""
from ..core.array import aval_of
from ..lax import elementwise as E
from ..lax import indexing as I
from ..lax import shapes as S
from ..lax.parallel import axis_index_p, ppermute_p, process_allreduce_p, process_index_p, process_ppermute_p, psum_p
from .rules import JVP, VJP, def_linear


def _psum(x, axis_name):
    return psum_p.bind(x, axis_name=axis_name)


def_linear("psum", lambda ct, x, *, axis_name: _psum(ct, axis_name))


def _def_extreme(name):
    def share(x, out, axis_name):
        hit = E.convert_element_type(E.eq(x, out), aval_of(x).dtype)
        return E.div(hit, _psum(hit, axis_name))

    def jvp(primals, tangents, out, *, axis_name):
        return _psum(E.mul(tangents[0], share(primals[0], out, axis_name)), axis_name)

    def vjp(ct, ins, out, *, axis_name):
        return [lambda: E.mul(_psum(ct, axis_name), share(ins[0], out, axis_name))]

    JVP[name], VJP[name] = jvp, vjp


_def_extreme("pmax")
_def_extreme("pmin")


def _all_gather_transpose(ct, x, *, axis_name, axis, tiled):
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if len(names) != 1:
        raise NotImplementedError("differentiating all_gather over several axis names at once")
    total = _psum(ct, axis_name)
    index = axis_index_p.bind(axis_name=names[0])
    x_shape = aval_of(x).shape
    size = x_shape[axis] if tiled else 1
    start = E.mul(index, E.convert_element_type(size, aval_of(index).dtype))
    piece = I.dynamic_slice_in_dim(total, start, size, axis)
    return S.reshape(piece, x_shape)


def_linear("all_gather", _all_gather_transpose)


def _process_allreduce_transpose(ct, x, *, op):
    if op != "sum":
        raise NotImplementedError(f"differentiating a cross-process {op!r} reduction (of integers or booleans)")
    return process_allreduce_p.bind(ct, op="sum")


def_linear("process_allreduce", _process_allreduce_transpose)


def _process_allgather_transpose(ct, x, *, processes):
    total = process_allreduce_p.bind(ct, op="sum")
    rows = aval_of(x).shape[0]
    index = process_index_p.bind()
    start = E.mul(index, E.convert_element_type(rows, aval_of(index).dtype))
    return I.dynamic_slice_in_dim(total, start, rows, 0)


def_linear("process_allgather", _process_allgather_transpose)


def _inverse(perm):
    return tuple((d, s) for s, d in perm)


def_linear("ppermute", lambda ct, x, *, axis_name, perm: ppermute_p.bind(ct, axis_name=axis_name, perm=_inverse(perm)))
def_linear("process_ppermute", lambda ct, x, *, perm: process_ppermute_p.bind(ct, perm=_inverse(perm)))
