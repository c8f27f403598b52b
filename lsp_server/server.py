"""The language server (pygls 2.x): inline completions and completion items from an engine worker.

The server keeps every open document (incremental sync, applied by LSP's own line rules) with its
tree-sitter tree and its definitions (`lsp_server.documents`). On `textDocument/inlineCompletion` or
`textDocument/completion` it answers through `lsp_server.completer`: decide, build the context,
ask the worker within the deadline, post-process. It answers with nothing, never with an error,
when the position lies outside the document, the text cannot be sent, it is no place to complete,
a newer request for the document came, or the worker errs or is late; the reason is logged with
the request id. It never edits the document.

Each item names its request: inline items carry the command `infill.acceptCompletion`, completion
items carry `data`; the notifications `infill/didShowCompletion`, `infill/acceptCompletion` and
`infill/rejectCompletion` (params `{"requestId", "index", "acceptedChars"}`) go to the stats log.
Next-edit suggestions (`textDocument/copilotInlineEdit`) are `lsp_server.inline_edit`'s.
With the `arena` setting on, an inline completion is a battle of two backends and the editor's pick
goes to a SQLite vote store (`lsp_server.arena`).
Settings come from `initializationOptions` and `workspace/didChangeConfiguration`. Once the worker
answers, the server tells the client its model with `infill/workerReady` (`{"model", "address"}`).

Messages come through `lsp_server.transport`: stdio, or loopback TCP for the one editor that
sends the launch token (`lsp_server.launch_token`); a reader that no input can stop
(`lsp_server.framing`). A `--host` that is not loopback is served too, with a warning in the log
(`exposure_warning`). Completions are asked only for documents the editor opened; none in one
over the size cap of `lsp_server.documents`.

The workers (`lsp_server.workers`) are those named by the `workerAddress` setting (or
`--worker`), a comma-separated list of addresses over which requests are balanced
(`engine.client.pool`; `--worker-keys` for remote workers started with CURVE keys). Without one
the server starts a local worker on the bundled model in the background at `initialize`
(requests wait for it within their deadline), restarts it if it dies, and stops it at
`shutdown`, `exit` or when the connection ends. Every feature receives the editor's `Session`
(`lsp_server.session`), never the server.
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import inspect
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from completion import fim
from completion.positions import LINE_BREAK
from engine.client.flags import add_local_worker_flags, check_local_worker_flags, local_worker_flags
from engine.client.hosts import is_loopback
from engine.client.keys import ClientKeys, load_client_keys
from lsp_server import arena, inline_edit, logs, transport
from lsp_server.completer import complete_at, hole_for
from lsp_server.documents import EditorDocumentsProtocol
from lsp_server.framing import DEFAULT_MAX_BODY_BYTES
from lsp_server.launch_token import new_token, remove_token, token_path, write_token
from lsp_server.protocol import (ACCEPT_COMMAND, ACCEPT_INLINE_EDIT, DID_SHOW_INLINE_EDIT,
                                 INLINE_EDIT, VOTE_COMMAND, WORKER_READY)
from lsp_server.session import OpenDocument, Session
from lsp_server.settings import ServerSettings
from lsp_server.stats import ACCEPTED, EVENTS, StatsLog, default_stats_path
from lsp_server.supersede import superseding
from lsp_server.workers import Workers
from upstream.config import add_backend_flags, backend_setting

logger = logging.getLogger(__name__)


class InfillLanguageServer(LanguageServer):
    """The pygls server of one editor; what its features work with is its `session`."""

    def __init__(self, worker_address: str | None = None, worker_keys: ClientKeys | None = None,
                 stats_log: str | None = None, worker_flags: Sequence[str] = (),
                 startup_timeout_s: float | None = None, backend: dict | None = None) -> None:
        super().__init__("infill-lsp", version("infill"), protocol_cls=EditorDocumentsProtocol)
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
        self.protocol.notify(WORKER_READY, {"model": model, "address": address})

    def _show_error(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))


def _stats_path(setting: str | None) -> Path | None:
    """The stats log's path: the default one without a setting, none for an empty one."""
    if setting is None:
        return default_stats_path()
    return Path(setting).expanduser() if setting else None


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
                                data={"requestId": request_id, "index": index})


def accept_command(request_id: str, index: int) -> types.Command:
    """The command an editor runs when the user accepts an inline item: it names the request."""
    return types.Command(title="infill: accepted", command=ACCEPT_COMMAND,
                         arguments=[{"requestId": request_id, "index": index}])


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
    inline_edit.on_document_change(session, document.uri)


