"""From a hole to the `CompleteRequest` the worker gets: the context clipped next to the cursor.

Nothing here touches sockets, files or the event loop, so all of it is tested without a worker.
"""
from __future__ import annotations

import uuid

from collections.abc import Sequence

from engine.wire.protocol import (MAX_PATH_CHARS, MAX_PREFIX_CHARS, MAX_SLOT_TOKENS, MAX_SLOTS,
                                    MAX_SNIPPET_TEXT_CHARS, MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS,
                                    CompleteRequest, Snippet)


def new_request_id() -> str:
    return uuid.uuid4().hex


def capped_snippets(snippets: list[Snippet]) -> list[Snippet]:
    """`snippets` within the protocol's caps, in their order: each text cut to its first
    MAX_SNIPPET_TEXT_CHARS, then the lowest priorities left out until the texts fit
    MAX_SNIPPETS_TOTAL_CHARS."""
    cut = [Snippet(snippet.text[:MAX_SNIPPET_TEXT_CHARS], snippet.path, snippet.priority)
           for snippet in snippets]
    kept, total_chars = set(), 0
    for index in sorted(range(len(cut)), key=lambda i: -cut[i].priority):
        if total_chars + len(cut[index].text) <= MAX_SNIPPETS_TOTAL_CHARS:
            kept.add(index)
            total_chars += len(cut[index].text)
    return [snippet for index, snippet in enumerate(cut) if index in kept]


def capped_draft(pieces: Sequence[str], slots: Sequence[int]) -> tuple[list[str], list[int]]:
    """A draft within the protocol's caps: at most MAX_SLOTS slots (the pieces after the last
    one kept left out), each of at most MAX_SLOT_TOKENS, and MAX_SUFFIX_CHARS of text in all (the
    text past it cut, with the pieces after it); ([], []) for a draft with no text."""
    kept_pieces, kept_slots, room = [], [], MAX_SUFFIX_CHARS
    for index, piece in enumerate(pieces[:MAX_SLOTS + 1]):
        if index:
            kept_slots.append(min(max(1, slots[index - 1]), MAX_SLOT_TOKENS))
        kept_pieces.append(piece[:room])
        room -= len(kept_pieces[-1])
        if room <= 0:
            break
    if not "".join(kept_pieces):
        return [], []
    return kept_pieces, kept_slots


def build_request(request_id: str, prefix: str, suffix: str, mode: str, max_tokens: int,
                  deadline_ms: int, document: str = "", decoder: dict | None = None,
                  snippets: list[Snippet] | None = None, session: str = "", draft: Sequence[str] = (),
                  slots: Sequence[int] = ()) -> CompleteRequest:
    """A fill-in-the-middle request with the context windows clipped next to the cursor (to the
    protocol's text caps, one source of truth with the worker), the snippets and the draft of the
    hole's start (pieces with `slots` between them) to their caps; a newer request with the same
    non-empty `session` supersedes it at the worker."""
    draft, slots = capped_draft(draft, slots)
    return CompleteRequest(id=request_id, kind="fim", prefix=prefix[-MAX_PREFIX_CHARS:],
                           suffix=suffix[:MAX_SUFFIX_CHARS], snippets=capped_snippets(snippets or []),
                           mode=mode, max_tokens=max_tokens, deadline_ms=deadline_ms,
                           document=document[:MAX_PATH_CHARS], decoder=dict(decoder or {}),
                           session=session[:MAX_PATH_CHARS], draft=draft, slots=slots)
