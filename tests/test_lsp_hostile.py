"""The language server against hostile and careless input, as real processes on real sockets.

The server runs on a fake worker (`tests/fake_worker.py`, whose completion is `PID:prefix`), over
stdio or loopback TCP, and is driven by raw sockets and pipes, so that every byte is the test's.
The rule of the waiting room for unauthenticated connections is also tested in-process, with an
authentication timeout long enough that only that rule can close a connection.
"""
from __future__ import annotations

import asyncio
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fake_worker
from engine.launch import start_worker_process, stop_worker
from infill.paths import REPO_ROOT
from lsp_server import transport
from lsp_server.main import exposure_warning
from lsp_server.server import build_server
from lsp_server.stats import append_regular

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

WAIT_S = 20.0  # far above what any answer here takes; only a broken server reaches it
TEXT = "def area(r):\n    return 3.14 * r\n"
URI = "file:///tmp/infill-hostile/shapes.py"


def framed(message: dict, length_delta: int = 0) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body) + length_delta, body)


def request(msg_id, method: str, params) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def notification(method: str, params) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def initialize(options: dict, msg_id=1) -> dict:
    return request(msg_id, "initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                          "initializationOptions": options})


def inline(msg_id, uri: str = URI, line: int = 1, character: int = 19) -> dict:
    return request(msg_id, "textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character},
        "context": {"triggerKind": 1}})


def did_open(uri: str = URI, text: str = TEXT) -> dict:
    return notification("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}})


class Replies:
    """Frames read from a byte stream (a socket or a pipe), by id."""

    def __init__(self, read) -> None:
        self._read = read
        self._buf = b""
        self.closed = False

    def _frames(self) -> list[dict]:
        found = []
        while b"\r\n\r\n" in self._buf:
            header, rest = self._buf.split(b"\r\n\r\n", 1)
            length = int(header.split(b"\r\n")[0].split(b":")[1])
            if len(rest) < length:
                break
            found.append(json.loads(rest[:length]))
            self._buf = rest[length:]
        return found

    def wait(self, msg_id, timeout_s: float = WAIT_S) -> dict:
        """The reply to `msg_id`; fails when none comes in time or the stream closes first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for frame in self._frames():
                if frame.get("id") == msg_id and "method" not in frame:
                    return frame
            chunk = self._read(deadline - time.monotonic())
            if chunk == b"":
                self.closed = True
                raise AssertionError(f"the stream closed before the reply to {msg_id}")
            self._buf += chunk or b""
        raise AssertionError(f"no reply to {msg_id} within {timeout_s} s")


def socket_reader(sock: socket.socket):
    def read(timeout_s: float) -> bytes | None:
        sock.settimeout(max(0.01, timeout_s))
        try:
            return sock.recv(65536)
        except TimeoutError:
            return None
        except ConnectionError:
            return b""
    return read


def pipe_reader(pipe):
    def read(timeout_s: float) -> bytes | None:
        ready, _, _ = select.select([pipe], [], [], max(0.01, timeout_s))
        return os.read(pipe.fileno(), 65536) if ready else None
    return read


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server closes `sock` (within WAIT_S) without sending anything."""
    sock.settimeout(WAIT_S)
    try:
        return sock.recv(65536) == b""
    except ConnectionError:
        return True


@pytest.fixture
def worker(fake_worker_at):
    return fake_worker_at


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TcpServer:
    def __init__(self, tmp_path: Path, worker: str) -> None:
        self.port, self.token_file = free_port(), tmp_path / "lsp.token"
        self.stats = tmp_path / "stats.jsonl"
        self.log = tmp_path / "lsp.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "lsp_server", "--tcp", str(self.port), "--worker", worker,
             "--token-file", str(self.token_file), "--log-file", str(self.log),
             "--stats-log", str(self.stats)], cwd=REPO_ROOT, stderr=subprocess.PIPE)
        deadline = time.monotonic() + WAIT_S
        while not self.token_file.exists() or not self._listening():
            assert time.monotonic() < deadline and self.process.poll() is None, "the server never listened"
            time.sleep(0.05)
        self.token = self.token_file.read_text().strip()

    def _listening(self) -> bool:
        with socket.socket() as probe:  # a connection that sends nothing and leaves changes nothing
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=WAIT_S)

    def editor(self, **options) -> tuple[socket.socket, Replies]:
        """A connection that initializes with the token and opens the example document."""
        sock = self.connect()
        replies = Replies(socket_reader(sock))
        sock.sendall(framed(initialize({"token": self.token, "deadlineMs": 5000, **options})))
        assert "result" in replies.wait(1)
        sock.sendall(framed(notification("initialized", {})) + framed(did_open()))
        return sock, replies

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def tcp_server(tmp_path, worker):
    server = TcpServer(tmp_path, worker)
    yield server
    server.stop()


def completion_texts(reply: dict) -> list[str]:
    return [item["insertText"] for item in reply["result"]]


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


class StdioServer:
    """`python -m lsp_server` on pipes, initialized, with the example document open."""

    def __init__(self, tmp_path: Path, worker: str, *flags: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "lsp_server", "--worker", worker, "--stats-log", "",
             "--log-file", str(tmp_path / "lsp.log"), *flags],
            cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.replies = Replies(pipe_reader(self.process.stdout))
        self.send(framed(initialize({"deadlineMs": 5000})))
        assert "result" in self.replies.wait(1)
        self.send(framed(notification("initialized", {})) + framed(did_open()))

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def completes(self, msg_id) -> bool:
        self.send(framed(inline(msg_id)))
        return bool(completion_texts(self.replies.wait(msg_id)))

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")))

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def stdio_server(tmp_path, worker):
    server = StdioServer(tmp_path, worker)
    yield server
    server.stop()


