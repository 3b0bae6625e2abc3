"""Every public name of JAX 0.10.2's jax, jax.numpy, jax.lax, jax.numpy.fft, jax.numpy.linalg,
jax.scipy.special and jax.nn (jax_0_10_names.json, generated once from JAX with `dir()`) is
ours, or a deliberate omission below (with its reason), or listed as not done yet. The
not-yet list must stay current: a name that appears in omnistage must leave it."""
import json
import os

import pytest

import omnistage
import omnistage.lax
import omnistage.nn
import omnistage.numpy
import omnistage.scipy.special

NAMES = json.load(open(os.path.join(os.path.dirname(__file__), "jax_0_10_names.json")))
MODULES = {
    "jax": omnistage, "jax.numpy": omnistage.numpy, "jax.lax": omnistage.lax, "jax.numpy.fft": omnistage.numpy.fft,
    "jax.numpy.linalg": omnistage.numpy.linalg, "jax.scipy.special": omnistage.scipy.special, "jax.nn": omnistage.nn,
}

# reason -> {namespace: names}
DELIBERATE = {
    "GSPMD sharding and meshes: omnistage's devices are pmap/MPI processes, arrays are not sharded": {
        "jax": "NamedSharding P Shard make_mesh set_mesh shard_map smap reshard sharding make_array_from_callback "
               "make_array_from_process_local_data make_array_from_single_device_arrays remove_size_one_mesh_axis_from_type "
               "auto_pcast".split(),
        "jax.lax": "with_sharding_constraint sharding_constraint_p pcast pbroadcast psum_scatter all_to_all all_to_all_p "
                   "ragged_all_to_all ragged_all_to_all_p pshuffle pswapaxes psend precv".split(),
    },
    "JAX's experimental mutable array references": {"jax": "Ref new_ref empty_ref free_ref freeze ref".split()},
    "JAX's implementation modules and XLA/TPU interfaces (internals, export, FFI, profiler, jax2tf)": {
        "jax": "ad api_util interpreters lib ops stages typing export ffi profiler monitoring experimental dlpack "
               "custom_batching custom_derivatives image memory ds effects_barrier fwd_and_bwd make_user_context "
               "jax2tf_associative_scan_reductions copy_to_host_async live_arrays print_environment_info".split(),
        "jax.lax": "composite platform_dependent dce_sink dce_sink_p shape_as_value stage stage_p device_put_p "
                   "create_token create_token_p after_all after_all_p rng_bit_generator rng_bit_generator_p "
                   "RandomAlgorithm rng_uniform rng_uniform_p AccuracyMode Tolerance DotAlgorithm DotAlgorithmPreset "
                   "ragged_dot ragged_dot_general RaggedDotDimensionNumbers scaled_dot approx_top_k_p".split(),
        "jax.nn": "get_scaled_dot_general_config scaled_dot_general scaled_matmul".split(),
    },
    "JAX's XLA-only configuration flags (transfer guards, PRNG implementation switches, shape polymorphism)": {
        "jax": "transfer_guard transfer_guard_device_to_device transfer_guard_device_to_host transfer_guard_host_to_device "
               "thread_guard array_garbage_collection_guard default_prng_impl enable_custom_prng legacy_prng_key "
               "threefry_partitionable softmax_custom_jvp allow_f16_reductions host_count host_id host_ids "
               "process_indices".split(),
    },
    "JAX primitives that omnistage composes from smaller primitives (lax.clamp, square, top_k, stack, ... are functions "
    "over other primitives here, with their derivatives and batching from the parts): no primitive object to export": {
        "jax.lax": "clamp_p clz_p copy_p eq_to_p le_to_p lt_to_p linear_solve_p mulhi_p optimization_barrier_p reduce_p "
                   "reduce_precision_p reduce_window_p reduce_window_sum_p scatter_sub_p select_and_scatter_p split_p square_p "
                   "stack_p tile_p top_k_p unstack_p".split()
                   # the special functions (lax/special.py): compositions with JAX's derivative rules
                   + "bessel_i0e_p bessel_i1e_p digamma_p erf_inv_p erf_p erfc_p igamma_grad_a_p igamma_p igammac_p "
                     "lgamma_p polygamma_p regularized_incomplete_beta_p zeta_p".split(),
    },
    "sub-byte and 8-bit float types: Numba cannot compute on them (ml_dtypes storage only)": {
        "jax.numpy": "float4_e2m1fn float6_e2m3fn float6_e3m2fn float8_e3m4 float8_e4m3 float8_e4m3b11fnuz float8_e4m3fn "
                     "float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu int1 int2 int4 uint1 uint2 uint4".split(),
    },
}

# Not done yet (issue 21): each is a gap to close, not a decision.
NOT_YET = {}


def _listed(table, namespace):
    return {n for group in table.values() for n in group.get(namespace, ())} if table is DELIBERATE else set(table.get(namespace, ()))


@pytest.mark.parametrize("namespace", MODULES)
def test_every_jax_name_is_ours_or_listed(namespace):
    module = MODULES[namespace]
    missing = {n for n in NAMES[namespace] if not hasattr(module, n)}
    unexplained = missing - _listed(DELIBERATE, namespace) - _listed(NOT_YET, namespace)
    assert not unexplained, f"{namespace} lacks {sorted(unexplained)}: implement them or list them above with a reason"


@pytest.mark.parametrize("namespace", MODULES)
def test_the_not_yet_list_is_current(namespace):
    module = MODULES[namespace]
    done = {n for n in _listed(NOT_YET, namespace) if hasattr(module, n)}
    assert not done, f"{namespace} now has {sorted(done)}: remove them from NOT_YET"
    stray = _listed(NOT_YET, namespace) - set(NAMES[namespace])
    assert not stray, f"{sorted(stray)} are not names of JAX's {namespace}"


def test_counts_for_the_record():
    """How much of JAX's surface is here (printed with -s)."""
    for namespace, module in MODULES.items():
        have = sum(hasattr(module, n) for n in NAMES[namespace])
        print(f"{namespace}: {have}/{len(NAMES[namespace])} of JAX {NAMES['jax_version']}'s names")
