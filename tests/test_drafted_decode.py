"""Drafted holes: a hole that starts from its draft, whose known tokens the model checks (`veto`)
and whose masked slots it fills, on a tiny random model and through the wire's checks."""
from types import SimpleNamespace

import pytest
import torch

from engine.wire.protocol import (MAX_SLOT_TOKENS, MAX_SLOTS, CompleteRequest, ErrorCode, Hole as WireHole,
                                    ProtocolError, decode, encode)
from engine.worker.runner import ModelRunner
from engine.worker.work import job_of
from infill import decode as decoding
from infill.commit import DecoderConfig
from infill.fim import draft_ids, job_canvas, start_job
from infill.job import Hole, Job

PIECES = ("def area(width, height):\n    return width * height\n\n\n", "\n\nx = 1\n", "\n")
WHOLE = Hole("multi_line", 64, "print(area(3, 4))\n", ("print(area(3, 4))\n",))
SLOTTED = Hole("multi_line", 64, "total = area(1, 2)\n", ("total = area(1, 2, ", ")\n"), (3,))


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def test_a_hole_needs_one_slot_length_between_each_two_draft_pieces():
    with pytest.raises(ValueError, match="slot lengths"):
        Hole("multi_line", 8, "", ("a", "b"))
    with pytest.raises(ValueError, match="slot lengths"):
        Hole("multi_line", 8, "", ("a", "b"), (0,))
    assert Job(PIECES[:1] + PIECES[2:], (WHOLE,)).drafted and not Job(PIECES[:1] + PIECES[2:], (WHOLE,)).one_hole


def test_a_drafted_hole_is_laid_out_as_its_tokens_with_masks_in_its_slots(tiny_tokenizer):
    tok = tiny_tokenizer
    ids = draft_ids(tok, "", SLOTTED)
    head, tail = tok.encode("total = area(1, 2, "), tok.encode(")\n")
    assert ids == head + [tok.mask_id] * 3 + tail
    assert draft_ids(tok, "", Hole("multi_line", 8)) is None  # no draft: masked whole
    canvas, rules = job_canvas(tok, Job(PIECES, (WHOLE, SLOTTED)), 1024)
    spans = canvas.spans
    assert canvas.ids[spans[0]] == tok.encode("print(area(3, 4))\n") and canvas.ids[spans[1]] == ids
    assert all(r.drafted for r in rules)


def test_a_draft_that_does_not_tokenize_back_to_itself_is_masked_whole(tiny_tokenizer):
    """A tokenizer with an unknown-token fallback (a public family's) loses what it cannot spell."""
    lossy = SimpleNamespace(mask_id=0, encode=tiny_tokenizer.encode,
                            decode=lambda ids: tiny_tokenizer.decode(ids).replace("\u00e9", "?"))
    assert draft_ids(lossy, "", Hole("multi_line", 8, "", ("caf\u00e9 = 1\n",))) is None
    assert draft_ids(lossy, "", Hole("multi_line", 8, "", ("cafe = 1\n",))) is not None


def test_a_whole_draft_stands_without_a_pass_when_nothing_can_veto_it(runner):
    answers = runner.complete(Job(PIECES[:1] + PIECES[2:], (WHOLE,)), None)
    assert [(a.text, a.forward_passes, a.confidence) for a in answers] == [("print(area(3, 4))\n", 0, 1.0)]
    checked = runner.complete(Job(PIECES[:1] + PIECES[2:], (WHOLE,), decoder={"veto": 0.999999}), None)
    assert checked[0].forward_passes == 1  # a veto needs the model's view of each drafted token


def test_slots_are_filled_and_the_draft_around_them_kept(runner):
    answers = runner.complete(Job(PIECES, (WHOLE, SLOTTED)), None)
    assert answers[0].text == "print(area(3, 4))\n"
    assert answers[1].text.startswith("total = area(1, 2, ") and answers[1].text.endswith(")\n")
    assert answers[1].forward_passes >= 1


def test_a_veto_masks_a_drafted_token_the_model_puts_another_token_over(runner):
    """With a veto of any probability, every drafted token the model does not rank first is
    masked again and filled by the commit rule: the answer is then the model's own at each such
    position, and the positions it agrees with keep the draft."""
    job = Job(PIECES[:1] + PIECES[2:], (WHOLE,), decoder={"veto": 1e-9})
    state = start_job(runner.model, runner.tok, job, DecoderConfig(veto=1e-9)).states[0]
    drafted = state.ids[0, state.span].clone()
    decoding.step(runner.model, [state])
    best = state.last_best.clone()
    vetoed = best != drafted
    assert bool(vetoed.any()), "a random model agrees with no real text"
    assert not (state.masked & ~vetoed).any() and state.masked.any()  # only vetoed ones masked (some filled at once)
    assert state.unchecked is not None and not state.unchecked.any()
    while not state.done:
        decoding.step(runner.model, [state])
    kept = state.ids[0, state.span]
    assert torch.equal(kept[~vetoed], drafted[~vetoed])  # what the model agreed with stands
    plain = runner.complete(Job(PIECES[:1] + PIECES[2:], (WHOLE,)), None)
    assert plain[0].text == "print(area(3, 4))\n"  # no veto: the draft stands whatever the model thinks


def test_the_wire_carries_drafts_and_refuses_bad_ones():
    hole = WireHole("multi_line", 32, "a = 1\n", ["a = f(", ")\n"], [4])
    request = CompleteRequest(id="r", kind="edit", prefix="", suffix="", mode="multi_line", deadline_ms=100,
                              holes=[hole, WireHole("multi_line", 8, "b\n")], pieces=["\n"])
    job = job_of(request)
    assert job.holes[0].draft == ("a = f(", ")\n") and job.holes[0].slots == (4,) and not job.holes[1].drafted
    assert decode(encode(request)) == request
    for bad, code in ((WireHole("multi_line", 8, "", ["a", "b"], []), ErrorCode.INVALID_FIELD),
                      (WireHole("multi_line", 8, "", ["a", "b"], [MAX_SLOT_TOKENS + 1]), ErrorCode.INVALID_FIELD),
                      (WireHole("multi_line", 8, "", ["a"] * (MAX_SLOTS + 2), [1] * (MAX_SLOTS + 1)),
                       ErrorCode.INVALID_FIELD),
                      (WireHole("multi_line", 8, "", ["x" * 20_000], []), ErrorCode.TOO_LARGE)):
        with pytest.raises(ProtocolError) as raised:
            CompleteRequest(id="r", kind="edit", prefix="", suffix="", mode="multi_line", deadline_ms=100,
                            holes=[bad], pieces=[])
        assert raised.value.code == code
