"""Every task the gateway starts, started here: its end is always looked at.

A task that ends with an exception nobody retrieves makes asyncio log "Task exception was never
retrieved" with a traceback when it is collected; under clients that drop their streams by the
dozen that was a traceback per stream. `started` starts a task with a done-callback that
retrieves its exception, and logs it as one short line at debug level (the caller has moved on:
the exception was not its answer).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TypeVar

logger = logging.getLogger(__name__)
T = TypeVar("T")


def started(work: Awaitable[T]) -> asyncio.Future[T]:
    """`work` as a running task whose exception is retrieved however it ends."""
    task = asyncio.ensure_future(work)
    task.add_done_callback(retrieve)
    return task


def retrieve(task: asyncio.Future) -> None:
    """The done-callback of `started`: the exception is retrieved, and logged in one line."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        logger.debug("a task ended after its caller left: %s: %s", type(exc).__name__, exc)
