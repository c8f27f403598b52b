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
without a grammar), with a syntax error, or without an edit event, and when the worker errs or is
late. A newer request for the document supersedes the one in flight; `$/cancelRequest` cancels
one. The server never changes the document.

With the `jointRegions` setting false (for comparison with the anchors, which rewrite one region
per request), the regions go to the worker one job each, nearest the cursor first, each job with
the whole deadline and with the edits of the jobs before it made in its text, as a client that
jumps to each edit, takes it and asks again would see the document; the same rules then keep the
edits.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from completion import next_edit
from completion.edit_events import EditEvent, line_breaks
from completion.edit_regions import Region
from completion.next_edit import Edit
from completion.positions import line_length, split_lines
from completion.requests import new_request_id
from engine.client import WorkerError, WorkerTimeout
from lsp_server import logs
from lsp_server.completer import superseding
from lsp_server.stats import ACCEPTED, SHOWN, Answer

if TYPE_CHECKING:
    from engine.pool import AsyncWorkerPool
    from engine.protocol import CompleteRequest, Item
    from lsp_server.server import InfillLanguageServer

logger = logging.getLogger(__name__)

INLINE_EDIT = "textDocument/copilotInlineEdit"
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"
ACCEPT_INLINE_EDIT = "infill.acceptInlineEdit"
MODE = "next_edit"  # the stats log's mode for these answers
NO_EDITS: dict[str, list] = {"edits": []}


def _field(value: Any, name: str) -> Any:
    """A field of raw params: a map or an object (pygls passes unknown methods' params as is)."""
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def request_of(params: Any) -> tuple[str, int, int] | None:
    """(uri, version, line) of an inline edit request, or None for malformed params."""
    document, position = _field(params, "textDocument"), _field(params, "position")
    uri, version = _field(document, "uri"), _field(document, "version")
    line, character = _field(position, "line"), _field(position, "character")
    if not isinstance(uri, str) or not all(type(n) is int and n >= 0 for n in (version, line, character)):
        return None
    return uri, version, line


def edit_range(text: str, edit: Edit, encoding: str) -> dict:
    """The LSP range of an edit's whole lines; the last line of the text ends at its last column."""
    lines = split_lines(text)
    if edit.end_line < len(lines):
        end = {"line": edit.end_line, "character": 0}
    else:
        end = {"line": len(lines) - 1, "character": line_length(lines[-1], encoding)}
    return {"start": {"line": edit.start_line, "character": 0}, "end": end}


def _nothing(uri: str, started: float) -> tuple[Answer, list[Edit], str]:
    return _answer(uri, [], started), [], ""


def _answer(uri: str, edits: list[Edit], started: float) -> Answer:
    latency_ms = (time.monotonic() - started) * 1000.0
    logger.info("next edit: %d edits in %.1f ms", len(edits), latency_ms)
    return Answer(logs.request_id.get(), uri, MODE, tuple(e.new_text for e in edits), latency_ms, False)


async def on_inline_edit(ls: InfillLanguageServer, params: Any) -> dict:
    request = request_of(params)
    if request is None:
        logger.info("no next edit: malformed params %.200r", params)
        return NO_EDITS
    uri, version, line = request
    logs.request_id.set(new_request_id())
    started = time.monotonic()
    answer, edits, text = await superseding(ls, INLINE_EDIT, uri, _suggest(ls, uri, version, line, started),
                                            lambda: _nothing(uri, started), f"next edit in {uri}")
    ls.stats.record(answer)
    encoding = ls.workspace.position_encoding or types.PositionEncodingKind.Utf16
    return {"edits": [{"text": edit.new_text, "textDocument": {"uri": uri, "version": version},
                       "range": edit_range(text, edit, encoding),
                       "command": {"title": "infill: accept the edit", "command": ACCEPT_INLINE_EDIT,
                                   "arguments": [{"requestId": answer.request_id, "index": index}]}}
                      for index, edit in enumerate(edits)]}


def _current(ls: InfillLanguageServer, uri: str, version: int) -> str | None:
    """The document's text while the editor has it open at `version`."""
    document = ls.workspace.text_documents.get(unquote(uri))
    return document.source if document is not None and document.version == version else None


