"""One call to a worker as the client makes it: its errors, its time, its socket.

A call takes a DEALER socket, sends its request and reads until the reply that matches it
(`engine.wire.replies`: by request id and reply type; anything else is dropped). A call that
times out or is cancelled sends `Cancel` for its completion request and closes its socket
(`abandon`), so no late reply can reach a later call. An `Error` reply is raised as
`WorkerError`; no reply in time as `WorkerTimeout`. Sockets carry ZMTP heartbeats
(`engine.wire.transport`) and, given `ClientKeys`, CURVE encryption and authentication
(`engine.wire.keys`). The client (`engine.client.async_client`) builds on this; its blocking face
(`engine.client.sync_client`) runs it on a loop of its own.
"""
from __future__ import annotations

import logging
from typing import Any

import zmq

from engine.wire.protocol import Cancel, CompleteRequest, Error, Message, encode

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 5.0  # for handshakes; a completion waits its deadline plus this much
REPLY_SLACK_S = 0.5  # a reply may come this long after its deadline (the last pass, the transfer)
MAX_IDLE_SOCKETS = 8  # kept for reuse after a burst; the rest are closed (each costs fds at both
#   ends and its ZMTP heartbeats cost CPU while idle)
_CANCEL_LINGER_MS = 100  # time for a Cancel to leave a socket that is being closed


class WorkerError(Exception):
    """The worker answered with an Error reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class WorkerTimeout(TimeoutError):
    """No reply from the worker in time."""


def unwrap(reply: Message) -> Any:
    if isinstance(reply, Error):
        raise WorkerError(reply.code, reply.message)
    return reply


def timeout_for(request: Message, timeout_s: float) -> float:
    if isinstance(request, CompleteRequest):
        return request.deadline_ms / 1000.0 + timeout_s
    return timeout_s


def abandon(sock: zmq.Socket, request: Message) -> None:
    """Close a socket whose call did not finish, cancelling its completion request first."""
    if sock.closed:
        return
    linger = 0
    if isinstance(request, CompleteRequest):
        try:
            zmq.Socket.shadow(sock.underlying).send(encode(Cancel(request.id)), zmq.NOBLOCK)
            linger = _CANCEL_LINGER_MS
        except zmq.ZMQError as exc:
            logger.debug("could not cancel request %s: %s", request.id, exc)
    sock.close(linger=linger)
