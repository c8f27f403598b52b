"""The server's view of the code: parsed open documents and the index of definitions.

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
from collections.abc import Collection
from pathlib import Path

from lsprotocol import types

from completion.definitions import DefinitionIndex, definitions
from lsp_server.edit_history import EditHistory
from lsp_server.trees import SyntaxStore
from lsp_server.workspace import scan_workspace

logger = logging.getLogger(__name__)

INDEX_DELAY_S = 1.0  # re-index an edited document after this long without edits
RECENT_EDITS = 8  # edited places remembered, across documents
SAME_PLACE_LINES = 3  # an edit this close to the last one in its document is the same place
# All on the event loop, blocking every document's requests: a 3.5 M-character Python file took
# 2.6 s to open (parse and index) and 1.4 s per full-text change; at 1 Mi characters 0.6 s and
# 0.4 s, at 512 Ki 0.3 s and 0.13 s (0.03 s a keystroke). The workspace index reads files up to
# the same size (`lsp_server.workspace`); larger files are generated or bundled, not typed.
MAX_DOCUMENT_CHARS = 512 * 1024


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

    def open(self, uri: str, language_id: str | None, text: str) -> None:
        self._language_ids[uri] = language_id
        if len(text) > MAX_DOCUMENT_CHARS:
            self._switch_off(uri, len(text))
        else:
            self._start(uri, text)

    def change(self, uri: str, changes: list[types.TextDocumentContentChangeEvent],
               encoding: str, editor_text: str) -> None:
        """Reparse now; re-index once the edits pause (must run on the event loop). A document
        that crosses `MAX_DOCUMENT_CHARS` loses or regains its features."""
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

    def text_of(self, uri: str) -> str | None:
        document = self.syntax.get(uri)
        return None if document is None else document.text

    def close(self, uri: str) -> None:
        """Forget the tree and the edit history; the definitions stay, as the file's last known
        ones."""
        self._cancel_reindex(uri)
        self._language_ids.pop(uri, None)
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
