"""The sizes at which the CPU emitter (emit_cpu) changes how it loops over a reduction or a
product, in a module of their own: the op tier (op_tier) must give the fused build's bits, so it
reads the same thresholds, and a program's first call there should not import the emitter and
its dependencies to read five numbers (kernel_lsq's first jit of a process: ~2 ms)."""

FEW_COLUMNS = 16  # leading-axes reductions with this few outputs: a register accumulator each
KEPT_OUTER_MAX = 64  # non-trailing reductions of the last axis with this few outputs: kept-outer
VECTOR_MIN = 32  # shorter innermost reductions stay plain scalar loops (exact left-to-right)
# longer float sums are summed in blocks of this many innermost elements, added up in double
# or compensated (emit_cpu._blocked_sum)
SUM_BLOCK = 1024

# A product of at most this many multiply-adds is a loop nest over the operands in place:
# a BLAS call costs its allocation, the call through a pointer and the library's dispatch,
# ~0.6 us for a 2x2 product in a loop body (JAX's control example makes ~14 per iLQR step),
# where the nest takes ~0.01 us. At this size the nest (scalar, in k order) still beats the
# call; it sums in another order than BLAS, so its bits may differ from an eager product's.
SMALL_PRODUCT_WORK = 512
