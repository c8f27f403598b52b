"""Completion modes, shared by the language server and the worker (no torch here)."""
from __future__ import annotations

import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")  # every line ending an editor may send


def resolve_mode(mode: str, prefix: str) -> str:
    """`auto`: single line when the cursor's line already has text before the cursor (finish this
    line), else multi-line (write the next lines). Other modes stand as given."""
    if mode != "auto":
        return mode
    current_line = LINE_BREAK.split(prefix)[-1]
    return "single_line" if current_line.strip() else "multi_line"
