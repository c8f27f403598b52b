"""Drafts of an inline completion from the user's own code: what followed the same text elsewhere.

Prompt-lookup drafting: the key is the text just before the cursor; where its last tokens occur
again (in the document before and after the cursor, in the other open documents and workspace
files of a `DraftCorpus`, in completions the user accepted lately), the matched key is extended
backwards while the tokens agree, and what followed it there, up to the mode's end, is a candidate
continuation. Tokens ignore horizontal space (`completion.draft_corpus`), so `f(a,b)` and
`f(a, b)` match; the continuation is copied as it was written, re-indented by the difference
between the two places' indentation when the cursor starts a line.

The mode's end: the line's end for a single line; for several lines, the first line and the lines
after it while they stay inside the block that holds it (blank, or indented at most one level less
than the first: on the tuning set, stopping at the first line less deep than the first made 3-line
drafts exact half as often), at most `MAX_BLOCK_LINES`, stopping before a line that is the
document's next line after the cursor.

`drafts_for` groups the candidates by text and ranks them by the length of the matched key (in
tokens), the occurrences that agree, and the distance to the cursor (another file counts as
farthest). A draft is worth sending only when its key has at least `MIN_KEY_TOKENS` tokens, or
`AGREED_MIN_KEY_TOKENS` and two occurrences that continue alike, and no occurrence of as long a
key continues otherwise: a short key is nearly always wrong (the thresholds were chosen on a
tuning repository with `bench.draft_lookup`). When the best key's occurrences disagree only in a
few tokens, the draft has slots where they differ; otherwise there is none.
Pure functions: no I/O, no torch.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from completion.draft_corpus import (DraftCorpus, Occurrence, Segment, key_tokens, last_window,
                                     segment_occurrences, token_bounds)
from engine.wire.protocol import Mode

MIN_KEY_TOKENS = 12  # the shortest matched key worth a draft on its own (tuned on cattrs, bench.draft_lookup)
AGREED_MIN_KEY_TOKENS = 4  # the shortest when `AGREED_OCCURRENCES` occurrences continue alike
AGREED_OCCURRENCES = 2
MAX_BLOCK_LINES = 3  # lines of a multi-line draft at most
INDENT_LEVEL = 4  # spaces of one indentation level (a tab is one)
KEY_TAIL_CHARS = 2048  # the prefix's tail a key is cut from
INDENT_LOOKBACK_BYTES = 512  # text before an occurrence searched for its indentation
DOCUMENT_BEFORE_CHARS = 200_000  # the document around the cursor searched for the key
DOCUMENT_AFTER_CHARS = 100_000
MAX_DOCUMENT_CHARS = 512 * 1024  # a document over this gets no drafts (as it gets no tree)
CONTINUATION_BYTES = 2048  # bytes read after an occurrence
MAX_CANDIDATES = 128  # occurrences whose continuation is read: those with the longest keys
MAX_SLOTS = 2  # places two agreeing-length drafts may differ and still make one draft with slots
MAX_SLOT_TOKENS = 4  # of our tokens, in either text, at one such place
CHARS_PER_MODEL_TOKEN = 3  # a slot's masked tokens: the longer text's characters there / this, +1
DOCUMENT, OPEN, WORKSPACE, ACCEPTED = "document", "open", "workspace", "accepted"
_PARTIAL_WORD = re.compile(r"[A-Za-z0-9_\u0080-\U0010ffff]+\Z")
_INDENT = re.compile(r"[ \t]*")
_TOKEN = re.compile(r"[A-Za-z0-9_\u0080-\U0010ffff]+|[^ \t\r\f\v]")


@dataclass(frozen=True, slots=True)
class Draft:
    text: str  # the continuation right after the cursor, up to the mode's end
    source: str  # "document" | "open" | "workspace" | "accepted"
    key_chars: int  # characters of the matched key (text just before the cursor)
    agreement: int  # occurrences whose continuation agrees with `text`
    occurrences: int  # occurrences of the key found in all
    distance: int  # characters between the cursor and the match (0: another file)
    pieces: tuple[str, ...] = ()  # with slots: text cut where occurrences differ; () when none
    slots: tuple[int, ...] = ()  # masked tokens between pieces (len(pieces) - 1 of them)


@dataclass(frozen=True, slots=True)
class Key:
    """What the prefix's tail asks for: the key's tokens and bytes, the word typed after it
    (`partial`), whether blanks follow the key, and the indentation around the cursor."""

    tokens: object  # numpy uint32 array
    data: bytes
    partial: str
    blank_after: bool
    at_line_start: bool  # the key ends with a line break: the draft starts a line
    typed_indent: str  # blanks typed on the cursor's line when it starts a line
    previous_indent: str  # the indentation of the last line with text before the cursor's
    window: int | None  # the hash of the key's last tokens (None: too few tokens for a key)

    @classmethod
    def of(cls, prefix: str) -> Key:
        tail = prefix[-KEY_TAIL_CHARS:]
        partial = _PARTIAL_WORD.search(tail)
        partial_text = partial.group() if partial else ""
        before = tail[:len(tail) - len(partial_text)]
        key_text = before.rstrip(" \t")
        at_line_start = key_text.endswith("\n")
        typed = before[len(key_text):] if at_line_start and not partial_text else ""
        data = key_text.encode("utf-8", "surrogatepass")
        tokens = key_tokens(data)
        return cls(tokens, data, partial_text, len(key_text) < len(before), at_line_start,
                   typed, last_indent(key_text), last_window(tokens))


@dataclass(frozen=True, slots=True)
class Candidate:
    """One occurrence's continuation."""

    text: str
    source: str
    key_tokens: int
    distance: int


