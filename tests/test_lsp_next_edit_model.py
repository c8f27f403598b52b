"""Next edits with the bundled model through the real server: `python -m lsp_server` starts its
own worker on the bundled model, a pygls client renames a variable and asks
`textDocument/copilotInlineEdit`. The follow-up edits come from drafted regions the model checks
and completes (`completion.next_edit`, `infill.decode.veto`), not from a scripted worker; a
negative (a name used nowhere else) gets none, and a rename in a text that does not parse none."""
from __future__ import annotations

import pytest
from lsprotocol import types

from test_lsp_e2e import start_session
from test_lsp_inline_edit import apply, ask

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
OPTIONS = {"deadlineMs": 20000, "statsLog": ""}


def change(client, uri: str, version: int, line: int, start: int, end: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=line, character=start),
                              end=types.Position(line=line, character=end)), text=text)]))


async def test_a_rename_gets_its_follow_up_edits_from_the_bundled_model_and_a_negative_none(tmp_path, model_env):
    session = await start_session(tmp_path, model_env, options=OPTIONS)
    try:
        client = session.client
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=URI, language_id="python", version=1, text=SOURCE)))
        change(client, URI, 2, 4, 4, 9, "total")  # `count = 0` -> `total = 0`
        edits = (await ask(session, 2))["edits"]
        renamed = SOURCE.replace("    count = 0", "    total = 0")
        assert apply(renamed, edits) == SOURCE.replace("count", "total")
        assert edits and all(e["textDocument"] == {"uri": URI, "version": 2} for e in edits)

        change(client, URI, 3, 12, 4, 9, "span")  # `width = 10` -> `span = 10`, its use left as is
        change(client, URI, 4, 13, 32, 37, "span")  # ... and then its one use: nothing follows
        assert (await ask(session, 4))["edits"] == []
        broken = "file:///tmp/infill-e2e/broken.py"
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=broken, language_id="python", version=1, text=SOURCE + "def (\n")))
        change(client, broken, 2, 4, 4, 9, "total")
        assert (await ask(session, 2, broken))["edits"] == []
        assert session.edits == []  # the server never changed a document itself
    finally:
        assert await session.end() == 0
