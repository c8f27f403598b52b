"""Where a completion's snippets come from, beyond the text around the cursor.

`Sources` is what `completion.fim.context_for` reads: an index of definitions, the files it
counts as open (their definitions outrank the workspace's), the places edited last and the text of
a file; for drafts (`completion.draft_sources`), the other texts a key is looked up in
(`draft_corpus`, from which a caller leaves out the hole's own document with `excluding`: the hole
holds its text) and the completions the user accepted lately. The language server's documents
(`lsp_server.documents.Documents`) are one: every open document and the workspace. `TextSources`
is the other, for a caller with one text and no session (`infill complete`, an HTTP request): the
definitions of that text alone, no edits, no other texts to draft from.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from completion.definitions import DefinitionIndex, definitions
from completion.draft_corpus import DraftCorpus
from completion.syntax import ParsedDocument


class Sources(Protocol):
    @property
    def index(self) -> DefinitionIndex: ...

    @property
    def open_uris(self) -> Collection[str]: ...

    @property
    def recent_edits(self) -> Sequence[tuple[str, int]]: ...  # (uri, line), newest last

    def text_of(self, uri: str) -> str | None: ...

    def draft_corpus(self) -> DraftCorpus | None: ...  # other texts (a caller leaves its own out)

    @property
    def accepted_texts(self) -> Sequence[str]: ...  # completions accepted lately, newest last


@dataclass(slots=True)
class TextSources:
    """One text, `uri`, open on its own: its definitions are the index."""

    uri: str
    text: str
    index: DefinitionIndex = field(default_factory=DefinitionIndex)
    recent_edits: tuple[tuple[str, int], ...] = ()
    accepted_texts: tuple[str, ...] = ()

    @classmethod
    def of(cls, uri: str, document: ParsedDocument | None, text: str) -> TextSources:
        """The sources of `text`, whose parse is `document` (None: no language, no definitions)."""
        sources = cls(uri, text)
        if document is not None and document.tree is not None:
            sources.index.update(uri, definitions(document.tree, document.text, uri))
        return sources

    @property
    def open_uris(self) -> Collection[str]:
        return (self.uri,)

    def text_of(self, uri: str) -> str | None:
        return self.text if uri == self.uri else None

    def draft_corpus(self) -> DraftCorpus | None:
        return None
