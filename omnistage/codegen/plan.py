"""Fusion planning: which statements of a Program get their own array (are materialized)
and which are fused into their consumer's loop nest as scalar expressions.

Rules (XLA's loop fusion, simplified):
- program inputs, constants and outputs are materialized;
- a value read by more than one statement is materialized once;
- an elementwise statement fuses into a single elementwise or reduction consumer, and into
  an index-map consumer (transpose, slice, rev, reshape) that reads each element once;
  it never fuses through a broadcast that would recompute it per broadcast element;
- an index-map statement (broadcast, transpose, slice, ...) or a source (iota) fuses into
  any elementwise, index-map or reduction consumer: it is only address arithmetic;
- statements without a loop-nest lowering (`opaque`) are materialized.
"""
import ast

from ..staging.program import eqn, is_eqn

ELEMENTWISE, INDEX, SOURCE, REDUCE, OPAQUE = "elementwise", "index", "source", "reduce", "opaque"

# index maps that read each operand element at most once (so fusing work through them is free)
INJECTIVE_INDEX = {"transpose", "slice", "rev", "reshape", "squeeze", "convert_element_type"}


class Plan:
    """Per-program facts the emitter needs."""

    def __init__(self, program, kinds):
        self.program = program
        self.eqns = [eqn(s) for s in program.body if is_eqn(s)]
        self.producer = {}
        for e in self.eqns:
            for o in e.outs:
                self.producer[o] = e
        self.kind = {id(e.stmt): kinds(e.prim) for e in self.eqns}
        self.consumers = {}
        for e in self.eqns:
            for a in e.ins:
                if isinstance(a, ast.Name):
                    self.consumers.setdefault(a.id, []).append(e)
        self.outputs = {a.id for a in program.out_atoms if isinstance(a, ast.Name)}
        self.fused = set()
        self._decide()

    def kind_of(self, e):
        return self.kind[id(e.stmt)]

    def _decide(self):
        for e in self.eqns:
            if len(e.outs) != 1:
                continue
            (out,) = e.outs
            if out in self.outputs:
                continue
            users = self.consumers.get(out, [])
            distinct = {id(u.stmt): u for u in users}
            if len(distinct) > 1 and self.kind_of(e) == SOURCE:
                # an iota is index arithmetic: every user recomputes it for free, and a
                # materialized one in a fused loop (store, then reload) blocks vectorization
                if all(self._fusable(e, u) for u in distinct.values()):
                    self.fused.add(out)
                continue
            if len(distinct) != 1:
                continue
            (user,) = distinct.values()
            if self._fusable(e, user):
                self.fused.add(out)

    def _fusable(self, producer, consumer):
        pk, ck = self.kind_of(producer), self.kind_of(consumer)
        if ck not in (ELEMENTWISE, INDEX, REDUCE):
            return False
        if pk in (INDEX, SOURCE):
            return True
        if pk == ELEMENTWISE:
            return ck in (ELEMENTWISE, REDUCE) or consumer.prim in INJECTIVE_INDEX
        return False

    def materialized(self, var):
        return var not in self.fused
