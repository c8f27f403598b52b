"""A request cut to an upstream model's context, its tokens estimated from characters. Pure.

Without the upstream's tokenizer, a token is taken as `CHARS_PER_TOKEN` characters (code runs
3-4 with BPE vocabularies; 3 errs on the safe side). Room is kept for the answer (`max_tokens`) and
the template; snippets go first, then the suffix keeps at most a quarter, the prefix the rest, each
cut at a line break on the side away from the cursor.
"""
from __future__ import annotations

import dataclasses

from engine.wire.protocol import CompleteRequest

CHARS_PER_TOKEN = 3
TEMPLATE_TOKENS = 64  # sentinels, a chat instruction, the edit sections' tags


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def fit(request: CompleteRequest, max_context_tokens: int) -> CompleteRequest:
    """`request` as it is when it fits in `max_context_tokens` (0: unknown), else cut to fit."""
    if not max_context_tokens or request.kind == "edit":
        return request
    room = max(0, max_context_tokens - request.max_tokens - TEMPLATE_TOKENS) * CHARS_PER_TOKEN
    snippets = sum(len(s.text) + len(s.path) for s in request.snippets)
    if len(request.prefix) + len(request.suffix) + snippets <= room:
        return request
    suffix = request.suffix
    if len(request.prefix) + len(suffix) > room:
        suffix = _head(suffix, min(len(suffix), room // 4))
    prefix = _tail(request.prefix, room - len(suffix))
    return dataclasses.replace(request, prefix=prefix, suffix=suffix, snippets=[])


def _tail(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[len(text) - chars:] if chars > 0 else ""
    return cut[cut.find("\n") + 1:] if "\n" in cut else cut


def _head(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[:chars]
    return cut[:cut.rfind("\n") + 1] if "\n" in cut else cut
