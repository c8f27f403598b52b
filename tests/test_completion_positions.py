"""Tests of completion.positions: LSP lines and positions, and the cut of a text at a cursor."""
from __future__ import annotations

import re

import pytest

from completion.positions import column_to_index, line_starts, offset_at, split_at, split_lines

EMOJI = "\U0001F600"  # one code point, two UTF-16 code units, four UTF-8 bytes


@pytest.mark.parametrize("line, column, offset", [
    (0, 0, 0), (0, 5, 5), (1, 0, 6), (1, 4, 10), (2, 0, 12), (2, 3, 15),
])
def test_offset_at_counts_lines_and_columns(line, column, offset):
    assert offset_at("def f\n    x\nend", line, column) == offset


@pytest.mark.parametrize("text", ["a\nbc\nd", "a\r\nbc\r\nd", "a\rbc\rd", "a\r\nbc\nd"])
def test_every_lsp_line_break_ends_a_line(text):
    assert text[offset_at(text, 1, 0):offset_at(text, 1, 2)] == "bc"
    assert text[offset_at(text, 2, 0)] == "d"


def test_a_column_is_counted_in_utf16_code_units_by_default():
    text = f"s = '{EMOJI}x'"
    after_emoji = text.index("x")
    assert offset_at(text, 0, 7) == after_emoji  # 5 + 2 units for the emoji
    assert offset_at(text, 0, 6) is None  # between the two halves of the surrogate pair
    assert offset_at(text, 0, 6, "utf-32") == after_emoji
    assert offset_at(text, 0, 9, "utf-8") == after_emoji
    assert offset_at("é=1", 0, 2, "utf-8") == 1 and offset_at("é=1", 0, 1, "utf-8") is None


@pytest.mark.parametrize("line, column", [(3, 0), (1, 3), (0, 99), (-1, 0), (0, -1), (99, 0)])
def test_positions_outside_the_text_have_no_offset(line, column):
    assert offset_at("ab\ncd\n", line, column) is None


def test_the_line_after_a_final_break_exists_and_is_empty():
    assert offset_at("ab\n", 1, 0) == 3 and offset_at("ab\n", 1, 1) is None
    assert offset_at("ab\r\n", 0, 2) == 2 and offset_at("ab\r\n", 0, 3) is None  # not inside \r\n
    assert [split_lines(t) for t in ("", "a", "a\n", "a\r\nb")] == [[""], ["a"], ["a", ""], ["a", "b"]]


def test_column_to_index_at_the_ends_of_a_line():
    assert column_to_index("", 0) == 0
    assert column_to_index("abc", 3) == 3 and column_to_index("abc", 4) is None
    assert column_to_index(EMOJI, 2) == 1 and column_to_index(EMOJI, 1) is None


def test_split_at_the_cursor():
    assert split_at("def f():\n    return a +\n", 1, 14) == ("def f():\n    return a +", "\n")
    assert split_at("", 0, 0) == ("", "")
    assert split_at("x", 1, 0) is None


def test_text_that_is_not_utf8_has_no_hole():
    assert split_at("x = '\ud800'\n", 0, 2) is None  # a lone surrogate cannot go on the wire


def test_line_starts_are_the_breaks_ends_with_or_without_a_carriage_return():
    texts = ["", "a", "a\n", "\n\n", "ab\ncd\n\nef", "a\r\nb\rc\nd", "x\r", "é\nü\n"]
    for text in texts:
        expected = [0, *(found.end() for found in re.finditer(r"\r\n|\r|\n", text)), len(text)]
        assert line_starts(text) == expected, text