def last_indent(text: str) -> str:
    """The indentation of the last line of `text` that holds something."""
    for line in reversed(text.splitlines()[-50:]):
        if line.strip():
            return _INDENT.match(line).group()
    return ""


def indent_of(line: str) -> str:
    return _INDENT.match(line).group()


def reindent(line: str, old: str, new: str) -> str:
    """`line` with the indentation `old` (when it starts with it) replaced by `new`."""
    return new + line[len(old):] if line.startswith(old) else line


def block_lines(lines: list[str], base: str, next_line: str) -> list[str]:
    """The multi-line draft's lines: the first, then those still inside the block that holds it
    (indented at most one level less than `base`), at most `MAX_BLOCK_LINES`, stopping before
    `next_line` (the document's) and leaving out trailing blanks."""
    floor = len(base) - (1 if base.startswith("\t") else INDENT_LEVEL)
    kept = lines[:1]
    for line in lines[1:MAX_BLOCK_LINES]:
        if line.strip() and (len(indent_of(line)) < floor or line.strip() == next_line):
            break
        kept.append(line)
    while len(kept) > 1 and not kept[-1].strip():
        kept.pop()
    return kept


def continuation(occurrence: Occurrence, key: Key, mode: str, suffix: str) -> str | None:
    """What followed `occurrence` up to the mode's end, as it would stand at the cursor; None
    when it does not continue the word typed or is empty."""
    after = occurrence.after(CONTINUATION_BYTES).decode("utf-8", "ignore")
    if key.partial or key.blank_after:
        after = after.lstrip(" \t")
    if not after.startswith(key.partial):
        return None
    after = after[len(key.partial):]
    lines = after.split("\n", MAX_BLOCK_LINES)[:MAX_BLOCK_LINES]
    if key.at_line_start and not key.partial:
        lines = shifted(lines, occurrence, key)
    next_line = first_text_line(suffix)
    if mode == Mode.SINGLE_LINE:
        text = lines[0].rstrip("\r")
    else:
        base = indent_of(lines[0]) if key.at_line_start else key.previous_indent
        text = "\n".join(line.rstrip("\r") for line in block_lines(lines, base, next_line))
    text = without_line_rest(text, suffix)
    return text if text.strip() else None


