"""One completion request in the server, from the cursor to an `Answer`, never late and never raising.

`complete_at` gives each request an id (carried by every log line), makes it supersede the
request of the same method still in flight for the same document (`lsp_server.supersede`), and
turns any failure into an empty answer. `_complete` cuts the hole (there is none in a document
over the size cap of `lsp_server.documents`), answers from the typing-through cache if the user
is typing a completion already shown, and otherwise runs the FIM pipeline (`completion.fim`):
`plan` (languages, decision, context, requests), then `run` (the worker asked within what is left
of the deadline counted from the request's arrival, a failing worker's candidates left out, and
`finish`: post-process and rank). The worker is awaited on the event loop, never blocked on. An
answer whose document changed while the worker computed it (a key typed with no request of its
own yet) is cached for typing through but answers nothing: it was for text the editor no longer
shows. Everything it reads is the editor's `Session`.

`register(server)` adds the handlers: `textDocument/inlineCompletion` (each item carries the
command `infill.acceptCompletion` naming its request; with the `arena` setting on, the request is
a battle of `lsp_server.arena`'s instead), `textDocument/completion` (each item carries the same
`AnswerRef` as `data`), the accept command, and the client's `infill/didShowCompletion`,
`infill/acceptCompletion` and `infill/rejectCompletion`, which go to the stats log.
"""
from __future__ import annotations

import logging
import time

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from completion import fim
from completion.positions import LINE_BREAK, split_at
from completion.requests import new_request_id
from engine.wire.deadline import Deadline
from engine.wire.protocol import Mode
from lsp_server import arena, logs
from lsp_server.protocol import ACCEPT_COMMAND, AnswerRef, CompletionEvent, event_of
from lsp_server.session import Session, with_session
from lsp_server.stats import ACCEPTED, EVENTS, Answer
from lsp_server.supersede import superseding

logger = logging.getLogger(__name__)


async def complete_at(session: Session, method: str, uri: str, position: types.Position,
                      invoked: bool, candidates: int = 1) -> Answer:
    """The answer to an LSP `method` at `position` in `uri`; its texts are empty when there is
    nothing in time. Requests of one method supersede each other, not those of another (an
    editor may ask for inline completions and completion items at each keystroke)."""
    request_id = new_request_id()
    logs.request_id.set(request_id)
    started = time.monotonic()
    worker_session = f"{session.client_id}:{method}:{uri}"  # the worker supersedes what this replaces
    answer = await superseding(
        session.in_flight, method, uri,
        _complete(session, uri, position, invoked, candidates, started, worker_session),
        lambda: _answer(uri, "", [], started, False),
        f"completion at {uri} {position.line}:{position.character}")
    session.stats.record(answer)
    return answer


def _answer(uri: str, mode: str, texts: list[str], started: float, cache_hit: bool) -> Answer:
    latency_ms = (time.monotonic() - started) * 1000.0
    logger.info("%s: %d texts in %.1f ms%s", mode or "no mode", len(texts), latency_ms,
                " from the cache" if cache_hit else "")
    return Answer(logs.request_id.get(), uri, mode, tuple(texts), latency_ms, cache_hit)


async def _complete(session: Session, uri: str, position: types.Position, invoked: bool,
                    candidates: int, started: float, worker_session: str) -> Answer:
    hole = hole_for(session, uri, position)
    if hole is None:
        return _answer(uri, "", [], started, False)
    settings = session.settings
    hit = session.cache.get(uri, hole.prefix, hole.suffix)
    if hit is not None:
        logger.info("typing through the answer to %s", hit.request_id)
        return _answer(uri, hit.mode, hit.texts[:candidates], started, True)
    planned = fim.plan(hole, settings, session.documents, logs.request_id.get(), invoked=invoked,
                       candidates=candidates, languages=settings.languages, session=worker_session)
    if planned.mode == Mode.NONE:
        logger.info("no completion at %d:%d", position.line, position.character)
        return _answer(uri, planned.mode, [], started, False)
    client = await session.worker_client(settings.deadline_ms / 1000.0)
    texts = (await fim.run(planned, client, Deadline(started, settings.deadline_ms))).texts
    session.cache.put(uri, hole.prefix, hole.suffix, texts, planned.mode, logs.request_id.get())
    if texts and session.open_text(uri) != hole.prefix + hole.suffix:
        logger.info("dropped: the document changed while the worker answered")
        texts = []  # for text the editor no longer shows; typing through it is the cache's
    return _answer(uri, planned.mode, texts, started, False)


