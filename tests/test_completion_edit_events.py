"""An edit event's removed and inserted lines: cut from the changed stretch only, with the same
answers as splitting the whole text into lines."""
from __future__ import annotations

import random

import pytest

from completion.edit_events import EditEvent, LineSpan, diff_span
from completion.positions import split_lines


def _split_and_join(text: str, start: int, end: int) -> str:
    return "\n".join(split_lines(text)[start:end])


def _random_text(chooser: random.Random, lines: int) -> str:
    breaks = ("\n", "\r\n", "\r")
    return "".join(chooser.choice(["", "ab", "x = 1", "long line " * 8]) + chooser.choice(breaks)
                   for _ in range(lines)) + chooser.choice(["", "tail"])


@pytest.mark.parametrize("seed", range(6))
def test_removed_and_inserted_match_the_whole_split(seed: int) -> None:
    chooser = random.Random(seed)
    before, after = _random_text(chooser, 400), _random_text(chooser, 380)
    count = len(split_lines(before)) + 3
    for _ in range(200):
        start = chooser.randrange(count)
        span = LineSpan(start, chooser.randrange(start, count + 1), chooser.randrange(start, count + 1))
        event = EditEvent("file:///t.py", before, after, span, 0.0)
        assert event.removed == _split_and_join(before, span.start_line, span.before_end)
        assert event.inserted == _split_and_join(after, span.start_line, span.after_end)


def test_a_line_deep_in_a_large_text() -> None:
    before = "".join(f"line {n}\r\n" for n in range(50_000))
    after = before.replace("line 31337\r\n", "line 31337 changed\rnew line\r\n")
    event = EditEvent("file:///t.py", before, after, diff_span(before, after), 0.0)
    assert (event.removed, event.inserted) == ("line 31337", "line 31337 changed\nnew line")


def test_the_whole_text_and_nothing() -> None:
    text = "a\r\nb\rc\n"
    whole = EditEvent("file:///t.py", text, "", LineSpan(0, 4, 1), 0.0)
    assert (whole.removed, whole.inserted) == ("a\nb\nc\n", "")
    empty = EditEvent("file:///t.py", text, text, LineSpan(2, 2, 2), 0.0)
    assert (empty.removed, empty.inserted) == ("", "")
