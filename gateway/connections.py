"""The gateway's HTTP connections: a limit on how many are open, and a time limit on headers.

uvicorn's h11 protocol with two rules added. At most `max_connections` are open: a new one past
that closes the oldest connection still waiting for its request's headers (idle since it opened
or since its last answer), or, when every one is busy with a request, is itself closed as soon as
it is accepted; so idle sockets can never use up the process's file descriptors or keep a new
client out. Each request's headers must arrive within `header_timeout_s` of the
connection opening or of the previous answer ending (uvicorn's keep-alive timeout closes an idle
connection between requests, but nothing bounds one that sends its headers a byte at a time, or
never sends them): a slow-loris connection is closed then. Each closed connection is one log line,
rate-limited (`engine.wire.ratelimit`), never a traceback.
"""
from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.h11_impl import H11Protocol

from engine.wire.ratelimit import RateLimitedLog

logger = logging.getLogger(__name__)

DEFAULT_MAX_CONNECTIONS = 512  # a team's editors with keep-alive, far below the fd limit
DEFAULT_HEADER_TIMEOUT_S = 10.0  # a real client sends its headers in one packet


def guarded_protocol(max_connections: int, header_timeout_s: float) -> type[H11Protocol]:
    """The h11 protocol class with this module's two rules, for `uvicorn.Config(http=...)`."""
    refusals = RateLimitedLog(logger, what="connections refused or closed")
    waiting: dict[H11Protocol, None] = {}  # connections waiting for headers, oldest first

    class GuardedProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _timed_cycle: object = None  # the request cycle running when the timer was armed

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            full = len(self.server_state.connections) >= max_connections
            super().connection_made(transport)
            if full and waiting:
                oldest = next(iter(waiting))
                refusals.log("closed an idle connection from %s to make room: %d are open, the "
                             "limit", _peer(oldest.client), max_connections)
                oldest._close()
            elif full:
                refusals.log("refused a connection from %s: %d are open and busy, the limit",
                             _peer(self.client), max_connections)
                transport.close()
                return
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not self._timed_cycle:  # a new request's headers arrived
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._timed_cycle = self.cycle
            self._header_timer = self.loop.call_later(header_timeout_s, self._headers_late)
            waiting[self] = None

        def _disarm(self) -> None:
            waiting.pop(self, None)
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            refusals.log("closed a connection from %s: no request headers within %.0f s",
                         _peer(self.client), header_timeout_s)
            self._close()

        def _close(self) -> None:
            self._disarm()
            self.transport.close()

    return GuardedProtocol


def _peer(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "an unknown peer"
