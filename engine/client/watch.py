"""Whether a worker is up, as its clients see it: health probes and its connection's events.

A `WorkerWatch` runs two tasks on the event loop. One sends `Health` every `probe_interval_s`: no
reply within `probe_timeout_s` means the worker is dead or unreachable, a reply whose
`loop_age_s` is over `hung_after_s` means it is hung (its IO thread answers, its main loop is
stuck) unless the loop is inside a decoding step (`in_step`): a step is allowed `longest_step_s`,
since a first pass over a long canvas on a loaded CPU, or a large checkpoint's step on a slow GPU,
takes seconds; only a step older than that (`engine.wire.flags.LONGEST_STEP_S` by default) is a
hang. The other keeps a silent DEALER connected to the worker and watches it with a ZeroMQ
socket monitor: the connection drops at once when the worker's process dies or restarts,
and within the ZMTP heartbeat timeout when its machine goes silent (`engine.wire.transport`); then the
worker is `lost`, and so is every request that was sent to it. Each verdict that changes the
state sets `changed`, waking the calls that wait on the worker; the next good probe marks it up
again. A worker is noticed hung within `probe_interval_s + hung_after_s` (1.75 s with the
defaults) between steps and `longest_step_s` into a step, and a dead or frozen one at once.
"""
from __future__ import annotations

import asyncio
import logging

import zmq
import zmq.asyncio

from engine.wire import transport
from engine.client.async_client import AsyncWorkerClient
from engine.client.calls import WorkerError, WorkerTimeout
from engine.wire.flags import LONGEST_STEP_S
from engine.wire.keys import ClientKeys, make_curve_client
from engine.wire.protocol import HealthOk

logger = logging.getLogger(__name__)

PROBE_INTERVAL_S = 0.25
PROBE_TIMEOUT_S = 1.0  # a live worker's IO thread answers Health in milliseconds
HUNG_AFTER_S = 1.5  # the main loop ticks on both sides of each decoding step, and every 0.1 s idle


class WorkerWatch:
    """The health of the worker at `address`; `start()` from a running event loop."""

    def __init__(self, address: str, keys: ClientKeys | None = None, client_name: str = "infill",
                 probe_interval_s: float = PROBE_INTERVAL_S, probe_timeout_s: float = PROBE_TIMEOUT_S,
                 hung_after_s: float = HUNG_AFTER_S, longest_step_s: float = LONGEST_STEP_S) -> None:
        self.address = address
        self.up = True  # assumed until a probe or the connection says otherwise
        self.lost = False  # down because its connection dropped: what it was sent is gone
        self.changed = asyncio.Event()  # set when `up` or `lost` changes, then replaced
        self.probe_interval_s, self.hung_after_s = probe_interval_s, hung_after_s
        self.longest_step_s = longest_step_s
        self._keys = keys
        self._probe_client = AsyncWorkerClient(address, probe_timeout_s, client_name + "-probe", keys)
        self._ctx = zmq.asyncio.Context()
        self._tasks: list[asyncio.Task] = []

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.ensure_future(self._probe_forever()),
                           asyncio.ensure_future(self._watch_connection())]

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._probe_client.close()
        self._ctx.destroy(linger=0)

    def mark(self, healthy: bool, why: str = "", lost: bool = False) -> None:
        state = (healthy, lost or (self.lost and not healthy))
        if state == (self.up, self.lost):
            return
        if healthy:
            logger.info("worker %s is back", self.address)
        else:
            logger.warning("worker %s is down: %s", self.address, why)
        self.up, self.lost = state
        self.changed.set()
        self.changed = asyncio.Event()

    async def _probe_forever(self) -> None:
        while True:
            self.mark(*await self._probe())
            await asyncio.sleep(self.probe_interval_s)

    async def _probe(self) -> tuple[bool, str]:
        """(healthy, why not) from one Health call."""
        try:
            health = await self._probe_client.health()
        except WorkerTimeout:  # a dead process drops its connection; this one may be swamped
            return False, "no answer to a health check"
        except WorkerError as exc:
            return False, f"the health check failed: {exc}"
        return hung_verdict(health, self.hung_after_s, self.longest_step_s)


    async def _watch_connection(self) -> None:
        sock = self._ctx.socket(zmq.DEALER)
        transport.configure(sock)
        if self._keys is not None:
            make_curve_client(sock, self._keys)
        monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        sock.connect(self.address)
        while True:  # both sockets are closed with the context, in close()
            await monitor.recv_multipart()
            self.mark(False, "its connection dropped", lost=True)


def hung_verdict(health: HealthOk, hung_after_s: float, longest_step_s: float) -> tuple[bool, str]:
    """(healthy, why not) from a Health reply: a loop still for `hung_after_s` between steps, or
    inside one step for `longest_step_s`, is hung; a step in progress below that is work."""
    if health.in_step and health.loop_age_s > longest_step_s:
        return False, f"it has been inside one decoding step for {health.loop_age_s:.1f} s (hung)"
    if not health.in_step and health.loop_age_s > hung_after_s:
        return False, f"its main loop has not ticked for {health.loop_age_s:.1f} s (hung)"
    return True, ""
