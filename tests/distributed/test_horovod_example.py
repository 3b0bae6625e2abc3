"""The issue's done-criterion: examples/horovod.py (the seeds' "Write your own Horovod") under
`mpiexec -n 2` prints, step by step, the losses of the one-process run on the same global
batches, to float32 rounding."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.distributed.mpi_job import HERE, job_env, mpiexec

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "horovod.py")


def _losses(command, cache_dir, **env):
    out = subprocess.run(command + [EXAMPLE, "--steps", "8", "--log-every", "1"], env=job_env(str(cache_dir), **env),
                         capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-3000:]
    return [float(x) for x in re.findall(r"^step \d+; loss (\S+)$", out.stdout, re.M)]


@pytest.mark.slow  # compiles the training step twice (one and two processes): ~1-2 min
def test_two_processes_give_the_one_process_losses(tmp_path):
    launcher = mpiexec()
    one = _losses([sys.executable], tmp_path)
    two = _losses([launcher, "-n", "2", sys.executable], tmp_path)
    assert len(one) == len(two) == 8
    np.testing.assert_allclose(two, one, rtol=5e-6)


@pytest.mark.slow  # compiles the training step twice (one and four devices): ~1-2 min
def test_four_cpu_devices_in_two_processes_give_the_one_device_losses(tmp_path):
    launcher = mpiexec()
    one = _losses([sys.executable], tmp_path)
    four = _losses([launcher, "-n", "2", sys.executable], tmp_path, OMNISTAGE_CPU_DEVICES="2")
    assert len(one) == len(four) == 8
    np.testing.assert_allclose(four, one, rtol=5e-6)


@pytest.mark.slow  # one and two processes, each compiling the training step: ~1-2 min
def test_distributed_benchmark_prints_its_tables(tmp_path):
    mpiexec()
    script = os.path.join(os.path.dirname(EXAMPLE), "..", "benchmarks", "distributed.py")
    out = subprocess.run([sys.executable, script, "--steps", "3", "--batch", "64"], env=job_env(str(tmp_path)),
                         capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "all-reduce of float32 (2 processes)" in out.stdout and "4194304" in out.stdout
    assert re.search(r"^\s+64\s+\S+ [mu]s\s+\S+ [mu]s\s+\S+x$", out.stdout, re.M), out.stdout
