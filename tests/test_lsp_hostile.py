"""The language server against hostile and careless connections, as real processes on real
sockets: a page's POST, an initialize without the token, a second connection, connections that
never authenticate, documents that cannot be read, the token file and the stats log. The server
runs on a fake worker (`tests/fake_worker.py`, whose completion is `PID:prefix`) over loopback
TCP (`tests/lsp_procs.py`), driven by raw sockets, so that every byte is the test's. The rule of
the waiting room for unauthenticated connections is also tested in-process, with an
authentication timeout long enough that only that rule can close a connection.
"""
from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

import pytest

from lsp_procs import (WAIT_S, TcpServer, closed_by_server, completion_texts, did_open, framed, initialize,
                       inline, notification, request)
from lsp_server import transport
from lsp_server.main import exposure_warning
from lsp_server.server import build_server
from lsp_server.stats import append_regular

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture
def worker(fake_worker_at):
    return fake_worker_at


@pytest.fixture
def tcp_server(tmp_path, worker):
    server = TcpServer(tmp_path, worker)
    yield server
    server.stop()


def test_a_browser_style_post_is_closed_and_changes_nothing(tcp_server):
    trap = socket.socket()  # where the page would like the user's code to go
    trap.bind(("127.0.0.1", 0))
    trap.listen()
    redirect = framed(notification("workspace/didChangeConfiguration", {"settings": {"infill": {
        "workerAddress": f"tcp://127.0.0.1:{trap.getsockname()[1]}", "statsLog": "/tmp/x"}}}))
    post = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nOrigin: http://evil.test\r\n"
            b"Content-Length: %d\r\n\r\n%b" % (len(redirect), redirect))
    with tcp_server.connect() as page:
        page.sendall(post)
        assert closed_by_server(page)
    sock, replies = tcp_server.editor()
    with sock:
        sock.sendall(framed(inline(2)))
        texts = completion_texts(replies.wait(2))
    assert texts and all(":" in text for text in texts)  # the fake worker's `PID:prefix`
    trap.settimeout(0.5)
    with pytest.raises(TimeoutError):
        trap.accept()
    trap.close()


@pytest.mark.parametrize("options", [{}, {"token": "0" * 64}, {"token": 12}])
def test_an_initialize_without_the_token_is_closed_and_settings_stay(tcp_server, options):
    with tcp_server.connect() as intruder:
        intruder.sendall(framed(initialize({**options, "statsLog": str(tcp_server.stats) + ".evil"})))
        assert closed_by_server(intruder)
    with tcp_server.connect() as intruder:  # anything before initialize closes it too
        intruder.sendall(framed(did_open()))
        assert closed_by_server(intruder)
    assert not Path(str(tcp_server.stats) + ".evil").exists()
    sock, replies = tcp_server.editor()
    with sock:
        sock.sendall(framed(inline(2)))
        assert completion_texts(replies.wait(2))


def test_a_second_connection_is_closed_while_the_editor_is_live(tcp_server):
    sock, replies = tcp_server.editor()
    with sock:
        for attempt in range(2):
            with tcp_server.connect() as second:
                second.sendall(framed(initialize({"token": tcp_server.token}, msg_id=100 + attempt)))
                assert closed_by_server(second)
            sock.sendall(framed(inline(2 + attempt)))
            assert completion_texts(replies.wait(2 + attempt))


def test_connections_that_never_authenticate_cannot_keep_the_editor_out(tcp_server):
    held = [tcp_server.connect() for _ in range(transport.MAX_UNAUTHENTICATED + 4)]
    for index, sock in enumerate(held):
        sock.sendall([b"", b"Content-Length: 40", b"Content-Length: 40\r\n\r\n{"][index % 3])
    sock, replies = tcp_server.editor()  # it would be closed at once if the waiting kept it out
    with sock:
        sock.sendall(framed(inline(2)))
        assert completion_texts(replies.wait(2))
        assert all(closed_by_server(waiting) for waiting in held)  # room made, or timed out
    for waiting in held:
        waiting.close()


async def test_a_new_connection_closes_the_oldest_waiting_one():
    listener = transport.TcpListener(build_server(stats_log=""), "t" * 64, 1 << 20, auth_timeout_s=600.0)
    tcp = await asyncio.start_server(listener.on_connection, "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    async with tcp:
        held = [await asyncio.open_connection("127.0.0.1", port)
                for _ in range(transport.MAX_UNAUTHENTICATED + 1)]
        oldest_reader = held[0][0]
        assert await asyncio.wait_for(oldest_reader.read(), WAIT_S) == b""
        assert listener.num_waiting == transport.MAX_UNAUTHENTICATED  # the newest took its place
        for _, writer in held:
            writer.close()
        deadline = time.monotonic() + WAIT_S
        while listener.num_waiting:  # each sees its end and leaves the waiting room
            assert time.monotonic() < deadline, "closed connections kept waiting"
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("host, warned", [("127.0.0.1", False), ("::1", False), ("localhost", False),
                                          ("0.0.0.0", True), ("::", True), ("192.168.1.20", True),
                                          ("build-box", True)])
def test_a_host_other_than_loopback_is_warned_of(host, warned):
    warning = exposure_warning(host)
    assert (warning is not None) == warned
    if warned:
        assert "other machines" in warning and "127.0.0.1" in warning


def test_never_opened_documents_answer_empty_at_once(tcp_server, tmp_path):
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    sock, replies = tcp_server.editor()
    with sock:
        for msg_id, uri in enumerate(["file:///dev/zero", fifo.as_uri(), (tmp_path / "absent.py").as_uri()], 2):
            sock.sendall(framed(inline(msg_id, uri, 0, 0)))
            assert replies.wait(msg_id, timeout_s=5)["result"] == []
        sock.sendall(framed(inline(9)))
        assert completion_texts(replies.wait(9))  # the event loop was never blocked


def test_the_token_file_is_private_and_removed_at_the_end(tcp_server):
    assert tcp_server.token_file.stat().st_mode & 0o777 == 0o600 and len(tcp_server.token) == 64
    sock, replies = tcp_server.editor()
    with sock:
        sock.sendall(framed(request(2, "shutdown", None)))
        replies.wait(2)
        sock.sendall(framed(notification("exit", None)))
    assert tcp_server.process.wait(WAIT_S) == 0
    assert not tcp_server.token_file.exists()


def test_the_stats_log_is_written_to_regular_files_only(tmp_path):
    fifo, plain = tmp_path / "fifo", tmp_path / "stats.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        append_regular(fifo, b"x\n")  # no reader: refused at once, never waited on
    with pytest.raises(OSError):
        append_regular(Path("/dev/null"), b"x\n")
    append_regular(plain, b"x\n")
    assert plain.read_bytes() == b"x\n" and plain.stat().st_mode & 0o777 == 0o600
