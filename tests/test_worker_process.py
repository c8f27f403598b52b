"""The worker as a process and its command line: SIGTERM stops it cleanly, a worker that dies at
startup (or a bad model folder) reports why, and binds other than loopback are refused without
CURVE keys."""
# The fixtures imported from worker_fakes are the tests' parameters: not redefinitions.
# ruff: noqa: F811
from __future__ import annotations

import sys

import pytest

from engine.client.sync_client import WorkerClient
from engine.launch import WorkerStartError, spawn_local_worker, start_worker_process, stop_worker
from engine.worker.cli import check_bind_address, main
from worker_fakes import REPLY_WAIT_S
from worker_fakes import ipc_address  # noqa: F401 (a fixture)

pytestmark = pytest.mark.timeout(120)


FAKE_WORKER = """
import sys
from engine.worker.worker import Worker, serve_until_signal
class Runner:
    def info(self):
        return {"model": "fake", "family": "fake", "vocab_size": 8, "max_context": 8}
worker = Worker(Runner(), sys.argv[1])
sys.stderr.write("fake worker ready\\n")
serve_until_signal(worker)
"""


def test_sigterm_stops_a_subprocess_worker_cleanly(ipc_address):
    proc = start_worker_process([sys.executable, "-c", FAKE_WORKER, ipc_address], ipc_address,
                                timeout_s=10)
    with WorkerClient(ipc_address, timeout_s=REPLY_WAIT_S) as client:
        assert client.hello().model == "fake"
    assert stop_worker(proc, timeout_s=5) == 0


def test_a_worker_that_dies_at_startup_reports_its_stderr(ipc_address):
    script = "import sys; sys.stderr.write('no model in /nowhere\\n'); sys.exit(3)"
    with pytest.raises(WorkerStartError, match=r"code 3(.|\n)*no model in /nowhere"):
        start_worker_process([sys.executable, "-c", script], ipc_address, timeout_s=10)


def test_spawn_local_worker_reports_a_bad_model_folder():
    with pytest.raises(WorkerStartError, match=r"code 2(.|\n)*--model /nonexistent/model is not a folder"):
        spawn_local_worker(model_dir="/nonexistent/model", startup_timeout_s=20)


@pytest.mark.parametrize("address", ["ipc:///tmp/w.sock", "tcp://127.0.0.1:5555", "tcp://127.0.0.1:*"])
def test_loopback_binds_are_accepted(address):
    assert check_bind_address(address) == address


@pytest.mark.parametrize("address", ["tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://10.0.0.2:5555",
                                     "tcp://127.0.0.1:70000", "inproc://x", "ipc://", "5555"])
def test_other_binds_are_refused(address):
    with pytest.raises(ValueError, match="CURVE"):
        check_bind_address(address)


def test_main_refuses_a_public_bind(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--bind", "tcp://0.0.0.0:5555"])
    assert info.value.code == 2 and "CURVE" in capsys.readouterr().err


def test_main_help_describes_every_flag(capsys):
    with pytest.raises(SystemExit):
        main(["--help"], prog="infill serve")
    out = capsys.readouterr().out
    assert all(flag in out for flag in ("infill serve", "--bind", "--model", "--threads"))
