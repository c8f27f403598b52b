"""The language server against hostile documents (round 3), as real processes on real sockets.

The server's copy of a document must stay the editor's through incremental edits whatever the
text holds: characters that `str.splitlines` takes for line ends (a form feed, `\\x0b`,
`\\x1c`-`\\x1e`, `\\x85`, U+2028, U+2029) are not line ends to LSP. The server runs on the fake worker
(`tests/fake_worker.py`), whose next-edit answer is each region's text as the server has it, renamed
as the document's first line says and noted (`fake_worker.WORKER_NOTE`, which no draft writes), so
the edits it proposes show the server's text as the worker was sent it. A next-edit
job for a version the editor has left is dropped at once, not run to its deadline.
"""
from __future__ import annotations

import time

import pytest

import fake_worker
from test_lsp_documents import NOT_LSP_LINE_ENDS, lsp_apply
from lsp_procs import WAIT_S, TcpServer, framed, notification, request

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

INLINE_EDIT = "textDocument/copilotInlineEdit"
TALLY = '''\
# fake-rename: count total
import os
NOTE = "a{odd}b"  # {odd}


def tally(items):
    count = 0
    for item in items:
        count += item
    return count
'''
DEFINITION_LINE = 6  # `    count = 0`, in LSP's lines


@pytest.fixture
def tcp_server(tmp_path, fake_worker_at):
    server = TcpServer(tmp_path, fake_worker_at)
    yield server
    server.stop()


def lsp_position(line: int, character: int) -> dict:
    return {"line": line, "character": character}


def rename_change(uri: str, version: int) -> dict:
    """The editor's `didChange` that makes `count = 0` of the definition `total = 0`."""
    where = {"start": lsp_position(DEFINITION_LINE, 4), "end": lsp_position(DEFINITION_LINE, 9)}
    return notification("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": where, "text": "total"}]})


def applied_edits(text: str, edits: list[dict]) -> str:
    """`text` with the proposed edits made by the LSP's rules, the lowest first."""
    for edit in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                       reverse=True):
        start, end = edit["range"]["start"], edit["range"]["end"]
        text = lsp_apply(text, (start["line"], start["character"]), (end["line"], end["character"]),
                         edit["text"])
    return text


def test_the_server_keeps_the_editor_text_below_characters_that_split_lines_for_python(tcp_server):
    """One document per character: the rename below it is proposed at the other uses exactly."""
    sock, replies = tcp_server.editor(deadlineMs=20000)
    wrong = {}
    with sock:
        for msg_id, odd in enumerate(NOT_LSP_LINE_ENDS, 2):
            uri = f"file:///tmp/infill-hostile3/tally{msg_id}.py"
            text = TALLY.format(odd=odd)
            sock.sendall(framed(notification("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": text}})))
            sock.sendall(framed(rename_change(uri, 2)))
            text = lsp_apply(text, (DEFINITION_LINE, 4), (DEFINITION_LINE, 9), "total")
            sock.sendall(framed(request(msg_id, INLINE_EDIT, {
                "textDocument": {"uri": uri, "version": 2}, "position": lsp_position(DEFINITION_LINE, 9)})))
            edits = replies.wait(msg_id)["result"]["edits"]
            marker, code = text.split("\n", 1)
            expected = marker + "\n" + fake_worker.renamed(code, "count", "total")
            if applied_edits(text, edits) != expected:
                wrong[repr(odd)] = edits
    assert wrong == {}
    assert "did not fit" not in tcp_server.log.read_text()


def held_at(gate) -> None:
    """Returns once a job's step waits at the fake worker's closed `gate`: its request is in flight."""
    deadline = time.monotonic() + WAIT_S
    while not fake_worker.held_marker(gate).exists():
        assert time.monotonic() < deadline, f"no job's step reached the gate {gate}"
        time.sleep(0.02)


def test_a_next_edit_job_for_a_version_the_editor_left_is_dropped_at_once(tcp_server, short_tmp):
    """The job waits at the fake worker's closed gate; the document changes; the request answers
    nothing at once, while its job is still held, and not when the worker is given up on."""
    gate = short_tmp / "gate"
    uri = "file:///tmp/infill-hostile3/slow.py"
    text = f'gate:"{gate}"\na = 1\nb = 2\nc = 3\n'  # the job's prefix holds its step at `gate`
    sock, replies = tcp_server.editor(deadlineMs=60000, nextEditDrafts="model")
    try:
        with sock:
            sock.sendall(framed(notification("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": text}})))
            sock.sendall(framed(replace_first_character(uri, 2, 3, "d")))  # `c` renamed `d`
            sock.sendall(framed(request(2, INLINE_EDIT, {
                "textDocument": {"uri": uri, "version": 2}, "position": lsp_position(3, 1)})))
            held_at(gate)
            sock.sendall(framed(replace_first_character(uri, 3, 1, "e")))  # then `a` renamed `e`
            assert replies.wait(2)["result"] == {"edits": []}
            assert not gate.exists()  # answered while its job was held at the worker
            log = tcp_server.log.read_text()
    finally:
        gate.touch()  # the held step ends, so that the worker stops at once
    assert "dropped: the document changed" in log and "no next edit: no reply" not in log


def replace_first_character(uri: str, version: int, line: int, text: str) -> dict:
    """The editor's `didChange` that makes the first character of `line` `text`."""
    where = {"start": lsp_position(line, 0), "end": lsp_position(line, 1)}
    return notification("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": where, "text": text}]})
