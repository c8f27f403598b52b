"""The server's view of the code: parsed open documents and the index of definitions.

Trees follow every edit (incremental reparse, `lsp_server.trees`); the definitions of an open
document are re-read from its tree once its edits pause for `INDEX_DELAY_S`, never per keystroke;
the workspace's files are indexed once, in a thread, after `initialized`. Definitions of a file
that is open come from the editor's text, not from the disk. The places edited last, across the
open documents, are remembered (by line) for the context, and each open document's recent edit
events (`lsp_server.edit_history`) for next-edit suggestions.
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


class Documents:
    """Trees, edit histories and definitions of the open documents, definitions of the workspace."""

    def __init__(self) -> None:
        self.syntax = SyntaxStore()
        self.index = DefinitionIndex()
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self.recent_edits: deque[tuple[str, int]] = deque(maxlen=RECENT_EDITS)  # (uri, line)
        self.history = EditHistory()

    def open(self, uri: str, language_id: str | None, text: str) -> None:
        self.syntax.open(uri, language_id, text)
        self.history.open(uri, text)
        self.reindex(uri)

    def change(self, uri: str, changes: list[types.TextDocumentContentChangeEvent],
               encoding: str, editor_text: str) -> None:
        """Reparse now; re-index once the edits pause (must run on the event loop)."""
        self.syntax.change(uri, changes, encoding, editor_text)
        self.history.change(uri, changes, editor_text)
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                self.note_edit(uri, change.range.start.line)
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
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
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.syntax.close(uri)
        self.history.close(uri)

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
            if uri not in self.syntax.documents:
                self.index.update(uri, found)