def hole_for(session: Session, uri: str, position: types.Position) -> fim.Hole | None:
    """The hole at `position`, or None (logged) when there is no place to complete."""
    text = session.open_text(uri)
    if text is None:
        logger.info("no completion in %s: the editor has not opened it", uri)
        return None
    if session.documents.is_too_large(uri):
        logger.info("no completion in %s: it is over the size cap", uri)
        return None
    hole = split_at(text, position.line, position.character, session.encoding())
    if hole is None:
        logger.info("no completion at %d:%d in %s: outside the document or not UTF-8 text",
                    position.line, position.character, uri)
        return None
    return fim.hole_at(uri, *hole, session.documents.syntax.get(uri))


def label_for(text: str) -> str:
    """A completion item's label: the completion's first line that has text, without its indent."""
    for line in LINE_BREAK.split(text):
        if line.strip():
            return line.strip()
    return text


def completion_item(text: str, position: types.Position, request_id: str,
                    index: int) -> types.CompletionItem:
    """An item that inserts `text` at the cursor (an empty range: nothing is replaced); its
    `data` names the request and the candidate, for `infill/acceptCompletion`."""
    kind = types.CompletionItemKind.Snippet if "\n" in text else types.CompletionItemKind.Text
    edit = types.TextEdit(range=types.Range(start=position, end=position), new_text=text)
    return types.CompletionItem(label=label_for(text), kind=kind, detail="infill", text_edit=edit,
                                insert_text_format=types.InsertTextFormat.PlainText,
                                data=AnswerRef(request_id, index))


def accept_command(request_id: str, index: int) -> types.Command:
    """The command an editor runs when the user accepts an inline item: it names the request."""
    return types.Command(title="infill: accepted", command=ACCEPT_COMMAND,
                         arguments=[AnswerRef(request_id, index)])


async def on_inline_completion(session: Session, params: types.InlineCompletionParams,
                               ) -> list[types.InlineCompletionItem]:
    invoked = params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked
    if session.settings.arena and session.settings.arena_backends:
        hole = hole_for(session, params.text_document.uri, params.position)
        return await arena.arena_completion(session, params, hole, invoked)
    candidates = len(fim.INVOKED_DECODERS) if invoked else 1
    answer = await complete_at(session, types.TEXT_DOCUMENT_INLINE_COMPLETION, params.text_document.uri,
                               params.position, invoked, candidates)
    here = types.Range(start=params.position, end=params.position)
    return [types.InlineCompletionItem(insert_text=text, range=here,
                                       command=accept_command(answer.request_id, index))
            for index, text in enumerate(answer.texts)]


async def on_completion(session: Session, params: types.CompletionParams) -> types.CompletionList:
    context = params.context
    invoked = context is None or context.trigger_kind == types.CompletionTriggerKind.Invoked
    answer = await complete_at(session, types.TEXT_DOCUMENT_COMPLETION, params.text_document.uri,
                               params.position, invoked)
    items = [completion_item(text, params.position, answer.request_id, index)
             for index, text in enumerate(answer.texts)]
    return types.CompletionList(is_incomplete=True, items=items)  # ask again as the user types


def on_accept_command(session: Session, *arguments: object) -> None:
    """The accept command of an inline item, run by editors that run item commands."""
    session.report_accepted(event_of(arguments))


def on_completion_event(method: str):
    """A handler for one of the client's `infill/...Completion` notifications."""
    def handler(session: Session, event: CompletionEvent) -> None:
        if method == ACCEPTED:
            session.report_accepted(event)
        else:
            session.stats.report(method, event)
    return handler


def register(server: LanguageServer) -> None:
    """Completions' handlers on `server` (an `InfillLanguageServer`, which holds the session): the
    two LSP requests, the accept command and the client's events."""
    server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(
        with_session(on_inline_completion))
    server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions())(with_session(on_completion))
    server.command(ACCEPT_COMMAND)(with_session(on_accept_command))
    for method in EVENTS:
        server.feature(method)(with_session(on_completion_event(method)))
