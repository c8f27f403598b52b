"""CURVE keys and authentication: `infill keys`, a worker that admits only listed clients, and
the loopback-only default."""
from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import stat
import time

import pytest

import fake_worker
from engine.wire import keys
from engine.client.calls import WorkerTimeout
from engine.launch import WorkerGroup, connect_address, start_worker_process, stop_worker
from engine.client.pool import AsyncWorkerPool
from engine.wire.protocol import CompleteRequest
from engine.client.sync_client import WorkerClient
from engine.worker.cli import check_bind_address, main
from lsp_server.server import InfillLanguageServer
from lsp_server.main import main as lsp_main

pytestmark = pytest.mark.timeout(120)

ANSWER_WAIT_S = 30.0  # how long an admitted client waits for a reply: only a broken worker needs it
REFUSED_WAIT_S = 1.0  # how long a refused client waits before its WorkerTimeout


@pytest.fixture
def key_dir(tmp_path):
    assert keys.main(["--dir", str(tmp_path / "keys")]) == 0
    return tmp_path / "keys"


@pytest.fixture
def remote_worker(key_dir):
    """A fake worker process with CURVE keys on every interface (tcp://*), reached over loopback."""
    [port] = free_ports(1)
    proc = start_worker_process(fake_worker.argv(f"tcp://*:{port}", key_dir),
                                f"tcp://127.0.0.1:{port}", timeout_s=20,
                                keys=keys.load_client_keys(key_dir))
    yield f"tcp://127.0.0.1:{port}"
    stop_worker(proc, timeout_s=2)


