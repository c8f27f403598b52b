"""The worker client: `AsyncWorkerClient`, on `zmq.asyncio`; it never blocks its loop.

The one client of a worker: `hello`, `info`, `health` and `complete` as coroutines over a pool of
DEALER sockets (each call as `engine.client.calls` describes); cancelling a `complete` call
cancels the request at the worker. `engine.client.sync_client.WorkerClient` is its blocking
face. `stream` sends a completion request with `stream` set and yields its `Partial` replies as
they come, then its `Result`; a consumer that stops early cancels the request.
"""
from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import zmq
import zmq.asyncio

from engine.client.calls import DEFAULT_TIMEOUT_S, MAX_IDLE_SOCKETS, WorkerTimeout, abandon, timeout_for, unwrap
from engine.wire import transport
from engine.wire.keys import ClientKeys
from engine.wire.protocol import (PROTOCOL_VERSION, CompleteRequest, Health, HealthOk, Hello, Info, InfoRequest,
                                  Message, Partial, Result, Welcome, encode)
from engine.wire.replies import read_reply


class AsyncWorkerClient:
    """One worker's client; use it from one event loop. Cancelling a `complete` call cancels the
    request at the worker."""

    def __init__(self, address: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 client_name: str = "infill", keys: ClientKeys | None = None) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self.client_name = client_name
        self.keys = keys  # CURVE keys, for a worker started with --keys
        self._ctx = zmq.asyncio.Context()
        self._idle: list[zmq.asyncio.Socket] = []
        self._closed = False

    async def hello(self) -> Welcome:
        return await self._call(Hello(PROTOCOL_VERSION, self.client_name))

    async def info(self) -> Info:
        return await self._call(InfoRequest())

    async def health(self) -> HealthOk:
        return await self._call(Health())

    async def complete(self, request: CompleteRequest) -> Result:
        """Waits for the request's deadline plus `timeout_s`."""
        return await self._call(request)

    async def stream(self, request: CompleteRequest) -> AsyncIterator[Partial | Result]:
        """`request` with `stream` set: its Partial replies as they come, then its Result (an
        Error reply raises WorkerError). The whole exchange waits at most the deadline plus
        `timeout_s`; closing the iterator before the Result cancels the request at the worker."""
        request = dataclasses.replace(request, stream=True)
        frame, sock = encode(request), self._acquire()
        timeout_s = timeout_for(request, self.timeout_s)
        deadline = asyncio.get_running_loop().time() + timeout_s
        answered = False
        try:
            await sock.send(frame)
            while not answered:
                reply = await self._next_reply(sock, request, deadline, timeout_s)
                answered = not isinstance(reply, Partial)
                yield unwrap(reply)
        finally:
            if answered:
                self._release(sock)
            else:
                abandon(sock, request)

    async def _next_reply(self, sock: zmq.asyncio.Socket, request: CompleteRequest, deadline: float,
                          timeout_s: float) -> Message:
        """The next reply to `request` on `sock`, or WorkerTimeout once `deadline` has passed."""
        loop = asyncio.get_running_loop()
        while (remaining := deadline - loop.time()) > 0:
            try:
                raw = await asyncio.wait_for(sock.recv(), remaining)
            except TimeoutError:
                break
            reply = read_reply(raw, request)
            if reply is not None:
                return reply
        raise WorkerTimeout(f"no reply to the streamed request {request.id} from the worker at "
                            f"{self.address} within {timeout_s:.1f} s; is it running?")

    def close(self) -> None:
        """Close every socket, in flight or idle, and the context."""
        self._closed = True
        self._idle.clear()
        self._ctx.destroy(linger=0)

    def _acquire(self) -> zmq.asyncio.Socket:
        if self._closed:
            raise RuntimeError(f"the client of {self.address} is closed")
        if self._idle:
            return self._idle.pop()
        sock = self._ctx.socket(zmq.DEALER)
        transport.connect(sock, self.address, self.keys)
        return sock

    async def _call(self, request: Message) -> Any:
        frame = encode(request)
        sock = self._acquire()
        timeout_s = timeout_for(request, self.timeout_s)
        try:
            async with asyncio.timeout(timeout_s):
                reply = await self._exchange(sock, request, frame)
        except TimeoutError:
            abandon(sock, request)
            raise WorkerTimeout(f"no reply to {type(request).__name__} from the worker at "
                                f"{self.address} within {timeout_s:.1f} s; is it running?") from None
        except BaseException:
            abandon(sock, request)
            raise
        self._release(sock)
        return unwrap(reply)

    def _release(self, sock: zmq.asyncio.Socket) -> None:
        if not self._closed and len(self._idle) < MAX_IDLE_SOCKETS:
            self._idle.append(sock)
        elif not sock.closed:
            sock.close(linger=0)

    @staticmethod
    async def _exchange(sock: zmq.asyncio.Socket, request: Message, frame: bytes) -> Message:
        await sock.send(frame)
        while True:
            reply = read_reply(await sock.recv(), request)
            if reply is not None:
                return reply
