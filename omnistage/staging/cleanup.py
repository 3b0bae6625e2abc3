"""Clean-up passes over Programs (Program -> Program), run before code generation.

Owns common-subexpression elimination and dead-code elimination (`cleanup` runs both);
algebraic simplification of what later passes introduce comes next to them. `make_jaxpr`
shows the staged program as traced (omnistaging: nothing dropped); `jit` runs these passes
before compiling.
"""
import ast
import copy

import numpy as np

from ..core import primitive as core_primitive
from . import literals
from .convert import all_names
from .naming import Namer
from .program import Program, body_refs, copy_tree, eqn, is_eqn, make_stmt, name_atom, statements
from .ast_walk import walk

EFFECTFUL = core_primitive.EFFECTFUL  # kept although their results are unused (debug printing)


def cleanup(program, exact=False):
    """The passes `jit` runs before code generation. `exact`: only rewrites that keep every
    value of the op-by-op path (eager programs, numpy/eager_programs.py): no
    `reciprocal_divisors`, no `pow` strength reduction."""
    # one copy of the tree, edited by every pass in turn (each copied it: 5 copies of a big
    # program, a sixth of its clean-up)
    program = Program(copy_tree(program.fn), program.avals, program.consts, program.debug_name)
    program = fold_constants(inline_transformation_ops(program, in_place=True), exact, in_place=True)
    program = simplify(uncontracted_products(program, in_place=True), in_place=True)
    if not exact:
        program = reciprocal_divisors(program, in_place=True)
    return dce(cse(program, in_place=True), in_place=True)


def _tree(program, in_place):
    """The tree a pass edits: a copy of `program`'s, or (`in_place`: cleanup's passes, on the
    one copy it made) `program`'s own."""
    return program.fn if in_place else copy_tree(program.fn)


# Primitives folded when every operand is a literal: IEEE-exact operations only, so a folded
# value is the one the compiled code would compute (exp of a literal is left to the kernel's
# own exp). Evaluated with the primitive's NumPy implementation, the eager path's.
_FOLDABLE = frozenset({
    "add", "sub", "mul", "div", "neg", "max", "min", "abs", "sqrt", "sign", "floor", "ceil", "round",
    "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "xor", "rem", "convert_element_type",
    "select_n", "integer_pow",
})


def fold_constants(program, exact=False, in_place=False):
    """Fold scalar statements of literals (`sub(2.0, 1.0)`, `eq(2.0, 0.0)`: what a gradient
    of `x ** 2.0` stages) into literals, pick the case of a `select_n` whose predicate is
    literal, and, unless `exact`, reduce `pow(x, 0.0)` to ones, `pow(x, 1.0)` to `x` and
    `pow(x, 2.0)` to `mul(x, x)` (real floats), as XLA's algebraic simplifier does (x * x is
    the correctly rounded square; NumPy's `power(x, 2.0)` computes it too). A gradient of
    `sum(v ** 2.0)` was two transcendental `pow` kernels per element (kernel_lsq's step)."""
    if not any(is_eqn(n) and n.value.func.id in _FOLD_TRIGGERS for n in walk(program.fn)):
        return program
    fn = _tree(program, in_place)
    fn.body = _rewrite_body(fn.body, _Folder(program.avals, exact))
    return Program(fn, program.avals, program.consts, program.debug_name)


_FOLD_TRIGGERS = _FOLDABLE | {"pow"}


class _Folder:
    """The `_rewrite_body` rule of fold_constants. Folded variables stay defined (a literal
    result is materialized) and later statements' operands read the literal itself."""

    def __init__(self, avals, exact):
        self.avals, self.exact, self.known = avals, exact, {}

    def __call__(self, stmt, defs):
        args = stmt.value.args
        if self.known:
            args[:] = [self.known.get(a.id, a) if isinstance(a, ast.Name) else a for a in args]
        e = eqn(stmt)
        aval = self.avals.get(e.outs[0]) if len(e.outs) == 1 else None
        if aval is None or e.prim not in _FOLD_TRIGGERS:
            return None
        if aval.ndim == 0 and e.prim in _FOLDABLE:
            folded = _fold(e, aval)
            if folded is not None:
                self.known[e.outs[0]] = folded
                return [], {e.outs[0]: folded}
        if e.prim == "select_n" and literals.is_literal(e.ins[0]):
            case = e.ins[1 + int(literals.literal_value(e.ins[0]))]
            if isinstance(case, ast.Name) and _same_aval(self.avals.get(case.id), aval):
                return [], {e.outs[0]: case}
        if e.prim == "pow" and not self.exact:
            return _reduced_pow(e, aval, self.avals, getattr(stmt, "loc", None))
        return None


