"""The context sent with a completion: prefix and suffix windows, and snippets, under token budgets.

Tokens are estimated as characters / 3.2 (code averages a little over three characters per token
in the bundled model's BPE), so no tokenizer is loaded here. Windows keep the lines nearest the
cursor: the prefix window starts at a line start, the suffix window ends at a line end, and either
may give up a quarter of its budget to start or end at a statement boundary from the tree (never
half a function). Snippets are the definitions (signature and docstring) of the names used near
the cursor, and of longer names the word at the cursor starts, from this document (outside the
windows, which the model sees anyway), the other open documents and the workspace; the lines
around the places edited last (outside the windows); and the document's imports when the prefix
window does not reach them. Each has a priority (imports, this document's definitions, recent
edits, open documents, the workspace; nearer names and newer edits first); they are sent least
important first, so the most important sit next to the prefix.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from completion.definitions import Definition
from completion.positions import LINE_BREAK
from engine.wire.protocol import MAX_PATH_CHARS, Snippet

CHARS_PER_TOKEN = 3.2  # a rough count of code tokens, for every budget and estimate of the front ends
BOUNDARY_SLACK = 0.25  # share of a window's budget it may give up to cut at a statement boundary
NEAR_LINES_BEFORE = 30  # names are collected this many lines up from the cursor ...
NEAR_LINES_AFTER = 10  # ... and this many lines down
MAX_NAMES = 40
MAX_DEFINITIONS_PER_NAME = 3  # a common name (`get`, `run`) would crowd out the others
MIN_STEM_CHARS = 3  # the word at the cursor looks up longer names from this length
MAX_STEM_MATCHES = 5
EDIT_CONTEXT_LINES = 3  # lines either side of a recently edited place in its snippet
PRIORITY_IMPORTS = 900
PRIORITY_SAME_DOCUMENT = 600
PRIORITY_RECENT_EDIT = 500
PRIORITY_OPEN_DOCUMENT = 400
PRIORITY_WORKSPACE = 200

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STEM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")

Boundary = Callable[[int], "int | None"]


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def chars_for(tokens: int) -> int:
    return int(tokens * CHARS_PER_TOKEN)


def prefix_window(prefix: str, budget_tokens: int, boundary_after: Boundary | None = None) -> str:
    """The end of `prefix` within the budget, from a line start (a statement's, when near)."""
    limit = chars_for(budget_tokens)
    if len(prefix) <= limit:
        return prefix
    cut = len(prefix) - limit
    newline = prefix.find("\n", cut)
    if newline == -1:  # the cursor's line alone is over the budget
        return prefix[cut:]
    start = newline + 1
    found = boundary_after(start) if boundary_after is not None else None
    if found is not None and 0 <= found - start <= limit * BOUNDARY_SLACK:
        line_start = prefix.rfind("\n", 0, found) + 1
        if not prefix[line_start:found].strip():
            start = line_start
    return prefix[start:]


def suffix_window(suffix: str, budget_tokens: int, boundary_before: Boundary | None = None) -> str:
    """The start of `suffix` within the budget, to a line end (a statement's, when near)."""
    limit = chars_for(budget_tokens)
    if len(suffix) <= limit:
        return suffix
    end = suffix.rfind("\n", 0, limit)
    if end == -1:
        return suffix[:limit]
    found = boundary_before(end) if boundary_before is not None else None
    if found is not None and 0 < found and 0 <= end - found <= limit * BOUNDARY_SLACK:
        end = found
    return suffix[:end]


def names_near(prefix: str, suffix: str) -> list[str]:
    """Identifiers around the cursor, nearest first, each once."""
    found: list[str] = []
    for line in reversed(LINE_BREAK.split(prefix)[-NEAR_LINES_BEFORE:]):
        found.extend(reversed(_IDENTIFIER.findall(line)))
    for line in LINE_BREAK.split(suffix)[:NEAR_LINES_AFTER]:
        found.extend(_IDENTIFIER.findall(line))
    return list(dict.fromkeys(found))[:MAX_NAMES]


def stem_at(prefix: str) -> str:
    """The part of a word that the cursor ends, or ""."""
    found = _STEM.search(prefix)
    return found.group() if found else ""


def path_of(uri: str) -> str:
    return unquote(urlparse(uri).path or uri)[:MAX_PATH_CHARS]


def rank_definitions(names: Sequence[str], lookup: Callable[[str], list[Definition]], uri: str,
                     open_uris: Collection[str], visible_lines: range) -> list[tuple[int, Definition]]:
    """(priority, definition) for the definitions of `names`, highest priority first; those of
    this document on `visible_lines` are left out (the windows show them)."""
    ranked, seen = [], set()
    for rank, name in enumerate(names):
        for definition in lookup(name)[:MAX_DEFINITIONS_PER_NAME]:
            key = (definition.uri, definition.line, definition.name)
            if key in seen or (definition.uri == uri and definition.line in visible_lines):
                continue
            seen.add(key)
            if definition.uri == uri:
                base = PRIORITY_SAME_DOCUMENT
            else:
                base = PRIORITY_OPEN_DOCUMENT if definition.uri in open_uris else PRIORITY_WORKSPACE
            ranked.append((base - rank, definition))
    ranked.sort(key=lambda pair: -pair[0])
    return ranked


def fit_snippets(candidates: Sequence[Snippet], budget_tokens: int) -> list[Snippet]:
    """The candidates (most important first) that fit the budget, least important first."""
    chosen, used = [], 0
    for snippet in candidates:
        cost = approx_tokens(snippet.text)
        if used + cost <= budget_tokens:
            chosen.append(snippet)
            used += cost
    return sorted(chosen, key=lambda snippet: snippet.priority)


@dataclass(slots=True)
class Context:
    prefix: str
    suffix: str
    snippets: list[Snippet]


def visible_lines(prefix: str, window_prefix: str, window_suffix: str) -> range:
    """The document's lines that the two windows show (0-based, end exclusive)."""
    cursor_line = len(LINE_BREAK.split(prefix)) - 1
    first = cursor_line - (len(LINE_BREAK.split(window_prefix)) - 1)
    return range(first, cursor_line + len(LINE_BREAK.split(window_suffix)))


def edit_snippets(edits: Sequence[tuple[str, int]], text_of: Callable[[str], "str | None"],
                  uri: str, visible: range) -> list[Snippet]:
    """The lines around recently edited places (`(uri, line)`, newest last), newest first; those
    that the windows show are left out."""
    snippets, lines_of = [], {}
    for age, (edited_uri, line) in enumerate(reversed(edits)):
        if edited_uri == uri and line in visible:
            continue
        if edited_uri not in lines_of:
            text = text_of(edited_uri)
            lines_of[edited_uri] = LINE_BREAK.split(text) if text is not None else []
        lines = lines_of[edited_uri]
        if line < len(lines):
            around = lines[max(0, line - EDIT_CONTEXT_LINES):line + EDIT_CONTEXT_LINES + 1]
            shown = "\n".join(around).rstrip()
            if shown.strip():
                snippets.append(Snippet(shown, path_of(edited_uri), PRIORITY_RECENT_EDIT - age))
    return snippets


def snippet_candidates(ranked: Sequence[tuple[int, Definition]], imports_text: str, uri: str,
                       edits: Sequence[Snippet] = ()) -> list[Snippet]:
    """Snippets for the imports (when given), the ranked definitions and the recent edits, most
    important first."""
    snippets = [Snippet(imports_text, path_of(uri), PRIORITY_IMPORTS)] if imports_text else []
    snippets += [Snippet(d.text, path_of(d.uri), priority) for priority, d in ranked]
    snippets += edits
    return sorted(snippets, key=lambda snippet: -snippet.priority)
