"""End-to-end test of next-edit suggestions: a real pygls client drives `python -m lsp_server` over
stdio against a fake worker process (`tests/fake_worker.py`) that answers each region of an edit
job with its current text renamed as the document's first line says (`# fake-rename: OLD NEW`),
each line it renamed ending in `fake_worker.WORKER_NOTE`, which no draft writes: the edits shown
are the worker's answer, not the drafts standing in for it. The fake stands in for the model's
answer; everything between the rename and the edits is real: the edit history, the regions found
with tree-sitter, the edit job, the rules that keep edits."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

import fake_worker
from engine.launch import start_worker_process, stop_worker
from lsp_server.protocol import ACCEPT_INLINE_EDIT, DID_SHOW_INLINE_EDIT, INLINE_EDIT
from test_lsp_e2e import ANSWER_WAIT_S, held_at, logged, start_session

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

URI = "file:///tmp/infill-e2e/tally.py"
SOURCE = '''\
# fake-rename: count total
import os


def tally(items):
    count = 0
    for item in items:
        count += item
    print(os.sep)
    a = 1
    b = 2
    c = 3
    d = 4
    return count
'''
DEFINITION = types.Position(line=5, character=4)  # `count = 0`: the user renames it to `total`


def as_dict(value):
    """A raw result as plain maps and lists (pygls hands back named tuples for unknown methods)."""
    if hasattr(value, "_asdict"):
        return {key: as_dict(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: as_dict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_dict(item) for item in value]
    return value


def apply(text: str, edits: list[dict]) -> str:
    """`text` with the whole-line edits made, bottom first."""
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: e["range"]["start"]["line"], reverse=True):
        start, end = edit["range"]["start"], edit["range"]["end"]
        assert start["character"] == 0 and end["character"] == 0  # whole lines
        lines[start["line"]:end["line"]] = [edit["text"]]
    return "".join(lines)


async def ask(session, version: int, uri: str = URI) -> dict:
    params = {"textDocument": {"uri": uri, "version": version},
              "position": {"line": DEFINITION.line, "character": DEFINITION.character + 5}}
    result = await asyncio.wait_for(session.client.protocol.send_request_async(INLINE_EDIT, params),
                                    ANSWER_WAIT_S)
    return as_dict(result)


async def test_a_rename_at_the_definition_is_proposed_at_the_other_uses(tmp_path, short_tmp):
    address = f"ipc://{short_tmp}/w.sock"
    worker = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    stats = tmp_path / "stats.jsonl"
    try:
        session = await start_session(tmp_path, dict(os.environ), "--worker", address,
                                      "--stats-log", str(stats), options={"deadlineMs": 20000})
        client = session.client
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=URI, language_id="python", version=1, text=SOURCE)))
        assert (await ask(session, 1))["edits"] == []  # no edit event yet
        rename = types.TextDocumentContentChangePartial(
            range=types.Range(start=DEFINITION, end=types.Position(line=5, character=9)), text="total")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[rename]))
        renamed = SOURCE.replace("    count = 0", "    total = 0")

        edits = (await ask(session, 2))["edits"]
        assert len(edits) == 2
        marker, code = renamed.split("\n", 1)
        assert apply(renamed, edits) == marker + "\n" + fake_worker.renamed(code, "count", "total")
        assert edits[0]["range"]["start"]["line"] <= 7 < edits[0]["range"]["end"]["line"]  # nearest first
        assert edits[1]["text"] == "    return total" + fake_worker.WORKER_NOTE + "\n"  # the worker's, not a draft
        assert all(edit["textDocument"] == {"uri": URI, "version": 2} for edit in edits)
        assert (await ask(session, 1))["edits"] == []  # a stale version

        command = edits[0]["command"]
        assert command["command"] == ACCEPT_INLINE_EDIT
        client.protocol.notify(DID_SHOW_INLINE_EDIT, {"item": {"command": command}})
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=command["command"], arguments=command["arguments"]))
        assert session.edits == []  # the server never asked to change the document
        broken = "file:///tmp/infill-e2e/broken.py"
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=broken, language_id="python", version=1, text=SOURCE + "def (\n")))
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=broken, version=2),
            content_changes=[rename]))
        assert (await ask(session, 2, broken))["edits"] == []  # a document that does not parse
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(URI)))
        assert (await ask(session, 2))["edits"] == []  # a closed document
        assert await session.end() == 0
        events = [json.loads(line) for line in stats.read_text().splitlines()]
        assert [(e["event"], e["mode"], e["index"]) for e in events] == [("show", "next_edit", 0),
                                                                       ("accept", "next_edit", 0)]
    finally:
        stop_worker(worker)


PATHS_URI = "file:///tmp/infill-e2e/paths.py"
PATHS = "import os\n\n\ndef paths(names):\n    first = os.path.join(names[0])\n    second = os.path.join(names[1])\n"
ADDED_AT = types.Position(line=4, character=33)  # after `names[0]`: the user passes one more argument
WAITS = "for typing to pause"  # the server's log line for a request held until typing pauses


async def waiting(log: Path, count: int) -> None:
    """Returns once the server's log tells of `count` requests held until typing pauses."""
    while log.read_text().count(WAITS) < count:
        await asyncio.sleep(0.01)


