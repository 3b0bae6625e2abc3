"""The Numba pass pipeline that generated functions compile with (`pipeline_class=` in their
decorators): Numba's nopython pipeline without two passes whose work generated code never has.

Each Numba pass walks the whole function's IR, so a pass that finds nothing still costs time
in proportion to the program: ~45 ms each in a 280-line training step. Generated code defines
no closures and builds no lists from comprehensions (InlineClosureLikes), and does no
whole-array arithmetic for Numba to fuse (NopythonRewrites: array expressions, arrays of
constants, string-literal getitems; its loops are explicit). Every other pass stays, in
Numba's order: some that look like checks are not (IRLegalization places the `del`s that keep
reference counting out of loops; ReconstructSSA gives a name that takes two types in turn, a
max reduction's integer key and then its float value, one version per type). Parallel
functions keep Numba's own pipeline (parfors need its passes).
"""
from numba.core import typed_passes, untyped_passes
from numba.core.compiler import CompilerBase
from numba.core.compiler_machinery import PassManager

_FROM_BYTECODE = (
    (untyped_passes.TranslateByteCode, "analyzing bytecode"),
    (untyped_passes.FixupArgs, "fix up args"),
)
# Numba's own order (compiler.DefaultPassBuilder), less the two passes named in the docstring
_UNTYPED = (
    (untyped_passes.IRProcessing, "processing IR"),
    (untyped_passes.WithLifting, "Handle with contexts"),
    (untyped_passes.RewriteSemanticConstants, "rewrite semantic constants"),
    (untyped_passes.DeadBranchPrune, "dead branch pruning"),
    (untyped_passes.GenericRewrites, "nopython rewrites"),  # tuple[0] -> static_getitem
    (untyped_passes.RewriteDynamicRaises, "rewrite dynamic raises"),
    (untyped_passes.MakeFunctionToJitFunction, "convert make_function into JIT functions"),
    (untyped_passes.InlineInlinables, "inline inlinable functions"),
    (untyped_passes.DeadBranchPrune, "dead branch pruning"),
    (untyped_passes.FindLiterallyCalls, "find literally calls"),
    (untyped_passes.LiteralUnroll, "handles literal_unroll"),
    # a name may take two types in turn (a max reduction's integer key, then its float value)
    (untyped_passes.ReconstructSSA, "ssa"),
    (untyped_passes.DeadBranchPrune, "dead branch pruning"),
    (untyped_passes.LiteralPropagationSubPipelinePass, "Literal propagation"),
)
_TYPED = (
    (typed_passes.NopythonTypeInference, "nopython frontend"),
    (typed_passes.PreLowerStripPhis, "remove phis nodes"),
    (typed_passes.InlineOverloads, "inline overloaded functions"),
    (typed_passes.NoPythonSupportedFeatureValidation, "ensure features that are in use are in a valid form"),
    # not only a check: it places the `del`s that end each variable's reference, without which
    # an array read in a loop is increfed on every iteration (an atomic op: 5-20x slower loops)
    (typed_passes.IRLegalization, "ensure IR is legal prior to lowering"),
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
