"""Next-edit suggestions over LSP, in the shape of Copilot's language server.

`textDocument/copilotInlineEdit` (params `{textDocument: {uri, version}, position}`) answers
`{edits: [{text, textDocument: {uri, version}, range, command}]}`, the edit nearest the cursor
first: after the document's newest edit event, the regions it must propagate to
(`completion.edit_regions`) go to the worker as one edit job, and its answer becomes edits
(`completion.next_edit`). Each edit replaces whole lines; its command, `infill.acceptInlineEdit`,
names the request and the edit for the stats log, as `textDocument/didShowInlineEdit` (params
`{item: {command}}`) does when an edit is shown. The answer is `{edits: []}`, never an error, for
bad params, a document the editor did not open or whose version is not the request's (or changes
while the worker answers), one without a tree (over the size cap of `lsp_server.documents`, or
without a grammar), with a syntax error, or without an edit event (the plan's `Refused` says
which); a request in flight when its document changes is dropped at once (`on_document_change`), its
worker job cancelled, rather than left to run to its deadline for an answer that could not be shown.
A word new to the text that ends the user's edit is taken as still being typed until the user has
stopped typing for `next_edit.SETTLE_S`: the request waits for that pause (a key pressed in it
cancels the request) and then plans as if the word were whole. When the worker errs or is late, the
regions' whole drafts are the answer (the failure policy of `completion.next_edit.run`); the
`nextEditDrafts` setting says how drafts are used (`rules`: no worker is asked). A newer request for
the document supersedes the one in flight; `$/cancelRequest` cancels one. The server never changes
the document.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from completion import next_edit
from completion.next_edit import Drafting, Edit, EditAsk, EditPlan, Refused
from completion.positions import line_length, split_lines
from completion.requests import new_request_id
from completion.syntax import ParsedDocument
from engine.wire.deadline import Deadline
from lsp_server import logs
from lsp_server.edit_history import EditHistory
from lsp_server.protocol import (ACCEPT_INLINE_EDIT, DID_SHOW_INLINE_EDIT, INLINE_EDIT, NO_EDITS, AnswerRef,
                                 DidShowInlineEditParams, InlineEdit, InlineEditParams, InlineEditResult, event_of)
from lsp_server.session import Session, with_session
from lsp_server.stats import ACCEPTED, SHOWN, Answer
from lsp_server.supersede import superseding

logger = logging.getLogger(__name__)

MODE = "next_edit"  # the stats log's mode for these answers


def edit_range(text: str, edit: Edit, encoding: str) -> types.Range:
    """The LSP range of an edit's whole lines; the last line of the text ends at its last column."""
    lines = split_lines(text)
    if edit.end_line < len(lines):
        end = types.Position(line=edit.end_line, character=0)
    else:
        end = types.Position(line=len(lines) - 1, character=line_length(lines[-1], encoding))
    return types.Range(start=types.Position(line=edit.start_line, character=0), end=end)


def _nothing(uri: str, started: float) -> tuple[Answer, list[Edit], str]:
    return _answer(uri, [], started), [], ""


def _answer(uri: str, edits: list[Edit], started: float) -> Answer:
    latency_ms = (time.monotonic() - started) * 1000.0
    logger.info("next edit: %d edits in %.1f ms", len(edits), latency_ms)
    return Answer(logs.request_id.get(), uri, MODE, tuple(e.new_text for e in edits), latency_ms, False)


async def on_inline_edit(session: Session, params: InlineEditParams | None) -> InlineEditResult:
    if params is None:
        logger.info("no next edit: malformed params")
        return NO_EDITS
    uri, version, line = params.text_document.uri, params.text_document.version, params.position.line
    logs.request_id.set(new_request_id())
    started = time.monotonic()
    answer, edits, text = await superseding(session.in_flight, INLINE_EDIT, uri,
                                            _suggest(session, uri, version, line, started),
                                            lambda: _nothing(uri, started), f"next edit in {uri}")
    session.stats.record(answer)
    encoding = session.encoding()
    return InlineEditResult([
        InlineEdit(edit.new_text, params.text_document, edit_range(text, edit, encoding),
                   types.Command(title="infill: accept the edit", command=ACCEPT_INLINE_EDIT,
                                 arguments=[AnswerRef(answer.request_id, index)]))
        for index, edit in enumerate(edits)])