def _reduced_pow(e, aval, avals, loc):
    """`pow(x, c)` for a literal c of 0.0, 1.0 or 2.0 on real floats, as XLA rewrites it:
    ones (IEEE's pow(x, 0) is 1 for every x, NaN included), x, or x * x; else None."""
    x, y = e.ins
    if not (isinstance(x, ast.Name) and literals.is_literal(y) and aval.dtype.kind == "f"):
        return None
    y = literals.literal_value(y)
    if not _same_aval(avals.get(x.id), aval) or y not in (0.0, 1.0, 2.0):
        return None
    if y == 1.0:
        return [], {e.outs[0]: x}
    if y == 2.0:
        return [make_stmt(e.outs, "mul", [x, name_atom(x.id)], {}, loc)], {}
    one = literals.literal_ast(np.ones((), aval.dtype))
    return [make_stmt(e.outs, "broadcast_in_dim", [one], {"shape": tuple(aval.shape), "broadcast_dimensions": ()}, loc)], {}


def _fold(e, aval):
    """The literal `e` computes when all its operands are literals, else None."""
    if not e.ins or not all(literals.is_literal(a) for a in e.ins):
        return None
    prim = core_primitive.registry.get(e.prim)
    if prim is None or prim.multiple_results:
        return None
    impl = getattr(prim.impl, "__wrapped__", prim.impl)
    try:
        with np.errstate(all="ignore"):
            value = np.asarray(impl(*[np.asarray(literals.literal_value(a)) for a in e.ins], **e.params))
    except Exception:  # noqa: BLE001 - whatever the impl rejects stays a statement
        return None
    if value.shape != () or value.dtype != aval.dtype or not literals.can_inline(value):
        return None
    if value.dtype == np.float16:  # compiled code computes float16 in float32 (narrow_floats)
        return None
    return literals.literal_ast(value)


def _same_aval(a, b):
    return a is not None and (a.shape, a.dtype) == (b.shape, b.dtype)


# Statements that return one operand unchanged when the other is this literal:
# prim -> {operand position of the literal: identity value}
_IDENTITIES = {"mul": {0: 1, 1: 1}, "add": {0: 0, 1: 0}, "sub": {1: 0}, "div": {1: 1}}


def simplify(program, in_place=False):
    """Drop statements a pass introduced that compute nothing: `mul(1, x)`, `add(x, 0)`,
    `sub(x, 0)`, `div(x, 1)` where the result has x's shape and dtype (uses read x); and
    write as a reshape what only adds, drops or moves axes of size 1 (`_unit_axes`)."""
    fn = _tree(program, in_place)
    avals = program.avals
    fn.body = _rewrite_body(fn.body, lambda stmt, defs: _drop_identity(stmt, avals) or _unit_axes(stmt, avals))
    return Program(fn, program.avals, program.consts, program.debug_name)


# A reduction over axes of size 1 returns its operand's elements: the same values for each
# of these (one term of a sum, the max of one element, ...).
_ONE_TERM_REDUCTIONS = frozenset({
    "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor",
})


