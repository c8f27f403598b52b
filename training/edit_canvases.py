"""Edit canvases for training: next-edit tasks laid out exactly as the product asks, with the answers.

Each task (`training.edit_synth`'s format: `original`, `edited`, `cursor`, `expected`) goes the way
a user's edit goes through the language server: the edit is one event, the next-edit pipeline
(`completion.next_edit.plan`) finds the regions and makes the job (none where its gate refuses)
and the worker's `job_of` reads it back; the job
is laid out by `infill.fim.job_canvas` in the layout the model is to learn, and each hole is
filled with the lines `expected` has there (the region unchanged where nothing needs to change),
healed as the decoder reads it and padded to the hole's length. Records are one JSON object a line,
`{"ids": [...], "holes": [[start, stop], ...], "focus": [...], "kind": KIND, "layout": LAYOUT}`
(`focus`: the answer's positions that are no copy of the region's current text), read by
`infill train --canvases` (which records the layout in the model's config).

With `--drafting drafted` the job is the product's default plan (`Drafting.DRAFTED`): a region the
rules drafted whole stays as drafted (context, nothing to learn), a draft with masked slots (a new
argument at each call) becomes one training hole per slot, holding what `expected` puts there and
pads (`slot_fills`), and a region with no draft is a hole as above. A model learns there to fill a
slot between known text, which whole masked regions never show it.

    python -m training.edit_canvases --tasks TRAIN_TASKS.jsonl --layout shown [--drafting drafted] --out FILE

Tasks must come from training files (`python -m training.edit_synth --files ...`): this module
lays out what it is given and never reads the held-out set.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from difflib import SequenceMatcher
from pathlib import Path

from completion import next_edit
from completion.edit_events import EditEvent, diff_span
from completion.edit_regions import Region
from completion.next_edit import line_starts
from completion.syntax import ParsedDocument
from engine.wire.protocol import ProtocolError
from engine.worker.work import job_of
from infill.canvas import EDIT_LAYOUTS
from infill.fim import draft_ids, job_canvas
from infill.job import Hole
from infill.paths import bundled_model_dir
from infill.tokenizer import CodeTokenizer, ModelTokenizer

LANGUAGE = "python"


def line_texts(text: str) -> list[str]:
    """The lines of `text` as the LSP counts them, each with its line break."""
    starts = line_starts(text)
    return [text[a:b] for a, b in zip(starts, starts[1:])]


def boundary_map(old: list[str], new: list[str]) -> dict[int, int]:
    """Line boundaries of `old` (0..len) that have a place in `new`: every boundary inside or at
    the edge of a run of equal lines, and the edges of each changed block (lines inserted at a
    boundary go with the lines before it)."""
    places: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            places.update((i1 + k, j1 + k) for k in range(i2 - i1 + 1))
        else:
            places.setdefault(i1, j1)
            places[i2] = j2
    return places


def region_targets(edited: str, expected: str, regions: list[Region]) -> list[str] | None:
    """Each region's text in `expected` (regions in file order), or None when a region's edge
    falls inside a changed block (the change crosses it)."""
    old, new = line_texts(edited), line_texts(expected)
    places = boundary_map(old, new)
    targets = []
    for region in sorted(regions, key=lambda r: r.start_line):
        if region.start_line not in places or region.end_line not in places:
            return None
        targets.append("".join(new[places[region.start_line]:places[region.end_line]]))
    return targets


def event_of(task: dict) -> EditEvent:
    """The user's edit of a task as the one event the edit history would hold."""
    return EditEvent(task["path"], task["original"], task["edited"],
                     diff_span(task["original"], task["edited"]), 0.0)


