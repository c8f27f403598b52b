"""The server's view of the code: the open documents' text, their trees and the index of definitions.

The text of every open document is the server's own, kept as the editor keeps it: each `didChange`
applies by LSP's lines and columns (`lsp_server.trees.applied`, `completion.positions`), never by
`str.splitlines`'s (which would also end lines at a form feed, `\\x85` or U+2028), so that the
server's text and the editor's agree character for character after any edits; it is what
completions and next edits read (`opened`), with the version the editor gave it. pygls's own
workspace never sees the documents (`EditorDocumentsProtocol`): it splits lines as `str.splitlines`
does and rewrites a change's positions in place before the server's handler gets them.

Trees follow every edit (incremental reparse, `lsp_server.trees`); the definitions of an open
document are re-read from its tree once its edits pause for `INDEX_DELAY_S`, never per keystroke;
the workspace's files are indexed once, in a thread, after `initialized`. Definitions of a file
that is open come from the editor's text, not from the disk. The places edited last, across the
open documents, are remembered (by line) for the context, and each open document's recent edit
events (`lsp_server.edit_history`) for next-edit suggestions.

A document over `MAX_DOCUMENT_CHARS` costs its own features, not the server's: it gets no tree, no
edit history, no definitions from its text and no edited places, so that nothing parses, diffs or
splits it on the event loop; requests in it answer with nothing (`is_too_large`). That is logged
once when it crosses the cap, and it gets its features back, parsed afresh, once it is under the
cap again.
"""
from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method

from completion.definitions import DefinitionIndex, definitions
from completion.draft_corpus import DraftCorpus
from lsp_server.edit_history import EditHistory
from lsp_server.trees import SyntaxStore, applied
from lsp_server.workspace import WorkspaceDrafts, scan_workspace

logger = logging.getLogger(__name__)

INDEX_DELAY_S = 1.0  # re-index an edited document after this long without edits
RECENT_EDITS = 8  # edited places remembered, across documents
SAME_PLACE_LINES = 3  # an edit this close to the last one in its document is the same place
# All on the event loop, blocking every document's requests: a 3.5 M-character Python file took
# 2.6 s to open (parse and index) and 1.4 s per full-text change; at 1 Mi characters 0.6 s and
# 0.4 s, at 512 Ki 0.3 s and 0.13 s (0.03 s a keystroke). The workspace index reads files up to
# the same size (`lsp_server.workspace`); larger files are generated or bundled, not typed.
MAX_DOCUMENT_CHARS = 512 * 1024


class EditorDocumentsProtocol(LanguageServerProtocol):
    """pygls's protocol with the text documents left to the server's handlers (`Documents`):
    `didOpen`, `didChange` and `didClose` reach them untouched, and pygls keeps no copy."""

    def _to_handler(self, method: str, params: Any) -> Iterator[tuple]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Iterator[tuple]:
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Iterator[tuple]:
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Iterator[tuple]:
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)


