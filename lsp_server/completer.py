"""One completion request in the server, from the cursor to an `Answer`, never late and never raising.

`complete_at` gives each request an id (carried by every log line), makes it supersede the
request of the same method still in flight for the same document (whose worker call is
cancelled: it answers with nothing; its worker requests carry the same session, so the worker
drops them as the new ones arrive; `superseding`, which next-edit requests share), and turns
any failure into an empty answer. `_complete` cuts the hole (there is none in a document over
the size cap of `lsp_server.documents`), answers from the typing-through cache if the user is
typing a completion already shown, and otherwise runs the FIM pipeline (`completion.fim`): plan
(languages, decision, context, requests), ask the worker within what is left of the deadline,
finish (post-process and rank).
The worker is awaited on the event loop, never blocked on.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types

from completion import fim
from completion.positions import split_at
from completion.requests import new_request_id
from engine.client import WorkerError, WorkerTimeout
from engine.protocol import Mode
from lsp_server import logs
from lsp_server.stats import Answer

if TYPE_CHECKING:
    from lsp_server.server import InfillLanguageServer

logger = logging.getLogger(__name__)

T = TypeVar("T")


async def complete_at(ls: InfillLanguageServer, method: str, uri: str, position: types.Position,
                      invoked: bool, candidates: int = 1) -> Answer:
    """The answer to an LSP `method` at `position` in `uri`; its texts are empty when there is
    nothing in time. Requests of one method supersede each other, not those of another (an
    editor may ask for inline completions and completion items at each keystroke)."""
    request_id = new_request_id()
    logs.request_id.set(request_id)
    started = time.monotonic()
    session = f"{ls.client_id}:{method}:{uri}"  # the worker supersedes what this one replaces
    answer = await superseding(
        ls, method, uri, _complete(ls, uri, position, invoked, candidates, started, session),
        lambda: _answer(uri, "", [], started, False),
        f"completion at {uri} {position.line}:{position.character}")
    ls.stats.record(answer)
    return answer


async def superseding(ls: InfillLanguageServer, method: str, uri: str, work: Coroutine[Any, Any, T],
                      nothing: Callable[[], T], what: str) -> T:
    """The result of `work`, the newest request of `method` for `uri`: it cancels the one still
    in flight. Superseded, or failing, it gives `nothing()`; cancelled itself ($/cancelRequest),
    it raises CancelledError."""
    task = asyncio.ensure_future(work)
    key = (method, uri)
    older, ls.in_flight[key] = ls.in_flight.get(key), task
    if older is not None and not older.done():
        older.cancel()
    try:
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # the handler itself was cancelled ($/cancelRequest)
        logger.info("superseded by a newer request for %s", uri)
        return nothing()
    except Exception:  # one request's failure must reach the editor as "nothing", not an error
        logger.exception("%s failed", what)
        return nothing()
    finally:
        if ls.in_flight.get(key) is task:
            del ls.in_flight[key]


def _answer(uri: str, mode: str, texts: list[str], started: float, cache_hit: bool) -> Answer:
    latency_ms = (time.monotonic() - started) * 1000.0
    logger.info("%s: %d texts in %.1f ms%s", mode or "no mode", len(texts), latency_ms,
                " from the cache" if cache_hit else "")
    return Answer(logs.request_id.get(), uri, mode, tuple(texts), latency_ms, cache_hit)


async def _complete(ls: InfillLanguageServer, uri: str, position: types.Position, invoked: bool,
                    candidates: int, started: float, session: str) -> Answer:
    hole = hole_for(ls, uri, position)
    if hole is None:
        return _answer(uri, "", [], started, False)
    hit = ls.cache.get(uri, hole.prefix, hole.suffix)
    if hit is not None:
        logger.info("typing through the answer to %s", hit.request_id)
        return _answer(uri, hit.mode, hit.texts[:candidates], started, True)
    planned = fim.plan(hole, ls.settings, ls.documents, logs.request_id.get(), invoked=invoked,
                       candidates=candidates, languages=ls.settings.languages, session=session)
    if planned.mode == Mode.NONE:
        logger.info("no completion at %d:%d", position.line, position.character)
        return _answer(uri, planned.mode, [], started, False)
    client = await ls.worker_client(ls.settings.deadline_ms / 1000.0)
    budget_ms = ls.settings.deadline_ms - int((time.monotonic() - started) * 1000.0)
    if client is None or budget_ms < 1:
        return _answer(uri, planned.mode, [], started, False)
    results = await fim.ask(client, fim.within(planned, budget_ms).requests,
                            (WorkerError, WorkerTimeout))
    texts = fim.finish(planned, results, ls.settings)
    ls.cache.put(uri, hole.prefix, hole.suffix, texts, planned.mode, logs.request_id.get())
    return _answer(uri, planned.mode, texts, started, False)


def hole_for(ls: InfillLanguageServer, uri: str, position: types.Position) -> fim.Hole | None:
    """The hole at `position`, or None (logged) when there is no place to complete."""
    text = ls.open_text(uri)
    if text is None:
        logger.info("no completion in %s: the editor has not opened it", uri)
        return None
    if ls.documents.is_too_large(uri):
        logger.info("no completion in %s: it is over the size cap", uri)
        return None
    encoding = ls.workspace.position_encoding or types.PositionEncodingKind.Utf16
    hole = split_at(text, position.line, position.character, encoding)
    if hole is None:
        logger.info("no completion at %d:%d in %s: outside the document or not UTF-8 text",
                    position.line, position.character, uri)
        return None
    return fim.hole_at(uri, *hole, ls.documents.syntax.get(uri))
