"""Tree-sitter trees of the open documents, kept current by incremental reparsing.

Each open document in a language we parse has a `completion.syntax.ParsedDocument`, its own copy
of the text and its tree: on `didChange` every change is applied to the text and announced to the
tree, and one reparse with the old tree reuses everything the edit did not touch. If the text ever
disagrees with the editor's (a change that does not fit, a full-text sync), the document is parsed
afresh from the editor's text.
"""
from __future__ import annotations

import logging

from lsprotocol import types

from completion.positions import offset_at
from completion.syntax import ParsedDocument, language_for

logger = logging.getLogger(__name__)


def apply_change(document: ParsedDocument, change: types.TextDocumentContentChangeEvent,
                 encoding: str) -> bool:
    """Apply one LSP change; False when its range does not fit the text (nothing changed)."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        document.text = change.text
        document.tree = None
        return True
    text, where = document.text, change.range
    start = offset_at(text, where.start.line, where.start.character, encoding)
    end = offset_at(text, where.end.line, where.end.character, encoding)
    if start is None or end is None or end < start:
        return False
    document.replace(start, end, change.text)
    return True


class SyntaxStore:
    """The parsed open documents, by URI."""

    def __init__(self) -> None:
        self.documents: dict[str, ParsedDocument] = {}

    def open(self, uri: str, language_id: str | None, text: str) -> ParsedDocument | None:
        language = language_for(uri, language_id)
        if language is None:
            self.documents.pop(uri, None)
            return None
        document = ParsedDocument.parse(language, text)
        self.documents[uri] = document
        return document

    def change(self, uri: str, changes: list[types.TextDocumentContentChangeEvent],
               encoding: str, editor_text: str) -> None:
        """Apply `changes` and reparse once; `editor_text` is the editor's text after them."""
        document = self.documents.get(uri)
        if document is None:
            return
        fitted = all(apply_change(document, change, encoding) for change in changes)
        if not fitted or document.text != editor_text:
            logger.info("reparsing %s from scratch: its changes did not fit the text", uri)
            document.text = editor_text
            document.reparse(incremental=False)
            return
        document.reparse()

    def close(self, uri: str) -> None:
        self.documents.pop(uri, None)

    def get(self, uri: str) -> ParsedDocument | None:
        return self.documents.get(uri)
