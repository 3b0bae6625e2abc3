"""Code generation: lower a staged `Program` to one Numba module and run it.

Owns: fusion planning (`plan`), the scalar and loop-nest lowering tables (`scalar_rules`,
`loop_rules`), the Numba CPU emitter (`emit_cpu`), the on-disk module cache
(`disk_cache`), the runtime helpers generated code calls (`support`, `vmath`, and the
whole-array `kernels`, reached through function pointers: `kernel_calls`), the shorter Numba
pass pipeline generated functions compile with (`numba_pipeline`), and the executable object
`jit` runs.
May import: omnistage.core, omnistage.staging. Never imports autodiff or vectorize.
Numba is imported lazily, by the first compile — `import omnistage` must stay Numba-free.
"""
