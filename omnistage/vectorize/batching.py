"""The batching pass: replay a per-example Program on batched values.

`batch_call(program, args, dims, axis)` binds each statement of `program` again in the
current context (`staging.replay.evaluate`). Every value carries a batch dimension (an
axis index, or None when it is the same for all examples); a statement whose operands are
all unbatched is bound as it is (same line, no cost), any other is replaced by its batching
rule (`rules.BATCH`) at the same user line marked `(vmap)`. Collectives over this pass's
axis name (`lax.psum`, `axis_index`, ...) are rewritten here whether or not their operand
is batched.

`batch_program(program, dims, axis, force)` stages the batched version of a body into a
closure-free Program with chosen output batch dimensions (control-flow rules use it).
"""

from ..core.source_info import located
from ..staging import replay
from . import rules
from .rules import BATCH, COLLECTIVE


class BatchAxis:
    """The axis a pass batches along: its size and (optional) name for collectives."""

    __slots__ = ("size", "name")

    def __init__(self, size, name=None):
        self.size, self.name = size, name

    def __repr__(self):
        return f"BatchAxis(size={self.size}, name={self.name!r})"


def batch_call(program, args, dims, axis):
    """Run `program` on `args` batched along `dims` in the current context.

    Returns (outputs, output dims) as lists."""

    def rule(prog, e, ins, in_dims):
        collective = _collective_rule(e, axis) if e.prim in COLLECTIVE else None
        if collective is None and all(d is None for d in in_dims):
            return None
        return _batch_eqn(prog, e, ins, in_dims, axis, collective)

    return replay.evaluate_annotated(program, args, dims, rule)


def _collective_rule(e, axis):
    """The rewrite of a collective over `axis`'s name, or None (not a collective of ours)."""
    fn = COLLECTIVE.get(e.prim)
    if fn is None or axis.name is None:
        return None
    names = e.params["axis_name"]
    names = names if isinstance(names, tuple) else (names,)
    return fn if axis.name in names else None


def _batch_eqn(prog, e, ins, in_dims, axis, collective):
    params = replay.body_params(prog, e.params)
    multiple = rules.prim(e.prim).multiple_results
    with located(getattr(e.stmt, "loc", None), "vmap"):
        if collective is not None:
            out, out_dim = collective(ins, in_dims, axis, **params)
        else:
            fn = BATCH.get(e.prim)
            if fn is None:
                raise rules.missing_rule(e)
            if e.prim in rules.NEEDS_AXIS:
                params["batch_axis"] = axis
            out, out_dim = fn(ins, in_dims, **params)
    if multiple:
        return list(out), list(out_dim)
    return [out], [out_dim]


def move_outputs(outs, dims, targets, size):
    """Each output moved to its target batch dim (None: must already be unbatched)."""
    moved = []
    for x, d, t in zip(outs, dims, targets):
        if t is None:
            if d is not None:
                raise AssertionError("a batched value where the pass expected an unbatched one")
            moved.append(x)
        else:
            moved.append(rules.batch_at(x, d, size, t))
    return moved


def batch_program(program, dims, axis, force=None, name=None):
    """Stage `program` batched along `dims` into a closure-free Program.

    `force[i]` is the batch dim output i must have (None: unbatched); by default each
    output keeps what the rules give it. Returns (Program, output dims)."""
    in_avals = [rules.batched_aval(a, d, axis.size) for a, d in zip(program.in_avals, dims)]
    box = {}

    def fn(*xs):
        outs, out_dims = batch_call(program, xs, dims, axis)
        if force is None:
            box["dims"] = out_dims
            return outs
        box["dims"] = list(force)
        return move_outputs(outs, out_dims, force, axis.size)

    batched = replay.stage_program(fn, in_avals, program.in_names, name or f"{program.name}_vmap")
    return batched, box["dims"]


def output_dims(program, dims, axis):
    """The batch dims `program`'s outputs get when its inputs are batched along `dims`
    (stages the batched body once and throws it away)."""
    return batch_program(program, dims, axis)[1]
