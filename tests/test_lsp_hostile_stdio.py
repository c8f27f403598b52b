"""The language server against hostile bytes on stdio, as a real process on pipes: wrong and huge
Content-Length headers, malformed requests, a flood of garbage, a message over the cap, a huge
document, and fuzzed frames, after each of which a good request is still answered. The server
runs on a fake worker (`tests/fake_worker.py`, whose completion is `PID:prefix`), as
`tests/lsp_procs.py`'s `StdioServer`.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fake_worker
from engine.launch import start_worker_process, stop_worker
from lsp_procs import (TEXT, URI, StdioServer, completion_texts, did_open, framed, inline,
                       notification, request)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture
def worker(fake_worker_at):
    return fake_worker_at


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
    text = huge_text()
    stdio_server.send(framed(did_open(HUGE_URI, text)))
    for version in range(2, 2 + FULL_CHANGES):
        stdio_server.send(framed(did_change(HUGE_URI, version, f"# {version}\n{text}")))
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
