"""The stdio <-> TCP bridge (`python -m lsp_server.bridge HOST:PORT`) as a real process against a
real loopback server in the test: bytes both ways unchanged, and its end when either side ends."""
from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from infill.paths import REPO_ROOT
from lsp_server.bridge import parse_address

pytestmark = pytest.mark.timeout(60)

EVERY_BYTE = bytes(range(256)) * 64  # not UTF-8, with NULs and CRLFs: nothing may be decoded
WAIT_S = 30  # only against a hang


def read_exactly(source, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = source(size - len(data))
        assert chunk, f"the stream ended after {len(data)} of {size} bytes"
        data += chunk
    return data


def start_bridge(address: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lsp_server.bridge", address], cwd=REPO_ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def listener():
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(WAIT_S)
        yield server


@pytest.fixture
def connected(listener):
    """A bridge process and the server side of its connection."""
    bridge = start_bridge(f"127.0.0.1:{listener.getsockname()[1]}")
    connection, _ = listener.accept()
    connection.settimeout(WAIT_S)
    yield bridge, connection
    connection.close()
    if bridge.poll() is None:
        bridge.kill()
    bridge.wait()
    for stream in (bridge.stdin, bridge.stdout, bridge.stderr):
        stream.close()


def test_an_address_is_host_and_port():
    assert parse_address("127.0.0.1:2087") == ("127.0.0.1", 2087)
    assert parse_address("[::1]:1") == ("::1", 1)
    for text in ["127.0.0.1", ":2087", "host:0", "host:65536", "host:http", ""]:
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_address(text)


def test_bytes_go_both_ways_unchanged(connected):
    bridge, connection = connected
    bridge.stdin.write(EVERY_BYTE)
    bridge.stdin.flush()
    assert read_exactly(connection.recv, len(EVERY_BYTE)) == EVERY_BYTE
    reply = EVERY_BYTE[::-1]
    connection.sendall(reply)
    assert read_exactly(bridge.stdout.read1, len(reply)) == reply


def test_it_ends_when_the_server_closes(connected):
    bridge, connection = connected
    connection.sendall(b"Content-Length: 2\r\n\r\n{}")
    connection.close()
    assert bridge.stdout.read() == b"Content-Length: 2\r\n\r\n{}"  # everything, then the end
    assert bridge.wait(WAIT_S) == 0  # with its stdin still open


def test_when_stdin_ends_the_server_gets_everything_then_the_end(connected):
    bridge, connection = connected
    bridge.stdin.write(EVERY_BYTE)
    bridge.stdin.close()
    assert read_exactly(connection.recv, len(EVERY_BYTE)) == EVERY_BYTE
    assert connection.recv(1) == b""
    connection.close()
    assert bridge.wait(WAIT_S) == 0


def test_nothing_listening_is_an_error_on_stderr(listener):
    port = listener.getsockname()[1]
    listener.close()
    bridge = start_bridge(f"127.0.0.1:{port}")
    out, err = bridge.communicate(timeout=WAIT_S)
    assert bridge.returncode == 1 and out == b""
    assert f"cannot connect to 127.0.0.1:{port}" in err.decode() and "infill lsp --tcp" in err.decode()


def test_a_bad_address_is_a_usage_error():
    bridge = start_bridge("localhost")
    out, err = bridge.communicate(timeout=WAIT_S)
    assert bridge.returncode == 2 and out == b"" and "HOST:PORT" in err.decode()
