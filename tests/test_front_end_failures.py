"""What a failing or late worker means in each front end, driven in process (a `Session` without
a server, the gateway's completer and edit handler without an app) on scripted backends: a next
edit's drafts stand in the language server and the gateway alike (the same backend answering shows
its own answer, so the drafts are told from it); an inline completion leaves the failing candidate
out in the language server, and in the gateway raises the failure, which the app answers with the
HTTP error that says why (`completion.fim.run`'s `strict`)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from lsprotocol import types

from completion.settings import Settings
from engine.client.calls import WorkerError, WorkerTimeout
from engine.client.pool import WorkerUnavailable
from engine.wire.protocol import ErrorCode
from gateway.bodies import Ask
from gateway.completer import Completer
from gateway.edits import answer_edit
from lsp_server import completer, inline_edit
from lsp_server.protocol import Cursor, EditedDocument, InlineEditParams
from lsp_server.session import OpenDocument, Session
from test_completion_run import AFTER, BEFORE, RENAMED, Scripted, failing, renaming, texts

URI = "file:///w/t.py"
FAILURES = [WorkerTimeout("late"), WorkerError(ErrorCode.OVERLOADED, "busy"), WorkerUnavailable("all down")]
IDS = ["timeout", "overloaded", "unavailable"]


class Workers:
    """The session's workers, as a scripted backend."""

    def __init__(self, backend) -> None:
        self.backend = backend

    async def client(self, timeout_s: float):
        return self.backend


def whole_lines(text: str, edits: list) -> str:
    """`text` with the server's whole-line edits made, bottom first."""
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: e.range.start.line, reverse=True):
        lines[edit.range.start.line:edit.range.end.line] = [edit.text]
    return "".join(lines)


async def server_edits(backend) -> str:
    """The document after the server's next edits, once the user renamed `count` to `acc` at its
    definition (line 1)."""
    session = Session(workers=Workers(backend))
    session.editor = lambda uri: OpenDocument(*session.documents.opened(uri))
    session.documents.open(URI, "python", BEFORE, 1)
    rename = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(1, 4), end=types.Position(1, 9)), text="acc")
    session.documents.change(URI, [rename], types.PositionEncodingKind.Utf16, 2)
    assert session.open_text(URI) == AFTER
    result = await inline_edit.on_inline_edit(session, InlineEditParams(EditedDocument(URI, 2), Cursor(1, 7)))
    return whole_lines(AFTER, result.edits)


@pytest.mark.parametrize("exc", FAILURES, ids=IDS)
async def test_the_language_server_shows_the_drafts_when_the_worker_fails(exc):
    assert await server_edits(Scripted(failing(exc))) == RENAMED
    assert await server_edits(Scripted(renaming)) == AFTER.replace("count", "total_x")  # an answer wins


def edit_body() -> dict:
    content = (f"<|current_file_content|>\ncurrent_file_path: src/t.py\n{AFTER}<|/current_file_content|>\n"
               f"<|code_to_edit|>\n{AFTER}<|/code_to_edit|>\n"
               "<|edit_diff_history|>\n--- src/t.py\n+++ src/t.py\n@@ -2,1 +2,1 @@\n-    count = 0\n"
               "+    acc = 0\n<|/edit_diff_history|>")
    return {"model": "m", "messages": [{"role": "user", "content": content}]}


async def gateway_edit(backend) -> str | None:
    state = SimpleNamespace(completer=SimpleNamespace(settings=Settings(), language=None), pool=backend,
                            model_id="m")
    return (await answer_edit(state, edit_body()))["choices"][0]["message"]["content"]


@pytest.mark.parametrize("exc", FAILURES, ids=IDS)
async def test_the_gateway_answers_the_drafts_when_the_worker_fails(exc):
    assert await gateway_edit(Scripted(failing(exc))) == RENAMED  # before: an HTTP error (503 or 429)
    assert await gateway_edit(Scripted(renaming)) == AFTER.replace("count", "total_x")


def candidate_fails(request):
    """The second candidate's worker fails; the first answers."""
    if request.id.endswith("-1"):
        raise WorkerError(ErrorCode.OVERLOADED, "busy")
    return texts(request, "return 1")


async def test_the_language_server_shows_the_candidates_that_came_and_nothing_when_none_did():
    async def completions(backend) -> tuple[str, ...]:
        session = Session(workers=Workers(backend))
        session.editor = lambda uri: OpenDocument(*session.documents.opened(uri))
        session.documents.open(URI, "python", "def f(x):\n    ", 1)
        return (await completer.complete_at(session, types.TEXT_DOCUMENT_INLINE_COMPLETION, URI,
                                            types.Position(1, 4), True, 2)).texts
    assert await completions(Scripted(candidate_fails)) == ("return 1",)
    assert await completions(Scripted(failing(WorkerTimeout("late")))) == ()


async def test_the_gateway_raises_a_failing_candidate_for_its_http_error():
    ask = Ask("def f(x):\n    ", "", n=2)
    gateway = Completer(Scripted(candidate_fails), Settings(), "python")
    with pytest.raises(WorkerError, match="busy"):
        await gateway.complete(ask)
    gateway.pool = Scripted(lambda request: texts(request, "return 1"))
    assert [choice.text for choice in await gateway.complete(ask)] == ["return 1", "return 1"]
