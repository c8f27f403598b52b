"""Tests of infill.modes: the worker's reading of a request's mode."""
from __future__ import annotations

import pytest

from infill.modes import resolve_mode


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
