"""From a hole to the `CompleteRequest` the worker gets: the context clipped next to the cursor.

Nothing here touches sockets, files or the event loop, so all of it is tested without a worker.
"""
from __future__ import annotations

import uuid

from engine.protocol import MAX_PATH_CHARS, CompleteRequest, Snippet

# The worker's canvas keeps at most the model's context (2,048 tokens are about 8,000 characters of
# code); sending more only costs transfer and tokenizing time.
MAX_PREFIX_CHARS = 24_000
MAX_SUFFIX_CHARS = 12_000


def new_request_id() -> str:
    return uuid.uuid4().hex


def build_request(request_id: str, prefix: str, suffix: str, mode: str, max_tokens: int,
                  deadline_ms: int, document: str = "", decoder: dict | None = None,
                  snippets: list[Snippet] | None = None, session: str = "") -> CompleteRequest:
    """A fill-in-the-middle request with the context windows clipped next to the cursor; a
    newer request with the same non-empty `session` supersedes it at the worker."""
    return CompleteRequest(id=request_id, kind="fim", prefix=prefix[-MAX_PREFIX_CHARS:],
                           suffix=suffix[:MAX_SUFFIX_CHARS], snippets=list(snippets or []),
                           mode=mode, max_tokens=max_tokens, deadline_ms=deadline_ms,
                           document=document[:MAX_PATH_CHARS], decoder=dict(decoder or {}),
                           session=session[:MAX_PATH_CHARS])
