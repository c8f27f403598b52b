"""Edits by analogy of whole lines: two or more lines the user changed together, carried to the
exact copies of the removed lines elsewhere.

`block_of(event)` reads the event's changed lines as a block (a comment and the statement under
it rewritten, a call joined on one line, one line split in several, one line rewritten with the blank
lines beside it deleted; not lines deleted, but for one decorator, nor the same lines reordered): the
removed and inserted lines without the indent the removed ones share.
`block_sites` finds the places where the removed lines stand as they did, under any indent, each
becoming the inserted lines under its indent (a deleted one deleted whole); a site spans its
lines. Exact copies only, so every site scores 1. One line changed alone is a block of one line
too (`line_copy`), for its copies (`completion.edit_analogy.line_copies` says which changes go).
`said_anew(block)` tells a block of prose said anew from one mended (`completion.edit_analogy` carries
a docstring said anew whole to no copy).
A stub's body `...` joined onto its definition's line (`def f(x) -> int:` and `...` made `def f(x)
-> int: ...`, a formatter's style) goes to every other such stub, whatever its header (`stub_joined`,
`stub_sites`). The one-line rules are `completion.edit_analogy`'s, which reads an event as a block
when it is no one-line rewrite.
Everything here is pure.
"""
from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

from completion.edit_directives import noqa_put
from completion.edit_events import EditEvent, diff_span
from completion.edit_sites import MAX_LINE_CHARS, MAX_MATCHES, MAX_SITES, Site, alike, nearest_sites
from completion.positions import line_starts, split_lines
from completion.postprocess import indent_of

MIN_DELETED_CHARS = 12  # one decorator deleted alone goes to its copies when it holds this many characters
MIN_BLOCK_CHARS = 24  # a block's removed lines hold at least this many characters besides whitespace
MIN_BLANKED_CHARS = 8  # one line rewritten with blank lines beside it deleted holds this many (`blanks_dropped`)
MIN_COPY_CHARS = 20  # one line changed alone goes to its exact copies when its text holds this many (`line_copy`)
SPLIT_KEPT = 0.6  # one line made several goes to its copies when they keep this share of its tokens (`split_line`)
MAX_BLOCK_LINES = 8  # a block's removed lines at most (its sites must fit one region)
MIN_PROSE_KEPT = 0.6  # a block of prose keeps this share of its words and marks to go to its copies (`said_anew`)
MIN_NEW_WORDS = 3  # words a block of prose said anew brings in (`said_anew`)
_PROSE_WORD = re.compile(r"[^\W\d_]+")  # a word of prose, letters only
_ONE_LINE_DEF = re.compile(r"\s*(?:async\s+)?def\s.*:\s*$")  # a definition's one-line header, its body below it


@dataclass(frozen=True, slots=True)
class Block:
    """The user's change of whole lines: `removed` became `inserted`, both without the indent the
    removed lines share (a blank line as "")."""

    removed: tuple[str, ...]
    inserted: tuple[str, ...]


def _dedented(lines: list[str], indent: str) -> tuple[str, ...] | None:
    """The lines without `indent` (a blank one as ""), or None when a line with text lacks it."""
    if any(line.strip() and not line.startswith(indent) for line in lines):
        return None
    return tuple(line[len(indent):] if line.strip() else "" for line in lines)


def block_of(event: EditEvent) -> Block | None:
    """The event's change as a block: its changed lines less those both sides share at their
    ends; None unless two or more lines with text were removed (one line's copy says too little:
    on real commits one line made several, `try:` around a call, went to lines left as they were),
    or one line was rewritten as several that keep most of its tokens (`split_line`), or rewritten
    with the blank lines beside it deleted (`blanks_dropped`, `MIN_BLANKED_CHARS` of text or more),
    and some text was inserted (lines deleted were deleted elsewhere at 2 of 6 sites on the tuning
    commits; but one decorator deleted alone, `@pytest.mark.xfail(...)` taken off a test, is taken
    off its copies: a block with no inserted lines, its sites deleted whole), other than the same
    lines in another order (parameters reordered: their copies are other functions', the call
    sites the signature rule's), up to `MAX_BLOCK_LINES`, with `MIN_BLOCK_CHARS` of text or more."""
    removed, inserted = event.removed_lines, event.inserted_lines
    changed = diff_span("\n".join(removed), "\n".join(inserted))  # the event's lines less those both sides share
    old, new = removed[changed.start_line:changed.before_end], inserted[changed.start_line:changed.after_end]
    if len(old) == 1 and not new and old[0].strip().startswith("@") and len(old[0].strip()) >= MIN_DELETED_CHARS:
        return Block((old[0].strip(),), ())  # one decorator deleted: `@pytest.mark.xfail(...)` off each test
    blanked = blanks_dropped(old, new)
    if len(old) > MAX_BLOCK_LINES or (sum(bool(line.strip()) for line in old) < 2 and not split_line(old, new)
                                      and not blanked) \
            or not any(line.strip() for line in new) or sorted(old) == sorted(new) \
            or sum(len(line.strip()) for line in old) < (MIN_BLANKED_CHARS if blanked else MIN_BLOCK_CHARS) \
            or max(map(len, old + new)) > MAX_LINE_CHARS:
        return None
    indent = min((indent_of(line) for line in old if line.strip()), key=len)
    removed, inserted = _dedented(old, indent), _dedented(new, indent)
    if removed is None or inserted is None:
        return None
    return Block(removed, inserted)


