"""Edit events: what one burst of typing at one place changed, as whole lines of a document.

An `EditEvent` holds the document's full text before and after the burst and the `LineSpan` that
changed: lines `start_line .. before_end - 1` of the text before became lines
`start_line .. after_end - 1` of the text after; every other line is the same (shifted below the
span). Spans compose (`then`), so the changes of a burst fold into one span without diffing the
texts; `diff_span` finds the span of two texts when no changes are known (a whole-text sync).
Lines are counted as the LSP counts them (`\\r\\n`, `\\r` and `\\n` each end one). The rules that
decide which changes make one event live with the edit history of a front end
(`lsp_server.edit_history`); everything here is pure.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from completion.positions import LINE_BREAK, split_lines

_SCAN_CHARS = 256  # below this many characters, `_line_start` walks the breaks one by one


def line_breaks(text: str) -> int:
    """How many line breaks `text` holds (a `\\r\\n` is one)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


@dataclass(slots=True, frozen=True)
class LineSpan:
    """Lines `start_line .. before_end - 1` of a text became `start_line .. after_end - 1`."""

    start_line: int
    before_end: int  # exclusive, in the text before
    after_end: int  # exclusive, in the text after

    @classmethod
    def of_change(cls, start_line: int, end_line: int, new_text: str) -> LineSpan:
        """The span of an LSP change: the range's lines `start_line..end_line` (the end's line
        included) replaced by `new_text`."""
        return cls(start_line, end_line + 1, start_line + line_breaks(new_text) + 1)

    def then(self, later: LineSpan) -> LineSpan:
        """This span followed by `later` (whose lines count in this span's text after): one span
        from the first text to the last that covers both."""
        end = max(self.after_end, later.before_end)  # in the middle text
        return LineSpan(min(self.start_line, later.start_line),
                        end - (self.after_end - self.before_end),
                        end + (later.after_end - later.before_end))

    def near(self, later: LineSpan, lines: int) -> bool:
        """True when `later` (in this span's text after) starts or ends within `lines` lines of
        this span's lines after."""
        return (later.start_line <= self.after_end - 1 + lines
                and later.before_end - 1 >= self.start_line - lines)

    def fits(self, before: str, after: str) -> bool:
        """True when the lines outside the span are as many in `before` as in `after`."""
        before_lines, after_lines = line_breaks(before) + 1, line_breaks(after) + 1
        return (0 <= self.start_line <= self.before_end <= before_lines
                and self.start_line <= self.after_end <= after_lines
                and before_lines - self.before_end == after_lines - self.after_end)


def common_ends(before: Sequence[object], after: Sequence[object]) -> tuple[int, int]:
    """(characters the texts share at their start, at their end after that; items of two lists):
    what lies between is the smallest change that makes `after` of `before`."""
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return head, tail


def diff_span(before: str, after: str) -> LineSpan:
    """The smallest span outside which `before` and `after` have the same lines (an empty span,
    `before_end == after_end == start_line`, when the texts have the same lines)."""
    old, new = split_lines(before), split_lines(after)
    common = min(len(old), len(new))
    head = next((i for i in range(common) if old[i] != new[i]), common)
    tail = next((i for i in range(common - head) if old[-1 - i] != new[-1 - i]), common - head)
    return LineSpan(head, len(old) - tail, len(new) - tail)


@dataclass(slots=True, frozen=True)
class EditEvent:
    """One burst of typing at one place in a document: its text before and after, and the lines
    that changed."""

    uri: str
    before: str
    after: str
    span: LineSpan
    time: float  # when its last change came, on the history's clock

    @property
    def start_line(self) -> int:
        return self.span.start_line

    @property
    def before_end(self) -> int:
        return self.span.before_end

    @property
    def after_end(self) -> int:
        return self.span.after_end

    @property
    def removed(self) -> str:
        """The changed lines of the text before, joined with `\\n`."""
        return _lines(self.before, self.span.start_line, self.span.before_end)

    @property
    def inserted(self) -> str:
        """The changed lines of the text after, joined with `\\n`."""
        return _lines(self.after, self.span.start_line, self.span.after_end)

    @property
    def removed_lines(self) -> list[str]:
        """The changed lines of the text before, one string each ([] when the event only inserted
        whole lines: `removed` is "" then, as it is for one emptied line)."""
        return split_lines(self.removed) if self.span.before_end > self.span.start_line else []

    @property
    def inserted_lines(self) -> list[str]:
        """The changed lines of the text after, one string each ([] when it only deleted whole lines)."""
        return split_lines(self.inserted) if self.span.after_end > self.span.start_line else []


def _lines(text: str, start: int, end: int) -> str:
    """Lines `start .. end - 1` of `text` joined with `\\n` (as many as it has): only that stretch
    of the text is cut and copied, so a few lines of a large text cost no list of all its lines."""
    begin = _line_start(text, start) if end > start else None
    if begin is None:
        return ""
    after = _line_start(text, end, begin, start)
    stop = len(text) if after is None else after - (2 if text.startswith("\r\n", after - 2) else 1)
    found = text[begin:stop]
    return LINE_BREAK.sub("\n", found) if "\r" in found else found


def _line_start(text: str, line: int, low: int = 0, breaks: int = 0) -> int | None:
    """The offset where line `line` of `text` starts, or None past its last line; `low` is an
    offset with `breaks` line breaks before it (fewer than `line`, or `line == 0`). The breaks are
    counted in halves of the text (by `str.count`), so no line before `line` is cut out."""
    if line <= breaks:
        return low
    high = len(text)
    while high - low > _SCAN_CHARS:
        middle = (low + high) // 2
        middle += text.startswith("\r\n", middle - 1)  # never between the two of a `\r\n`
        counted = breaks + _breaks_between(text, low, middle)
        if counted >= line:
            high = middle
        else:
            low, breaks = middle, counted
    found = next(itertools.islice(LINE_BREAK.finditer(text, low), line - breaks - 1, None), None)
    return None if found is None else found.end()


def _breaks_between(text: str, start: int, end: int) -> int:
    """How many line breaks `text[start:end]` holds, without copying it (a `\\r\\n` is one)."""
    newlines = text.count("\n", start, end)
    returns = text.count("\r", start, end)
    return newlines + returns - text.count("\r\n", start, end) if returns else newlines
