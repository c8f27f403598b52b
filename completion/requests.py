"""Pure rules shared by the language server and `infill complete`: from a document and a cursor to
a `CompleteRequest`, and from the worker's text to what the editor shows.

Positions are LSP positions: a 0-based line and a 0-based column counted in the negotiated
position encoding's code units (UTF-16 unless the client chose otherwise). Lines end at `\\n`,
`\\r\\n` or `\\r`, as LSP defines them. A position outside the document, or text that cannot be
sent as UTF-8 (a lone surrogate), gives no hole at all: callers answer with nothing.

Nothing here touches sockets, files or the event loop, so all of it is tested without a worker.
"""
from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.protocol import (MAX_DEADLINE_MS, MAX_PATH_CHARS, MAX_TOKENS, MODES, CompleteRequest,
                             Snippet)
from infill.modes import LINE_BREAK

DEFAULT_DEADLINE_MS = 1500  # an inline completion later than this has usually been typed past
DEFAULT_MAX_TOKENS = 48
DEFAULT_MODE = "auto"
DEFAULT_MAX_LINES = 12  # a multi-line completion longer than a screenful is rarely taken whole
MAX_LINES = 200
# Token budgets of the context parts, before the worker cuts the canvas to its model's context
# (512 tokens for the bundled model, 2,048 or more for public checkpoints).
DEFAULT_PREFIX_TOKENS = 1024
DEFAULT_SUFFIX_TOKENS = 384
DEFAULT_SNIPPET_TOKENS = 384
MAX_BUDGET_TOKENS = 32_768
# The worker's canvas keeps at most the model's context (2,048 tokens are about 8,000 characters of
# code); sending more only costs transfer and tokenizing time.
MAX_PREFIX_CHARS = 24_000
MAX_SUFFIX_CHARS = 12_000



