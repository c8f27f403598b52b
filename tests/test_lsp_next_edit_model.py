"""Next edits with the bundled model through the real server: `python -m lsp_server` starts its
own worker on the bundled model, a pygls client edits a document and asks
`textDocument/copilotInlineEdit`.

What needs the model: the user adds a parameter to a function, and each call's draft keeps the
call's known text with a masked slot where the new argument goes (`completion.edit_drafts`); a
draft with a slot is never proposed alone, so an edit at the calls is the worker's: the model
filled the slots, and a fill that breaks a call is not proposed (the bundled model's fills of this
case leave a string unclosed; 16 of 23 synthetic signature_add tasks it fills right). Run again
with the worker absent (an address nothing listens on), the same request shows no edit there,
while a rename, whose drafts are whole, still gets its follow-up edits (drafts stand when the
worker fails). A negative (a name used nowhere else) gets none, and
a rename in a text that does not parse none, either way."""
from __future__ import annotations

import asyncio
import re

import pytest
from lsprotocol import types

from lsp_server.protocol import INLINE_EDIT
from test_lsp_e2e import ANSWER_WAIT_S, start_session
from test_lsp_inline_edit import apply, as_dict

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

URI = "file:///tmp/infill-e2e/tally.py"
SOURCE = '''\
import os


def tally(items, scale):
    count = 0
    for item in items:
        count += item * scale
    print(os.sep, count)
    return count


def report(rows):
    width = 10
    return [str(row).rjust(width) for row in rows]
'''
CALLS_URI = "file:///tmp/infill-e2e/greet.py"
CALLS = '''\
def greet(name):
    print("hello", name)


greet("world")
greet("there")
'''
ADDED = ", punctuation"  # typed after `name` on the first line: each call needs one more argument
FILLED = re.compile(re.escape(CALLS.replace("def greet(name)", f"def greet(name{ADDED})").split('greet("world")')[0])
                    + r'greet\("world", (?P<first>.+)\)\ngreet\("there", (?P<second>.+)\)\n')
OPTIONS = {"deadlineMs": 20000, "statsLog": ""}
ABSENT_OPTIONS = {**OPTIONS, "deadlineMs": 3000}  # no worker will answer: no need to wait long


def change(client, uri: str, version: int, line: int, start: int, end: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=line, character=start),
                              end=types.Position(line=line, character=end)), text=text)]))


def open_document(client, uri: str, text: str) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))


async def edits_at(session, uri: str, version: int, line: int, character: int) -> list[dict]:
    """The next edits the server proposes with the cursor at (`line`, `character`)."""
    params = {"textDocument": {"uri": uri, "version": version},
              "position": {"line": line, "character": character}}
    result = await asyncio.wait_for(session.client.protocol.send_request_async(INLINE_EDIT, params),
                                    ANSWER_WAIT_S)
    return as_dict(result)["edits"]


async def added_argument_edits(session) -> list[dict]:
    """The edits proposed after `ADDED` is typed into the signature of `CALLS`."""
    open_document(session.client, CALLS_URI, CALLS)
    change(session.client, CALLS_URI, 2, 0, 14, 14, ADDED)
    return await edits_at(session, CALLS_URI, 2, 0, 14 + len(ADDED))


async def rename_edits(session) -> list[dict]:
    """The edits proposed after `count = 0` of `SOURCE` is renamed `total = 0`."""
    open_document(session.client, URI, SOURCE)
    change(session.client, URI, 2, 4, 4, 9, "total")
    return await edits_at(session, URI, 2, 4, 9)


@pytest.mark.parametrize("worker", ["bundled", "absent"])
async def test_the_model_fills_the_added_argument_at_each_call_and_drafts_stand_without_it(
        tmp_path, short_tmp, model_env, worker):
    flags = () if worker == "bundled" else ("--worker", f"ipc://{short_tmp}/nobody.sock")
    session = await start_session(tmp_path, model_env, *flags,
                                  options=OPTIONS if worker == "bundled" else ABSENT_OPTIONS)
    try:
        edited = CALLS.replace("def greet(name)", f"def greet(name{ADDED})")
        calls = await added_argument_edits(session)
        if worker == "bundled":  # the model's arguments in the drafts' calls, or none: never a broken call
            filled = FILLED.fullmatch(apply(edited, calls))
            assert calls == [] or (len(calls) == 1 and filled and filled["first"].strip()
                                   and filled["second"].strip()), calls
        else:
            assert calls == []  # a draft with a slot is not proposed: only the model fills it

        renamed = SOURCE.replace("    count = 0", "    total = 0")
        edits = await rename_edits(session)
        assert apply(renamed, edits) == SOURCE.replace("count", "total")
        assert edits and all(e["textDocument"] == {"uri": URI, "version": 2} for e in edits)

        change(session.client, URI, 3, 12, 4, 9, "span")  # `width = 10` -> `span = 10`, its use left as is
        change(session.client, URI, 4, 13, 32, 37, "span")  # ... and then its one use: nothing follows
        assert await edits_at(session, URI, 4, 13, 37) == []
        broken = "file:///tmp/infill-e2e/broken.py"
        open_document(session.client, broken, SOURCE + "def (\n")
        change(session.client, broken, 2, 4, 4, 9, "total")
        assert await edits_at(session, broken, 2, 4, 9) == []
        assert session.edits == []  # the server never changed a document itself
    finally:
        assert await session.end() == 0