def on_did_close(ls: InfillLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.session.documents.close(params.text_document.uri)
    ls.session.cache.forget(params.text_document.uri)


async def on_did_change_configuration(ls: InfillLanguageServer,
                                      params: types.DidChangeConfigurationParams) -> None:
    """New settings: `{"infill": {...}}` or the settings themselves, over the current ones; a new
    worker address, key folder, device, dtype or backend reconnects (stopping a local worker this
    server
    started)."""
    options = params.settings
    if isinstance(options, dict) and isinstance(options.get("infill"), dict):
        options = options["infill"]
    worker = lambda s: (s.worker_address, s.worker_keys, s.device, s.dtype, s.backend)  # noqa: E731
    before = worker(ls.session.settings)
    ls.configure(options, update=True)
    if worker(ls.session.settings) != before:
        await ls.close_worker()
        ls.connect_worker()


def on_accept_command(ls: InfillLanguageServer, *arguments: Any) -> None:
    """The accept command of an inline item, run by editors that run item commands."""
    ls.session.report_accepted(arguments[0] if arguments else None)


def on_completion_event(method: str):
    """A handler for one of the client's `infill/...Completion` notifications."""
    def handler(ls: InfillLanguageServer, params: Any) -> None:
        if method == ACCEPTED:
            ls.session.report_accepted(params)
        else:
            ls.session.stats.report(method, params)
    return handler


def with_session(feature: Callable) -> Callable:
    """A pygls handler (its first parameter named `ls`, as pygls looks for) that hands `feature`
    the server's session, as a coroutine when `feature` is one."""
    if inspect.iscoroutinefunction(feature):
        async def handler(ls: InfillLanguageServer, *arguments: Any) -> Any:
            return await feature(ls.session, *arguments)
    else:
        def handler(ls: InfillLanguageServer, *arguments: Any) -> Any:
            return feature(ls.session, *arguments)
    return handler


async def on_inline_completion(ls: InfillLanguageServer, params: types.InlineCompletionParams,
                               ) -> list[types.InlineCompletionItem]:
    invoked = params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked
    if ls.session.settings.arena and ls.session.settings.arena_backends:
        return await arena_completion(ls.session, params, invoked)
    candidates = len(fim.INVOKED_DECODERS) if invoked else 1
    answer = await complete_at(ls.session, types.TEXT_DOCUMENT_INLINE_COMPLETION, params.text_document.uri,
                               params.position, invoked, candidates)
    here = types.Range(start=params.position, end=params.position)
    return [types.InlineCompletionItem(insert_text=text, range=here,
                                       command=accept_command(answer.request_id, index))
            for index, text in enumerate(answer.texts)]


async def arena_completion(session: Session, params: types.InlineCompletionParams,
                           invoked: bool) -> list[types.InlineCompletionItem]:
    """An inline completion as an arena battle (`lsp_server.arena`); nothing when it fails."""
    uri, position = params.text_document.uri, params.position
    items = arena.arena_items(session, uri, position, hole_for(session, uri, position), invoked)
    return await superseding(session.in_flight, types.TEXT_DOCUMENT_INLINE_COMPLETION, uri, items,
                             list, f"arena completion at {uri} {position.line}:{position.character}")


async def on_completion(ls: InfillLanguageServer, params: types.CompletionParams,
                        ) -> types.CompletionList:
    context = params.context
    invoked = context is None or context.trigger_kind == types.CompletionTriggerKind.Invoked
    answer = await complete_at(ls.session, types.TEXT_DOCUMENT_COMPLETION, params.text_document.uri,
                               params.position, invoked)
    items = [completion_item(text, params.position, answer.request_id, index)
             for index, text in enumerate(answer.texts)]
    return types.CompletionList(is_incomplete=True, items=items)  # ask again as the user types


def build_server(worker_address: str | None = None, worker_keys: ClientKeys | None = None,
                 stats_log: str | None = None, worker_flags: Sequence[str] = (),
                 startup_timeout_s: float | None = None, backend: dict | None = None) -> InfillLanguageServer:
    """A server with every handler registered; the arguments are the command line's defaults."""
    server = InfillLanguageServer(worker_address, worker_keys, stats_log, worker_flags, startup_timeout_s,
                                  backend)
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.SHUTDOWN)(on_shutdown)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(on_did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(on_did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(on_did_close)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_did_change_configuration)
    for method in EVENTS:
        server.feature(method)(on_completion_event(method))
    server.command(ACCEPT_COMMAND)(on_accept_command)
    server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(
        on_inline_completion)
    server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions())(on_completion)
    server.feature(INLINE_EDIT)(with_session(inline_edit.on_inline_edit))
    server.feature(DID_SHOW_INLINE_EDIT)(with_session(inline_edit.on_did_show_inline_edit))
    server.command(ACCEPT_INLINE_EDIT)(with_session(inline_edit.on_accept_inline_edit))
    server.command(VOTE_COMMAND)(with_session(arena.on_vote))
    return server