def shifted(lines: list[str], occurrence: Occurrence, key: Key) -> list[str]:
    """Lines that start at a line start, re-indented from the occurrence's to the cursor's
    indentation; the blanks the user typed already are left out of the first."""
    before = occurrence.before(INDENT_LOOKBACK_BYTES)
    old, new = last_indent(before.decode("utf-8", "ignore")), key.previous_indent
    moved = [reindent(line, old, new) if line.strip() else line for line in lines]
    first = moved[0]
    if key.typed_indent:
        first = first[len(key.typed_indent):] if first.startswith(key.typed_indent) else first.lstrip(" \t")
    return [first, *moved[1:]]


def first_text_line(suffix: str) -> str:
    """The first line after the cursor's that holds text, stripped."""
    for line in suffix.split("\n", 8)[1:8]:
        if line.strip():
            return line.strip()
    return ""


def without_line_rest(text: str, suffix: str) -> str:
    """`text` without the end that repeats the rest of the cursor's line."""
    rest = suffix.split("\n", 1)[0].strip()
    first, *others = text.split("\n")
    if rest and not others and first.rstrip().endswith(rest):
        return first.rstrip()[:-len(rest)]
    return text


def document_occurrences(prefix: str, suffix: str, key: Key) -> Iterable[tuple[Occurrence, int]]:
    """(occurrence, distance in characters) of the key in the document around the cursor, the
    key's own place left out."""
    before = prefix[-DOCUMENT_BEFORE_CHARS:].encode("utf-8", "surrogatepass")
    after = suffix[:DOCUMENT_AFTER_CHARS].encode("utf-8", "surrogatepass")
    segment = Segment.of((before + after).decode("utf-8", "surrogatepass"), "", DOCUMENT)
    own_end = len(before) - len(key.partial.encode("utf-8", "surrogatepass"))
    own_end -= len(before[:own_end]) - len(before[:own_end].rstrip(b" \t"))
    for occurrence in segment_occurrences(segment, key.tokens, key.window):
        if occurrence.end != own_end:
            yield occurrence, abs(len(before) - occurrence.end)


def candidates(prefix: str, suffix: str, mode: str, key: Key, corpus: DraftCorpus | None,
               accepted: Sequence[str]) -> list[Candidate]:
    """Every occurrence's continuation, from the document, the corpus and the accepted texts."""
    if key.window is None:
        return []
    found: list[tuple[Occurrence, int]] = list(document_occurrences(prefix, suffix, key))
    if corpus is not None:
        found += [(occurrence, 0) for occurrence in corpus.occurrences(key.tokens)]
    for index, text in enumerate(accepted):
        taken = Segment.of(text, str(index), ACCEPTED)
        found += [(o, 0) for o in segment_occurrences(taken, key.tokens, key.window)]
    found.sort(key=lambda pair: -pair[0].key_tokens)
    made = []
    for occurrence, distance in found[:MAX_CANDIDATES]:
        text = continuation(occurrence, key, mode, suffix)
        if text is not None:
            made.append(Candidate(text, occurrence.source, occurrence.key_tokens, distance))
    return made


def key_chars(key: Key, tokens: int) -> int:
    """Characters of the prefix that a key of `tokens` tokens covers (with the word typed)."""
    starts, _ = token_bounds(key.data)
    start = int(starts[len(starts) - tokens]) if 0 < tokens <= len(starts) else len(key.data)
    return len(key.data[start:].decode("utf-8", "ignore")) + len(key.partial)


def nearness(distance: int) -> int:
    """Distance as a rank: another file (0) is farther than any place in the document."""
    return distance if distance > 0 else 1 << 62


