"""Products in `omnistage.numpy`: dot, matmul, vdot, inner, outer, ... all lowered to
`dot_general` (plus transposes/reshapes as static index arithmetic)."""
from .. import lax
from ._promote import check_arraylike, promote_dtypes


def matmul(a, b, /, *, precision=None, preferred_element_type=None):
    """`a @ b` with NumPy's rules: 1-D operands promoted, leading dims broadcast as batch."""
    check_arraylike("matmul", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: inputs must be at least 1-D, got shapes {a.shape} and {b.shape}")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = lax.reshape(a, (1,) + a.shape)
    if b_vec:
        b = lax.reshape(b, b.shape + (1,))
    if a.shape[-1] != b.shape[-2]:
        raise TypeError(
            f"matmul: contracting dimensions differ: {a.shape[-1]} != {b.shape[-2]} "
            f"(shapes {a.shape} and {b.shape})"
        )
    batch = lax.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    from ._promote import broadcast_to_shape

    if a.ndim > 2 or b.ndim > 2:
        a = broadcast_to_shape(a, batch + a.shape[-2:]) if a.shape[:-2] != batch else a
        b = broadcast_to_shape(b, batch + b.shape[-2:]) if b.shape[:-2] != batch else b
    nb = len(batch)
    bd = tuple(range(nb))
    out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (bd, bd)), preferred_element_type=preferred_element_type)
    if a_vec:
        out = lax.squeeze(out, (out.ndim - 2,))
    if b_vec:
        out = lax.squeeze(out, (out.ndim - 1,))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's dot: scalar product for 0-d, else contract a's last with b's second-to-last."""
    check_arraylike("dot", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        from .ufuncs import multiply

        return multiply(a, b)
    if b.ndim == 1:
        return lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())), preferred_element_type=preferred_element_type)
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())), preferred_element_type=preferred_element_type)


__all__ = ["matmul", "dot"]
