"""Each open document's recent edit events (`completion.edit_events.EditEvent`), newest last.

A `didChange` is one step: its changes fold into one line span (a multi-cursor edit is one
step). A step within `NEAR_LINES` lines of the document's newest event and at most `MERGE_PAUSE_S`
after that event's last change grows it (a burst of typing at one place is one event); any other
step starts a new event. The newest `limit` events of a document are kept (the `editHistory`
setting; 0 keeps none); a document's events go when it is closed. Steps for a document that is not
open are ignored. An event's text after is the same string as the next event's text before, so
the history holds about `limit + 1` copies of a document's text, not twice as many.
"""
from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import Callable, Sequence

from lsprotocol import types

from completion.edit_events import EditEvent, LineSpan, diff_span

DEFAULT_EDIT_HISTORY = 8  # events kept per document (Zeta shows the model at most 6)
MAX_EDIT_HISTORY = 64
NEAR_LINES = 3  # a step this close to the newest event's lines is the same place
MERGE_PAUSE_S = 1.5  # a step after a longer pause starts a new event


def step_span(before: str, after: str,
              changes: Sequence[types.TextDocumentContentChangeEvent]) -> LineSpan:
    """The lines one `didChange` changed: its changes' spans folded, or a diff of the texts when
    a change is a whole text or the folded span does not fit them."""
    if changes and all(isinstance(change, types.TextDocumentContentChangePartial) for change in changes):
        spans = (LineSpan.of_change(change.range.start.line, change.range.end.line, change.text)
                 for change in changes)
        span = functools.reduce(LineSpan.then, spans)
        if span.fits(before, after):
            return span
    return diff_span(before, after)


class EditHistory:
    """The recent edit events of the open documents, by URI."""

    def __init__(self, limit: int = DEFAULT_EDIT_HISTORY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._texts: dict[str, str] = {}  # the text after the newest step
        self._events: dict[str, deque[EditEvent]] = {}

    def open(self, uri: str, text: str) -> None:
        self._texts[uri] = text
        self._events[uri] = deque()

    def close(self, uri: str) -> None:
        self._texts.pop(uri, None)
        self._events.pop(uri, None)

    def resize(self, limit: int) -> None:
        """Keep `limit` events per document from now on; older ones go at once."""
        self.limit = limit
        for events in self._events.values():
            self._trim(events)

    def change(self, uri: str, changes: Sequence[types.TextDocumentContentChangeEvent],
               after: str) -> None:
        """Record one `didChange` of `uri`; `after` is the document's text after it."""
        before = self._texts.get(uri)
        if before is None:
            return
        self._texts[uri] = after
        span = step_span(before, after, changes)
        if span.before_end == span.after_end == span.start_line:
            return  # the same lines as before: nothing to remember
        events, now = self._events[uri], self.clock()
        newest = events[-1] if events else None
        if newest is not None and now - newest.time <= MERGE_PAUSE_S \
                and newest.span.near(span, NEAR_LINES):
            events[-1] = EditEvent(uri, newest.before, after, newest.span.then(span), now)
        else:
            events.append(EditEvent(uri, before, after, span, now))
        self._trim(events)

    def events(self, uri: str) -> list[EditEvent]:
        """The document's events, oldest first; none for a document that is not open."""
        return list(self._events.get(uri, ()))

    def latest(self, uri: str) -> EditEvent | None:
        events = self._events.get(uri)
        return events[-1] if events else None

    def _trim(self, events: deque[EditEvent]) -> None:
        while len(events) > self.limit:
            events.popleft()