def on_document_change(session: Session, uri: str) -> None:
    """Drop the next edit in flight for `uri` (a `didChange` came): it answers nothing now and
    its worker job is cancelled with it."""
    task = session.in_flight.get((INLINE_EDIT, uri))
    if task is not None and not task.done():
        logger.info("next edit in %s dropped: the document changed", uri)
        task.cancel()


def _current(session: Session, uri: str, version: int) -> str | None:
    """The document's text while the editor has it open at `version`."""
    document = session.open_document(uri)
    return document.text if document is not None and document.version == version else None


async def _suggest(session: Session, uri: str, version: int, line: int,
                   started: float) -> tuple[Answer, list[Edit], str]:
    """The edits to propose at `line` of `uri` at `version`, with the answer and the text they
    apply to: the next-edit pipeline (`completion.next_edit`: `plan`, then `run` within what is
    left of the deadline) on the document as the editor has it."""
    text = _current(session, uri, version)
    document = session.documents.syntax.get(uri)
    if text is None or document is None or document.text != text:
        logger.info("no next edit in %s: not open at version %d", uri, version)
        return _nothing(uri, started)
    planned = _plan(session, uri, document, line, settled=False)
    if isinstance(planned, Refused) and planned.reason == next_edit.TYPING:
        wait_s = _settle_wait(session.documents.history, uri)
        logger.info("next edit in %s waits %.0f ms for typing to pause", uri, wait_s * 1000.0)
        await asyncio.sleep(wait_s)  # a key pressed meanwhile cancels this request
        started += wait_s  # the server's own time and the deadline run from here
        if _current(session, uri, version) != text:
            return _nothing(uri, started)
        planned = _plan(session, uri, document, line, settled=True)
    if isinstance(planned, Refused):
        logger.info("no next edit in %s: %s", uri, planned.reason)
        return _nothing(uri, started)
    deadline_ms = session.settings.deadline_ms
    client = await session.worker_client(deadline_ms / 1000.0) if planned.request is not None else None
    edits = await next_edit.run(planned, client, Deadline(started, deadline_ms))
    if _current(session, uri, version) != text:
        logger.info("no next edit: %s changed while the worker answered", uri)
        return _nothing(uri, started)
    return _answer(uri, edits, started), edits, text


def _plan(session: Session, uri: str, document: ParsedDocument, line: int, settled: bool) -> EditPlan | Refused:
    """The next-edit plan after the document's newest edit event (`next_edit.plan`)."""
    settings, history = session.settings, session.documents.history
    return next_edit.plan(EditAsk(document, history.latest(uri), line, logs.request_id.get(), settings.deadline_ms,
                                  uri, f"{session.client_id}:{INLINE_EDIT}:{uri}", history.events(uri),
                                  Drafting(settings.next_edit_drafts), settled=settled))


def _settle_wait(history: EditHistory, uri: str) -> float:
    """Seconds until the document's newest edit event is `next_edit.SETTLE_S` old: the pause that
    ends a word new to the text (`next_edit.gate`)."""
    event = history.latest(uri)
    return 0.0 if event is None else max(0.0, event.time + next_edit.SETTLE_S - history.clock())


def on_did_show_inline_edit(session: Session, params: DidShowInlineEditParams) -> None:
    session.stats.report(SHOWN, params.event)


def on_accept_inline_edit(session: Session, *arguments: Any) -> None:
    """The accept command of an edit: its argument names the request."""
    session.stats.report(ACCEPTED, event_of(arguments))


def register(server: LanguageServer) -> None:
    """Next edits' handlers on `server` (an `InfillLanguageServer`, which holds the session): the
    request, the shown edit's notification and the accept command; and a request in flight is
    dropped when its document changes."""
    server.feature(INLINE_EDIT)(with_session(on_inline_edit))
    server.feature(DID_SHOW_INLINE_EDIT)(with_session(on_did_show_inline_edit))
    server.command(ACCEPT_INLINE_EDIT)(with_session(on_accept_inline_edit))
    server.session.changed.append(functools.partial(on_document_change, server.session))
