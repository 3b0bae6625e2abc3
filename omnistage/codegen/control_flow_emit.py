"""Control-flow statements as native Python control flow in generated code, shared by the
Numba CPU kernel and the CUDA host driver.

`cond` becomes `if`/`elif`, `while_loop` a `while`, `scan` a `for` over its length; each body
is a module-level function called once per branch or iteration (`module.body_function`).
The two emitters differ only in how values are read and stored, through these hooks:
    cf_operand(atom)   the expression for an operand
    cf_truth(expr)     a predicate as a Python bool (the CUDA driver reads it back;
                       `cf_truth_note` says so in the generated source)
    cf_index(expr)     a branch index as a Python int
    cf_clamp(expr, n)  that index clamped into [0, n - 1]
    cf_alloc(name, aval)        allocate a stacked scan output
    cf_step(x, t) / cf_store(y, t, value)   read / write step t of a stacked array
                       (cf_store's text may be several lines)
"""
import ast

from .provenance import loc_comment as _loc_comment


class ControlFlowEmitter:
    """Mixin: needs `line`, `fresh`, `aval`, `program` and `module` on the class."""

    # --- hooks (the CPU kernel's defaults) --------------------------------------------------

    def cf_operand(self, atom):
        return ast.unparse(atom)

    def cf_truth(self, expr):
        return expr

    cf_truth_note = ""  # a comment on a branch whose predicate costs something to read

    def cf_index(self, expr):
        return expr

    def cf_clamp(self, expr, n):
        # not the min/max builtins: Numba compiles their overload in every process
        return f"_rt.clamp_index({expr}, {n})"

    def cf_alloc(self, name, aval):
        from .emit_cpu import dtype_expr

        self.line(f"{name} = _rt.empty({aval.shape!r}, {dtype_expr(aval.dtype)})")

    def cf_step(self, x, t):
        return f"{x}[{t}]"

    def cf_store(self, y, t, value):
        return f"{y}[{t}] = {value}"

    # --- statements --------------------------------------------------------------------------

    def _call(self, ref, args):
        fn = self.module.body_function(ref)
        return f"{fn}({', '.join(list(args) + self.module.const_names)})"

    def _targets(self, names):
        if not names:
            return "_"  # a body kept for its effects (debug.print) returns nothing
        return ", ".join(names) + ("," if len(names) == 1 else "")

    def _assign_init(self, names, values, stmt):
        self.line(f"{self._targets(names)} = {', '.join(values)}{',' if len(values) == 1 else ''}{_loc_comment(stmt)}")

    def emit_cond(self, e):
        index, *operands = [self.cf_operand(a) for a in e.ins]
        branches = e.params["branches"]
        comment = _loc_comment(e.stmt)
        targets = self._targets(e.outs)
        if self.aval(e.ins[0]).dtype.kind == "b":
            self.line(f"if {self.cf_truth(index)}:{self.cf_truth_note}{comment}")
            self.line(f"    {targets} = {self._call(branches[1], operands)}")
            self.line("else:")
            self.line(f"    {targets} = {self._call(branches[0], operands)}")
            return
        k = self.fresh("_branch")
        self.line(f"{k} = {self.cf_clamp(self.cf_index(index), len(branches))}{comment}")
        for i, b in enumerate(branches):
            head = "if" if i == 0 else "elif" if i < len(branches) - 1 else "else"
            self.line(f"{head} {k} == {i}:" if head != "else" else "else:")
            self.line(f"    {targets} = {self._call(b, operands)}")

    def emit_while(self, e):
        args = [self.cf_operand(a) for a in e.ins]
        m, n = e.params["cond_nconsts"], e.params["body_nconsts"]
        cconsts, bconsts, init = args[:m], args[m:m + n], args[m + n:]
        carry = e.outs
        self._assign_init(carry, init, e.stmt)
        self.line(f"while {self.cf_truth(self._call(e.params['cond_fun'], cconsts + carry) + '[0]')}:")
        self.line(f"    {self._targets(carry)} = {self._call(e.params['body_fun'], bconsts + carry)}")

    def emit_scan(self, e):
        args = [self.cf_operand(a) for a in e.ins]
        p = e.params
        m, n, length = p["num_consts"], p["num_carry"], p["length"]
        consts, init, xs = args[:m], args[m:m + n], args[m + n:]
        carry, ys = e.outs[:n], e.outs[n:]
        if carry:
            self._assign_init(carry, init, e.stmt)
        for y in ys:
            self.cf_alloc(y, self.program.avals[y])
        t = self.fresh("_t")
        steps = f"range({length} - 1, -1, -1)" if p["reverse"] else f"range({length})"
        self.line(f"for {t} in {steps}:")
        y_steps = [self.fresh(f"{y}_t") for y in ys]
        result = self._targets(list(carry) + y_steps)
        slices = [self.cf_step(x, t) for x in xs]
        self.line(f"    {result} = {self._call(p['body'], consts + list(carry) + slices)}")
        for y, ystep in zip(ys, y_steps):
            for text in self.cf_store(y, t, ystep).split("\n"):
                self.line(f"    {text}")


CONTROL_FLOW = {
    "cond": ControlFlowEmitter.emit_cond,
    "while_loop": ControlFlowEmitter.emit_while,
    "scan": ControlFlowEmitter.emit_scan,
}