def _unit_axes(stmt, avals):
    """A reduction over axes of size 1, a transpose that moves only axes of size 1, or a
    broadcast that only adds axes of size 1, as the reshape it is. A mapped axis of size 1
    (pmap on one device, vmap of one example) stages them around every value: the sum of a
    psum over one device, the transpose of a (1, m, n) gradient, the broadcast of an update
    to (1, m, n). As reshapes they are views the loop fuser reads through; as themselves
    each was a copy, and a broadcast stopped its producer from fusing into its consumer
    (the SPMD MNIST step's weight updates: three loops over each matrix instead of one)."""
    e = eqn(stmt)
    if len(e.ins) != 1 or len(e.outs) != 1 or not isinstance(e.ins[0], ast.Name):
        return None
    x, out = avals.get(e.ins[0].id), avals.get(e.outs[0])
    if x is None or out is None or x.dtype != out.dtype or x.size != out.size:
        return None
    # only leading axes are reduced or added: the mapped axis. A unit axis inside a row
    # (`y.sum(1)` of a (6, 1) matrix) is better left to the row group, whose reductions
    # become scalar locals where a reshape would be a copy.
    if e.prim in _ONE_TERM_REDUCTIONS:
        axes = tuple(e.params.get("axes", ()))
        unit = axes == tuple(range(len(axes))) and all(x.shape[k] == 1 for k in axes)
    elif e.prim == "transpose":
        perm = e.params.get("permutation", ())
        moved = [p for p in perm if x.shape[p] != 1]
        unit = moved == sorted(moved)
    elif e.prim == "broadcast_in_dim":
        dims, added = tuple(e.params.get("broadcast_dimensions", ())), out.ndim - x.ndim
        unit = dims == tuple(range(added, out.ndim)) and out.shape[added:] == x.shape
    else:
        return None
    if not unit:
        return None
    if x.shape == out.shape:
        return [], {e.outs[0]: e.ins[0]}
    return [make_stmt([e.outs[0]], "reshape", [e.ins[0]], {"new_sizes": tuple(out.shape)}, getattr(stmt, "loc", None))], {}


def _rewrite_body(body, rewrite):
    """Rewrite a body (and its nested bodies) statement by statement. `rewrite(stmt, defs)`
    returns None to keep an equation, or (statements to put in its place, {output name:
    atom that replaces it}); later uses of replaced names read the atoms."""
    defs = {s.name: s for s in body if isinstance(s, ast.FunctionDef)}
    subst = {}
    out = []
    for stmt in body:
        if subst and _reads_any(stmt, subst):
            stmt = _Substitute(subst).visit(stmt)
        if isinstance(stmt, ast.FunctionDef):
            stmt.body = _rewrite_body(stmt.body, rewrite)
            out.append(stmt)
            continue
        done = rewrite(stmt, defs) if is_eqn(stmt) else None
        if done is None:
            out.append(stmt)
            continue
        new_stmts, replaced = done
        out.extend(new_stmts)
        for name, atom in replaced.items():
            if isinstance(atom, ast.Name):
                subst[name] = atom
            else:  # a literal result still needs its variable: materialize it
                out.append(make_stmt([name], "broadcast_in_dim", [atom], {"shape": (), "broadcast_dimensions": ()}, getattr(stmt, "loc", None)))
    return out


def _drop_identity(stmt, avals):
    e = eqn(stmt)
    table = _IDENTITIES.get(e.prim)
    if table is None or len(e.ins) != 2:
        return None
    for pos, ident in table.items():
        lit, other = e.ins[pos], e.ins[1 - pos]
        if not (literals.is_literal(lit) and isinstance(other, ast.Name)):
            continue
        a, b = avals.get(other.id), avals.get(e.outs[0])
        if a is None or b is None or (a.shape, a.dtype) != (b.shape, b.dtype):
            continue
        if literals.literal_value(lit) == ident:
            return [], {e.outs[0]: other}
    return None


def inline_transformation_ops(program, in_place=False):
    """Replace the primitives that only mean something to transformations
    (`core.primitive.inline_for_lowering`: stop_gradient, custom_jvp/vjp calls) by what
    they compute: their operand, or their body's statements spliced in place."""
    table = core_primitive.inline_for_lowering
    if not any(is_eqn(n) and n.value.func.id in table for n in statements(program.fn)):
        return program
    fn = _tree(program, in_place)
    fn.body = _rewrite_body(fn.body, lambda stmt, defs: _inline(stmt, defs, table))
    return Program(fn, program.avals, program.consts, program.debug_name)