async def _suggest(ls: InfillLanguageServer, uri: str, version: int, line: int,
                   started: float) -> tuple[Answer, list[Edit], str]:
    """The edits to propose at `line` of `uri` at `version`, with the answer and the text they
    apply to: the next-edit pipeline (`completion.next_edit`) on the document as the editor has it."""
    text = _current(ls, uri, version)
    document = ls.documents.syntax.get(uri)
    if text is None or document is None or document.text != text:
        logger.info("no next edit in %s: not open at version %d", uri, version)
        return _nothing(uri, started)
    event = ls.documents.history.latest(uri)
    planned = next_edit.plan(document, event, line, logs.request_id.get(), ls.settings.deadline_ms,
                             uri, f"{ls.client_id}:{INLINE_EDIT}:{uri}",
                             ls.documents.history.events(uri))
    if planned is None:
        logger.info("no next edit in %s: %s", uri, next_edit.gate(document, event))
        return _nothing(uri, started)
    client = await ls.worker_client(ls.settings.deadline_ms / 1000.0)
    if client is None:
        return _nothing(uri, started)
    if ls.settings.joint_regions:
        budget_ms = ls.settings.deadline_ms - int((time.monotonic() - started) * 1000.0)
        items = await _ask(client, next_edit.within(planned, max(1, budget_ms)).request, budget_ms)
    else:
        items = await one_by_one(ls, client, text, planned.regions, uri,
                                 ls.documents.history.events(uri))
    if items is None:
        return _nothing(uri, started)
    if _current(ls, uri, version) != text:
        logger.info("no next edit: %s changed while the worker answered", uri)
        return _nothing(uri, started)
    edits = next_edit.finish(planned, items)
    return _answer(uri, edits, started), edits, text


async def _ask(client: AsyncWorkerPool, request: CompleteRequest | None,
               budget_ms: int) -> list[Item] | None:
    """The worker's items for one edit job; None when there is no job (no regions, over the
    caps, no time left) or the worker errs or is late."""
    if request is None or budget_ms < 1:
        return None
    try:
        return (await client.complete(request)).items
    except (WorkerTimeout, WorkerError) as exc:
        logger.warning("no next edit: %s", exc)
        return None


async def one_by_one(ls: InfillLanguageServer, client: AsyncWorkerPool, text: str,
                     regions: Sequence[Region], uri: str, events: Sequence[EditEvent] = ()) -> list[Item]:
    """The items of one job per region (in the given order, nearest the cursor first), each hole
    numbered as in the joint job's file order; each job's text has the edits before it made, and
    a region without an answer has no items."""
    in_file_order = sorted(regions, key=lambda region: region.start_line)
    items: list[Item] = []
    current, moves = text, []  # (the first line below an edit, in `text`; the lines it added)
    for region in regions:
        shift = sum(added for below, added in moves if region.start_line >= below)
        moved = Region(region.start_line + shift, region.end_line + shift, region.reason)
        request = next_edit.edit_request(logs.request_id.get(), current, [moved],
                                         ls.settings.deadline_ms, uri,
                                         f"{ls.client_id}:{INLINE_EDIT}:{uri}", events)
        answer = await _ask(client, request, ls.settings.deadline_ms)
        if answer is None:
            continue
        hole = in_file_order.index(region)
        items += [dataclasses.replace(item, hole=hole) for item in answer]
        after = next_edit.applied(current, next_edit.changed(current, [moved], answer))
        moves.append((region.end_line, line_breaks(after) - line_breaks(current)))
        current = after
    return items


def _command_arguments(params: Any) -> Any:
    """The first argument of `{item: {command: {arguments}}}`, the shown edit's request."""
    arguments = _field(_field(_field(params, "item"), "command"), "arguments")
    return arguments[0] if isinstance(arguments, list) and arguments else None


def on_did_show_inline_edit(ls: InfillLanguageServer, params: Any) -> None:
    ls.stats.report(SHOWN, _command_arguments(params))


def on_accept_inline_edit(ls: LanguageServer, *arguments: Any) -> None:
    """The accept command (pygls reads a command's type hints at run time, so `ls` is typed with
    a class it can import here)."""
    ls.stats.report(ACCEPTED, arguments[0] if arguments else None)


def register(server: InfillLanguageServer) -> None:
    """Add the next-edit methods and the accept command to `server`."""
    server.feature(INLINE_EDIT)(on_inline_edit)
    server.feature(DID_SHOW_INLINE_EDIT)(on_did_show_inline_edit)
    server.command(ACCEPT_INLINE_EDIT)(on_accept_inline_edit)
