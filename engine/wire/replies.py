"""Which reply answers which request: what every asker of a worker (the clients, the launcher's
greeting and health probes) reads off its socket the same way.

A reply answers a request when its type is the request's reply type (`Welcome` for `Hello`, ...)
and it carries the request's id, or when it is an `Error` for that id (or for none: a frame the
worker could not read), or a `Partial` of a streamed `CompleteRequest`. Anything else on the
socket (a late reply to an abandoned call, a frame that does not decode) is logged and dropped.
"""
from __future__ import annotations

import logging

from engine.wire.protocol import (CompleteRequest, Error, Health, HealthOk, Hello, Info, InfoRequest,
                                  Message, Partial, ProtocolError, Result, Welcome, decode)

logger = logging.getLogger(__name__)

REPLY_TYPES: dict[type, type] = {Hello: Welcome, InfoRequest: Info, Health: HealthOk, CompleteRequest: Result}


def is_reply_to(request: Message, reply: Message) -> bool:
    """Whether `reply` answers `request` (see the module)."""
    request_id = getattr(request, "id", None)
    if isinstance(reply, Error):
        return reply.id is None or reply.id == request_id
    if isinstance(reply, Partial):
        return isinstance(request, CompleteRequest) and request.stream and reply.id == request_id
    return isinstance(reply, REPLY_TYPES[type(request)]) and getattr(reply, "id", None) == request_id


def read_reply(frame: bytes, request: Message) -> Message | None:
    """The decoded reply if it answers `request`, else None (logged and dropped)."""
    try:
        reply = decode(frame)
    except ProtocolError as exc:
        logger.warning("dropped an unreadable reply: %s: %s", exc.code, exc.message)
        return None
    if not is_reply_to(request, reply):
        logger.debug("dropped a stray %s", type(reply).__name__)
        return None
    return reply
