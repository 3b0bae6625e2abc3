"""The Numba pass pipeline that generated functions compile with (`pipeline_class=` in their
decorators): Numba's nopython pipeline without the passes whose work generated code never has.

Each Numba pass walks the whole function's IR, so a pass that finds nothing still costs time
in proportion to the program. Generated code defines no closures or inner functions, builds
no lists (InlineClosureLikes, MakeFunctionToJitFunction) and does no whole-array arithmetic
for Numba to fuse (NopythonRewrites' array expressions; loops are explicit). IRLegalization
only checks for what Numba's own passes must not produce. Kept: everything that changes what
generated code means (static getitem rewrites, SSA versions of a name that takes two types in
turn, inlining of `inline='always'` helpers, literal handling) and the same typing and
lowering. Parallel functions keep Numba's own pipeline (parfors need its passes).
"""
from numba.core import typed_passes, untyped_passes
from numba.core.compiler import CompilerBase
from numba.core.compiler_machinery import PassManager

_FROM_BYTECODE = (
    (untyped_passes.TranslateByteCode, "analyzing bytecode"),
    (untyped_passes.FixupArgs, "fix up args"),
)
_UNTYPED = (
    (untyped_passes.IRProcessing, "processing IR"),
    (untyped_passes.WithLifting, "handle with contexts"),
    (untyped_passes.RewriteSemanticConstants, "rewrite semantic constants"),
    (untyped_passes.DeadBranchPrune, "dead branch pruning"),
    (untyped_passes.GenericRewrites, "nopython rewrites"),  # tuple[0] -> static_getitem
    (untyped_passes.RewriteDynamicRaises, "rewrite dynamic raises"),
    (untyped_passes.InlineInlinables, "inline inlinable functions"),
    (untyped_passes.FindLiterallyCalls, "find literally calls"),
    (untyped_passes.LiteralUnroll, "handles literal_unroll"),
    # a name may take two types in turn (a max reduction's integer key, then its float value)
    (untyped_passes.ReconstructSSA, "ssa"),
)
_TYPED = (
    (typed_passes.NopythonTypeInference, "nopython frontend"),
    (typed_passes.PreLowerStripPhis, "remove phis nodes"),
    (typed_passes.InlineOverloads, "inline overloaded functions"),
    (typed_passes.NoPythonSupportedFeatureValidation, "ensure features that are in use are in a valid form"),
    (typed_passes.AnnotateTypes, "annotate types"),
    (typed_passes.NativeLowering, "native lowering"),
    (typed_passes.NoPythonBackend, "nopython mode backend"),
)


class GeneratedCodeCompiler(CompilerBase):
    """Numba's compiler with the pipeline above."""

    def define_pipelines(self):
        pm = PassManager("omnistage_generated")
        # what is left of a function after an objmode block is lifted out arrives as IR
        start = _FROM_BYTECODE if self.state.func_ir is None else ()
        for pass_class, description in start + _UNTYPED + _TYPED:
            pm.add_pass(pass_class, description)
        pm.finalize()
        return [pm]
