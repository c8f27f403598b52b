"""Hole length: a full multi-line hole grows, several lengths decode side by side, loops are cut."""
from dataclasses import replace

import pytest
import torch

from engine.worker.runner import ModelRunner
from runner_fim import start_fim
from infill import decode
from infill.commit import DecoderConfig
from infill.decode.holes import HoleRules
from infill.fim import fill, hole_lengths, hole_text, prepare, start_request


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


GROWING = DecoderConfig(threshold=0.5, grow=True, stop_loops=False)  # a random model's fill loops: kept going


def no_pad(runner: ModelRunner, rules: HoleRules) -> HoleRules:
    """Rules under which the tiny random model can never end a middle: every hole fills up."""
    return replace(rules, banned_ids=rules.banned_ids + [runner.tok.pad_id])


def test_a_full_hole_grows_to_the_requested_length(runner):
    canvas, rules = prepare(runner.model, runner.tok, "x = 1\n", "\ny = 2\n", "multi_line", 40, hole_len=10)
    state = decode.start(runner.model, canvas, no_pad(runner, rules), GROWING, grow_to=40)
    suffix = canvas.ids[canvas.hole_start + 10:]
    while not state.done:
        decode.step(runner.model, [state])
    hole = state.ids[0, state.span].tolist()
    assert len(hole) == 40 and runner.tok.pad_id not in hole  # 10 -> 20 -> 40
    assert state.ids[0, state.span.stop:].tolist() == suffix  # the suffix followed the hole
    assert state.ids[0, :state.span.start].tolist() == canvas.ids[:canvas.hole_start]


def test_growth_is_off_for_single_lines_and_when_asked(runner):
    for mode, cfg in (("single_line", DecoderConfig(grow=True)), ("multi_line", DecoderConfig())):
        canvas, rules = prepare(runner.model, runner.tok, "x = ", "\n", mode, 40, hole_len=6)
        state = decode.start(runner.model, canvas, no_pad(runner, rules), cfg, grow_to=40)
        while not state.done:
            decode.step(runner.model, [state])
        assert state.span.stop - state.span.start == 6


def test_a_grown_canvas_stays_inside_the_context(runner):
    limit = runner.model.cfg.max_position_embeddings
    suffix = "y = 2\n" * 400  # far more than the context holds
    canvas, rules = prepare(runner.model, runner.tok, "x = 1\n", suffix, "multi_line", 200, hole_len=32)
    state = decode.start(runner.model, canvas, no_pad(runner, rules), GROWING, grow_to=200)
    while not state.done:
        decode.step(runner.model, [state])
    assert state.ids.shape[1] <= limit and state.span.stop - state.span.start == 200


def test_several_lengths_decode_together_and_the_likeliest_is_kept(runner):
    assert hole_lengths(96, 3) == [96, 48, 24] and hole_lengths(3, 4) == [3, 1]
    cfg = DecoderConfig(lengths=3, grow=False)
    states, _ = start_request(runner.model, runner.tok, "def f(x):\n", "\n", "multi_line", 64, cfg)
    assert [s.span.stop - s.span.start for s in states] == [64, 32, 16]
    while unfinished := [s for s in states if not s.done]:
        decode.step(runner.model, unfinished)
    chosen = decode.best(states)
    assert chosen.mean_log_prob == max(s.mean_log_prob for s in states)
    out = fill(runner.model, runner.tok, "def f(x):\n", "\n", "multi_line", 64, cfg)
    assert out.tokens == decode.hole_tokens(chosen)[0]


def test_single_line_requests_keep_one_length(runner):
    states, _ = start_request(runner.model, runner.tok, "x = ", "\n", "single_line", 32, DecoderConfig(lengths=4))
    assert len(states) == 1


def test_the_runner_answers_from_the_best_length(runner):
    d = start_fim(runner, "def f(x):\n", "\n", "multi_line", 48, None, {"lengths": 2, "rule": "left_to_right"})
    while not d.done:
        runner.step([d])
    chosen = decode.best(d.states)
    expected = hole_text(runner.tok, decode.hole_tokens(chosen)[0], d.healed[0], False)
    assert len(d.states) == 2 and runner.answers(d)[0].text == expected


def test_a_looping_middle_is_cut_to_its_first_copy(runner):
    tok = runner.tok
    line = tok.encode("x = x + 1\n")
    looped = line * 4 + [tok.pad_id]
    assert hole_text(tok, looped, "", single_line=False) == "x = x + 1\n"
    assert hole_text(tok, looped, "", single_line=False, cut_loops=False) == "x = x + 1\n" * 4


def test_a_mode_may_lay_its_hole_out_in_a_shorter_canvas(runner):
    prefix, suffix = "x = 1\n" * 300, "y = 2\n" * 300  # more than the tiny model's 256 positions
    whole, _ = prepare(runner.model, runner.tok, prefix, suffix, "single_line", 32)
    short, _ = prepare(runner.model, runner.tok, prefix, suffix, "single_line", 32, context=128)
    assert len(whole.ids) > 200 and 64 < len(short.ids) <= 128  # (the prefix cut at an aligned token)
    assert short.ids[short.hole_start - 5:short.hole_start] == whole.ids[whole.hole_start - 5:whole.hole_start]
    beyond, _ = prepare(runner.model, runner.tok, prefix, suffix, "single_line", 32, context=10_000)
    assert beyond.ids == whole.ids  # never past the model's own context
    [state], _ = start_request(runner.model, runner.tok, prefix, suffix, "single_line", 32, DecoderConfig(context=128))
    assert state.ids.shape[1] == len(short.ids)
