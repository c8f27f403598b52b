"""The edit canvas: the user's edits and each region's current text laid out for a model trained
on them, the wire's events, and the training canvases made from next-edit tasks."""
from __future__ import annotations

import json

import numpy as np
import pytest

from completion.edit_events import EditEvent, LineSpan
from completion.edit_regions import Region
from completion.next_edit import edit_request, wire_events
from engine.wire.protocol import (MAX_EVENT_CHARS, CompleteRequest, Event, Hole, ProtocolError, decode,
                                    encode)
from engine.worker.work import job_of
from infill.canvas import edit_canvas, event_tokens, regions_canvas
from infill.checkpoint import load_model
from infill.fim import hole_text, job_canvas
from infill.job import Hole as JobHole, Job
from training.batches import read_laid
from training.edit_canvases import boundary_map, canvas_record, line_texts, region_targets, slot_fills, slot_spans
from training.noising import Special, canvas_sample
from training.train import main as train_main
from tests.test_train import TINY_SHAPE, tiny_corpus  # noqa: F401 (a fixture)

PIECES = ["def f(total):\n", "    x = 2\n", ""]
CURRENTS = ["    return count\n", "    print(count)\n"]
EVENTS = [("def f(count):", "def f(total):")]

RENAME_TASK = {
    "path": "m.py", "kind": "rename_local",
    "original": "def f():\n    count = 1\n    print(count)\n    return count\n",
    "edited": "def f():\n    total = 1\n    print(count)\n    return count\n",
    "cursor": len("def f():\n    total"),
    "expected": "def f():\n    total = 1\n    print(total)\n    return total\n",
}


def test_shown_layout_puts_events_first_and_each_current_text_before_its_masks(tiny_tokenizer):
    tok = tiny_tokenizer
    edit, before, after = tok.edit_ids
    canvas = edit_canvas(tok, PIECES, [6, 6], 512, EVENTS, CURRENTS, "shown")
    ids = canvas.ids
    assert ids[:2] == [tok.file_id, edit] and ids.count(edit) == 1
    for start, current in zip(canvas.hole_starts, CURRENTS):
        shown = [before, *tok.encode(current), after]
        assert ids[start - len(shown):start] == shown
        assert ids[start:start + 6] == [tok.mask_id] * 6
    assert ids[-1] == tok.mask_id  # the last piece is empty: the second hole ends the canvas


def test_masked_layout_shows_no_current_text(tiny_tokenizer):
    tok = tiny_tokenizer
    _, before, after = tok.edit_ids
    canvas = edit_canvas(tok, PIECES, [6, 6], 512, EVENTS, CURRENTS, "masked")
    assert canvas.ids.count(before) == canvas.ids.count(after) == 1  # the event's own markers only
    plain = regions_canvas(tok, PIECES, [6, 6], 512)
    assert canvas.ids[len(canvas.ids) - len(plain.ids) + 1:] == plain.ids[1:]  # the same after the events


def test_events_keep_the_newest_that_fit(tiny_tokenizer):
    tok = tiny_tokenizer
    events = [("a = 1", "a = 2"), ("b = 1", "b = 2")]
    newest = event_tokens(tok, events[1:], 1000)
    assert event_tokens(tok, events, len(newest)) == newest
    assert event_tokens(tok, events, 1000)[len(event_tokens(tok, events[:1], 1000)):] == newest
    assert event_tokens(tok, events, 3) == []


def test_a_job_is_laid_out_as_an_edit_only_for_a_model_trained_on_one(tiny_tokenizer):
    job = Job(tuple(PIECES), (JobHole("multi_line", 6, CURRENTS[0]), JobHole("multi_line", 6, CURRENTS[1])),
              events=tuple(EVENTS))
    plain, _ = job_canvas(tiny_tokenizer, job, 512)
    shown, rules = job_canvas(tiny_tokenizer, job, 512, "shown")
    assert plain.ids == regions_canvas(tiny_tokenizer, PIECES, [6, 6], 512).ids
    assert tiny_tokenizer.edit_ids[0] in shown.ids and len(rules) == 2


def test_events_travel_on_edit_requests_only():
    hole = Hole("multi_line", 8, "x\n")
    request = CompleteRequest(id="r", kind="edit", prefix="a\n", suffix="", holes=[hole], events=[Event("x", "y")])
    assert decode(encode(request)).events == [Event("x", "y")]
    assert job_of(request).events == (("x", "y"),)
    with pytest.raises(ProtocolError, match="events"):
        CompleteRequest(id="r", kind="fim", prefix="a", suffix="", events=[Event("x", "y")])
    with pytest.raises(ProtocolError, match="MAX_EVENT_CHARS"):
        CompleteRequest(id="r", kind="edit", prefix="", suffix="", holes=[hole],
                        events=[Event("x" * (MAX_EVENT_CHARS + 1), "")])


def test_wire_events_are_the_changed_lines_and_skip_huge_ones():
    before, after = "a\nb = 1\nc\n", "a\nb = 2\nc\n"
    event = EditEvent("u", before, after, LineSpan(1, 2, 2), 0.0)
    huge = EditEvent("u", "x" * (MAX_EVENT_CHARS + 1), "y", LineSpan(0, 1, 1), 0.0)
    assert wire_events([event, huge]) == [Event("b = 1", "b = 2")]
    request = edit_request("r", after, [Region(2, 3, "cursor")], 100, events=[event])
    assert request.events == [Event("b = 1", "b = 2")]


