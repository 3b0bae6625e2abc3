"""How contractions reach BLAS without copies (CPU code generation; imports staging only).

`fold_transposes(program)` rewrites, as XLA's algebraic simplifier does:
- `dot_general(transpose(x), y)`: the transpose is folded into the dimension numbers (the
  contraction reads `x` itself) when that keeps the result's axis order, i.e. the transpose
  does not reorder the operand's free axes among themselves. `a.T @ b`, `x @ w.T`;
- `transpose(dot_general(a, b))` that swaps the two operands' free axes (batch axes staying in
  front): `dot_general(b, a)`, when the transpose is the product's only reader. Reverse mode
  makes one of these for every weight gradient (`(g^T x)^T`).
A transpose left without readers is dropped. Without this every such transpose was a copy loop
(a 1024x1024 float32 one costs milliseconds: strided reads), and a contraction on a transposed
operand copied it again.

`matrix_layout(batch, rows, cols, ndim)` says whether an operand, seen as a stack of
(rows x cols) matrices, is a C-ordered matrix per batch element ('C': a reshape), a transposed
one ('F': a reshape then `.T`, which Numba types as an F-ordered array that its `np.dot` hands to
BLAS with a transpose flag), or neither (None: the emitter copies it).
"""
import ast

from ..staging.program import Program, copy_tree, eqn, is_eqn, make_stmt
from ..staging.ast_walk import walk


def matrix_layout(batch, rows, cols, ndim):
    """'C', 'F' or None for an operand whose axes `batch`, `rows`, `cols` (in the order the
    contraction pairs them) make a stack of (rows x cols) matrices; the batch axes must lead."""
    nb = len(batch)
    if tuple(batch) != tuple(range(nb)):
        return None
    rest = tuple(range(nb, ndim))
    if tuple(rows) + tuple(cols) == rest:
        return "C"
    if tuple(cols) + tuple(rows) == rest:
        return "F"
    return None


def fold_transposes(program):
    """`program` with the rewrites above (itself when there is nothing to fold)."""
    if not any(is_eqn(s) and s.value.func.id == "dot_general" for s in walk(program.fn)):
        return program
    fn = copy_tree(program.fn)
    # (a name is read only in the body that binds it, bodies being closure-free, so one count
    # serves every body: rewriting one leaves the others' counts as they were)
    uses = _use_counts(fn)
    changed = False
    for node in walk(fn):
        if isinstance(node, ast.FunctionDef):
            body = _fold_body(node.body, uses, program)
            if body is not None:
                node.body, changed = body, True
    return Program(fn, program.avals, program.consts, program.debug_name) if changed else program


def _fold_body(body, uses, program):
    """The new statement list of one body, or None when nothing folds."""
    eqns = [eqn(s) if is_eqn(s) else None for s in body]
    if not any(e is not None and e.prim in ("dot_general", "transpose") for e in eqns):
        return None
    producer = {e.outs[0]: e for e in eqns if e is not None and len(e.outs) == 1}
    new, changed = [], False
    for stmt, e in zip(body, eqns):
        rewritten = None
        if e is not None and e.prim == "dot_general":
            rewritten = _fold_operands(e, producer)
        elif e is not None and e.prim == "transpose":
            rewritten = _swap_operands(e, producer, uses, program)
        if rewritten is None:
            new.append(stmt)
            continue
        changed = True
        new.append(rewritten)
        producer[eqn(rewritten).outs[0]] = eqn(rewritten)
    if not changed:
        return None
    return _drop_unread(new)


def _use_counts(fn):
    counts = {}
    for node in walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _fold_operands(e, producer):
    """`e` (a dot_general) reading the inputs of its operands' transposes, or None."""
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    ins = list(e.ins)
    dims = [[list(lc), list(lb)], [list(rc), list(rb)]]
    folded = False
    for side in (0, 1):
        t = _transpose_of(ins[side], producer)
        if t is None:
            continue
        perm = t.params["permutation"]
        contract, batch = dims[side]
        free = [d for d in range(len(perm)) if d not in contract and d not in batch]
        mapped = [perm[d] for d in free]
        if mapped != sorted(mapped):
            continue  # the result's axes would come out in another order
        ins[side] = t.ins[0]
        dims[side] = [[perm[d] for d in contract], [perm[d] for d in batch]]
        folded = True
    if not folded:
        return None
    (lc, lb), (rc, rb) = dims
    params = dict(e.params, dimension_numbers=((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))
    return make_stmt(e.outs, "dot_general", ins, params, getattr(e.stmt, "loc", None))


def _swap_operands(e, producer, uses, program):
    """`transpose(dot_general(a, b))` as `dot_general(b, a)` when the transpose swaps the free
    axes and is the product's only reader, else None."""
    src = e.ins[0]
    if not isinstance(src, ast.Name) or uses.get(src.id, 0) != 1:
        return None
    d = producer.get(src.id)
    if d is None or d.prim != "dot_general":
        return None
    (lc, rc), (lb, rb) = d.params["dimension_numbers"]
    lhs_rank, rhs_rank = (program.atom_aval(a).ndim for a in d.ins)
    nb, nl, nr = len(lb), lhs_rank - len(lc) - len(lb), rhs_rank - len(rc) - len(rb)
    swapped = tuple(range(nb)) + tuple(range(nb + nl, nb + nl + nr)) + tuple(range(nb, nb + nl))
    if tuple(e.params["permutation"]) != swapped:
        return None
    params = dict(d.params, dimension_numbers=((tuple(rc), tuple(lc)), (tuple(rb), tuple(lb))))
    return make_stmt(e.outs, "dot_general", [d.ins[1], d.ins[0]], params, getattr(e.stmt, "loc", None))


def _transpose_of(atom, producer):
    if not isinstance(atom, ast.Name):
        return None
    t = producer.get(atom.id)
    return t if t is not None and t.prim == "transpose" else None


def _drop_unread(body):
    """`body` without the transposes and dot_generals nothing reads any more (the ones the
    rewrites replaced); other statements are left to the clean-up passes."""
    while True:
        uses = _use_counts(ast.Module([*body], []))
        keep = [s for s in body if not (is_eqn(s) and eqn(s).prim in ("transpose", "dot_general")
                                         and all(uses.get(o, 0) == 0 for o in eqn(s).outs))]
        if len(keep) == len(body):
            return keep
        body = keep