def free_ports(count: int) -> list[int]:
    """`count` different TCP ports the OS picks as free on every interface (each bound to port 0
    while the others are held), for workers to bind."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def test_keys_writes_two_pairs_and_an_allow_list(key_dir, capsys):
    names = {p.relative_to(key_dir).as_posix() for p in key_dir.rglob("*") if p.is_file()}
    assert names == {"server.public", "server.secret", "client.public", "client.secret",
                     "authorized/client.public"}
    for name in ("server.secret", "client.secret"):
        assert stat.S_IMODE((key_dir / name).stat().st_mode) == 0o600
    client = keys.load_client_keys(key_dir)
    assert keys.authorized_keys(key_dir / "authorized") == {client.public}
    assert keys.main(["--dir", str(key_dir)]) == 1  # never overwrites
    assert "already holds" in capsys.readouterr().err


@pytest.mark.slow
def test_an_authenticated_client_is_answered(remote_worker, key_dir):
    client_keys = keys.load_client_keys(key_dir)
    with WorkerClient(remote_worker, timeout_s=ANSWER_WAIT_S, keys=client_keys) as client:
        assert client.hello().model == "fake"
        assert client.health().live_requests == 0


@pytest.mark.slow
def test_a_peer_without_keys_is_refused(remote_worker):
    with WorkerClient(remote_worker, timeout_s=REFUSED_WAIT_S) as client, pytest.raises(WorkerTimeout):
        client.hello()


@pytest.mark.slow
def test_an_unlisted_client_is_refused_until_its_key_is_listed(remote_worker, key_dir, tmp_path):
    assert keys.main(["--dir", str(tmp_path / "other")]) == 0
    other = keys.load_client_keys(tmp_path / "other")
    stranger = keys.ClientKeys(other.public, other.secret, keys.load_client_keys(key_dir).server_public)
    with WorkerClient(remote_worker, timeout_s=REFUSED_WAIT_S, keys=stranger) as client:
        with pytest.raises(WorkerTimeout):
            client.hello()
    shutil.copy(tmp_path / "other" / "client.public", key_dir / "authorized" / "other.public")
    with WorkerClient(remote_worker, timeout_s=ANSWER_WAIT_S, keys=stranger) as client:
        assert client.hello().model == "fake"  # admitted without a restart


@pytest.mark.slow
def test_a_refused_client_is_logged_with_its_key_and_address(remote_worker, key_dir, tmp_path, caplog):
    assert keys.main(["--dir", str(tmp_path / "other")]) == 0
    other = keys.load_client_keys(tmp_path / "other")
    stranger = keys.ClientKeys(other.public, other.secret, keys.load_client_keys(key_dir).server_public)
    with caplog.at_level(logging.INFO, "engine.worker_stderr"):  # the worker's stderr lines
        with WorkerClient(remote_worker, timeout_s=REFUSED_WAIT_S, keys=stranger) as client:
            with pytest.raises(WorkerTimeout):
                client.hello()
        until = time.monotonic() + ANSWER_WAIT_S  # the stderr pump forwards the line soon after
        while not (lines := [r.getMessage() for r in caplog.records
                             if other.public.decode() in r.getMessage()]):
            assert time.monotonic() < until, "the worker logged no refusal naming the client's key"
            time.sleep(0.05)
    assert "refused the CURVE client" in lines[0] and "from 127.0.0.1" in lines[0]


@pytest.mark.parametrize("address", ["tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://10.0.0.2:5555"])
def test_a_non_loopback_bind_needs_keys(address):
    with pytest.raises(ValueError, match="infill keys"):
        check_bind_address(address)
    assert check_bind_address(address, curve=True) == address


def test_serve_refuses_a_public_bind_without_keys_and_missing_keys(capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        main(["--bind", "tcp://*:5555"])
    assert info.value.code == 2 and "--keys DIR" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["--bind", "tcp://*:5555", "--keys", str(tmp_path / "none")])
    assert info.value.code == 2 and "infill keys --dir" in capsys.readouterr().err


def test_a_malformed_key_file_is_reported(key_dir):
    (key_dir / "server.secret").write_text("not a key\n")
    with pytest.raises(ValueError, match="server.secret does not hold a Z85 CURVE key"):
        keys.load_server_keys(key_dir)


@pytest.mark.slow
async def test_a_group_of_keyed_workers_on_every_interface(key_dir):
    ports = free_ports(2)
    group = WorkerGroup(lambda address: fake_worker.argv(address, key_dir),
                        [f"tcp://*:{port}" for port in ports], keys.load_client_keys(key_dir),
                        startup_timeout_s=20)
    group.start()
    pool = AsyncWorkerPool([connect_address(a) for a in group.addresses], timeout_s=ANSWER_WAIT_S,
                           keys=keys.load_client_keys(key_dir))
    try:
        assert [connect_address(a) for a in group.addresses] == [f"tcp://127.0.0.1:{port}" for port in ports]
        results = await asyncio.gather(*(pool.complete(CompleteRequest(f"r{i}", "fim", "x", ""))
                                         for i in range(6)))
        assert len({r.items[0].text for r in results}) == 2  # both workers answered
    finally:
        pool.close()
        group.stop()


def test_the_language_server_needs_readable_worker_keys(capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        lsp_main(["--worker-keys", str(tmp_path)])
    assert info.value.code == 2 and "infill keys --dir" in capsys.readouterr().err


async def test_the_worker_keys_setting_gives_the_language_server_its_keys(remote_worker, key_dir, tmp_path):
    server = InfillLanguageServer()
    session = server.session
    assert session.workers.keys_for(session.settings) is None  # no setting, no --worker-keys
    server.configure({"workerAddress": remote_worker, "workerKeys": str(key_dir)})
    keys = session.workers.keys_for(session.settings)
    pool = AsyncWorkerPool([remote_worker], timeout_s=ANSWER_WAIT_S, keys=keys)
    try:
        assert (await pool.complete(CompleteRequest("r", "fim", "x", ""))).items
    finally:
        pool.close()
    server.configure({"workerKeys": str(tmp_path / "missing")})
    with pytest.raises(ValueError, match="infill keys --dir"):
        session.workers.keys_for(session.settings)