def test_boundaries_map_across_inserted_lines_and_not_inside_changed_blocks():
    old = line_texts("a\nb\nc\nd\n")
    new = line_texts("a\nB\nx\nc\nd\n")
    places = boundary_map(old, new)
    assert places[0] == 0 and places[1] == 1 and places[2] == 3 and places[4] == 5
    assert region_targets("a\nb\nc\nd\n", "a\nB\nx\nc\nd\n", [Region(1, 2, "r"), Region(3, 4, "r")]) \
        == ["B\nx\n", "d\n"]
    assert region_targets("a\nb c\nd\n", "a\nB\nC\nd\n", [Region(1, 2, "r")]) == ["B\nC\n"]


def test_a_training_canvas_holds_each_region_as_the_decoder_reads_it(tiny_tokenizer):
    tok = tiny_tokenizer
    record, why = canvas_record(tok, RENAME_TASK, 512, "shown")
    assert why == "" and record["layout"] == "shown" and record["holes"]
    answers = [hole_text(tok, record["ids"][a:b], "", False, cut_loops=False) for a, b in record["holes"]]
    assert answers == ["def f():\n", "    print(total)\n    return total\n"]  # every line but the user's
    assert all(tok.mask_id not in record["ids"][a:b] for a, b in record["holes"])


CALLS = 'def greet(name):\n    print("hello", name)\n\n\ngreet("world")\ngreet("there")\n'
SIGNATURE_TASK = {
    "path": "g.py", "kind": "signature_add", "original": CALLS,
    "edited": CALLS.replace("(name)", "(name, mark)", 1), "cursor": len("def greet(name, mark"),
    "expected": CALLS.replace("(name)", "(name, mark)", 1).replace('"world")', '"world", "!")').replace(
        '"there")', '"there", "?")'),
}


@pytest.fixture(scope="module")
def bundled_tokenizer():
    from infill.paths import bundled_model_dir
    from infill.tokenizer import CodeTokenizer

    return CodeTokenizer(bundled_model_dir() / "tokenizer.json")


def test_a_drafted_canvas_trains_each_slot_between_the_draft_s_known_text(bundled_tokenizer):
    from completion.next_edit import Drafting

    tok = bundled_tokenizer
    whole, _ = canvas_record(tok, SIGNATURE_TASK, 512, "shown")
    drafted, why = canvas_record(tok, SIGNATURE_TASK, 512, "shown", Drafting.DRAFTED)
    assert [tok.decode(whole["ids"][a:b]) for a, b in whole["holes"]] == [SIGNATURE_TASK["expected"].split("\n", 1)[1]]
    assert why == "" and [tok.decode(drafted["ids"][a:b]) for a, b in drafted["holes"]] == ['"!"', '"?"']
    (a, b), (c, _) = drafted["holes"]
    assert tok.decode(drafted["ids"][b:c]) == ')\ngreet("there", '  # the draft's known text, no hole
    assert drafted["ids"][b - 1] == tok.pad_id and set(drafted["focus"]) < set(range(a, b)) | set(range(c, c + 8))


def test_a_slot_fill_must_keep_the_draft_s_pieces_and_fit_the_slot(bundled_tokenizer):
    tok = bundled_tokenizer
    hole = JobHole("multi_line", 16, "f(1)\n", ("f(1, ", ")\n"), (4,))
    assert [tok.decode(fill) for fill in slot_fills(tok, "", hole, "f(1, x)\n")] == ["x"]
    assert slot_fills(tok, "", hole, "f(1, )\n") == [[]]  # an empty slot: all pads
    assert slot_fills(tok, "", hole, "g(1, x)\n") is None  # the draft's text is not kept
    assert slot_fills(tok, "", hole, "f(1, " + "x, " * 9 + ")\n") is None  # longer than its slot
    touching = JobHole("multi_line", 16, "f()\n", ("f(", "", ")\n"), (2, 3))  # two slots, no text between
    assert slot_spans([7, 0, 0, 0, 0, 0, 8], touching, 0, 100) == [(101, 103), (103, 106)]


def test_canvas_samples_mask_holes_only(tiny_tokenizer):
    sp = Special(mask=tiny_tokenizer.mask_id, pad=tiny_tokenizer.pad_id, newline=tiny_tokenizer.newline_id)
    ids = np.arange(10, 40)
    inputs, targets, weights = canvas_sample(ids, [(5, 9), (20, 25)], sp, np.random.default_rng(0), 32)
    masked = np.flatnonzero(inputs == sp.mask)
    assert masked.size and all(5 <= i < 9 or 20 <= i < 25 for i in masked)
    assert (targets[:30] == ids).all() and (targets[30:] == sp.pad).all()
    assert (weights[masked] > 0).all() and weights.sum() == pytest.approx(weights[masked].sum())


def test_training_on_canvases_records_their_layout(tiny_corpus, tiny_tokenizer, tmp_path):  # noqa: F811
    record, _ = canvas_record(tiny_tokenizer, RENAME_TASK, 64, "shown")
    canvases = tmp_path / "edits.jsonl"
    canvases.write_text(json.dumps(record) + "\n")
    assert read_laid([canvases])[1] == "shown"
    run = tmp_path / "run"
    train_main(["--phase", "diffusion", "--out", str(run), "--corpus", str(tiny_corpus), *TINY_SHAPE,
                "--tokens", str(2 * 128), "--fim-tasks", "0", "--canvases", str(canvases), "--canvas-share", "0.5"])
    cfg = load_model(run / "model").cfg
    assert cfg.edit_canvas == "shown" and cfg.edit_context == 64  # the training window: edit jobs get as much
    cfg.max_position_embeddings = 1024  # a model whose context is longer than its edit canvases
    assert cfg.regions_context() == 64 < cfg.max_position_embeddings  # one-hole jobs keep the whole context
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(record) + "\n" + json.dumps(record | {"layout": "masked"}) + "\n")
    with pytest.raises(ValueError, match="one layout"):
        read_laid([mixed])
