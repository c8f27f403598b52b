"""Tests of completion.requests: positions, holes, modes, requests, post-processing, settings."""
from __future__ import annotations

import pytest

from infill.modes import resolve_mode
from engine.protocol import MAX_PATH_CHARS, encode
from completion.requests import (MAX_PREFIX_CHARS, MAX_SUFFIX_CHARS, Settings, build_request,
                                 column_to_index, label_for, offset_at,
                                 postprocess, split_at, split_lines)

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


@pytest.mark.parametrize("setting, prefix, mode", [
    ("auto", "def f():\n    return a +", "single_line"),
    ("auto", "def f():\n    ", "multi_line"),
    ("auto", "", "multi_line"),
    ("auto", "x = 1\r\n", "multi_line"),
    ("multi_line", "x = ", "multi_line"),
    ("single_line", "", "single_line"),
])
def test_resolve_mode(setting, prefix, mode):
    assert resolve_mode(setting, prefix) == mode


def test_build_request_clips_the_context_next_to_the_cursor():
    prefix, suffix = "p" * (MAX_PREFIX_CHARS + 5) + "<", ">" + "s" * (MAX_SUFFIX_CHARS + 5)
    uri = "file:///" + "d" * MAX_PATH_CHARS
    request = build_request("r1", prefix, suffix, "single_line", 8, 20000, uri)
    assert len(request.prefix) == MAX_PREFIX_CHARS and request.prefix.endswith("<")
    assert len(request.suffix) == MAX_SUFFIX_CHARS and request.suffix.startswith(">")
    assert (request.kind, request.mode, request.max_tokens, request.deadline_ms) == ("fim", "single_line", 8, 20000)
    assert len(request.document) == MAX_PATH_CHARS
    assert encode(request)  # a valid message that fits in a frame


@pytest.mark.parametrize("text, mode, shown", [
    (" b\n", "single_line", " b"),
    (" b\r\n    c", "single_line", " b"),
    ("os.path", "single_line", "os.path"),
    ("\n", "single_line", None),
    ("   \n  x", "single_line", None),
    ("", "single_line", None),
    ("\n    return x\n\n", "multi_line", "\n    return x"),
    ("  \n\t\n", "multi_line", None),
    ("", "multi_line", None),
])
def test_postprocess(text, mode, shown):
    assert postprocess(text, mode) == shown


def test_label_is_the_first_line_with_text():
    assert label_for(" b + c") == "b + c"
    assert label_for("\n    return x\n    y") == "return x"


def test_settings_from_options():
    settings, problems = Settings.from_options(
        {"workerAddress": "tcp://127.0.0.1:5555", "deadlineMs": 900, "maxTokens": 16, "mode": "multi_line"})
    assert settings == Settings("tcp://127.0.0.1:5555", 900, 16, "multi_line") and problems == []
    assert Settings.from_options(None) == (Settings(), [])
    assert Settings.from_options({"workerAddress": None, "mode": None}) == (Settings(), [])


def test_bad_settings_are_reported_and_keep_their_defaults():
    settings, problems = Settings.from_options(
        {"workerAddress": "", "deadlineMs": True, "maxTokens": 10**6, "mode": "fast", "colour": 1})
    assert settings == Settings()
    assert len(problems) == 5 and any("'colour'" in p for p in problems)
    assert "maxTokens" in problems[2] and "1..1024" in problems[2]
    assert Settings.from_options(["x"])[1] == ["the settings must be an object, got list"]


def test_more_settings_from_options():
    settings, problems = Settings.from_options(
        {"maxLines": 3, "prefixTokens": 500, "suffixTokens": 0, "snippetTokens": 100,
         "statsLog": "", "languages": ["python", "typescriptreact"]})
    assert problems == [] and (settings.max_lines, settings.prefix_tokens, settings.suffix_tokens,
                               settings.snippet_tokens) == (3, 500, 0, 100)
    assert settings.stats_log == "" and settings.languages == ["python", "typescriptreact"]
    settings, problems = Settings.from_options({"maxLines": 0, "languages": "python", "statsLog": 1})
    assert settings == Settings() and len(problems) == 3
    settings, problems = Settings.from_options({"workerKeys": "~/.config/infill/keys"})
    assert settings.worker_keys == "~/.config/infill/keys" and problems == []
    assert "infill keys" in Settings.from_options({"workerKeys": " "})[1][0]


def test_a_configuration_change_keeps_the_settings_it_does_not_name():
    base = Settings(deadline_ms=900, mode="multi_line")
    settings, problems = Settings.from_options({"maxLines": 2, "mode": None}, base)
    assert settings == Settings(deadline_ms=900, mode="multi_line", max_lines=2) and problems == []
    assert Settings.from_options({}, base) == (base, []) and base.max_lines != 2