@dataclass(slots=True)
class Settings:
    """The server's settings, read from the client's `initializationOptions`."""

    worker_address: str | None = None  # None: spawn a local worker on the bundled model
    deadline_ms: int = DEFAULT_DEADLINE_MS
    max_tokens: int = DEFAULT_MAX_TOKENS
    mode: str = DEFAULT_MODE
    max_lines: int = DEFAULT_MAX_LINES
    prefix_tokens: int = DEFAULT_PREFIX_TOKENS
    suffix_tokens: int = DEFAULT_SUFFIX_TOKENS
    snippet_tokens: int = DEFAULT_SNIPPET_TOKENS
    stats_log: str | None = None  # None: the default path; "": no stats log
    languages: list[str] | None = None  # None: every language; else grammar names ("python", ...)
    worker_keys: str | None = None  # CURVE key folder (`infill keys`) for remote workers; None: the command line's

    @classmethod
    def from_options(cls, options: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
        """Settings from `initializationOptions` or a configuration change, on top of `base` (or
        the defaults): a value that is missing or null keeps the base's. Also one line per value
        that was ignored because it is unknown or invalid."""
        settings, problems = (dataclasses.replace(base) if base is not None else cls()), []
        if options is None:
            return settings, problems
        if not isinstance(options, dict):
            return settings, [f"the settings must be an object, got {type(options).__name__}"]
        for key, value in options.items():
            if value is None:  # an editor's way of saying "not set"
                continue
            if key not in _OPTIONS:
                problems.append(f"unknown setting {key!r} (known: {', '.join(_OPTIONS)})")
                continue
            name, valid, wanted = _OPTIONS[key]
            if valid(value):
                setattr(settings, name, value)
            else:
                problems.append(f"setting {key!r} must be {wanted}, got {value!r}; using the default")
        return settings, problems


def _non_empty_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _int_in(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


# initializationOptions key -> (Settings field, validity check, what a valid value is)
_OPTIONS: dict[str, tuple[str, Callable[[Any], bool], str]] = {
    "workerAddress": ("worker_address", _non_empty_text, "a non-empty ZeroMQ address string"),
    "workerKeys": ("worker_keys", _non_empty_text, "the path of a key folder made by `infill keys`"),
    "deadlineMs": ("deadline_ms", _int_in(1, MAX_DEADLINE_MS), f"an integer in 1..{MAX_DEADLINE_MS}"),
    "maxTokens": ("max_tokens", _int_in(1, MAX_TOKENS), f"an integer in 1..{MAX_TOKENS}"),
    "mode": ("mode", lambda value: value in MODES, f"one of {', '.join(MODES)}"),
    "maxLines": ("max_lines", _int_in(1, MAX_LINES), f"an integer in 1..{MAX_LINES}"),
    "prefixTokens": ("prefix_tokens", _int_in(1, MAX_BUDGET_TOKENS),
                     f"an integer in 1..{MAX_BUDGET_TOKENS}"),
    "suffixTokens": ("suffix_tokens", _int_in(0, MAX_BUDGET_TOKENS),
                     f"an integer in 0..{MAX_BUDGET_TOKENS}"),
    "snippetTokens": ("snippet_tokens", _int_in(0, MAX_BUDGET_TOKENS),
                      f"an integer in 0..{MAX_BUDGET_TOKENS}"),
    "statsLog": ("stats_log", lambda value: isinstance(value, str),
                 "a file path, or \"\" for no stats log"),
    "languages": ("languages", lambda value: isinstance(value, list)
                  and all(isinstance(name, str) for name in value),
                  "a list of language names such as \"python\", \"typescript\", \"cpp\""),
}


def _code_units(char: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(char.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return 1
    return 2 if ord(char) > 0xFFFF else 1


def column_to_index(line_text: str, column: int, encoding: str = "utf-16") -> int | None:
    """The index in `line_text` of an LSP column, or None past the line's end or inside a character."""
    units = 0
    for index, char in enumerate(line_text):
        if units == column:
            return index
        if units > column:
            return None
        units += _code_units(char, encoding)
    return len(line_text) if units == column else None


def split_lines(text: str) -> list[str]:
    """The lines as LSP counts them, without their breaks: an empty text has one, a final break
    opens one more."""
    return LINE_BREAK.split(text)


def offset_at(text: str, line: int, column: int, encoding: str = "utf-16") -> int | None:
    """The string offset of an LSP position in `text`, or None when it lies outside the text."""
    if line < 0 or column < 0:
        return None
    start = 0
    for _ in range(line):
        found = LINE_BREAK.search(text, start)
        if found is None:
            return None
        start = found.end()
    found = LINE_BREAK.search(text, start)
    end = found.start() if found else len(text)
    index = column_to_index(text[start:end], column, encoding)
    return None if index is None else start + index


def is_sendable(text: str) -> bool:
    """True when `text` encodes to UTF-8 (no lone surrogates), as the wire protocol requires."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def split_at(text: str, line: int, column: int, encoding: str = "utf-16") -> tuple[str, str] | None:
    """(prefix, suffix) around an LSP position, or None outside the text or for unsendable text."""
    offset = offset_at(text, line, column, encoding)
    if offset is None or not is_sendable(text):
        return None
    return text[:offset], text[offset:]


def new_request_id() -> str:
    return uuid.uuid4().hex


def build_request(request_id: str, prefix: str, suffix: str, mode: str, max_tokens: int,
                  deadline_ms: int, document: str = "", decoder: dict | None = None,
                  snippets: list[Snippet] | None = None, session: str = "") -> CompleteRequest:
    """A fill-in-the-middle request with the context windows clipped next to the cursor; a
    newer request with the same non-empty `session` supersedes it at the worker."""
    return CompleteRequest(id=request_id, kind="fim", prefix=prefix[-MAX_PREFIX_CHARS:],
                           suffix=suffix[:MAX_SUFFIX_CHARS], snippets=list(snippets or []),
                           mode=mode, max_tokens=max_tokens, deadline_ms=deadline_ms,
                           document=document[:MAX_PATH_CHARS], decoder=dict(decoder or {}),
                           session=session[:MAX_PATH_CHARS])


def postprocess(text: str, mode: str) -> str | None:
    """What the editor shows for the worker's `text` in `mode`, or None when there is nothing.

    Single line: the text up to the end of its first line. Multi-line: the text without its
    trailing line breaks. Text that is empty or only whitespace is nothing.
    """
    if mode == "single_line":
        text = LINE_BREAK.split(text, maxsplit=1)[0]
    else:
        text = text.rstrip("\r\n")
    return text if text.strip() else None


def label_for(text: str) -> str:
    """A completion item's label: the completion's first line that has text, without its indent."""
    for line in LINE_BREAK.split(text):
        if line.strip():
            return line.strip()
    return text
