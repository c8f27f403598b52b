"""Tests of the custom methods' typed params and results (lsp_server.protocol) and of
lsp_server.inline_edit's ranges, without a server: reading raw params, structuring them as pygls
does, and the JSON the results become."""
from __future__ import annotations

import json

from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from completion.next_edit import Edit
from lsp_server import protocol
from lsp_server.inline_edit import edit_range
from lsp_server.protocol import (AnswerRef, CompletionEvent, Cursor, EditedDocument, InlineEdit, InlineEditParams,
                                 InlineEditResult, completion_event, inline_edit_params)


def request_of(params):
    read = inline_edit_params(params)
    return None if read is None else (read.text_document.uri, read.text_document.version, read.position.line)


def test_params_are_read_from_maps_and_bad_ones_give_none():
    good = {"textDocument": {"uri": "file:///a.py", "version": 3}, "position": {"line": 4, "character": 1}}
    assert request_of(good) == ("file:///a.py", 3, 4)
    assert request_of(None) is None
    assert request_of({}) is None
    assert request_of({**good, "position": {"line": "4", "character": 1}}) is None
    assert request_of({**good, "position": {"line": True, "character": 1}}) is None
    assert request_of({**good, "textDocument": {"uri": "file:///a.py"}}) is None
    assert request_of({**good, "position": {"line": 2**70, "character": 0}}) == ("file:///a.py", 3, 2**70)


def test_pygls_structures_each_custom_methods_params_as_its_class():
    converter = protocol.converter()
    good = {"textDocument": {"uri": "file:///a.py", "version": 3}, "position": {"line": 4, "character": 1}}
    message = converter.structure({"jsonrpc": "2.0", "id": 7, "method": protocol.INLINE_EDIT, "params": good},
                                  JsonRPCRequestMessage)
    assert message.params == InlineEditParams(EditedDocument("file:///a.py", 3), Cursor(4, 1))
    bad = converter.structure({"jsonrpc": "2.0", "id": 8, "method": protocol.INLINE_EDIT, "params": [1]},
                              JsonRPCRequestMessage)
    assert bad.id == 8 and bad.params is None
    shown = converter.structure({"jsonrpc": "2.0", "method": protocol.DID_SHOW_INLINE_EDIT, "params": {
        "item": {"command": {"arguments": [{"requestId": "r1", "index": 2}]}}}}, JsonRPCNotification)
    assert shown.params.event == CompletionEvent("r1", 2, None)
    other = converter.structure({"jsonrpc": "2.0", "method": "$/other", "params": {"a": 1}}, JsonRPCNotification)
    assert other.params.a == 1  # a method of no one's: as pygls gives it


def test_events_read_each_member_on_its_own():
    assert completion_event({"requestId": "r", "index": 2, "acceptedChars": 5}) == CompletionEvent("r", 2, 5)
    assert completion_event({"requestId": 3, "index": "2", "acceptedChars": "5"}) == CompletionEvent(None, 0, None)
    assert completion_event("r") == completion_event(None) == CompletionEvent(None, 0, None)
    assert protocol.event_of(()) == CompletionEvent(None)
    assert protocol.event_of([{"requestId": "x"}, 1]).request_id == "x"


def test_results_become_the_json_they_always_were():
    converter = protocol.converter()
    edit = InlineEdit("b = 2\n", EditedDocument("file:///a.py", 3),
                      types.Range(start=types.Position(line=1, character=0), end=types.Position(line=2, character=0)),
                      types.Command(title="infill: accept the edit", command=protocol.ACCEPT_INLINE_EDIT,
                                    arguments=[AnswerRef("r1", 0)]))
    reply = JsonRPCResponseMessage(id=7, result=InlineEditResult([edit]), jsonrpc="2.0")
    assert json.dumps(converter.unstructure(reply)) == json.dumps({"id": 7, "jsonrpc": "2.0", "result": {"edits": [
        {"text": "b = 2\n", "textDocument": {"uri": "file:///a.py", "version": 3},
         "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
         "command": {"title": "infill: accept the edit", "command": protocol.ACCEPT_INLINE_EDIT,
                     "arguments": [{"requestId": "r1", "index": 0}]}}]}})
    assert converter.unstructure(protocol.NO_EDITS) == {"edits": []}
    assert converter.unstructure(protocol.VoteResult("ab", "top", "/v.db")) == {
        "battleId": "ab", "pick": "top", "store": "/v.db"}
    assert converter.unstructure(protocol.WorkerReadyParams("m", "ipc://w")) == {"model": "m", "address": "ipc://w"}


def test_ranges_cover_whole_lines_and_the_last_line_to_its_end_in_the_encoding():
    text = "a\nb\nc = '\U0001F600'"
    unstructure = protocol.converter().unstructure
    assert unstructure(edit_range(text, Edit(1, 2, "B\n"), "utf-16")) == {
        "start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}
    assert unstructure(edit_range(text, Edit(2, 3, "c"), "utf-16"))["end"] == {"line": 2, "character": 8}
    assert unstructure(edit_range(text, Edit(2, 3, "c"), "utf-8"))["end"] == {"line": 2, "character": 10}