def blanks_dropped(old: list[str], new: list[str]) -> bool:
    """True when one line was rewritten and blank lines beside it deleted (`Parameters:` and the blank
    line under it made `Args:`): a block of one line with text, whose copies hold the blank lines too."""
    old_text, new_text = [line for line in old if line.strip()], [line for line in new if line.strip()]
    return len(old_text) == len(new_text) == 1 and len(old) > len(new) and old_text[0].strip() != new_text[0].strip()


def split_line(old: list[str], new: list[str]) -> bool:
    """True when one line was rewritten as several that keep `SPLIT_KEPT` of its tokens or more (a
    call or a tuple split by a formatter, one assignment made two; not the line wrapped whole in a
    `try:` or a `with`, nor comments put in its place)."""
    if len(old) != 1 or len(new) < 2 or old[0].strip() in {line.strip() for line in new}:
        return False
    return alike(old[0], " ".join(new), prose=True) >= SPLIT_KEPT  # its words and marks kept


def line_copy(line_before: str, line_after: str) -> Block | None:
    """One line changed alone read as a block of one line, for its exact copies (`block_sites`): None
    when its text holds fewer than `MIN_COPY_CHARS` characters (a short line, `self._meta,`, repeats by
    chance) but for a `# noqa` with its codes put at its end (`noqa_put`), or the change took from its
    indent."""
    indent = indent_of(line_before)
    removed, inserted = _dedented([line_before], indent), _dedented([line_after], indent)
    if removed is None or inserted is None or len(line_before) > MAX_LINE_CHARS \
            or (len(removed[0].strip()) < MIN_COPY_CHARS and not noqa_put(line_before, line_after)):
        return None
    return Block(removed, inserted)


def said_anew(block: Block) -> bool:
    """True when a block of prose was said anew: `MIN_NEW_WORDS` words or more brought in, less than
    `MIN_PROSE_KEPT` of its words and marks kept (a test's docstring copied from the one before, made
    to say what its own test checks: the copies say what theirs check); a word mended, lines wrapped
    anew or a sentence cut off keep most or bring in none."""
    old, new = " ".join(block.removed), " ".join(block.inserted)
    brought = set(_PROSE_WORD.findall(new.lower())) - set(_PROSE_WORD.findall(old.lower()))
    return len(brought) >= MIN_NEW_WORDS and alike(old, new, prose=True) < MIN_PROSE_KEPT


def block_sites(block: Block, text: str, event: EditEvent) -> list[Site]:
    """The places of `text` (the text after `event`) outside the event's lines where the block's
    removed lines stand as they did, under any indent: each becomes the inserted lines under that
    indent. Exact copies only, so every site scores 1; the `MAX_SITES` nearest the event, among the
    first `MAX_MATCHES` places of the block's first line with text (one search of the text)."""
    first = next(i for i, line in enumerate(block.removed) if line)  # its first line with text
    count, key, found, starts, seen = len(block.removed), block.removed[first], [], None, set()
    for place in itertools.islice(re.finditer(re.escape(key), text), MAX_MATCHES):
        starts = starts or line_starts(text)
        number = bisect.bisect_right(starts, place.start()) - 1
        top, line = number - first, _line(text, starts, number)
        indent = line[:len(line) - len(key)]
        if number in seen or not line.endswith(key) or indent.strip() or top < 0 or top + count >= len(starts) \
                or (top < event.after_end and top + count > event.start_line):
            continue
        seen.add(number)
        if _dedented([_line(text, starts, at) for at in range(top, top + count)], indent) != block.removed:
            continue
        last = top + count - 1
        brk = text[starts[top] + len(_line(text, starts, top)):starts[top + 1]] or "\n"
        new = brk.join(indent + inserted if inserted else "" for inserted in block.inserted)
        end = starts[last] + len(_line(text, starts, last)) if block.inserted \
            else starts[last + 1]  # deleted: its break too
        found.append(Site(starts[top], end, new, top, 1.0, lines=count))
    return nearest_sites(found, event.start_line)


def _line(text: str, starts: list[int], number: int) -> str:
    """Line `number` of `text` (its lines starting at `starts`), without its break."""
    return text[starts[number]:starts[number + 1]].rstrip("\r\n")


def stub_joined(block: Block) -> bool:
    """True when the block joins a stub's body `...` onto its definition's one-line header."""
    return len(block.removed) == 2 and len(block.inserted) == 1 and block.removed[1].strip() == "..." \
        and _ONE_LINE_DEF.fullmatch(block.removed[0]) is not None \
        and block.inserted[0] == block.removed[0].rstrip() + " ..."


def stub_sites(text: str, event: EditEvent) -> list[Site]:
    """The other stubs of `text` outside the event's lines: a definition's one-line header and, on
    the next line and indented deeper, `...` alone; each made one line."""
    lines, starts, found = split_lines(text), line_starts(text), []
    bodies = [at for at in range(1, len(lines)) if lines[at].strip() == "..."][:MAX_MATCHES]
    for top in (at - 1 for at in bodies):
        header, body = lines[top], lines[top + 1]
        if len(indent_of(body)) <= len(indent_of(header)) or len(header) > MAX_LINE_CHARS \
                or _ONE_LINE_DEF.fullmatch(header) is None or (top < event.after_end and top + 2 > event.start_line):
            continue
        found.append(Site(starts[top], starts[top + 1] + len(body), header.rstrip() + " ...", top, 1.0, lines=2))
        if len(found) == MAX_SITES:
            break
    return found
