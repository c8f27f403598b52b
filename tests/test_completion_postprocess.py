"""Tests of completion.postprocess: from the worker's text to what the editor shows."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from completion.positions import LINE_BREAK
from completion.postprocess import (balance, clean, drop_suffix_repeat, indent_style, rank,
                                    reindent, trim_to_mode)


@pytest.mark.parametrize("text, mode, shown", [
    (" b\n    c", "single_line", " b"),
    ("\n    return 1\n\ndef g():\n    pass", "multi_line", "\n    return 1"),
    ("\n  return 1;\n}\nfunction g() {}", "multi_line", "\n  return 1;\n}"),
    ("if x:\n        y()\n    z()\nfoo()", "multi_line", "if x:\n        y()\n    z()"),
    ("\n    a\n    b\n    c\n    d", "multi_line", "\n    a\n    b\n    c"),
    ("\n  \n\n", "multi_line", ""),
])
def test_trim_to_mode(text, mode, shown):
    left = "    " if text.startswith("if") else "def f():"
    assert trim_to_mode(text, mode, max_lines=3, left=left) == shown


@pytest.mark.parametrize("text, suffix, kept", [
    ("a, b))", ")\n", "a, b)"),
    ("x + 1]", "]", "x + 1"),
    ("name = value", "value\n", "name = "),
    ("x = foo", "o\n", "x = foo"),  # a short overlap of letters is a coincidence
    ("\n  body();\n}", "}\n", "\n  body();"),
    ("\n    a = 1\n    return a", "\n    return a\n", "\n    a = 1"),
    ("x", "", "x"),
])
def test_drop_suffix_repeat(text, suffix, kept):
    assert drop_suffix_repeat(text, suffix) == kept


@pytest.mark.parametrize("text, left, right, kept", [
    ("a, b))", "print(foo(", ")", "a, b)"),
    ("a, b)) + 1", "print(foo(", "", "a, b)) + 1"),
    ("x]) + y", "f(", ")", "x"),
    ("(1, 2)] = 3", "d[", "]", "(1, 2)"),
    ('hello"', 'x = "', '"', "hello"),
    ('hello" + y', 'x = "', "", 'hello" + y'),
    ("'a)' + b", "f(", ")", "'a)' + b"),
    ("x  # close )", "f(", ")", "x  # close )"),
    ("\n    return (a,\n            b)", "def f():", "", "\n    return (a,\n            b)"),
    ("\n  g();\n}", "function f() {", "}", "\n  g();\n"),
])
def test_balance(text, left, right, kept):
    language = "python" if "#" in text or "def" in left else "javascript"
    assert balance(text, left, right, language) == kept


@pytest.mark.parametrize("document, unit", [
    ("def f():\n    return 1\n", "    "),
    ("function f() {\n  return 1;\n}\n", "  "),
    ("func f() {\n\treturn 1\n}\n", "\t"),
    ("x = 1\n", None),
])
def test_indent_style(document, unit):
    assert indent_style(document) == unit


def test_reindent_converts_the_lines_after_the_first():
    assert reindent("x:\n    y\n        z", "\t") == "x:\n\ty\n\t\tz"
    assert reindent("x {\n\ty\n\t\tz", "  ") == "x {\n  y\n    z"
    assert reindent("  a\n    b", "    ") == "  a\n    b"
    assert reindent("a\n    b", None) == "a\n    b"


def test_clean_applies_every_rule_and_drops_empty_texts():
    prefix = "func f() {\n\tif ok {\n\t\treturn g(x"
    assert clean(", y))\n\t}", "single_line", 8, prefix, ")\n\t}\n}\n", "go") == ", y"
    assert clean("\n    a()\n    b()\n}", "multi_line", 8, "func f() {", "\n\tc()\n}\n", "go") == "\n\ta()\n\tb()"
    assert clean("))", "single_line", 8, "f(", ")", "python") is None
    assert clean("\n\n", "multi_line", 8, "", "", None) is None


def test_rank_prefers_texts_that_add_no_errors_and_drops_duplicates():
    errors = {"a": 1, "b": 0, "c": 0}
    assert rank(["a", "b", "a", "c"], errors.__getitem__) == ["b", "c", "a"]


CODE_CHARS = st.sampled_from(list("ab (){}[]'\"`\\#:,.\n\t ") + ["    ", "\r\n", "//", "*/"])
CODE = st.lists(CODE_CHARS, max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=CODE, prefix=CODE, suffix=CODE, mode=st.sampled_from(["single_line", "multi_line"]),
       language=st.sampled_from(["python", "go", None]))
def test_clean_never_fails_and_keeps_its_promises(text, prefix, suffix, mode, language):
    shown = clean(text, mode, 3, prefix, suffix, language)
    if shown is None:
        return
    assert shown.strip()
    assert shown == shown.rstrip() or suffix.split("\n", 1)[0].strip()
    at_line_start = not LINE_BREAK.split(prefix)[-1] and LINE_BREAK.split(suffix, maxsplit=1)[0].strip()
    one_line = re.sub(r"(\r\n|\r|\n)$", "", shown) if at_line_start else shown  # a line that goes in above
    assert mode == "multi_line" or not any(c in one_line for c in "\r\n")
    assert sum(bool(line.strip()) for line in shown.splitlines()) <= 3


def test_a_single_line_written_before_a_lines_text_keeps_its_break():
    """At column 0 of a line holding text, the completion is a line inserted above it: without
    its break the two lines would run together."""
    suffix = "    return total\n"
    assert clean("    total += 1\n    return", "single_line", 1, "def f(total):\n", suffix) == "    total += 1\n"
    assert clean("total += 1\n", "single_line", 1, "def f(total):\n    ", suffix) == "total += 1"  # mid-line
    # empty line
    assert clean("    total += 1\n", "single_line", 1, "def f(total):\n", "\n" + suffix) == "    total += 1"
