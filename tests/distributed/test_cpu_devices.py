"""Several CPU devices per process (OMNISTAGE_CPU_DEVICES=N or XLA_FLAGS=
--xla_force_host_platform_device_count=N): local_devices() lists N, pmap maps N slices whose
collectives combine in the kernel, then across processes. Workers run in fresh processes (the
count is read at import) and compare with the one-process vmap."""
import os
import subprocess
import sys

import pytest

from omnistage.core.devices import configured_cpu_devices
from tests.distributed.mpi_job import HERE, checks, failures, job_env, run_job


@pytest.mark.parametrize("environ, count", [
    ({}, 1),
    ({"OMNISTAGE_CPU_DEVICES": "4"}, 4),
    ({"XLA_FLAGS": "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=8"}, 8),
    ({"OMNISTAGE_CPU_DEVICES": "2", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}, 2),
])
def test_the_device_count_comes_from_the_environment(environ, count):
    assert configured_cpu_devices(environ) == count


@pytest.mark.parametrize("environ", [{"OMNISTAGE_CPU_DEVICES": "0"}, {"XLA_FLAGS": "--xla_force_host_platform_device_count=two"}])
def test_a_bad_device_count_is_an_error(environ):
    with pytest.raises(ValueError, match="positive number of CPU devices"):
        configured_cpu_devices(environ)


def _run_alone(tmp_path, count, **variables):
    os.makedirs(tmp_path / "results", exist_ok=True)
    env = job_env(str(tmp_path), OMNISTAGE_TEST_RESULTS=str(tmp_path / "results"), **variables)
    proc = subprocess.run([sys.executable, os.path.join(HERE, "cpu_devices_worker.py"), str(count)], env=env,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    proc.results = str(tmp_path / "results")
    return checks(proc, n=1)


@pytest.mark.slow  # a fresh process compiling three pmaps: ~20-30 s here
@pytest.mark.parametrize("count, variables", [
    (4, {"OMNISTAGE_CPU_DEVICES": "4"}),
    (2, {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"}),
])
def test_pmap_over_several_cpu_devices_matches_vmap(tmp_path, count, variables):
    results = _run_alone(tmp_path, count, **variables)
    assert not failures(results), failures(results)
    assert results[0].get("collectives float32") == "ok"


@pytest.mark.slow  # two processes compiling three pmaps each: ~40 s here
def test_two_processes_of_two_devices_match_vmap(tmp_path):
    results = checks(run_job("cpu_devices_worker.py", "2", cache_dir=tmp_path, OMNISTAGE_CPU_DEVICES="2"))
    assert not failures(results), failures(results)
    assert results[1].get("collectives int32") == "ok"
