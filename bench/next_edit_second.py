"""Next-edit tasks one follow-up later: the user made the change twice; what of the rest comes?

`second_edit(task)` turns a task (FORMATS.md) with at least two follow-ups into the task after
the user's second edit: the first follow-up of `expected` (its first changed line, or run of
lines when they are not replaced one for one; in file order) applied to `edited`, which becomes
the new `edited` (the cursor after it); the user's first edit stays in the task as `earlier` (the
pair of texts it took), so that a plan can read both edits as the document's history
(`completion.edit_patterns`), or the last one alone. Tasks without two follow-ups (negatives
among them) have no such task. Everything here is pure.
"""
from __future__ import annotations

import difflib

from bench.next_edit import user_change, user_event
from completion.edit_events import EditEvent


def second_edit(task: dict) -> dict | None:
    """The task after its first follow-up, made as the user's second edit; None without two."""
    edited, expected = task["edited"], task["expected"]
    now, then = edited.splitlines(keepends=True), expected.splitlines(keepends=True)
    runs = [op for op in difflib.SequenceMatcher(None, now, then, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not runs:
        return None
    _, start, end, new_start, new_end = runs[0]
    if end - start == new_end - new_start > 1:  # lines replaced one for one: each is a follow-up
        end, new_end = start + 1, new_start + 1
    elif len(runs) < 2:
        return None
    head = "".join(now[:start] + then[new_start:new_end])
    return {**task, "original": edited, "edited": head + "".join(now[end:]), "cursor": len(head),
            "earlier": [[task["original"], edited]]}


def earlier_events(task: dict) -> list[EditEvent]:
    """The events of the task's `earlier` edits (oldest first; none for a plain task)."""
    return [user_event(before, after, *user_change(before, after)) for before, after in task.get("earlier", ())]