def exposure_warning(host: str) -> str | None:
    """The warning for listening on `host`, or None for a loopback address (or `localhost`)."""
    if is_loopback(host):
        return None
    return (f"--host {host} is not a loopback address: the language server's port can be reached "
            "from other machines (only the launch token keeps them out); 127.0.0.1, the default, "
            "is reachable from this machine only")


def _terminate(server: InfillLanguageServer, stdio: bool, signum: int, frame: object) -> None:
    """SIGTERM: stop the local worker, then leave. On stdio, leave at once: a normal exit would wait
    for pygls's stdin reader thread, which returns only when the client closes the pipe. On TCP,
    raise SystemExit so that the callers' `finally` blocks run too."""
    server.session.workers.stop_local()
    if stdio:
        logging.shutdown()
        os._exit(128 + signum)
    raise SystemExit(128 + signum)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="infill lsp", description="Serve code completions to an editor over the Language "
                                       "Server Protocol (stdio by default).")
    parser.add_argument("--tcp", type=int, metavar="PORT", default=None,
                        help="listen on TCP PORT (of --host) instead of stdio, for one editor that "
                             "sends this launch's token (see --token-file)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on with --tcp (default 127.0.0.1; any other than "
                             "loopback lets other machines reach the port, logged as a warning)")
    parser.add_argument("--worker", metavar="ADDRESS", default=None,
                        help="use the running worker at ADDRESS (e.g. tcp://127.0.0.1:5555), or "
                             "balance over several given as ADDRESS,ADDRESS,... instead of "
                             "starting one; the workerAddress setting overrides it")
    add_local_worker_flags(parser)
    add_backend_flags(parser)
    parser.add_argument("--worker-keys", metavar="DIR", type=Path, default=None,
                        help="CURVE key folder (from `infill keys`) for workers started with --keys")
    parser.add_argument("--log-file", type=Path, metavar="PATH", default=None,
                        help="write the log to PATH instead of stderr")
    parser.add_argument("--stats-log", metavar="PATH", default=None,
                        help="append the completion stats to PATH (a regular file; \"\" for none; "
                             "default ~/.local/state/infill/stats.jsonl); the statsLog setting "
                             "overrides it")
    parser.add_argument("--token-file", type=Path, metavar="PATH", default=None,
                        help="with --tcp: write this launch's token, which the editor must send, "
                             "to PATH (default: $XDG_RUNTIME_DIR/infill/lsp-PORT.token, else "
                             "~/.local/state/infill/lsp-PORT.token)")
    parser.add_argument("--max-message-bytes", type=int, metavar="N", default=DEFAULT_MAX_BODY_BYTES,
                        help="skip LSP messages larger than N bytes (default "
                             f"{DEFAULT_MAX_BODY_BYTES // 2**20} MiB)")
    return parser


def serve(server: InfillLanguageServer, args: argparse.Namespace) -> None:
    """Serve stdio, or TCP with a new launch token written to its file for the editor."""
    if args.tcp is None:
        asyncio.run(transport.serve_stdio(server, args.max_message_bytes))
        return
    token, path = new_token(), args.token_file or token_path(args.tcp)
    write_token(path, token)
    warning = exposure_warning(args.host)
    if warning is not None:
        logger.warning("%s", warning)

    def listening(port: int) -> None:
        sys.stderr.write(f"infill lsp: listening on {args.host}:{port}; the editor's token is in "
                         f"{path}\n")
        sys.stderr.flush()

    try:
        asyncio.run(transport.serve_tcp(server, args.host, args.tcp, token, args.max_message_bytes,
                                        listening))
    finally:
        remove_token(path, token)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `infill lsp` and `python -m lsp_server`; 0 after a shutdown request, else 1."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.tcp is not None and not 1 <= args.tcp <= 65535:
        parser.error(f"--tcp must be a port in 1..65535, got {args.tcp}")
    if args.max_message_bytes < 1024:
        parser.error(f"--max-message-bytes must be at least 1024, got {args.max_message_bytes}")
    check_local_worker_flags(parser, args)
    try:
        keys = None if args.worker_keys is None else load_client_keys(args.worker_keys.expanduser())
    except ValueError as exc:
        parser.error(str(exc))
    try:
        logs.configure_logging(args.log_file)
    except OSError as exc:
        parser.error(f"cannot write the log file {args.log_file}: {exc}")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # at INFO it logs every message in full
    server = build_server(args.worker, keys, args.stats_log, local_worker_flags(args),
                          args.startup_timeout, backend_setting(args))
    previous = signal.signal(signal.SIGTERM, functools.partial(_terminate, server, args.tcp is None))
    try:
        serve(server, args)
    except OSError as exc:
        logger.error("cannot serve: %s", exc)
        sys.stderr.write(f"infill lsp: {exc}\n")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.session.workers.stop_local()
    return 0 if server.shutdown_requested else 1