def canvas_record(tok: ModelTokenizer, task: dict, max_context: int, layout: str,
                  drafting: next_edit.Drafting = next_edit.Drafting.MODEL) -> tuple[dict | None, str]:
    """A task's training record and "" , or None and why it was left out."""
    edited, event = task["edited"], event_of(task)
    planned = next_edit.plan(next_edit.EditAsk(ParsedDocument.parse(LANGUAGE, edited), event,
                                               edited[:task["cursor"]].count("\n"), "train", 1000, task["path"],
                                               events=[event], drafting=drafting))
    if isinstance(planned, next_edit.Refused):
        return None, "the edited text does not parse"
    request, regions = planned.request, planned.regions
    if request is None:
        return None, "no regions"
    targets = region_targets(edited, task["expected"], regions)
    if targets is None:
        return None, "a change crosses a region"
    try:
        job = job_of(request)
    except ProtocolError:
        return None, "not a valid job"
    canvas, _ = job_canvas(tok, job, max_context, layout)
    ids, holes, focus = list(canvas.ids), [], []
    for span, healed, hole, target in zip(canvas.spans, canvas.healed, job.holes, targets):
        draft = draft_ids(tok, healed, hole)
        if draft is not None:  # laid out as drafted (else masked whole, below)
            if not hole.slots:
                continue  # drafted whole: the product shows it as it is
            fills = slot_fills(tok, healed, hole, target)
            if fills is None:
                return None, "a slot's answer does not fit it"
            for (start, stop), fill in zip(slot_spans(draft, hole, tok.mask_id, span.start), fills):
                ids[start:stop] = fill + [tok.pad_id] * (stop - start - len(fill))
                holes.append([start, stop])
                focus += range(start, start + len(fill))
            continue
        answer = tok.encode(healed + target)
        if not answer or len(answer) > span.stop - span.start:  # lines deleted: no hole can say so
            return None, "a region's answer is empty or longer than its hole"
        ids[span] = answer + [tok.pad_id] * (span.stop - span.start - len(answer))
        holes.append([span.start, span.stop])
        focus += [span.start + i for i in changed_positions(tok.encode(healed + hole.replaces), answer)]
    if not holes:
        return None, "every region drafted whole"
    return {"ids": ids, "holes": holes, "focus": focus, "kind": task.get("kind", ""), "layout": layout}, ""


def slot_spans(draft: list[int], hole: Hole, mask_id: int, start: int) -> list[tuple[int, int]]:
    """The canvas positions of each masked slot of a drafted hole whose ids `draft`
    (`infill.fim.draft_ids`) are laid out from `start`: its masks, cut by the slots' lengths."""
    masks = [start + i for i, token in enumerate(draft) if token == mask_id]
    ends = [sum(hole.slots[:k + 1]) for k in range(len(hole.slots))]
    return [(masks[end - slot], masks[end - 1] + 1) for end, slot in zip(ends, hole.slots)]


def slot_fills(tok: ModelTokenizer, healed: str, hole: Hole, target: str) -> list[list[int]] | None:
    """The tokens `target` puts in each slot of a drafted hole (its draft's pieces in order around
    them, the shortest fills first), or None when `target` does not keep the pieces or a fill is
    longer than its slot."""
    pieces = (healed + hole.draft[0], *hole.draft[1:])
    found = re.fullmatch("(.*?)".join(map(re.escape, pieces)), healed + target, re.DOTALL)
    if found is None:
        return None
    fills = [tok.encode(text) if text else [] for text in found.groups()]
    return None if any(len(fill) > slot for fill, slot in zip(fills, hole.slots)) else fills


def changed_positions(current: list[int], answer: list[int]) -> list[int]:
    """Positions of `answer` that are no copy of `current` (a token diff): where the region changes."""
    blocks = SequenceMatcher(None, current, answer, autojunk=False).get_opcodes()
    return [j for tag, _, _, j1, j2 in blocks if tag != "equal" for j in range(j1, j2)]


def records(tok: ModelTokenizer, tasks: list[dict], max_context: int, layout: str,
            dropped: Counter, drafting: next_edit.Drafting = next_edit.Drafting.MODEL) -> Iterator[dict]:
    for task in tasks:
        record, why = canvas_record(tok, task, max_context, layout, drafting)
        if record is None:
            dropped[why] += 1
        else:
            yield record


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m training.edit_canvases", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=Path, nargs="+", required=True,
                   help="next-edit tasks synthesized from training files (`training.edit_synth --files`)")
    p.add_argument("--layout", choices=EDIT_LAYOUTS, default="shown",
                   help="shown: each region's current text beside its masks; masked: the masks alone")
    p.add_argument("--max-context", type=int, default=512, help="canvas length: the training window")
    p.add_argument("--drafting", choices=("model", "drafted"), default="model",
                   help="model: every region masked whole; drafted: the product's default plan, its drafts "
                        "kept and each slot a hole")
    p.add_argument("--tokenizer", type=Path, default=bundled_model_dir() / "tokenizer.json")
    p.add_argument("--out", type=Path, required=True, help="JSONL of canvases for `infill train --canvases`")
    args = p.parse_args(argv)
    tok = CodeTokenizer(args.tokenizer)
    tasks = [json.loads(line) for path in args.tasks for line in path.read_text().splitlines() if line.strip()]
    dropped: Counter = Counter()
    laid = list(records(tok, tasks, args.max_context, args.layout, dropped, next_edit.Drafting(args.drafting)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(record) + "\n" for record in laid))
    kinds = Counter(record["kind"] for record in laid)
    print(f"wrote {len(laid)} canvases of {len(tasks)} tasks to {args.out}: {dict(kinds)}; "
          f"left out: {dict(dropped)}", file=sys.stderr)


if __name__ == "__main__":
    main()
