"""Several holes in one canvas, decoded jointly: layout, the cached union window, joint passes, the API."""
import time
from dataclasses import replace

import pytest
import torch

from infill import decode
from infill.canvas import regions_canvas
from infill.checkpoint import load_model
from infill.commit import DecoderConfig
from infill.decode.holes import HoleRules
from infill.decode.passes import full_pass, window_pass
from infill.decode.state import layout
from infill.decode.stepping import advance
from infill.fim import fill, fill_regions, hole_rules, job_canvas
from infill.job import Hole, Job

PIECES = ["def read(path):\n    return ", "\n\n\ndef write(path, text):\n    ", "\n"]


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    torch.set_num_threads(1)
    return load_model(tiny_model_dir)


def no_pad(rules: HoleRules, tok) -> HoleRules:
    """Rules under which the tiny random model can never end a middle: every hole fills up."""
    return replace(rules, banned_ids=rules.banned_ids + [tok.pad_id], single_line=False)


def holes(model, tok, lengths: list[int], cfg: DecoderConfig, pieces: list[str] = PIECES) -> decode.DecodeState:
    """A state for `pieces` with holes of `lengths` that always fill to their end."""
    canvas = regions_canvas(tok, pieces, lengths, model.cfg.max_position_embeddings)
    rules = [no_pad(hole_rules(tok, h, piece, "multi_line"), tok) for h, piece in zip(canvas.healed, pieces)]
    return decode.start_regions(model, canvas, rules, cfg)


def run(model, state: decode.DecodeState) -> int:
    """Decode to the end; the number of forward passes it took."""
    forwards = 0
    while not state.done:
        forwards += decode.step(model, [state]).forwards
    return forwards


def test_layout_runs_the_union_of_the_hole_windows():
    positions, rows = layout([slice(3, 5), slice(9, 11)], shifted=True)
    assert positions.tolist() == [2, 3, 4, 8, 9, 10]
    assert positions[rows].tolist() == [2, 3, 8, 9]  # each hole position is predicted from the one before it
    positions, rows = layout([slice(3, 5), slice(5, 6)], shifted=True)  # adjacent holes share positions
    assert positions.tolist() == [2, 3, 4, 5] and positions[rows].tolist() == [2, 3, 4]


def test_cached_union_window_equals_the_full_pass(model):
    ids = torch.randint(8, model.cfg.vocab_size, (1, 40))
    window = torch.tensor([4, 5, 6, 20, 21, 33])  # (W,) three separate runs of positions
    with torch.no_grad():
        fresh, context = full_pass(model, ids, window)
        cached = window_pass(model, ids, window, context)
    assert context[0][0].shape[2] == 40 - 6
    assert torch.allclose(fresh, cached, atol=1e-5)


def test_refreshing_every_step_gives_the_uncached_output(model, tiny_tokenizer):
    cfg = DecoderConfig(rule="fixed", steps=3, refresh_every=1)  # several commits a pass, ranked across holes
    cached = holes(model, tiny_tokenizer, [6, 4], cfg)
    run(model, cached)
    uncached = holes(model, tiny_tokenizer, [6, 4], cfg)
    positions = torch.cat([torch.arange(hole.span.start, hole.span.stop) for hole in uncached.holes])  # (L,)
    with torch.no_grad():
        while not uncached.done:
            logits, _ = model(uncached.ids)  # (1, N, V): the whole canvas, no cache
            advance(uncached, model.token_logits(logits)[0, positions].float(), expired=False)
    assert decode.hole_tokens(cached) == decode.hole_tokens(uncached)
    assert cached.passes == uncached.passes == 3
    assert torch.allclose(cached.committed_prob, uncached.committed_prob, atol=1e-6)


def test_holes_share_their_passes(model, tiny_tokenizer):
    cfg = DecoderConfig(rule="left_to_right", refresh_every=3)
    state = holes(model, tiny_tokenizer, [6, 4], cfg)
    forwards = 0
    while not state.done:
        open_before = [int(state.masked[hole.part].sum()) for hole in state.holes]
        forwards += decode.step(model, [state]).forwards
        open_after = [int(state.masked[hole.part].sum()) for hole in state.holes]
        assert [a - b for a, b in zip(open_before, open_after)] == [int(n > 0) for n in open_before]
    first = holes(model, tiny_tokenizer, [6], cfg, [PIECES[0], PIECES[1] + PIECES[2]])
    second = holes(model, tiny_tokenizer, [4], cfg, [PIECES[0] + PIECES[1], PIECES[2]])
    assert forwards == state.passes == run(model, first) == 6  # the longer hole's count alone
    assert run(model, second) == 4  # decoded apart, the two holes take 6 + 4 passes



