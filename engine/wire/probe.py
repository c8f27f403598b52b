"""One blocking question to a worker, with no client: how its launcher greets and watches it.

`Probe` asks a worker one message at a time (`Hello` while it starts, `Health` while it runs) on
a DEALER socket with the wire's options (`transport`) and, given `ClientKeys`, CURVE. It answers
the reply (an `Error` reply too) or None when none came within `timeout_s`; a socket whose
question went unanswered is closed and the next question takes a new one, so that a late reply
can never answer a later question (and a new socket connects at once, where an old one waits out
its reconnect backoff for a worker that is still starting). It needs no event loop and imports no client: the worker's
own command line (`infill serve --workers N`) supervises its children with it.
"""
from __future__ import annotations

import time
from typing import Self

import zmq

from engine.wire import transport
from engine.wire.keys import ClientKeys
from engine.wire.protocol import Message, encode
from engine.wire.replies import read_reply


class Probe:
    """Questions to the worker at `address`, one at a time, each waiting at most `timeout_s`."""

    def __init__(self, address: str, timeout_s: float, keys: ClientKeys | None = None) -> None:
        self.address, self.timeout_s, self.keys = address, timeout_s, keys
        self._ctx = zmq.Context()
        self._sock: zmq.Socket | None = None

    def ask(self, message: Message) -> Message | None:
        """The worker's reply to `message`, or None if none came in time."""
        if self._sock is None:
            self._sock = self._ctx.socket(zmq.DEALER)
            transport.connect(self._sock, self.address, self.keys)
        deadline = time.monotonic() + self.timeout_s
        self._sock.send(encode(message), zmq.NOBLOCK)
        while (remaining := deadline - time.monotonic()) > 0:
            if not self._sock.poll(max(1, int(remaining * 1000)), zmq.POLLIN):
                break
            reply = read_reply(self._sock.recv(), message)
            if reply is not None:
                return reply
        self._sock.close(linger=0)
        self._sock = None
        return None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None
        self._ctx.term()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