async def test_a_word_new_to_the_text_is_proposed_once_typing_pauses_and_a_key_in_the_pause_drops_it(
        tmp_path, short_tmp):
    address = f"ipc://{short_tmp}/w.sock"
    worker = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    try:
        session = await start_session(tmp_path, dict(os.environ), "--worker", address,
                                      options={"deadlineMs": 20000, "nextEditDrafts": "rules"})
        client = session.client

        def typed(version: int, text: str, at: types.Position = ADDED_AT) -> None:
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=PATHS_URI, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at),
                                                                         text=text)]))

        def asked(version: int) -> asyncio.Future:
            return asyncio.wrap_future(client.protocol.send_request(INLINE_EDIT, {
                "textDocument": {"uri": PATHS_URI, "version": version}, "position": {"line": 4, "character": 40}}))

        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=PATHS_URI, language_id="python", version=1, text=PATHS)))
        typed(2, ", suffix_dir")  # `suffix_dir` stands nowhere else: it may be half typed
        answer = as_dict(await asyncio.wait_for(asked(2), ANSWER_WAIT_S))
        assert session.log.read_text().count(WAITS) == 1  # asked at once, answered after the pause
        assert [edit["text"] for edit in answer["edits"]] == ["    second = os.path.join(names[1], suffix_dir)\n"]

        typed(3, "s", types.Position(line=4, character=44))  # the word goes on: `suffix_dirs`
        pending = asked(3)
        await asyncio.wait_for(waiting(session.log, 2), ANSWER_WAIT_S)  # the request is held in the pause
        typed(4, "_", types.Position(line=4, character=45))  # a key in the pause
        assert as_dict(await asyncio.wait_for(pending, ANSWER_WAIT_S)) == {"edits": []}
        assert session.edits == []  # the server never asked to change the document
        assert await session.end() == 0
    finally:
        stop_worker(worker)


SLOW_URI = "file:///tmp/infill-e2e/slow.py"


def slow_source(gate: Path) -> str:
    """A document whose edit jobs' prefix, its first line `gate:"GATE"`, holds each job's step at
    the fake worker until the file `gate` exists: the test decides how long a request is in flight."""
    return f'gate:"{gate}"\na = 1\nb = 2\nc = 3\n'


async def test_bad_requests_get_no_edits_and_newer_or_cancelled_requests_win(tmp_path, short_tmp):
    address = f"ipc://{short_tmp}/w.sock"
    gate = short_tmp / "gate"
    worker = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    session = None
    try:
        session = await start_session(tmp_path, dict(os.environ), "--worker", address,
                                      options={"deadlineMs": 20000})
        protocol = session.client.protocol
        for params in ({}, {"textDocument": 5, "position": None},
                       {"textDocument": {"uri": URI, "version": -1}, "position": {"line": 0, "character": 0}},
                       {"textDocument": {"uri": "file:///nowhere.py", "version": 1},
                        "position": {"line": 0, "character": 0}}):
            result = await asyncio.wait_for(protocol.send_request_async(INLINE_EDIT, params), ANSWER_WAIT_S)
            assert as_dict(result) == {"edits": []}, params

        session.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=SLOW_URI, language_id="python", version=1, text=slow_source(gate))))
        change = types.TextDocumentContentChangePartial(  # `c` renamed `d`: no other use, so the job's
            range=types.Range(start=types.Position(line=3, character=0),  # prefix stays the gate line
                              end=types.Position(line=3, character=1)), text="d")
        session.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=SLOW_URI, version=2),
            content_changes=[change]))
        params = {"textDocument": {"uri": SLOW_URI, "version": 2}, "position": {"line": 3, "character": 1}}
        older = protocol.send_request(INLINE_EDIT, params)
        await held_at(gate)  # its job waits at the closed gate: in flight when the newer comes
        newer = protocol.send_request(INLINE_EDIT, params)
        assert as_dict(await asyncio.wait_for(asyncio.wrap_future(older), ANSWER_WAIT_S)) == {"edits": []}
        await logged(session.log, "superseded by a newer request")  # logged as the answer goes
        assert not newer.done()  # its job waits behind the held step
        gate.touch()
        answer = as_dict(await asyncio.wait_for(asyncio.wrap_future(newer), ANSWER_WAIT_S))
        assert isinstance(answer["edits"], list)

        gate.unlink()  # closed again: the next job is held until the cancel has come
        fake_worker.held_marker(gate).unlink()
        pending = protocol.send_request(INLINE_EDIT, params, msg_id="cancel-me")
        await held_at(gate)
        protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancel-me"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(asyncio.wrap_future(pending), ANSWER_WAIT_S)
        assert await session.end() == 0
    finally:
        gate.touch()  # the step held last ends, so that the worker stops at once
        if session is not None and session.process.returncode is None:  # a failed check: no stray server
            session.process.kill()
        stop_worker(worker)
