"""Language servers as processes for the LSP tests, driven byte by byte: the frames and messages a
test sends (`framed`, `request`, `notification`, `initialize`, `inline`, `did_open`), the replies
read back by id (`Replies`, over a socket or a pipe), and `python -m lsp_server` on loopback TCP
with its token (`TcpServer`) or on stdio (`StdioServer`), each on the worker address it is given."""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

from infill.paths import REPO_ROOT

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
        self._unclaimed: list[dict] = []  # frames read but not yet asked for: one read can bring several
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
            self._unclaimed.extend(self._frames())
            for index, frame in enumerate(self._unclaimed):
                if frame.get("id") == msg_id and "method" not in frame:
                    return self._unclaimed.pop(index)
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


def completion_texts(reply: dict) -> list[str]:
    return [item["insertText"] for item in reply["result"]]


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
