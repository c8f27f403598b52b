"""How `bench.next_edit` judges one answer to a next-edit task, and the mechanical rename baseline.

A task (FORMATS.md) holds the file the editor has (`edited`) and the file after every follow-up
edit (`expected`); an answer is the file after the proposed edits (`predicted`). Lines are
compared after stripping their trailing whitespace. A *changed line* is a line of `edited` that a
diff (difflib, by lines) replaces or deletes, or a place between lines where it inserts; what the
diff makes of it is its new text when a hunk replaces lines one for one, else the whole hunk.
- **exact**: `predicted` has the lines of `expected`;
- **precision / recall**: of the lines the answer changes, those it makes what `expected` makes of
  them; over the lines `expected` changes, the same count;
- **false edits**: changed lines that `expected` keeps as they are (on a negative task, where
  `expected` is `edited`, every change is one);
- **region recall**: the *sites* (each hunk of `edited` -> `expected`) lying wholly inside the
  regions the server rewrote (an insertion needs a region on a line next to it).

`mechanical_rename` is what a rename refactoring would do: the other uses of the renamed name in
its scope, as `completion.edit_regions` finds them with tree-sitter, all renamed, with no model.
Everything here is pure.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from completion.edit_events import EditEvent, LineSpan
from completion.edit_regions import Region, rename_uses, renamed
from completion.positions import split_lines
from completion.syntax import ParsedDocument

# a changed line: (line of `edited`, False) or, for an insertion before that line, (line, True)
Key = tuple[int, bool]
# what a diff makes of a changed line: its new text, or (start, end, new lines) of its hunk
Fate = tuple


def lines_of(text: str) -> list[str]:
    """The text's lines without their trailing whitespace."""
    return [line.rstrip() for line in split_lines(text)]


def line_changes(before: str, after: str) -> dict[Key, Fate]:
    """What `after` makes of each changed line of `before` (see the module)."""
    old, new = lines_of(before), lines_of(after)
    changes: dict[Key, Fate] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":
            changes[(i1, True)] = (i1, i1, tuple(new[j1:j2]))
        elif i2 - i1 == j2 - j1:
            changes.update({(i1 + k, False): (new[j1 + k],) for k in range(i2 - i1)})
        else:
            changes.update({(i, False): (i1, i2, tuple(new[j1:j2])) for i in range(i1, i2)})
    return changes


def sites(before: str, after: str) -> list[tuple[int, int]]:
    """The hunks of `before` -> `after` as line ranges of `before` (start, end exclusive); an
    insertion is an empty range at the line it goes before."""
    matcher = difflib.SequenceMatcher(None, lines_of(before), lines_of(after), autojunk=False)
    return [(i1, i2) for tag, i1, i2, _, _ in matcher.get_opcodes() if tag != "equal"]


def covered(site: tuple[int, int], regions: Sequence[Region]) -> bool:
    """True when the regions hold every line of `site`, or for an insertion a line beside it."""
    lines = {line for region in regions for line in range(region.start_line, region.end_line)}
    start, end = site
    if start == end:
        return start in lines or start - 1 in lines
    return all(line in lines for line in range(start, end))


@dataclass(slots=True, frozen=True)
class Score:
    """One answer to one task, in counts that add up over tasks."""

    exact: bool
    changed: bool  # the answer changed anything at all
    predicted_lines: int  # lines the answer changed
    expected_lines: int  # lines `expected` changes
    correct_lines: int  # lines the answer made what `expected` makes of them
    false_lines: int  # lines the answer changed that `expected` keeps


def score(edited: str, expected: str, predicted: str) -> Score:
    """The answer `predicted` to the task (`edited` -> `expected`)."""
    wanted, made = line_changes(edited, expected), line_changes(edited, predicted)
    correct = sum(1 for key, fate in made.items() if wanted.get(key) == fate)
    return Score(exact=lines_of(predicted) == lines_of(expected), changed=bool(made),
                 predicted_lines=len(made), expected_lines=len(wanted), correct_lines=correct,
                 false_lines=sum(1 for key in made if key not in wanted))


def region_recall(edited: str, expected: str, regions: Sequence[Region]) -> tuple[int, int]:
    """(sites the regions cover, sites) of the task."""
    found = sites(edited, expected)
    return sum(covered(site, regions) for site in found), len(found)


def mechanical_rename(event: EditEvent, document: ParsedDocument) -> str:
    """`document`'s text (the text after `event`) with every other use of the name the event
    renamed, in its scope, renamed too; the text as it is when the event renamed nothing."""
    names = renamed(event)
    if names is None:
        return document.text
    data, new = document.text.encode("utf-8", "surrogatepass"), names[1].encode("utf-8")
    for node in reversed(rename_uses(event, document)):
        data = data[:node.start_byte] + new + data[node.end_byte:]
    return data.decode("utf-8", "surrogatepass")


def event_of(original: str, edited: str, span: LineSpan) -> EditEvent:
    """The user's edit as the server's edit history records it: one event over `span`."""
    return EditEvent("", original, edited, span, 0.0)