@pytest.mark.parametrize("delta", [-7, -2, 2, 9])
def test_a_wrong_content_length_loses_nothing_after_it(stdio_server, delta):
    # a client counting characters of "é" sends a length a few bytes short
    stdio_server.send(framed(did_open(URI, TEXT + "# é é é\n"), delta) + framed(inline(2)))
    assert completion_texts(stdio_server.replies.wait(2))
    assert stdio_server.completes(3)


def test_errors_get_their_replies_and_the_next_request_succeeds(stdio_server):
    stdio_server.send(b"Content-Length: 7\r\n\r\n{\"id\":1")
    assert stdio_server.replies.wait(None)["error"]["code"] == -32700
    for msg_id, params in [(10, None), (11, {"textDocument": {"uri": URI}}),
                           (12, {"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0},
                                 "context": {"triggerKind": 1}})]:
        stdio_server.send(framed(request(msg_id, "textDocument/inlineCompletion", params)))
        reply = stdio_server.replies.wait(msg_id)
        assert reply["error"]["code"] == -32602 and "params" in reply["error"]["message"]
    stdio_server.send(framed(request(13, 5, {})))
    assert stdio_server.replies.wait(13)["error"]["code"] == -32600
    stdio_server.send(b"Content-Type: x\r\n\r\n{\"no\": \"length\"}\r\n")  # no Content-Length at all
    assert stdio_server.completes(14)


def test_a_huge_length_and_a_flood_of_garbage_keep_memory_bounded(stdio_server):
    before = stdio_server.rss_kib()
    stdio_server.send(b"Content-Length: 99999999999999\r\n\r\n")
    garbage = b"x" * (1 << 20)
    for _ in range(64):
        stdio_server.send(garbage)
    assert stdio_server.completes(2)
    assert stdio_server.rss_kib() - before < 32 * 1024  # 64 MiB went through, far less was held


def test_a_message_over_the_cap_is_skipped(tmp_path, worker):
    server = StdioServer(tmp_path, worker, "--max-message-bytes", "4096")
    try:
        server.send(framed(did_open(URI, TEXT + "#" * 10_000)) + framed(inline(2)))
        assert completion_texts(server.replies.wait(2))  # the document kept its first text
    finally:
        server.stop()


HUGE_URI = "file:///tmp/infill-hostile/generated.py"
HUGE_CHARS = 3_500_000
FULL_CHANGES = 24  # each took over a second on the event loop before documents had a size cap


def huge_text() -> str:
    unit = "def area_{}(r):\n    return 3.14 * r * r\n\n\n"
    return "".join(unit.format(i) for i in range(HUGE_CHARS // len(unit.format(0)) + 1))[:HUGE_CHARS]


def did_change(uri: str, version: int, text: str) -> dict:
    return notification("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                   "contentChanges": [{"text": text}]})


def test_a_huge_document_costs_its_own_features_not_the_servers(stdio_server):
    text, started = huge_text(), time.monotonic()
    stdio_server.send(framed(did_open(HUGE_URI, text)))
    for version in range(2, 2 + FULL_CHANGES):
        stdio_server.send(framed(did_change(HUGE_URI, version, f"# {version}\n{text}")))
    handled_s = time.monotonic() - started  # the pipe holds little: it fills while the server is busy
    assert handled_s < WAIT_S, f"the huge document's messages took {handled_s:.0f} s to handle"
    stdio_server.send(framed(inline(2)))  # in the small document
    assert completion_texts(stdio_server.replies.wait(2))
    version = 1 + FULL_CHANGES
    stdio_server.send(framed(inline(3, HUGE_URI, 1, 4)) + framed(request(4, "textDocument/completion", {
        "textDocument": {"uri": HUGE_URI}, "position": {"line": 1, "character": 4}})) + framed(request(
            5, "textDocument/copilotInlineEdit", {"textDocument": {"uri": HUGE_URI, "version": version},
                                                  "position": {"line": 1, "character": 4}})))
    assert stdio_server.replies.wait(3)["result"] == []
    assert stdio_server.replies.wait(4)["result"]["items"] == []
    assert stdio_server.replies.wait(5)["result"] == {"edits": []}
    stdio_server.send(framed(did_change(HUGE_URI, version + 1, TEXT)) + framed(inline(6, HUGE_URI)))
    assert completion_texts(stdio_server.replies.wait(6))  # under the cap again: completions are back


def fuzz_seed() -> bytes:
    return framed(inline(1))


def mutate(frame: bytes, cut: int, insert: bytes) -> bytes:
    cut %= len(frame) + 1
    return frame[:cut] + insert + frame[cut + 1:]


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory):
    """One server for every example (a fresh one each would take most of the test's time)."""
    folder = Path(tempfile.mkdtemp(prefix="if-"))  # ipc:// paths are capped near 100 bytes
    address = f"ipc://{folder}/w.sock"
    process = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    server = StdioServer(tmp_path_factory.mktemp("fuzz"), address)
    yield server
    server.stop()
    stop_worker(process)
    shutil.rmtree(folder, ignore_errors=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.one_of(st.binary(max_size=400),
                      st.builds(mutate, st.just(fuzz_seed()), st.integers(0, 300), st.binary(max_size=6)),
                      st.builds(lambda d: framed(inline(1), d), st.integers(-30, 30))),
       serial=st.uuids())
def test_fuzz_the_server_answers_a_good_request_after_any_bytes(fuzzed_server, junk, serial):
    fuzzed_server.send(junk)
    msg_id = f"after-{serial}"
    fuzzed_server.send(framed(inline(msg_id)))
    assert "result" in fuzzed_server.replies.wait(msg_id)