class Documents:
    """Trees, edit histories and definitions of the open documents, definitions of the workspace."""

    def __init__(self) -> None:
        self.syntax = SyntaxStore()
        self.index = DefinitionIndex()
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self.recent_edits: deque[tuple[str, int]] = deque(maxlen=RECENT_EDITS)  # (uri, line)
        self.history = EditHistory()
        self._language_ids: dict[str, str | None] = {}  # of every open document
        self._too_large: set[str] = set()  # open documents over MAX_DOCUMENT_CHARS
        self.drafts: WorkspaceDrafts | None = None  # the session's, for completion drafts
        self._opened: dict[str, tuple[str, int | None]] = {}  # (text, version) of every open document

    def open(self, uri: str, language_id: str | None, text: str, version: int | None = None) -> None:
        self._language_ids[uri] = language_id
        self._opened[uri] = (text, version)
        if len(text) > MAX_DOCUMENT_CHARS:
            self._switch_off(uri, len(text))
        else:
            self._start(uri, text)

    def change(self, uri: str, changes: list[types.TextDocumentContentChangeEvent],
               encoding: str, version: int | None = None) -> None:
        """Apply the changes to the text, reparse now; re-index once the edits pause (must run on
        the event loop). A document that crosses `MAX_DOCUMENT_CHARS` loses or regains its
        features; one that is not open is ignored."""
        opened = self._opened.get(uri)
        if opened is None:
            return
        editor_text = applied(opened[0], changes, encoding)
        self._opened[uri] = (editor_text, version)
        if len(editor_text) > MAX_DOCUMENT_CHARS:
            self._switch_off(uri, len(editor_text))
        elif uri in self._too_large:
            logger.info("%s is under %d characters again: completions and next edits are back",
                        uri, MAX_DOCUMENT_CHARS)
            self._start(uri, editor_text)
        else:
            self._follow(uri, changes, encoding, editor_text)

    def is_too_large(self, uri: str) -> bool:
        """Whether `uri` is over `MAX_DOCUMENT_CHARS`, its features off."""
        return uri in self._too_large

    def _start(self, uri: str, text: str) -> None:
        """Parse, index and start the edit history of a document under the cap."""
        self._too_large.discard(uri)
        self.syntax.open(uri, self._language_ids.get(uri), text)
        self.history.open(uri, text)
        self.reindex(uri)

    def _switch_off(self, uri: str, chars: int) -> None:
        """Drop the tree and the edit history of a document over the cap; log it once."""
        if uri not in self._too_large:
            logger.warning("%s has %d characters, over %d: no completions, next edits or syntax "
                           "for it until it is smaller", uri, chars, MAX_DOCUMENT_CHARS)
            self._too_large.add(uri)
        self._cancel_reindex(uri)
        self.syntax.close(uri)
        self.history.close(uri)

    def _follow(self, uri: str, changes: list[types.TextDocumentContentChangeEvent],
                encoding: str, editor_text: str) -> None:
        """Apply a `didChange` of a document under the cap to its tree, history and edited places."""
        self.syntax.change(uri, changes, encoding, editor_text)
        self.history.change(uri, changes, editor_text)
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                self.note_edit(uri, change.range.start.line)
        self._cancel_reindex(uri)
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(INDEX_DELAY_S, self.reindex, uri)

    def note_edit(self, uri: str, line: int) -> None:
        """Remember an edited place, newest last; a place edited again moves to the end."""
        for index, (edited_uri, edited_line) in enumerate(self.recent_edits):
            if edited_uri == uri and abs(edited_line - line) <= SAME_PLACE_LINES:
                del self.recent_edits[index]
                break
        self.recent_edits.append((uri, line))

    def opened(self, uri: str) -> tuple[str, int | None] | None:
        """(text, version) of `uri` as the editor has it open, or None when it is not open."""
        return self._opened.get(uri)

    def text_of(self, uri: str) -> str | None:
        """The text of an open document that has a tree, for the context's snippets."""
        document = self.syntax.get(uri)
        return None if document is None else document.text

    def close(self, uri: str) -> None:
        """Forget the tree and the edit history; the definitions stay, as the file's last known
        ones."""
        self._cancel_reindex(uri)
        self._language_ids.pop(uri, None)
        self._opened.pop(uri, None)
        self._too_large.discard(uri)
        self.syntax.close(uri)
        self.history.close(uri)

    def _cancel_reindex(self, uri: str) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()

    def reindex(self, uri: str) -> None:
        self._pending.pop(uri, None)
        document = self.syntax.get(uri)
        if document is not None and document.tree is not None:
            self.index.update(uri, definitions(document.tree, document.text, uri))

    def draft_corpus(self) -> DraftCorpus | None:
        """The texts drafts are looked up in (`completion.sources.Sources`)."""
        return None if self.drafts is None else self.drafts.corpus

    @property
    def accepted_texts(self) -> Sequence[str]:
        return () if self.drafts is None else tuple(self.drafts.accepted)

    @property
    def open_uris(self) -> Collection[str]:
        return self.syntax.documents.keys()

    async def index_workspace(self, root: Path) -> None:
        """Index the source files under `root` in a thread; open documents keep their entries."""
        try:
            scanned = await asyncio.to_thread(scan_workspace, root)
        except OSError as exc:
            logger.warning("cannot index the workspace %s: %s", root, exc)
            return
        for uri, found in scanned:
            if uri not in self._language_ids:
                self.index.update(uri, found)