def test_a_done_hole_leaves_the_window_after_one_more_pass(model, tiny_tokenizer):
    cfg = DecoderConfig(rule="left_to_right", refresh_every=1 << 16)  # one commit per hole per pass
    state = holes(model, tiny_tokenizer, [2, 6], cfg)
    first_window, first_span = len(state.positions), state.holes[0].span
    for _ in range(2):
        decode.step(model, [state])
    assert not state.masked[state.holes[0].part].any() and [h for h, _ in state.active] == [1]  # done: not scored,
    assert all(p in state.positions.tolist() for p in range(first_span.start, first_span.stop))  # still run
    decode.step(model, [state])  # its committed tokens run once, for their keys/values
    assert [h for h, _ in state.active] == [1] and len(state.positions) < first_window
    assert not any(first_span.start <= int(p) < first_span.stop for p in state.positions)
    assert decode.step_tokens(state) == len(state.positions)
    run(model, state)
    assert state.done and state.passes == 6
    assert all(tiny_tokenizer.mask_id not in tokens for tokens in decode.hole_tokens(state))

def test_fill_regions_answers_each_hole(model, tiny_tokenizer):
    pieces, modes = ["x = fo", " + 1\nif ", ":\n    pass\n"], ["single_line", "single_line"]
    texts = fill_regions(model, tiny_tokenizer, pieces, modes, 6)
    assert len(texts) == 2 and all("\n" not in text[:-1] for text in texts)
    again = fill_regions(model, tiny_tokenizer, pieces, modes, 6)
    assert again == texts


def test_fill_regions_with_one_hole_is_fill(model, tiny_tokenizer):
    for mode, cfg in (("single_line", DecoderConfig()), ("multi_line", DecoderConfig(threshold=0.05, grow=False))):
        prefix, suffix = "def read(path):\n    return pa", "\n"
        expected = fill(model, tiny_tokenizer, prefix, suffix, mode, 12, cfg).text
        assert fill_regions(model, tiny_tokenizer, [prefix, suffix], [mode], 12, cfg) == [expected]


def test_each_hole_takes_its_own_mode_and_length(model, tiny_tokenizer):
    holes_ = [Hole("single_line", 64), Hole("multi_line", 64)]
    canvas, rules = job_canvas(tiny_tokenizer, Job(("x = ", "\n", ""), tuple(holes_)), 2048)
    assert [r.single_line for r in rules] == [True, False] and canvas.hole_lens == [32, 64]
    assert canvas.healed == [" ", ""]  # a lone trailing space is re-opened into the hole


def test_a_multi_hole_state_batches_with_others(model, tiny_tokenizer):
    cfg = DecoderConfig(rule="fixed", steps=4, refresh_every=3)
    make = lambda: [holes(model, tiny_tokenizer, [6, 4], cfg),  # noqa: E731
                    holes(model, tiny_tokenizer, [5], cfg, ["x = 1\n", "\n"])]
    alone = make()
    for state in alone:
        run(model, state)
    together = make()
    while unfinished := [state for state in together if not state.done]:
        decode.step(model, unfinished)
    assert [decode.hole_tokens(s) for s in together] == [decode.hole_tokens(s) for s in alone]
    assert [s.passes for s in together] == [s.passes for s in alone] == [4, 4]


def test_a_past_deadline_answers_every_hole_after_one_pass(model, tiny_tokenizer):
    canvas, rules = job_canvas(tiny_tokenizer, Job(tuple(PIECES), (Hole("multi_line", 8),) * 2),
                               model.cfg.max_position_embeddings)
    state = decode.start_regions(model, canvas, rules, DecoderConfig(), deadline=time.monotonic() - 1)
    decode.step(model, [state])
    assert state.done and state.stop_reason == "deadline" and state.passes == 1
    assert all(tiny_tokenizer.mask_id not in tokens for tokens in decode.hole_tokens(state))