def ranked(found: Sequence[Candidate], key: Key) -> list[tuple[int, Draft]]:
    """(key tokens, draft) of each distinct text, best first: longest key, most agreement, nearest."""
    by_text: dict[str, list[Candidate]] = {}
    for candidate in found:
        by_text.setdefault(candidate.text, []).append(candidate)
    longest_first = sorted(-c.key_tokens for c in found)  # negated key lengths, ascending
    chars = {n: key_chars(key, n) for n in {c.key_tokens for c in found}}
    drafts = []
    for text, group in by_text.items():
        best = max(group, key=lambda c: (c.key_tokens, -nearness(c.distance)))
        agreeing = sum(c.key_tokens >= best.key_tokens for c in group)
        occurrences = bisect_right(longest_first, -best.key_tokens)
        drafts.append((best.key_tokens, Draft(text, best.source, chars[best.key_tokens], agreeing,
                                              occurrences, best.distance)))
    drafts.sort(key=lambda pair: (-pair[0], -pair[1].agreement, nearness(pair[1].distance)))
    return drafts


def drafts_for(prefix: str, suffix: str, mode: str, corpus: DraftCorpus | None = None,
               accepted: Sequence[str] = (), limit: int = 3) -> list[Draft]:
    """Candidate continuations for the hole, best first (empty when none is worth trying)."""
    if mode not in (Mode.SINGLE_LINE, Mode.MULTI_LINE) or len(prefix) + len(suffix) > MAX_DOCUMENT_CHARS:
        return []
    key = Key.of(prefix)
    if key.window is None:
        return []
    return worth_trying(ranked(candidates(prefix, suffix, mode, key, corpus, accepted), key))[:limit]


def worth_trying(drafts: Sequence[tuple[int, Draft]], min_key_tokens: int = MIN_KEY_TOKENS) -> list[Draft]:
    """The ranked drafts to send. None unless the best key has `min_key_tokens` tokens, or
    `AGREED_MIN_KEY_TOKENS` with `AGREED_OCCURRENCES` occurrences continuing alike. When every
    occurrence of the best key agrees, the drafts with such keys; when they disagree, the best
    text with slots where the two best differ, if they differ in a few tokens only, else none."""
    if not drafts:
        return []
    tokens, best = drafts[0]
    agreed = tokens >= AGREED_MIN_KEY_TOKENS and best.agreement >= AGREED_OCCURRENCES
    if tokens < min_key_tokens and not agreed:
        return []
    if best.agreement == best.occurrences:
        return [draft for tokens, draft in drafts if tokens >= min(min_key_tokens, AGREED_MIN_KEY_TOKENS)]
    slotted = with_slots(best.text, drafts[1][1].text)
    return [] if slotted is None else [replace(best, pieces=slotted[0], slots=slotted[1])]


def with_slots(text: str, other: str) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """`text` cut where `other` differs from it, with each cut's masked tokens; None when they
    differ in more than `MAX_SLOTS` places, in more than `MAX_SLOT_TOKENS` tokens at one, or at
    the text's start (a draft that starts masked is no draft)."""
    ours, theirs = list(_TOKEN.finditer(text)), list(_TOKEN.finditer(other))
    matcher = SequenceMatcher(None, [m.group() for m in ours], [m.group() for m in theirs], autojunk=False)
    places = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not places or len(places) > MAX_SLOTS or places[0][1] == 0:
        return None
    pieces, slots, start = [], [], 0
    for _, low, high, other_low, other_high in places:
        if max(high - low, other_high - other_low) > MAX_SLOT_TOKENS:
            return None
        cut = ours[low].start() if low < len(ours) else len(text)
        end = ours[high - 1].end() if high > low else cut
        other_chars = span_chars(theirs, other_low, other_high)
        pieces.append(text[start:cut])
        slots.append(max(end - cut, other_chars) // CHARS_PER_MODEL_TOKEN + 1)
        start = end
    return (*pieces, text[start:]), tuple(slots)


def span_chars(tokens: Sequence[re.Match], low: int, high: int) -> int:
    """Characters from token `low` to the end of token `high - 1` (0 for none)."""
    return tokens[high - 1].end() - tokens[low].start() if high > low else 0
