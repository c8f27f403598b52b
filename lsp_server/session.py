"""One editor's session: what the server's features (completions, next edits, the arena) work with.

A feature receives the `Session`, never the server: its settings, its open documents with their
trees and edit histories (`lsp_server.documents`), the typing-through cache, the stats log, the
requests in flight (`lsp_server.supersede`), the workers or the upstream (`lsp_server.workers`),
the arena's state and the index completion drafts are looked up in
(`lsp_server.workspace.WorkspaceDrafts`; the documents hand it to the completion pipeline with
their other sources). The editor's documents and position encoding are read through `editor` and
`encoding`, which the server points at pygls's workspace, so that a feature can be driven without
a server.
"""
from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lsprotocol import types

from completion.fim import Backend
from lsp_server.arena_state import ArenaState
from lsp_server.cache import CompletionCache
from lsp_server.documents import Documents
from lsp_server.protocol import CompletionEvent
from lsp_server.settings import ServerSettings
from lsp_server.stats import ACCEPTED, StatsLog
from lsp_server.supersede import InFlight
from lsp_server.workers import Workers
from lsp_server.workspace import WorkspaceDrafts


class OpenDocument(NamedTuple):
    """A document as the editor has it open."""

    text: str
    version: int | None


@dataclass(eq=False)
class Session:
    settings: ServerSettings = field(default_factory=ServerSettings)
    documents: Documents = field(default_factory=Documents)
    cache: CompletionCache = field(default_factory=CompletionCache)
    stats: StatsLog = field(default_factory=lambda: StatsLog(None))
    workers: Workers = field(default_factory=Workers)
    arena: ArenaState = field(default_factory=ArenaState)
    in_flight: InFlight = field(default_factory=dict)
    client_id: str = field(default_factory=lambda: uuid.uuid4().hex)  # opens our worker sessions
    editor: Callable[[str], OpenDocument | None] = lambda uri: None  # a document the editor opened
    encoding: Callable[[], str] = lambda: types.PositionEncodingKind.Utf16
    show_error: Callable[[str], None] = lambda message: None  # a message the user should see
    drafts: WorkspaceDrafts = field(default_factory=WorkspaceDrafts)
    changed: list[Callable[[str], None]] = field(default_factory=list)  # told each changed document's uri

    def __post_init__(self) -> None:
        self.documents.drafts = self.drafts

    def open_document(self, uri: str) -> OpenDocument | None:
        """`uri` as the editor has it, or None when the editor never opened it: the server
        completes what the editor shows it and never reads a path a request names."""
        return self.editor(uri)

    def open_text(self, uri: str) -> str | None:
        document = self.editor(uri)
        return None if document is None else document.text

    def note_draft_text(self, uri: str) -> None:
        """Hand an open document's text to the draft index (it indexes it in its own thread)."""
        opened = self.documents.opened(uri)
        if opened is not None:
            self.drafts.note_text(uri, opened[0])

    def report_accepted(self, event: CompletionEvent) -> None:
        """An accepted completion: the stats log's line, and its text (as much as was taken) for
        drafts."""
        line = self.stats.report(ACCEPTED, event)
        answer = None if line is None else self.stats.answers.get(line["request_id"])
        if answer is not None and 0 <= line["index"] < len(answer.texts):
            self.drafts.note_accepted(answer.texts[line["index"]][:max(0, line["accepted_chars"])])

    async def worker_client(self, timeout_s: float) -> Backend | None:
        """The workers' pool, or the upstream the `backend` setting names (`upstream`)."""
        return await self.workers.client(timeout_s)


def with_session(feature: Callable) -> Callable:
    """A pygls handler (its first parameter named `ls`, as pygls looks for, the server holding the
    session) that hands `feature` the server's session, as a coroutine when `feature` is one."""
    if inspect.iscoroutinefunction(feature):
        async def handler(ls: Any, *arguments: Any) -> Any:
            return await feature(ls.session, *arguments)
    else:
        def handler(ls: Any, *arguments: Any) -> Any:
            return feature(ls.session, *arguments)
    return handler
