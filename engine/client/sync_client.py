"""The blocking worker client: `WorkerClient`, safe to share between threads.

It keeps a pool of DEALER sockets (at most `MAX_IDLE_SOCKETS` idle: a burst's extra ones are
closed); each call takes one, as `engine.client.calls` describes, and waits for its reply with
`zmq.Socket.poll`, so it needs no event loop: the launcher, the supervisor's health probes,
`infill complete` and the benchmarks' thread pools use it.
"""
from __future__ import annotations

import threading
import time
from typing import Any

import zmq

from engine.client.calls import (DEFAULT_TIMEOUT_S, MAX_IDLE_SOCKETS, WorkerTimeout, abandon,
                                 connect_socket, read_reply, timeout_for, unwrap)
from engine.wire.keys import ClientKeys
from engine.wire.protocol import (PROTOCOL_VERSION, CompleteRequest, Health, HealthOk, Hello, Info,
                                    InfoRequest, Message, Result, Welcome, encode)


class WorkerClient:
    """A blocking client; safe to call from many threads at once (one socket per call in flight)."""

    def __init__(self, address: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 client_name: str = "infill", keys: ClientKeys | None = None) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self.client_name = client_name
        self.keys = keys  # CURVE keys, for a worker started with --keys
        self._ctx = zmq.Context()
        self._idle: list[zmq.Socket] = []
        self._lock = threading.Lock()
        self._closed = False

    def hello(self) -> Welcome:
        return self._call(Hello(PROTOCOL_VERSION, self.client_name))

    def info(self) -> Info:
        return self._call(InfoRequest())

    def health(self) -> HealthOk:
        return self._call(Health())

    def complete(self, request: CompleteRequest) -> Result:
        """Waits for the request's deadline plus `timeout_s`."""
        return self._call(request)

    def close(self) -> None:
        """Close the idle sockets and the context; calls still in flight fail."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for sock in idle:
            sock.close(linger=0)
        self._ctx.term()

    def __enter__(self) -> WorkerClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _acquire(self) -> zmq.Socket:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the client of {self.address} is closed")
            if self._idle:
                return self._idle.pop()
        sock = self._ctx.socket(zmq.DEALER)
        connect_socket(sock, self.address, self.keys)
        return sock

    def _release(self, sock: zmq.Socket) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_SOCKETS:
                self._idle.append(sock)
                return
        sock.close(linger=0)

    def _call(self, request: Message) -> Any:
        frame = encode(request)
        sock = self._acquire()
        try:
            reply = self._exchange(sock, request, frame, timeout_for(request, self.timeout_s))
        except BaseException:
            abandon(sock, request)
            raise
        self._release(sock)
        return unwrap(reply)

    def _exchange(self, sock: zmq.Socket, request: Message, frame: bytes, timeout_s: float) -> Message:
        deadline = time.monotonic() + timeout_s
        sock.send(frame, zmq.NOBLOCK)
        while (remaining := deadline - time.monotonic()) > 0:
            if not sock.poll(max(1, int(remaining * 1000)), zmq.POLLIN):
                break
            reply = read_reply(sock.recv(), request)
            if reply is not None:
                return reply
        raise WorkerTimeout(f"no reply to {type(request).__name__} from the worker at "
                            f"{self.address} within {timeout_s:.1f} s; is it running?")
