"""Several edits read as one pattern: what a document's recent edit events say about the newest one.

The user's change is a `Rewrite` (`completion.edit_analogy`: the text removed and inserted on one
line, with the text around it). Two rewrites are the same pattern when they removed and inserted
the same text. Over the events of one document (oldest first, as `lsp_server.edit_history` keeps
them), `memory_of` tells the newest event's rewrite:
- how many times the user made it before, elsewhere (`repeats`): a change made at two places is a
  pattern, and its third site is proposed with more confidence (`completion.edit_analogy` lowers
  the similarity a site needs);
- whether it is refused (`refused`): a later event took back a place where the pattern was applied
  (an undo, or text typed over what it inserted: the event changed the line the pattern left,
  inside or at the edge of what it inserted), so the pattern is proposed no more in that document;
  an event that takes back an earlier rewrite is itself no pattern to carry on.
The memory lasts as long as the events do (the `editHistory` setting). Everything here is pure.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from completion.edit_analogy import analogy_sites
from completion.edit_events import EditEvent
from completion.edit_rewrites import Rewrite, rewrite_of
from completion.edit_sites import Site
from completion.syntax import ParsedDocument


@dataclass(frozen=True, slots=True)
class Memory:
    """What the earlier events say about the newest event's rewrite."""

    repeats: int = 0  # earlier events that made the same rewrite, not taken back
    refused: bool = False  # the rewrite was taken back somewhere, or takes back an earlier one


def same_pattern(a: Rewrite, b: Rewrite) -> bool:
    """True when the two rewrites removed and inserted the same text."""
    return a.removed == b.removed and a.inserted == b.inserted


def takes_back(later: Rewrite, earlier: Rewrite) -> bool:
    """True when `later` changed the line `earlier` left, where `earlier` inserted its text (an
    undo, or typing over it)."""
    if later.line_before != earlier.line_after:
        return False
    start, end = len(earlier.left), len(earlier.left) + len(earlier.inserted)
    changed_start, changed_end = len(later.left), len(later.left) + len(later.removed)
    return changed_start <= end and changed_end >= start


def memory_of(event: EditEvent, events: Sequence[EditEvent]) -> Memory:
    """The memory for `event` (the newest) from the document's `events`, oldest first (`event`
    itself among them or not). Refused when any later rewrite took back one of this pattern."""
    earlier = [found for found in map(rewrite_of, [e for e in events if e is not event]) if found is not None]
    newest = rewrite_of(event)
    if newest is None:
        return Memory()
    if any(takes_back(newest, rewrite) for rewrite in earlier):
        return Memory(refused=True)
    timeline = earlier + [newest]
    mine = [index for index, rewrite in enumerate(earlier) if same_pattern(rewrite, newest)]
    taken_back = [index for index in mine
                  if any(takes_back(later, earlier[index]) for later in timeline[index + 1:])]
    return Memory(repeats=len(mine) - len(taken_back), refused=bool(taken_back))


def pattern_sites(event: EditEvent, events: Sequence[EditEvent], scoped: bool = False, literal: bool = False,
                  document: ParsedDocument | None = None, floor: float | None = None) -> list[Site]:
    """The analogy sites of `event` (`completion.edit_analogy.analogy_sites`, down to `floor` when
    given) read with the document's `events`: none for a refused pattern, more for one the user
    made before."""
    memory = memory_of(event, events)
    if memory.refused:
        return []
    return analogy_sites(event, scoped, literal, document, memory.repeats > 0, floor)
