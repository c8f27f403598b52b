"""The language server (pygls 2.x): one editor's server, built with every feature's handlers.

`build_server` makes the `InfillLanguageServer` and registers its handlers: the server's own
(initialize, shutdown, the documents, the settings) here, and each feature's through its
`register(server)`: completions (`lsp_server.completer`: `textDocument/inlineCompletion`,
`textDocument/completion`, their accept command and events), next edits (`lsp_server.inline_edit`:
`textDocument/copilotInlineEdit` and its events) and the arena (`lsp_server.arena`: its vote). The
custom methods' params and results are `lsp_server.protocol`'s typed classes, which pygls
structures with that module's converter. The command line is `lsp_server.main`.

The server keeps every open document (incremental sync, applied by LSP's own line rules) with its
tree-sitter tree and its definitions (`lsp_server.documents`); it never edits one. Settings come
from `initializationOptions` and `workspace/didChangeConfiguration`. Once the worker answers, the
server tells the client its model with `infill/workerReady` (`{"model", "address"}`).

The workers (`lsp_server.workers`) are those named by the `workerAddress` setting (or
`--worker`), a comma-separated list of addresses over which requests are balanced
(`engine.client.pool`; `--worker-keys` for remote workers started with CURVE keys). Without one
the server starts a local worker on the bundled model in the background at `initialize`
(requests wait for it within their deadline), restarts it if it dies, and stops it at
`shutdown`, `exit` or when the connection ends. Every feature receives the editor's `Session`
(`lsp_server.session`), never the server.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from engine.wire.keys import ClientKeys
from lsp_server import arena, completer, inline_edit, protocol
from lsp_server.documents import EditorDocumentsProtocol
from lsp_server.protocol import WORKER_READY, WorkerReadyParams
from lsp_server.session import OpenDocument, Session
from lsp_server.settings import ServerSettings
from lsp_server.stats import StatsLog, default_stats_path
from lsp_server.workers import Workers

logger = logging.getLogger(__name__)


class InfillLanguageServer(LanguageServer):
    """The pygls server of one editor; what its features work with is its `session`."""

    def __init__(self, worker_address: str | None = None, worker_keys: ClientKeys | None = None,
                 stats_log: str | None = None, worker_flags: Sequence[str] = (),
                 startup_timeout_s: float | None = None, backend: dict | None = None) -> None:
        super().__init__("infill-lsp", version("infill"), protocol_cls=EditorDocumentsProtocol,
                         converter_factory=protocol.converter)
        self.default_worker_address = worker_address
        self.default_backend = backend  # --backend's, until a setting names one
        self.default_stats_log = stats_log
        self.shutdown_requested = False
        self.index_task: asyncio.Future[None] | None = None  # the workspace's indexing
        workers = Workers(worker_flags, worker_keys, startup_timeout_s, self._worker_ready,
                          self._show_error)
        self.session = Session(
            settings=ServerSettings(worker_address=worker_address, stats_log=stats_log, backend=backend),
            stats=StatsLog(_stats_path(stats_log)), workers=workers, editor=self._open_document,
            encoding=lambda: self.workspace.position_encoding or types.PositionEncodingKind.Utf16,
            show_error=self._show_error)

    def configure(self, options: Any, update: bool = False) -> None:
        """Take the settings from `initializationOptions`, or with `update` those a configuration
        change names (the others stay); bad values are logged and ignored."""
        session = self.session
        settings, problems = ServerSettings.from_options(options, session.settings if update else None)
        for problem in problems:
            logger.warning("%s", problem)
        if settings.worker_address is None:
            settings.worker_address = self.default_worker_address
        if settings.stats_log is None:
            settings.stats_log = self.default_stats_log
        if settings.backend is None:
            settings.backend = self.default_backend
        session.settings = settings
        session.stats.path = _stats_path(settings.stats_log)
        session.documents.history.resize(settings.edit_history)
        logger.info("settings: %s", settings)

    def connect_worker(self) -> None:
        """Start connecting to (or spawning) the worker in the background."""
        self.session.workers.connect(self.session.settings)

    async def close_worker(self) -> None:
        """Close the workers' clients and stop the local worker."""
        self.session.arena.close()
        await self.session.workers.close()

    def _open_document(self, uri: str) -> OpenDocument | None:
        opened = self.session.documents.opened(uri)
        return None if opened is None else OpenDocument(*opened)

    def _worker_ready(self, model: str, address: str) -> None:
        self.protocol.notify(WORKER_READY, WorkerReadyParams(model, address))

    def _show_error(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))


def _stats_path(setting: str | None) -> Path | None:
    """The stats log's path: the default one without a setting, none for an empty one."""
    if setting is None:
        return default_stats_path()
    return Path(setting).expanduser() if setting else None


async def on_initialize(ls: InfillLanguageServer, params: types.InitializeParams) -> None:
    ls.configure(params.initialization_options)
    ls.connect_worker()


async def on_initialized(ls: InfillLanguageServer, params: types.InitializedParams) -> None:
    root = ls.workspace.root_path
    if root:
        ls.index_task = asyncio.ensure_future(ls.session.documents.index_workspace(Path(root)))
    ls.session.drafts.start(Path(root) if root else None)


async def on_shutdown(ls: InfillLanguageServer, params: None) -> None:
    ls.shutdown_requested = True
    ls.session.drafts.close()
    await ls.close_worker()


def on_did_open(ls: InfillLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    document = params.text_document
    ls.session.documents.open(document.uri, document.language_id, document.text, document.version)
    ls.session.note_draft_text(document.uri)


def on_did_change(ls: InfillLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    document, session = params.text_document, ls.session
    session.documents.change(document.uri, params.content_changes, session.encoding(), document.version)
    session.note_draft_text(document.uri)
    for listener in session.changed:
        listener(document.uri)


def on_did_close(ls: InfillLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.session.documents.close(params.text_document.uri)
    ls.session.cache.forget(params.text_document.uri)


async def on_did_change_configuration(ls: InfillLanguageServer,
                                      params: types.DidChangeConfigurationParams) -> None:
    """New settings: `{"infill": {...}}` or the settings themselves, over the current ones; a new
    worker address, key folder, device, dtype or backend reconnects (stopping a local worker this
    server started)."""
    options = params.settings
    if isinstance(options, dict) and isinstance(options.get("infill"), dict):
        options = options["infill"]
    worker = lambda s: (s.worker_address, s.worker_keys, s.device, s.dtype, s.backend)  # noqa: E731
    before = worker(ls.session.settings)
    ls.configure(options, update=True)
    if worker(ls.session.settings) != before:
        await ls.close_worker()
        ls.connect_worker()


def register(server: InfillLanguageServer) -> None:
    """The server's own handlers: its lifecycle, the documents and the settings."""
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.SHUTDOWN)(on_shutdown)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(on_did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(on_did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(on_did_close)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_did_change_configuration)


def build_server(worker_address: str | None = None, worker_keys: ClientKeys | None = None,
                 stats_log: str | None = None, worker_flags: Sequence[str] = (),
                 startup_timeout_s: float | None = None, backend: dict | None = None) -> InfillLanguageServer:
    """A server with every handler registered; the arguments are the command line's defaults."""
    server = InfillLanguageServer(worker_address, worker_keys, stats_log, worker_flags, startup_timeout_s,
                                  backend)
    register(server)
    completer.register(server)
    inline_edit.register(server)
    arena.register(server)
    return server
