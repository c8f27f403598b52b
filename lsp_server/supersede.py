"""Newer requests win: a request of one method for one document cancels the one still in flight.

An editor asks again at each keystroke; only the newest answer can still be shown. `superseding`
runs a request's work as the newest of its `(method, uri)` in `in_flight`, cancelling the older
one, whose worker call is cancelled with it (its worker requests carry the same session, so the
worker drops them as the new ones arrive). A superseded or failing request answers with
`nothing()`, never an error; one cancelled itself (`$/cancelRequest`) raises CancelledError, as
pygls expects. Requests of different methods (inline completions and completion items at each
keystroke) never supersede each other.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
InFlight = dict[tuple[str, str], asyncio.Task]  # (method, uri) -> the newest request's task


async def superseding(in_flight: InFlight, method: str, uri: str, work: Coroutine[Any, Any, T],
                      nothing: Callable[[], T], what: str) -> T:
    """The result of `work`, the newest request of `method` for `uri` (see the module)."""
    task = asyncio.ensure_future(work)
    key = (method, uri)
    older, in_flight[key] = in_flight.get(key), task
    if older is not None and not older.done():
        older.cancel()
    try:
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # the handler itself was cancelled ($/cancelRequest)
        logger.info("superseded by a newer request for %s", uri)
        return nothing()
    except Exception:  # one request's failure must reach the editor as "nothing", not an error
        logger.exception("%s failed", what)
        return nothing()
    finally:
        if in_flight.get(key) is task:
            del in_flight[key]