def _inline(stmt, defs, table):
    e = eqn(stmt)
    if e.prim not in table:
        return None
    param = table[e.prim]
    if param is None:
        return [], {e.outs[0]: e.ins[0]}
    inner = defs[str(e.params[param])]
    args = {a.arg: atom for a, atom in zip(inner.args.args, _operands_of(e, inner))}
    spliced = []
    for s in _rewrite_body(copy.deepcopy(inner.body), lambda st, d: _inline(st, d, table)):
        if isinstance(s, ast.Return):
            ret = s.value
            results = [_Substitute(args).visit(r) for r in (ret.elts if isinstance(ret, ast.Tuple) else [ret])]
        else:
            spliced.append(_Substitute(args).visit(s))
    return spliced, dict(zip(e.outs, results))


def _operands_of(e, body):
    """The operands a spliced body receives: its trailing arguments take the eqn's last
    operands (custom calls pass exactly the body's arguments)."""
    n = len(body.args.args)
    return e.ins[len(e.ins) - n:]


def _reads_any(stmt, names):
    """Whether `stmt` (a nested body's own statements aside) names one of `names`: most
    statements of a body read none of the few names a pass replaced, and visiting each with
    a NodeTransformer was most of a clean-up pass's time."""
    if isinstance(stmt, ast.FunctionDef):
        return False  # (the visitors leave nested bodies alone: they are rewritten in turn)
    if is_eqn(stmt):  # its names: operands and body-naming parameters (literals name none)
        call = stmt.value
        for node in (*call.args, *(k.value for k in call.keywords)):
            if node.__class__ is ast.Name:
                if node.id in names:
                    return True
            elif node.__class__ is ast.Tuple:
                if any(e.__class__ is ast.Name and e.id in names for e in node.elts):
                    return True
        return False
    return any(n.__class__ is ast.Name and n.id in names for n in walk(stmt))


class _Substitute(ast.NodeTransformer):
    """Replace loaded names by atoms (names or literals)."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            return copy.deepcopy(self.mapping[node.id])
        return node

    def visit_FunctionDef(self, node):
        return node


def _fresh_names(fn):
    """`fresh(base)`: a name no statement of `fn` uses, for a pass's new statements. The
    Namer is made at the first call: most programs get no rewrite, and all_names walks every
    node (before any rewrite, so it sees the program's own names)."""
    namer = []

    def fresh(base):
        if not namer:
            namer.append(Namer(all_names(fn)))
        return namer[0].fresh(base)

    return fresh


def reciprocal_divisors(program, in_place=False):
    """`div(a, broadcast_in_dim(b))` on real floats becomes `mul(a, broadcast_in_dim(div(1, b)))`:
    one division per element of `b` instead of one per element of `a` (a row softmax divides
    each row by one sum). XLA's algebraic simplifier makes the same rewrite, so jitted results
    differ from a true division by at most one rounding, as JAX's do."""
    fn = _tree(program, in_place)
    avals = dict(program.avals)
    fresh = _fresh_names(fn)

    def rewrite_body(body):
        broadcasts, out = {}, []
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef):
                rewrite_body(stmt.body)
            elif is_eqn(stmt):
                e = eqn(stmt)
                if e.prim == "broadcast_in_dim":
                    broadcasts[e.outs[0]] = e
                source = broadcasts.get(getattr(e.ins[1], "id", None)) if e.prim == "div" else None
                aval = avals.get(e.outs[0]) if source is not None else None
                if source is not None and aval is not None and aval.dtype.kind == "f":
                    b = source.ins[0]
                    b_aval = literals.literal_aval(b) if literals.is_literal(b) else avals[b.id]
                    if b_aval.size < aval.size:
                        loc = getattr(stmt, "loc", None)
                        inv, spread = fresh(f"{e.outs[0]}_inv"), fresh(f"{e.outs[0]}_inv_b")
                        avals[inv], avals[spread] = b_aval, avals[source.outs[0]]
                        one = literals.literal_ast(np.ones((), aval.dtype))
                        out.append(make_stmt([inv], "div", [one, b], {}, loc))
                        out.append(make_stmt([spread], "broadcast_in_dim", [name_atom(inv)], source.params, loc))
                        out.append(make_stmt(e.outs, "mul", [e.ins[0], name_atom(spread)], {}, loc))
                        continue
            out.append(stmt)
        body[:] = out

    rewrite_body(fn.body)
    return Program(fn, avals, program.consts, program.debug_name)


