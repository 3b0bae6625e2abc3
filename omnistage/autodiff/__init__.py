"""Automatic differentiation as passes over Programs.

Forward mode (`forward.jvp_call`) replays a Program, binding each statement's JVP rule, so
the tangent statements are staged beside the primal ones. Reverse mode (`reverse.vjp_call`)
uses *direct adjoints* (as Tangent does, not JAX's linearize-then-transpose): it replays the
primal statements (keeping every value), then walks the statements backwards binding each
one's VJP rule, which reads primal inputs/outputs and the output cotangents. Both run in the
current context: under a staging trace they produce the derivative Program (readable, one
adjoint statement per line, commented with the primal line and `(vjp)`); with no trace they
compute eagerly with the NumPy implementations.

Rules live in tables keyed by primitive name (`rules.JVP`, `rules.VJP`); each rule is plain
Python over `omnistage.lax`, so derivatives of derivatives work by the same mechanism.
Modules: `zeros` (symbolic zeros), `rules` (tables and the helpers that derive both rules
from partial derivatives or a transpose), `*_rules` (per primitive family), `forward`,
`reverse`, `custom` (custom_jvp / custom_vjp), `linearize` (known/unknown split).
"""
