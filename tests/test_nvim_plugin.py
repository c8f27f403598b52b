"""The Neovim plugin (editors/nvim) in a real, headless Neovim: tests/nvim/test_plugin.lua types
into a Python buffer, waits for the ghost text, moves away, types again, accepts with <Tab>, and
checks the buffer and the server's stats log; tests/nvim/test_tcp.lua connects to a running
`infill lsp --tcp PORT` (on a fake worker) with its token. On each Neovim `run_nvim` finds (0.7 on PATH,
which `.ci/run` installs, and the dev extra's 0.12); a missing one is skipped, saying why."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fake_worker
from engine.launch import start_worker_process, stop_worker
from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_plugin.lua"
TCP_SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_tcp.lua"
WAIT_S = 60  # for the server to listen, only against a hang
SOURCE = ("import os\n\n\ndef add(a, b):\n    return a + b\n\n\n"
          "def read_lines(path):\n    with open(path) as handle:\n        return \n")


def test_neovim_plugin_shows_ghost_text_and_accepts_it(tmp_path, run_nvim):
    source, stats = tmp_path / "example.py", tmp_path / "stats.jsonl"
    source.write_text(SOURCE)
    outcome = run_nvim(SCRIPT, INFILL_PLUGIN=str(REPO_ROOT / "editors" / "nvim"), INFILL_FILE=str(source),
                       INFILL_STATS=str(stats))
    assert outcome["suggestion"] and outcome["events"][:4] == ["show", "reject", "show", "accept"]


def listening(port: int) -> bool:
    """Whether a socket of this machine listens on TCP `port` (from /proc: no probe connection,
    which the server, serving one client at a time, would take for its client)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                return True
    return False


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def tcp_server(tmp_path, short_tmp):
    """`infill lsp --tcp PORT` on a fake worker: (address, token file)."""
    worker_address = f"ipc://{short_tmp}/w.sock"
    worker = start_worker_process(fake_worker.argv(worker_address), worker_address, timeout_s=20)
    port, token_file = free_port(), tmp_path / "lsp.token"
    log = tmp_path / "tcp-lsp.log"
    server = subprocess.Popen([sys.executable, "-m", "lsp_server", "--tcp", str(port), "--worker",
                               worker_address, "--token-file", str(token_file), "--log-file", str(log)],
                              cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + WAIT_S
        while not (token_file.exists() and listening(port)):
            assert server.poll() is None and time.monotonic() < deadline, (
                f"the server did not listen on {port}: {log.read_text()[-2000:] if log.exists() else ''}")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}", token_file
    finally:
        server.kill()
        server.wait()
        stop_worker(worker)


def test_neovim_plugin_connects_to_a_tcp_server_with_its_token(tmp_path, run_nvim, tcp_server):
    address, token_file = tcp_server
    source, other = tmp_path / "example.py", tmp_path / "other" / "other.py"
    other.parent.mkdir()
    source.write_text(SOURCE)
    other.write_text(SOURCE)
    outcome = run_nvim(TCP_SCRIPT, INFILL_PLUGIN=str(REPO_ROOT / "editors" / "nvim"), INFILL_ADDRESS=address,
                       INFILL_TOKEN_FILE=str(token_file), INFILL_FILE=str(source),
                       INFILL_OTHER_FILE=str(other))
    assert outcome["inline"]
