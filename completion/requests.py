"""From a hole to the `CompleteRequest` the worker gets: the context clipped next to the cursor.

Nothing here touches sockets, files or the event loop, so all of it is tested without a worker.
"""
from __future__ import annotations

import uuid

from engine.client.protocol import (MAX_PATH_CHARS, MAX_PREFIX_CHARS, MAX_SNIPPET_TEXT_CHARS,
                                    MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS, CompleteRequest, Snippet)


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


def build_request(request_id: str, prefix: str, suffix: str, mode: str, max_tokens: int,
                  deadline_ms: int, document: str = "", decoder: dict | None = None,
                  snippets: list[Snippet] | None = None, session: str = "") -> CompleteRequest:
    """A fill-in-the-middle request with the context windows clipped next to the cursor (to the
    protocol's text caps, one source of truth with the worker) and the snippets to their caps; a
    newer request with the same non-empty `session` supersedes it at the worker."""
    return CompleteRequest(id=request_id, kind="fim", prefix=prefix[-MAX_PREFIX_CHARS:],
                           suffix=suffix[:MAX_SUFFIX_CHARS], snippets=capped_snippets(snippets or []),
                           mode=mode, max_tokens=max_tokens, deadline_ms=deadline_ms,
                           document=document[:MAX_PATH_CHARS], decoder=dict(decoder or {}),
                           session=session[:MAX_PATH_CHARS])
