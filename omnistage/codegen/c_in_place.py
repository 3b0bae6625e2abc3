"""Which results of a loop body may be built in the buffer of the loop-carried value they replace
(c_translate's loops): the analysis of one helper function's AST, nothing emitted.

Why: a loop keeps each carried array in two slots used in turn, so an optimizer's update
(`v = 0.9 * v + g; x = x - lr * v` in a `fori_loop`) reads one slot and writes the other, and
every line it writes is first read from memory into the cache (a write miss). Written over the
value it replaces, the line is already there: mnist_vae's momentum update of its 1.3M
parameters took 0.91 ms a step in two slots and 0.54 ms in place (one thread, data in L3).

When: result `r` may overwrite parameter `p` when every element of `p` is read before the same
element of `r` is written, and `p` is not read after that. Checked conservatively on the body:
- `r` is built by the first top-level statement that mentions it after its allocation, a `for`
  nest, and stored there only as `r[i, j, ...] = ...` with exactly the loop variables of every
  `for` around the store (each iteration its own element), in a body without branches or loops
  that mention `r` or `p`;
- inside that nest `p` is read only as `p[i, j, ...]` with the same index, in that body, at or
  before the first store into `r` (an assignment's value is read before its store);
- no view of `p` (a name bound from an expression that uses `p` other than by element: a
  reshape, a transpose, a row) is read in the nest, and neither `p` nor a view of it is
  mentioned after the nest, in the return statement included (no other result aliases it).
The caller checks the rest: the result has the parameter's type, the argument is the carried
name itself, passed once, and the buffer is the loop's own slot (never the caller's array).
"""
import ast

from . import row_passes
from .c_calls import index_elts, is_call_to


_RANGES = ("range", "numba.prange")  # each value once (a prange's iterations share nothing)


class BodyFacts:
    """What every question about one helper function needs, read once: its parameters, the
    names each top-level statement mentions, the names it stores into, and which bindings use
    which names (a loop body of 28 carries asked each question of a 500-statement function:
    2.5 s walked per question, 40 ms read once)."""

    def __init__(self, fn):
        self.fn = fn
        self.params = [a.arg for a in fn.args.args]
        self.body, self.ret = fn.body[:-1], fn.body[-1]
        self.names = [_names(s) for s in self.body]
        self.ret_names = _names(self.ret)
        self.stored = set()  # bound, or stored into by element
        self.bindings = {}  # name -> [(value node, target names)] of the bindings whose value uses it
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.stored.add(n.id)
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
                self.stored.add(n.value.id)
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                value, targets = n.value, (n.targets if isinstance(n, ast.Assign) else [n.target])
            elif isinstance(n, ast.For):
                value, targets = n.iter, [n.target]
            else:
                continue
            if value is None:
                continue
            bound = {m.id for t in targets for m in ast.walk(t) if isinstance(m, ast.Name)}
            for used in _names(value):
                self.bindings.setdefault(used, []).append((value, bound))

    def views_of(self, param, ndim):
        """`param` and every name that may be bound to a view of it: bound (anywhere in the
        function) from an expression that uses one of them (`param` itself other than by
        element), or iterating over one."""
        views, pending = {param}, [param]
        while pending:
            name = pending.pop()
            for value, bound in self.bindings.get(name, ()):
                if name == param and _only_elements(value, param, ndim):
                    continue
                for t in bound - views:
                    views.add(t)
                    pending.append(t)
        return views


def may_build_over(facts, result, param, ndim):
    """Whether the helper function of `facts` (a BodyFacts) may build its result `result`
    (allocated once among its top-level statements) in the buffer of parameter `param`, an array
    of `ndim` dimensions, as the module docstring says."""
    if ndim < 1 or param not in facts.params or param in facts.stored:
        return False
    body = facts.body
    at = next((i for i, s in enumerate(body) if _allocation_of(s, result)), None)
    if at is None:
        return False
    later = [i for i in range(at + 1, len(body)) if result in facts.names[i]]
    if not later or not isinstance(body[later[0]], ast.For):
        return False
    nest = later[0]
    views = facts.views_of(param, ndim)
    if any(names & views for names in facts.names[nest + 1:]) or facts.ret_names & views:
        return False
    return _elementwise(body[nest], result, param, views, ndim)


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _allocation_of(stmt, name):
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name and is_call_to(stmt.value, "np.empty", "_rt.empty"))


