"""Fusion planning: which statements of a Program get their own array (are materialized)
and which are fused into their consumer's loop nest as scalar expressions.

Rules (XLA's loop fusion, simplified):
- program inputs, constants and outputs are materialized;
- a value read by more than one statement is materialized once;
- an elementwise statement fuses into a single elementwise or reduction consumer, and into
  an index-map consumer (transpose, slice, rev, reshape) that reads each element once;
  it never fuses through a broadcast that would recompute it per broadcast element;
- (CPU, `share_elementwise`) an elementwise statement read by several elementwise statements
  of its own shape that all end in the same loop nest fuses too: the loop nest computes it
  once per element into a scalar local every reader shares (the emitter's memo). A sampler's dozens of statements
  (threefry, log, erf_inv's polynomials) then make one loop nest of scalar code instead of
  dozens of arrays or row buffers: less memory traffic, and far less for Numba to compile;
- an index-map statement (broadcast, transpose, slice, ...) or a source (iota) fuses into
  any elementwise, index-map or reduction consumer: it is only address arithmetic; an iota,
  or index maps over one, over a literal or over an input, fuses into every consumer (each
  recomputes it);
- (CPU, `copy_consumers`) an index-map statement fuses into a consumer named there (a
  concatenate, a pad) that reads its operands as strided views of arrays: the copy kernel reads the
  array through the view, where a materialized transpose was copied twice;
- statements without a loop-nest lowering (`opaque`) are materialized.
"""
import ast

from ..staging.program import eqn, is_eqn

ELEMENTWISE, INDEX, SOURCE, REDUCE, OPAQUE = "elementwise", "index", "source", "reduce", "opaque"

# index maps that read each operand element at most once (so fusing work through them is free)
INJECTIVE_INDEX = {"transpose", "slice", "rev", "reshape", "squeeze", "convert_element_type"}


class Plan:
    """Per-program facts the emitter needs."""

    def __init__(self, program, kinds, share_elementwise=False, copy_consumers=()):
        self.program = program
        # the multi-reader elementwise rule (module docstring); the CPU emitter turns it on
        self.share_elementwise = share_elementwise
        self.copy_consumers = frozenset(copy_consumers)  # opaque readers of index-map views
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
        # consumers before producers: a producer with several readers needs to know where
        # each reader ends up (its sink: the materialized statement whose loop nest runs it)
        sink = {}
        for e in reversed(self.eqns):
            if len(e.outs) != 1:
                continue
            (out,) = e.outs
            if out in self.outputs:
                continue
            users = self.consumers.get(out, [])
            distinct = list({id(u.stmt): u for u in users}.values())
            if len(distinct) > 1 and self._index_arithmetic(e):
                # an iota (or a reshape of one) is index arithmetic: every user recomputes it
                # for free, and a materialized one in a fused loop (store, then reload) blocks
                # vectorization
                if all(self._fusable(e, u) for u in distinct):
                    self.fused.add(out)
                continue
            if len(distinct) == 1 and self._fusable(e, distinct[0]):
                self.fused.add(out)
                sink[out] = self._sink(distinct[0], sink)
            elif len(distinct) > 1 and self.share_elementwise and self._shares_one_sink(e, distinct, sink):
                self.fused.add(out)
                sink[out] = self._sink(distinct[0], sink)

    def _index_arithmetic(self, e):
        """Whether `e` computes nothing but index arithmetic and loads: an iota, or index maps
        over one, over a literal or over a program input."""
        kind = self.kind_of(e)
        if kind == SOURCE:
            return True
        if kind != INDEX or len(e.ins) != 1:
            return False
        if not isinstance(e.ins[0], ast.Name):
            return True  # a literal (broadcast zeros)
        producer = self.producer.get(e.ins[0].id)
        return producer is None or self._index_arithmetic(producer)

    def _sink(self, e, sink):
        """The materialized statement whose loop nest computes statement `e`."""
        out = e.outs[0] if len(e.outs) == 1 else None
        return sink.get(out, e) if out in self.fused else e

    def _shares_one_sink(self, e, users, sink):
        """Whether elementwise `e`'s readers are all elementwise statements of its shape (so
        each reads it at the very index it computes) that end in one loop nest, or that loop
        nest's own statement (elementwise, or a reduction of `e`'s shape)."""
        if self.kind_of(e) != ELEMENTWISE:
            return False
        shape = self.program.avals[e.outs[0]].shape
        sinks = set()
        for u in users:
            if len(u.outs) != 1 or self.kind_of(u) not in (ELEMENTWISE, REDUCE):
                return False
            if self.kind_of(u) == ELEMENTWISE and self.program.avals[u.outs[0]].shape != shape:
                return False
            if self.kind_of(u) == REDUCE and u.outs[0] in self.fused:
                return False
            sinks.add(id(self._sink(u, sink).stmt))
        return len(sinks) == 1

    def _fusable(self, producer, consumer):
        pk, ck = self.kind_of(producer), self.kind_of(consumer)
        if pk == INDEX and consumer.prim in self.copy_consumers:
            return True
        if ck not in (ELEMENTWISE, INDEX, REDUCE):
            return False
        if pk in (INDEX, SOURCE):
            return True
        if pk == ELEMENTWISE:
            return ck in (ELEMENTWISE, REDUCE) or consumer.prim in INJECTIVE_INDEX
        return False

    def materialized(self, var):
        return var not in self.fused
