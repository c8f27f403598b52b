"""One way for a front end to reach its workers: `connect`, which the language server
(`lsp_server.workers`) and the gateway (`gateway.main`) both call.

`addresses_of` reads a setting's or a flag's comma-separated worker addresses. `connect` builds the
pool over them (`engine.client.pool`, with the CURVE keys given for remote workers) and greets
it: the `Connected` pool carries the workers' model, or None when no worker answers yet (a worker
still starting, or busy: requests will try them anyway), and the refusal of a worker that
answered the greeting with an error (another protocol version, or every worker overloaded).
What a refusal means is the front end's: the language server shows it and completes nothing,
the gateway serves anyway.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from engine.client.calls import REPLY_SLACK_S, WorkerError, WorkerTimeout
from engine.client.pool import AsyncWorkerPool, WorkerUnavailable
from engine.wire.keys import ClientKeys

logger = logging.getLogger(__name__)

GREET_TIMEOUT_S = 5.0  # a greeting waits this long at most, whatever the pool's tries


@dataclass(slots=True)
class Connected:
    """A greeted pool: its workers' model (None: none answered yet) and a refusal, if one came."""

    pool: AsyncWorkerPool
    model: str | None
    refused: WorkerError | None = None


def addresses_of(text: str) -> list[str]:
    """The worker addresses of a comma-separated list, blanks dropped."""
    return [address.strip() for address in text.split(",") if address.strip()]


async def connect(addresses: Sequence[str], client_name: str, timeout_s: float = REPLY_SLACK_S,
                  keys: ClientKeys | None = None, greet_timeout_s: float = GREET_TIMEOUT_S) -> Connected:
    """A pool over `addresses` (`timeout_s`: a reply's slack past its deadline), greeted within
    `greet_timeout_s`; raises ValueError for no address (and what a bad address raises)."""
    pool = AsyncWorkerPool(addresses, timeout_s=timeout_s, client_name=client_name, keys=keys)
    try:
        async with asyncio.timeout(greet_timeout_s):
            welcome = await pool.hello()
    except (WorkerTimeout, WorkerUnavailable, TimeoutError):
        logger.warning("the worker at %s does not answer yet; requests will try it anyway", pool.address)
        return Connected(pool, None)
    except WorkerError as exc:
        logger.warning("the worker at %s refused the greeting: %s", pool.address, exc)
        return Connected(pool, None, exc)
    except BaseException:
        pool.close()
        raise
    logger.info("worker at %s serves model %s", pool.address, welcome.model)
    return Connected(pool, welcome.model)
