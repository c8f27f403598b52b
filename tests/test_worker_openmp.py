"""Tests of the worker's OpenMP defaults (engine.worker.cli): set before torch loads, never over the user's;
one thread for a small model."""
from __future__ import annotations

import subprocess
import sys

from engine.worker.cli import OMP_WAIT_POLICY, ONE_THREAD_PARAMS, default_threads, openmp_defaults


def test_the_worker_lets_openmp_threads_sleep_unless_the_environment_says_otherwise():
    environ: dict[str, str] = {}
    openmp_defaults(environ)
    assert environ == {"OMP_WAIT_POLICY": OMP_WAIT_POLICY} and OMP_WAIT_POLICY == "PASSIVE"
    told = {"OMP_WAIT_POLICY": "ACTIVE"}
    openmp_defaults(told)
    assert told == {"OMP_WAIT_POLICY": "ACTIVE"}


def test_the_worker_command_line_loads_no_torch_before_its_runner():
    """OpenMP reads its settings once, as torch loads: the worker's module must not load it first."""
    code = "import sys, engine.worker.cli; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_small_model_on_the_cpu_computes_on_one_thread_unless_told_otherwise():
    small, large = 16_000_000, ONE_THREAD_PARAMS
    assert default_threads(small, "cpu", None, {}) == 1
    assert default_threads(large, "cpu", None, {}) is None  # torch's own choice
    assert default_threads(small, "cpu", 2, {}) is None  # --threads was set already
    assert default_threads(small, "cpu", None, {"OMP_NUM_THREADS": "2"}) is None
    assert default_threads(small, "cuda:0", None, {}) is None
