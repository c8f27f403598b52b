"""The language server's workers: connected (or started) in the background, awaited by requests.

`Workers.connect(settings)` starts, as a task, the connection (`engine.client.connect`) to the
workers the `workerAddress` setting names (a comma-separated list balanced by
`engine.client.pool`, with the `workerKeys` folder's CURVE keys, else the command line's), or,
without one, to a local worker on the bundled model that it starts (and that is restarted if it
dies). A worker that refuses the greeting (another protocol version) is shown as unavailable.
Requests wait for it with `client(timeout_s)`, within their deadline. Once a worker answers,
`on_ready(model, address)` runs; a failure to connect is logged and shown to the user through
`on_error(message)`, and the server answers with nothing until the settings change. With a
`backend` setting of another kind than `worker`, the client is that upstream's
(`upstream.backend.HttpBackend`), whose failures reach the user through `on_error` too, once per
outage. `close()` closes the client and stops the local worker.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import zmq

from completion.fim import Backend
from engine.client.calls import WorkerError
from engine.client.connect import addresses_of, connect
from engine.launch import WorkerGroup, WorkerStartError, start_local_workers
from engine.wire.flags import model_flags
from engine.wire.keys import ClientKeys, load_client_keys
from lsp_server.settings import ServerSettings
from upstream.backend import HttpBackend
from upstream.config import BackendSettingError, upstream_of

logger = logging.getLogger(__name__)


class Workers:
    """The workers' client of one server; `flags`, `keys` and `startup_timeout_s` are the command
    line's, for the local worker and for remote ones when no setting names keys."""

    def __init__(self, flags: Sequence[str] = (), keys: ClientKeys | None = None,
                 startup_timeout_s: float | None = None,
                 on_ready: Callable[[str, str], None] = lambda model, address: None,
                 on_error: Callable[[str], None] = lambda message: None) -> None:
        self.flags = list(flags)  # for the local worker: --device, --dtype
        self.keys, self.startup_timeout_s = keys, startup_timeout_s
        self.on_ready, self.on_error = on_ready, on_error
        self.local: WorkerGroup | None = None
        self._task: asyncio.Task[Backend | None] | None = None

    def connect(self, settings: ServerSettings) -> None:
        """Start connecting to (or spawning) the workers in the background."""
        self._task = asyncio.get_running_loop().create_task(self._connect(settings))

    async def client(self, timeout_s: float) -> Backend | None:
        """The workers' client once it is ready, or None if it is not within `timeout_s`."""
        if self._task is None:
            return None
        try:  # not wait_for: on Python 3.11 it swallows a cancel that comes as the task finishes
            async with asyncio.timeout(timeout_s):
                return await asyncio.shield(self._task)
        except TimeoutError:
            logger.warning("the worker was not ready within %.1f s", timeout_s)
            return None

    async def close(self) -> None:
        """Close the client and stop the local worker (waiting for one that is still starting)."""
        task, self._task = self._task, None
        if task is not None:
            client = await task
            if client is not None:
                client.close()
        await asyncio.to_thread(self.stop_local)

    def stop_local(self) -> None:
        """Stop the local worker, if this server started one; blocks up to a few seconds."""
        group, self.local = self.local, None
        if group is not None:
            group.stop()

    def keys_for(self, settings: ServerSettings) -> ClientKeys | None:
        """The CURVE keys for the workers: the `workerKeys` setting's folder, else the command
        line's; a folder without valid keys raises ValueError saying what is wrong."""
        folder = settings.worker_keys
        return self.keys if folder is None else load_client_keys(Path(folder).expanduser())

    async def _connect(self, settings: ServerSettings) -> Backend | None:
        if settings.backend is not None:
            try:
                upstream = upstream_of(settings.backend)
            except BackendSettingError as exc:
                return self._unavailable(f"infill: no completions, the backend setting is unusable: {exc}")
            if upstream is not None:
                logger.info("completing with the %s upstream at %s", upstream.kind, upstream.url)
                self.on_ready(upstream.model or upstream.kind, upstream.url)
                return HttpBackend(upstream, self.on_error)
        address = settings.worker_address
        try:
            addresses = (await asyncio.to_thread(self._spawn, settings) if address is None
                         else addresses_of(address))
            keys = None if address is None else self.keys_for(settings)  # our local one needs none
            connected = await connect(addresses, "infill-lsp", keys=keys)
            if connected.refused is not None:
                connected.pool.close()
                raise connected.refused
        except (WorkerStartError, WorkerError, OSError, ValueError, zmq.ZMQError) as exc:
            return self._unavailable(f"infill: no completions, the worker is unavailable: {exc}")
        if connected.model is not None:
            self.on_ready(connected.model, connected.pool.address)
        return connected.pool

    def _unavailable(self, message: str) -> None:
        logger.error("%s", message)
        self.on_error(message)

    def _spawn(self, settings: ServerSettings) -> list[str]:
        """Runs in a thread: start a local worker (restarted if it dies) and keep it before
        anything can fail."""
        logger.info("starting a local worker on the bundled model")
        flags = [*self.flags, *model_flags(settings.device, settings.dtype)]  # the last wins
        self.local = start_local_workers(flags=flags, startup_timeout_s=self.startup_timeout_s)
        return self.local.addresses