def _element_reads(node, param, ndim):
    """The Name nodes of `param` under `node` read one element at a time (`p[i, j]` with
    `ndim` indices, none a slice): a scalar, never a view."""
    return {id(n.value) for n in ast.walk(node)
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == param
            and len(index := index_elts(n.slice)) == ndim and not any(isinstance(i, ast.Slice) for i in index)}


def _only_elements(value, param, ndim):
    """Whether every use of `param` in expression `value` reads one element."""
    elements = _element_reads(value, param, ndim)
    return all(id(m) in elements for m in ast.walk(value) if isinstance(m, ast.Name) and m.id == param)


def _elementwise(nest, result, param, views, ndim):
    """Whether `for` nest `nest` stores into `result` and reads `param` as the module docstring
    says. Each store and read is placed by its path, the (body, position) of every statement
    around it: the stores share one body; a read is in that body at or before the first store,
    or in a loop before the stores' loop in a body around both, so that it reads the elements of
    the iteration of the loops around both (its leading indices are theirs) before any is
    written, and no later iteration reads them."""
    stores, reads = [], []  # the path of each store into result / read of param

    def visit(stmts, chain, path):
        for pos, s in enumerate(stmts):
            if isinstance(s, ast.For):
                if (s.orelse or not isinstance(s.target, ast.Name) or not is_call_to(s.iter, *_RANGES)
                        or _names(s.iter) & (views | {result}) or _binds(s.body, s.target.id)):
                    return False  # (a loop variable bound again in its body: an element twice)
                if not visit(s.body, chain + (s.target.id,), path + ((id(stmts), pos),)):
                    return False
                continue
            if not _names(s) & (views | {result}) or _is_hint(s):
                continue
            if not isinstance(s, (ast.Assign, ast.Expr)):
                return False  # a branch, a loop or an augmented store that touches them
            if not _simple_statement(s, chain, path + ((id(stmts), pos),), result, param, views, ndim, stores, reads):
                return False
        return True

    if not visit([nest], (), ()) or not stores:
        return False
    if len({path[:-1] for path in stores}) != 1:
        return False
    first = min(stores)
    for read in reads:
        common = next((d for d, (r, w) in enumerate(zip(read, first)) if r != w), None)
        if common is None:  # the read's path is the store's: the same statement
            continue
        # (paths agree down to `common`, so there both are in one body; every read and store is
        # under ndim loops, so a read in an earlier loop shares the loops above `common` with
        # the stores and reads, by its index, the elements of their iteration)
        if read[common][1] > first[common][1]:
            return False
    return True


def _simple_statement(s, chain, path, result, param, views, ndim, stores, reads):
    """Whether statement `s` (an assignment or expression under the loops `chain`) touches
    `result` only by storing one element at the full loop index and `param` (of all its views)
    only by reading one element at that index; the paths of those go to `stores` / `reads`."""
    index_names = chain if len(chain) == ndim else None
    store_bases = set()
    for t in s.targets if isinstance(s, ast.Assign) else []:
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == result:
            if index_names is None or _index_of(t) != index_names:
                return False
            stores.append(path)
            store_bases.add(id(t.value))
        elif _names(t) & (views | {result}):
            return False  # binds a view, or stores into the result another way
    subscripted = {id(n.value): n for n in ast.walk(s) if isinstance(n, ast.Subscript)}
    elements = _element_reads(s, param, ndim)
    for n in ast.walk(s):
        if not isinstance(n, ast.Name) or id(n) in store_bases:
            continue
        if n.id == result and id(n) not in subscripted:
            return False  # the whole result passed somewhere (a kernel could write it)
        if n.id in views and n.id != result:
            if n.id != param or id(n) not in elements:
                return False
            if index_names is None or _index_of(subscripted[id(n)]) != index_names:
                return False
            reads.append(path)
    return True


def _is_hint(stmt):
    """`_rt.prefetch_row(a, i)` (row_passes): reads no value, writes nothing."""
    return isinstance(stmt, ast.Expr) and is_call_to(stmt.value, row_passes.HINT)


def _binds(stmts, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for s in stmts for n in ast.walk(s))


def _index_of(subscript):
    index = index_elts(subscript.slice)
    if not all(isinstance(i, ast.Name) for i in index):
        return None
    return tuple(i.id for i in index)
