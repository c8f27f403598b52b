"""From the worker's raw texts to what the editor shows: pure rules, in the order `clean` applies them.

1. Keep the document's indentation style: the leading spaces of the model's lines (four to a level)
   become tabs where the document indents with tabs, and its tabs become the document's width of
   spaces where it indents with spaces. The first line continues the cursor's and is left alone.
2. Trim to the mode: a single line stops at its first line break (which it keeps when the cursor
   is at the start of a line that holds text: the line goes in above that text); a multi-line completion keeps at
   most `max_lines` lines and stops where the code leaves the block it was written in (a line
   indented less than the completion's first line), keeping one such line if it only closes
   brackets (a `}`) and the suffix's code does not go on inside the block; step 3 drops it when
   the suffix has it already.
3. Drop what repeats the suffix: lines from the first one that equals the suffix's next line with
   text, and a tail that the suffix starts with (closers of any length, other text from 3 chars).
4. Balance brackets and quotes against the cursor's line: a closer that the suffix provides, or
   that closes nothing, ends the completion; so does a quote that the suffix closes.
5. Trailing whitespace goes when nothing follows on the cursor's line; nothing left but whitespace
   means no completion.

Ranking (`rank`) sorts candidates by how many syntax errors they add to the document, stably.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from completion.decide import only_closers
from completion.languages import rules_for
from completion.positions import LINE_BREAK
from engine.wire.protocol import Mode

_PAIRS = {")": "(", "]": "[", "}": "{"}
_OPENERS = frozenset(_PAIRS.values())
_QUOTES = frozenset("'\"`")
INDENT_SAMPLE_CHARS = 4000  # the document's indentation style is read this far around the cursor
MIN_TAIL_OVERLAP = 3  # a shorter tail that matches the suffix is kept unless it only closes


def indent_of(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def trim_to_mode(text: str, mode: str, max_lines: int, left: str = "", suffix: str = "") -> str:
    """The completion cut to its mode (see the module's step 2); `left` is the cursor's line."""
    lines = LINE_BREAK.split(text)
    if mode == Mode.SINGLE_LINE:
        return lines[0] + _line_above_break(text, lines, left, suffix)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return ""
    base = len(indent_of(left + lines[0] if first == 0 else lines[first]))
    kept = lines[:first + 1]
    for line in lines[first + 1:]:
        if line.strip() and len(indent_of(line)) < base:
            if only_closers(line) and not _block_goes_on(suffix, base):
                kept.append(line)
            break
        kept.append(line)
    return _at_most(kept, max_lines)


def _line_above_break(text: str, lines: list[str], left: str, suffix: str) -> str:
    """The line break ending a single line written at the start of a line that holds text (the
    line goes in above it, so its break goes with it), else nothing."""
    right = LINE_BREAK.split(suffix, maxsplit=1)[0]
    if left or not right.strip() or len(lines) < 2 or not lines[0].strip():
        return ""
    return LINE_BREAK.match(text, len(lines[0])).group()


def _block_goes_on(suffix: str, base: int) -> bool:
    """True when the suffix's next line with text, after the cursor's line, is indented `base`+."""
    later = LINE_BREAK.split(suffix)[1:]
    following = next((line for line in later if line.strip()), "")
    return bool(following) and len(indent_of(following)) >= base


def _at_most(lines: list[str], max_lines: int) -> str:
    """The lines up to the `max_lines`-th that has text, joined, without trailing whitespace."""
    count = 0
    for end, line in enumerate(lines):
        count += bool(line.strip())
        if count > max_lines:
            lines = lines[:end]
            break
    return "\n".join(lines).rstrip()


def drop_suffix_repeat(text: str, suffix: str) -> str:
    """The completion without what the suffix already has (see the module's step 3)."""
    following = next((line.strip() for line in LINE_BREAK.split(suffix) if line.strip()), "")
    lines = LINE_BREAK.split(text)
    for index, line in enumerate(lines[1:], start=1):
        if following and line.strip() == following:
            text = "\n".join(lines[:index]).rstrip()
            break
    head = LINE_BREAK.split(suffix, maxsplit=1)[0]
    for size in range(min(len(text), len(head)), 0, -1):
        tail = head[:size]
        if text.endswith(tail) and (size >= MIN_TAIL_OVERLAP or only_closers(tail)):
            return text[:-size]
    return text


class _Scanner:
    """Open brackets and the open quote along a text, across calls to `feed`."""

    def __init__(self, comment: str) -> None:
        self.stack: list[str] = []
        self.quote: str | None = None
        self.comment = comment

    def feed(self, text: str, stop: Callable[[int, str], bool] | None = None) -> int:
        """Scan `text`; returns the index where `stop(index, char)` first held, or len(text)."""
        index = 0
        while index < len(text):
            char = text[index]
            if stop is not None and stop(index, char):
                return index
            if self.quote is not None:
                index += 2 if char == "\\" else 1
                self.quote = None if char == self.quote else self.quote
                continue
            if text.startswith(self.comment, index):
                found = LINE_BREAK.search(text, index)
                index = found.start() if found else len(text)
                continue
            if char in _QUOTES:
                self.quote = char
            elif char in _OPENERS:
                self.stack.append(char)
            elif char in _PAIRS and self.stack and self.stack[-1] == _PAIRS[char]:
                self.stack.pop()
            index += 1
        return len(text)


def balance(text: str, left: str, right: str, language: str | None = None) -> str:
    """The completion cut where it would close what the suffix closes or nothing (step 4)."""
    comment = rules_for(language).line_comment
    before = _Scanner(comment)
    before.feed(left)
    closed_by_suffix = sum(1 for char in right if char in _PAIRS)
    budget = max(0, len(before.stack) - closed_by_suffix)
    scanner = _Scanner(comment)
    scanner.stack, scanner.quote = list(before.stack), before.quote
    quote_closed_by_suffix = before.quote is not None and right.lstrip().startswith(before.quote)
    spent = 0

    def stop(index: int, char: str) -> bool:
        nonlocal spent
        if scanner.quote is not None:
            return quote_closed_by_suffix and char == scanner.quote
        if char not in _PAIRS:
            return False
        if len(scanner.stack) > len(before.stack) - spent:  # closes what the completion opened
            return scanner.stack[-1] != _PAIRS[char]
        if spent >= budget or not scanner.stack or scanner.stack[-1] != _PAIRS[char]:
            return True
        spent += 1
        return False

    return text[:scanner.feed(text, stop)]


def indent_style(text: str) -> str | None:
    """The document's indentation unit: "\\t", a run of spaces, or None when it has no indents."""
    tabs = spaces = 0
    widths: list[int] = []
    for line in LINE_BREAK.split(text):
        indent = indent_of(line)
        if not indent or not line.strip():
            continue
        if indent.startswith("\t"):
            tabs += 1
        else:
            spaces += 1
            widths.append(len(indent) - len(indent.lstrip(" ")))
    if tabs == spaces == 0:
        return None
    if tabs > spaces:
        return "\t"
    for width in (4, 2):
        if sum(w % width == 0 for w in widths) >= 0.8 * len(widths):
            return " " * width
    return " " * min(widths)


def reindent(text: str, unit: str | None, model_unit: str = "    ") -> str:
    """The completion with its leading indentation in the document's `unit` (step 1)."""
    if unit is None:
        return text
    lines = LINE_BREAK.split(text)
    foreign = model_unit if unit == "\t" else "\t"
    for index, line in enumerate(lines[1:], start=1):
        indent = indent_of(line)
        levels, rest = _levels(indent, foreign)
        if levels:
            lines[index] = unit * levels + rest + line[len(indent):]
    return "\n".join(lines)


def _levels(indent: str, foreign: str) -> tuple[int, str]:
    """How many leading `foreign` units `indent` has, and what follows them."""
    levels = 0
    while indent.startswith(foreign):
        levels += 1
        indent = indent[len(foreign):]
    return levels, indent


def clean(text: str, mode: str, max_lines: int, prefix: str, suffix: str,
          language: str | None = None) -> str | None:
    """What the editor shows for the worker's `text`, or None when nothing is left."""
    left = LINE_BREAK.split(prefix)[-1]
    right = LINE_BREAK.split(suffix, maxsplit=1)[0]
    text = reindent(text, indent_style(prefix[-INDENT_SAMPLE_CHARS:] + suffix[:INDENT_SAMPLE_CHARS]))
    text = trim_to_mode(text, mode, max_lines, left, suffix)
    text = drop_suffix_repeat(text, suffix)
    text = balance(text, left, right, language)
    if not right.strip():  # nothing follows on the line: trailing blanks would only be typed over
        text = text.rstrip()
    return text if text.strip() else None


def rank(texts: Sequence[str], added_errors: Callable[[str], int]) -> list[str]:
    """Distinct texts, those that add the fewest syntax errors first, otherwise in their order."""
    distinct = list(dict.fromkeys(texts))
    if len(distinct) < 2:  # nothing to choose between: skip the reparse
        return distinct
    scores = {text: added_errors(text) for text in distinct}
    return sorted(distinct, key=lambda text: scores[text])