def uncontracted_products(program, in_place=False):
    """`dot_general` with no contracting dimensions (each output element one product, what the
    transpose of a product with a unit cotangent stages: `dot_general(1.0, x)`) becomes the
    `mul` of its operands broadcast to the output, as XLA's simplifier rewrites it. As a
    product it went through BLAS or a loop nest whose sum starts from +0, which turned -0.0
    into +0.0 (x * 1.0 is -0.0; control's iLQR step made 12 such calls). The eager rule
    multiplies too (lax.contractions), so the values are the op-by-op path's. Left alone: a
    conversion in the product (preferred_element_type, mixed dtypes, booleans) and operand
    axes that would need a transpose to line up with the output's."""
    fn = _tree(program, in_place)
    avals = dict(program.avals)
    fresh = _fresh_names(fn)

    def aval_of(atom):  # None for a name of a nested body the program has no aval for
        try:
            return program.atom_aval(atom)
        except NameError:
            return None

    def rewrite(stmt, defs):
        new = _as_products(eqn(stmt), avals, aval_of, fresh, getattr(stmt, "loc", None))
        return None if new is None else (new, {})

    fn.body = _rewrite_body(fn.body, rewrite)
    return Program(fn, avals, program.consts, program.debug_name)


def _output_positions(ndim, batch, free, first_free):
    """Each operand axis's position in a dot_general's output: its batch axes first, its free
    axes from `first_free` on."""
    dims = [0] * ndim
    for k, i in enumerate(batch):
        dims[i] = k
    for k, i in enumerate(free):
        dims[i] = first_free + k
    return dims


def _as_products(e, avals, aval_of, fresh, loc):
    """The statements of `e`, a dot_general without contraction, as a broadcast `mul`, or None."""
    if e.prim != "dot_general" or len(e.ins) != 2 or len(e.outs) != 1:
        return None
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    out = avals.get(e.outs[0])
    operands = [aval_of(x) for x in e.ins]
    if lc or rc or e.params.get("preferred_element_type") is not None or out is None or None in operands:
        return None
    if any(a.dtype != out.dtype for a in operands) or out.dtype.kind == "b":
        return None
    (la, ra) = operands
    lfree = [i for i in range(la.ndim) if i not in lb]
    rfree = [i for i in range(ra.ndim) if i not in rb]
    # output axes: batch, lhs free, rhs free; each operand axis's position there
    ldims = _output_positions(la.ndim, lb, lfree, len(lb))
    rdims = _output_positions(ra.ndim, rb, rfree, len(lb) + len(lfree))
    if any(b <= a for dims in (ldims, rdims) for a, b in zip(dims, dims[1:])):
        return None  # (broadcast_in_dim keeps an operand's axes in order)
    stmts, spread = [], []
    for x, a, dims in ((e.ins[0], la, ldims), (e.ins[1], ra, rdims)):
        if a.shape == out.shape:
            spread.append(x)
            continue
        name = fresh(f"{e.outs[0]}_b")
        avals[name] = out
        stmts.append(make_stmt([name], "broadcast_in_dim", [x], {"shape": tuple(out.shape), "broadcast_dimensions": tuple(dims)}, loc))
        spread.append(name_atom(name))
    stmts.append(make_stmt(e.outs, "mul", spread, {}, loc))
    return stmts


def cse(program, in_place=False):
    """A copy of `program` where a statement repeating an earlier one (same primitive,
    operands and parameters, in the same body) reuses the earlier results. Statements with
    bodies or effects are left alone."""
    fn = _tree(program, in_place)
    _cse_body(fn.body, {})
    return Program(fn, program.avals, program.consts, program.debug_name)


def _cse_body(body, rename):
    seen = {}
    kept = []
    for stmt in body:
        if rename and _reads_any(stmt, rename):
            _Rename(rename).visit(stmt)
        if isinstance(stmt, ast.FunctionDef):
            _cse_body(stmt.body, dict(rename))
            kept.append(stmt)
            continue
        if not is_eqn(stmt):
            kept.append(stmt)
            continue
        e = eqn(stmt)
        if e.prim in EFFECTFUL or body_refs(e.params):
            kept.append(stmt)
            continue
        # an operand is a name (its id: no dump of the node) or a literal (its dump: "Call(...",
        # which no name spells)
        key = (e.prim, tuple(a.id if a.__class__ is ast.Name else ast.dump(a) for a in e.ins), repr(sorted(e.params.items())))
        if key in seen:
            for old, new in zip(e.outs, seen[key]):
                rename[old] = new
            continue
        seen[key] = e.outs
        kept.append(stmt)
    body[:] = kept


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node

    def visit_FunctionDef(self, node):
        return node  # nested bodies are renamed when their turn comes


def dce(program, in_place=False):
    """A copy of `program` without statements whose results are never used."""
    fn = _tree(program, in_place)
    fn.body = _dce_body(fn.body)
    live_names = all_names(fn)
    avals = {k: v for k, v in program.avals.items() if k in live_names}
    consts = {k: v for k, v in program.consts.items() if k in live_names}
    return Program(fn, avals, consts, program.debug_name)


def _dce_body(body):
    ret = body[-1]
    live = {n.id for n in walk(ret) if isinstance(n, ast.Name)}
    live_bodies = set()
    defs = {s.name: s for s in body if isinstance(s, ast.FunctionDef)}
    kept = [ret]
    for stmt in reversed(body[:-1]):
        if is_eqn(stmt):
            _prune_outputs(stmt, live, defs)
        if isinstance(stmt, ast.FunctionDef):
            if stmt.name in live_bodies:
                stmt.body = _dce_body(stmt.body)
                kept.append(stmt)
            continue
        if not is_eqn(stmt):
            kept.append(stmt)
            live |= {n.id for n in walk(stmt) if isinstance(n, ast.Name)}
            continue
        e = eqn(stmt)
        if _has_effects(e, defs) or any(o in live for o in e.outs):
            kept.append(stmt)
            live |= {a.id for a in e.ins if isinstance(a, ast.Name)}
            live_bodies |= {str(r) for r in body_refs(e.params)}
    kept.reverse()
    return kept



def _has_effects(e, defs):
    """Whether statement `e` has effects: an effectful primitive, or control flow whose bodies
    (at any depth) hold one."""
    if e.prim in EFFECTFUL:
        return True
    for ref in body_refs(e.params):
        body = defs.get(str(ref))
        if body is not None and any(is_eqn(s) and eqn(s).prim in EFFECTFUL for s in statements(body)):
            return True
    return False


def _prune_outputs(stmt, live, defs):
    """Drop the unused outputs of a statement whose bodies compute them independently:
    a scan's stacked `ys` and a cond's results (a loop carry feeds the next iteration, so
    carries stay). The bodies stop returning them, so their statements die too."""
    e = eqn(stmt)
    if e.prim == "scan":
        first = e.params["num_carry"]
        refs = [e.params["body"]]
    elif e.prim == "cond":
        first = 0
        refs = list(e.params["branches"])
    else:
        return
    dead = [i for i in range(first, len(e.outs)) if e.outs[i] not in live]
    if not dead or len(dead) == len(e.outs) or any(str(r) not in defs for r in refs):
        return
    keep = [i for i in range(len(e.outs)) if i not in dead]
    for r in refs:
        ret = defs[str(r)].body[-1]
        elts = list(ret.value.elts) if isinstance(ret.value, ast.Tuple) else [ret.value]
        ret.value = ast.Tuple([elts[i] for i in keep], ast.Load())
    stmt.targets[0] = ast.Tuple([ast.Name(e.outs[i], ast.Store()) for i in keep], ast.Store())
