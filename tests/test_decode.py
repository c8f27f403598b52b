"""The simple denoising decoder: hole rules (pure) and a full decode on a tiny random model."""
import dataclasses
import time

import pytest
import torch

from engine.worker.runner import ModelRunner
from runner_fim import complete_fim, start_fim
from infill.commit import DecoderConfig
from infill.decoder_defaults import decoder_config
from infill.fim import first_banned, hole_text
from infill.decode.holes import HoleRules, close_loop, close_tail, restrict
from infill.decode.passes import without
from infill.decode.stepping import finish_line

RULES = HoleRules(pad_id=1, newline_id=9, banned_ids=[0, 2], first_allowed=[5, 6], first_banned=[1, 9, 6],
                  single_line=True)


def test_restrict_bans_specials_and_empty_starts():
    logits = restrict(torch.zeros(3, 12), torch.tensor([True, True, True]), RULES)
    assert torch.isinf(logits[:, [0, 2]]).all()
    allowed_first = torch.isfinite(logits[0]).nonzero().flatten().tolist()
    assert allowed_first == [5]
    assert torch.isfinite(logits[1, [1, 9]]).all()  # pad and newline are fine later


def test_each_hole_record_has_its_part_of_the_vectors_that_run_over_all_holes():
    from infill.decode.state import holes_of

    holes = holes_of([slice(3, 5), slice(9, 12), slice(20, 21)], [RULES] * 3)
    assert [hole.part for hole in holes] == [slice(0, 2), slice(2, 5), slice(5, 6)]
    assert [hole.span for hole in holes] == [slice(3, 5), slice(9, 12), slice(20, 21)]


def test_first_position_rules_lapse_once_committed():
    logits = restrict(torch.zeros(2, 12), torch.tensor([False, True]), RULES)
    assert torch.isfinite(logits[0, 1])


def test_pad_closes_the_tail():
    hole = torch.tensor([5, 1, 0, 0])
    masked = torch.tensor([False, False, True, True])
    close_tail(hole, masked, RULES)
    assert hole.tolist() == [5, 1, 1, 1] and not masked.any()


def test_newline_ends_a_single_line_hole():
    hole = torch.tensor([0, 9, 0])
    masked = torch.tensor([True, False, True])
    close_tail(hole, masked, RULES)
    assert hole.tolist() == [0, 9, 1] and masked.tolist() == [True, False, False]


def test_first_token_bans_depend_on_the_line(tiny_tokenizer):
    tok = tiny_tokenizer
    assert first_banned(tok, "x = 1\n", single_line=False) == [tok.pad_id]
    assert first_banned(tok, "x = 1\n    ", single_line=True) == [tok.pad_id, tok.newline_id]
    mid_line = first_banned(tok, "    x = ", single_line=True)
    assert tok.newline_id in mid_line and tok.encode("    ")[0] in mid_line


def test_hole_text_trims_pad_heal_and_line(tiny_tokenizer):
    tok = tiny_tokenizer
    ids = tok.encode(" self.value\n        return") + [tok.pad_id, tok.pad_id]
    assert hole_text(tok, ids, " se", single_line=True) == "lf.value\n"
    assert hole_text(tok, ids, "", single_line=False) == " self.value\n        return"


def test_runner_fills_the_hole(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    out = complete_fim(runner, "def read(path):\n    return ", "\n", "single_line", 8, None, {})
    assert 1 <= out.forward_passes <= 8 and out.stop_reason == "done"
    assert "\n" not in out.text[:-1]
    assert runner.info()["vocab_size"] == runner.tok.vocab_size


def test_greedy_decoding_is_deterministic(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    a = complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, {"threshold": 0.5})
    b = complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, {"threshold": 0.5})
    assert a.text == b.text and a.forward_passes == b.forward_passes


def test_deadline_in_the_past_answers_after_one_pass(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    out = complete_fim(runner, "x = 1\n", "", "multi_line", 16, time.monotonic() - 1, {})
    assert out.forward_passes == 1 and out.stop_reason == "deadline"


def test_a_budget_of_passes_keeps_what_they_committed(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    left_to_right = {"rule": "left_to_right"}  # one position per pass: 12 masks take many passes
    free = complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, left_to_right)
    bounded = complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, {**left_to_right, "max_passes": 3})
    assert free.forward_passes > 3 and free.stop_reason == "done"
    assert bounded.forward_passes == 3 and bounded.stop_reason == "budget"
    assert bounded.tokens[:3] == free.tokens[:3] and runner.tok.mask_id not in bounded.tokens


def test_the_guesses_that_finish_a_line_at_the_budget_count_in_its_confidence(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    decoding = start_fim(runner, "x = 1\n", "", "multi_line", 12, None, {"rule": "left_to_right", "max_passes": 3})
    while not decoding.done:
        runner.step([decoding])
    [state] = decoding.states
    [hole] = state.holes
    tokens, probs = state.ids[0, hole.span], state.committed_prob[hole.part]  # (L,) each
    shown = tokens != runner.tok.pad_id
    assert state.stop_reason == "budget" and int(shown.sum()) > 3  # three committed, then the line's guesses
    assert bool((probs[shown] > 0).all())  # every token shown has its probability


def test_the_line_a_budget_stops_in_is_finished_from_the_guesses_and_nothing_after_it():
    rules = dataclasses.replace(RULES, single_line=False)
    undecided = torch.tensor([False, False, True, True, True, True])
    hole = torch.tensor([10, 11, 0, 0, 0, 0])
    written = finish_line(hole, undecided, torch.tensor([10, 11, 12, 9, 13, 14]), rules)  # 9: the newline
    assert hole.tolist() == [10, 11, 12, 9, 1, 1]
    assert written.tolist() == [False, False, True, True, False, False]
    hole = torch.tensor([10, 11, 0, 0, 0, 0])
    finish_line(hole, undecided, torch.tensor([10, 11, 12, 13, 14, 15]), rules)  # no line's end guessed
    assert hole.tolist() == [10, 11, 12, 13, 14, 15]
    hole = torch.tensor([10, 11, 0, 0, 0, 0])
    finish_line(hole, undecided, torch.tensor([10, 11, 1, 13, 14, 15]), rules)  # the middle's end
    assert hole.tolist() == [10, 11, 1, 1, 1, 1]


def test_an_edit_takes_a_budget_of_passes_from_its_request_only():
    defaults = {"rule": "left_run", "per_mode": {"single_line": {"max_passes": 5}}}
    assert decoder_config(defaults, {}, "single_line").max_passes == 5
    assert decoder_config(defaults, {}, "single_line", edit=True).max_passes == 0
    assert decoder_config(defaults, {"max_passes": 9}, "single_line", edit=True).max_passes == 9


def test_cached_window_step_equals_the_full_pass(tiny_model_dir):
    from infill.checkpoint import load_model
    from infill.decode.passes import full_pass, window_pass

    model = load_model(tiny_model_dir)
    ids = torch.randint(8, model.cfg.vocab_size, (1, 40))
    window = slice(20, 30)
    with torch.no_grad():
        fresh, context = full_pass(model, ids, window)
        cached = window_pass(model, ids, window, context)
    assert torch.allclose(fresh, cached, atol=1e-5)



def test_each_rule_fills_the_hole_within_its_pass_budget(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    fixed = complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, {"rule": "fixed", "steps": 3})
    assert 1 <= fixed.forward_passes <= 3
    baseline = complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, {"rule": "left_to_right"})
    assert 1 <= baseline.forward_passes <= 12


def test_unknown_decoder_setting_is_refused(tiny_model_dir):
    import pytest

    from engine.wire.protocol import ErrorCode, ProtocolError

    with pytest.raises(ProtocolError, match="unknown decoder settings.*temperature") as info:
        complete_fim(ModelRunner(tiny_model_dir), "x", "", "single_line", 4, None, {"temperature": 2})
    assert info.value.code == ErrorCode.INVALID_FIELD


def test_end_tokens_wait_for_the_leftmost_position():
    from infill.decode.holes import eligible

    best = torch.tensor([5, 1, 6, 9, 1])  # content, pad, content, newline, pad
    masked = torch.tensor([False, True, True, True, True])
    assert eligible(best, masked, RULES).tolist() == [False, True, True, False, False]  # leftmost pad may end it
    masked = torch.tensor([False, False, True, True, True])
    assert eligible(best, masked, RULES).tolist() == [False, False, True, False, False]


def test_model_folder_sets_the_default_decoder(tiny_model_dir, tmp_path):
    import shutil

    folder = tmp_path / "with-defaults"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "decoder.json").write_text('{"rule": "fixed", "steps": 2}')
    runner = ModelRunner(folder)
    assert complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, {}).forward_passes <= 2
    fixed = {"rule": "fixed", "steps": 3}
    assert complete_fim(runner, "x = 1\n", "", "multi_line", 12, None, fixed).forward_passes <= 3


def test_decoder_json_settings_per_mode_apply_on_top_of_the_shared_ones():
    defaults = {"rule": "left_run", "threshold": 0.7, "per_mode": {"multi_line": {"threshold": 0.5}}}
    assert decoder_config(defaults, {}, "single_line") == DecoderConfig(rule="left_run", threshold=0.7)
    assert decoder_config(defaults, {}, "multi_line") == DecoderConfig(rule="left_run", threshold=0.5)
    assert decoder_config(defaults, {"threshold": 0.9}, "multi_line").threshold == 0.9  # the request's word is last
    with pytest.raises(ValueError, match="unknown decoder settings"):
        decoder_config({"per_mode": {"multi_line": {"treshold": 0.5}}}, {}, "multi_line")


def test_a_bad_per_mode_setting_fails_at_start(tiny_model_dir, tmp_path):
    import shutil

    folder = tmp_path / "bad-defaults"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "decoder.json").write_text('{"per_mode": {"multi_line": {"threshold": 2.0}}}')
    with pytest.raises(ValueError, match="setting 'threshold' must be in"):
        ModelRunner(folder)


def test_restrict_binds_the_first_token_rules_only_at_hole_position_0():
    later = restrict(torch.zeros(2, 12), torch.tensor([True, True]), RULES, first=3)
    assert torch.isinf(later[:, RULES.banned_ids]).all()
    assert torch.isfinite(later[0, RULES.first_banned]).all()  # row 0 is hole position 3: no first-token rule
    first = restrict(torch.zeros(2, 12), torch.tensor([True, True]), RULES, first=0)
    assert torch.isinf(first[0, RULES.first_banned]).all()


@pytest.mark.parametrize("window", [slice(3, 7), torch.tensor([3, 4, 5, 6]), torch.tensor([1, 4, 5, 9])])
def test_without_keeps_every_position_outside_the_window_in_order(window):
    kv = [(torch.arange(10.0).view(1, 1, 10, 1).expand(1, 2, 10, 3), torch.randn(1, 2, 10, 3))]
    outside = torch.ones(10, dtype=torch.bool)
    outside[window] = False
    (k, v), = without(kv, window)
    assert k[0, 0, :, 0].tolist() == torch.arange(10.0)[outside].tolist()
    assert torch.equal(v, kv[0][1][:, :, outside])


def remask_state(tiny_model_dir, threshold=0.3):
    from infill.checkpoint import load_model
    from infill.decode.state import new_state

    model = load_model(tiny_model_dir)
    rules = HoleRules(pad_id=1, newline_id=5, banned_ids=[0], first_allowed=None, first_banned=[1], single_line=False)
    state = new_state(model, [7, 8, 0, 0, 0, 0, 9], [slice(2, 6)], [rules],
                      DecoderConfig(rule="threshold", remask=threshold, refresh_every=1), None, 0)
    state.ids[0, 2:5] = torch.tensor([10, 11, 1])  # two content tokens and an end token committed
    state.masked[:3] = False
    state.committed_prob[:3] = torch.tensor([0.9, 0.8, 0.7])
    logits = torch.full((4, 12), -5.0)
    logits[0, 10], logits[1, 3], logits[2, 6] = 5.0, 5.0, 5.0  # sure of position 0's token; not of 1's or the pad
    return state, logits


def test_remask_masks_an_unlikely_committed_token_once(tiny_model_dir):
    from infill.decode.stepping import remask

    state, logits = remask_state(tiny_model_dir)
    remask(state, logits, torch.logsumexp(logits, dim=1))
    assert state.masked.tolist() == [False, True, False, True]  # the end token stays: its tail was closed
    assert state.ids[0, 2:6].tolist() == [10, state.mask_id, 1, state.mask_id]
    assert state.committed_prob[1] == 0 and state.remasked.tolist() == [False, True, False, False]
    state.ids[0, 3], state.masked[1], state.committed_prob[1] = 11, False, 0.8  # committed again, as unsure
    remask(state, logits, torch.logsumexp(logits, dim=1))
    assert not state.masked[1]  # once per position: decoding always ends


def test_remask_keeps_tokens_above_the_bound(tiny_model_dir):
    from infill.decode.stepping import remask

    state, logits = remask_state(tiny_model_dir, threshold=1e-6)
    remask(state, logits, torch.logsumexp(logits, dim=1))
    assert state.masked.tolist() == [False, False, False, True]


def test_remasking_decodes_to_the_end_and_refuses_rules_it_would_break(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    out = complete_fim(runner, "x = 1\n", "", "multi_line", 12, None,
                       {"rule": "threshold", "threshold": 0.9, "remask": 0.5})
    assert 1 <= out.forward_passes <= 24  # each of the 12 positions re-masked at most once
    for bad in ({"rule": "verify", "remask": 0.5}, {"rule": "left_run", "window": 8, "remask": 0.5}, {"remask": 1.5}):
        with pytest.raises(ValueError):
            DecoderConfig(**bad)


def single_line_pass(tiny_model_dir, end_in_run):
    """A one-hole single-line state after one pass whose logits are sure of two tokens, a newline, pads."""
    from infill.checkpoint import load_model
    from infill.decode.state import new_state
    from infill.decode.stepping import advance

    cfg = DecoderConfig(rule="left_run", threshold=0.7, refresh_every=1, end_in_run=end_in_run)
    state = new_state(load_model(tiny_model_dir), [7, 8, 0, 0, 0, 0, 0, 3], [slice(2, 7)], [RULES], cfg, None, 0)
    logits = torch.full((5, 12), -5.0)
    logits[0, 5], logits[1, 6], logits[2, 9], logits[3, 1], logits[4, 1] = 8.0, 8.0, 8.0, 8.0, 8.0
    advance(state, logits, expired=False)
    return state


def test_end_in_run_closes_a_single_line_in_the_pass_that_commits_its_text(tiny_model_dir):
    state = single_line_pass(tiny_model_dir, end_in_run=True)
    assert state.done and state.passes == 1
    assert state.ids[0, 2:7].tolist() == [5, 6, 9, 1, 1]  # the newline committed, the tail closed as pad
    old = single_line_pass(tiny_model_dir, end_in_run=False)
    assert old.masked.tolist() == [False, False, True, True, True]  # the newline waits a pass


def test_a_hole_whose_committed_start_loops_is_closed_after_its_first_copy():
    hole = torch.tensor([5, 6] * 4 + [0, 0, 0])
    masked = torch.tensor([False] * 8 + [True] * 3)
    assert close_loop(hole, masked, RULES)
    assert hole.tolist() == [5, 6] * 4 + [1, 1, 1] and not masked.any()  # committed copies stay; hole_text cuts them


def test_no_loop_is_closed_before_it_is_settled_nor_in_a_draft():
    short = torch.tensor([5, 6] * 3 + [0, 0])  # 6 settled tokens: under a loop's length
    masked = torch.tensor([False] * 6 + [True] * 2)
    assert not close_loop(short, masked, RULES) and masked.tolist() == [False] * 6 + [True] * 2
    gap = torch.tensor([5, 6, 5, 0, 5, 6, 5, 6, 5, 6, 0])  # the loop is not settled: a mask comes first
    masked = gap == 0
    assert not close_loop(gap, masked, RULES) and int(masked.sum()) == 2
    drafted = torch.tensor([5, 6] * 4 + [0])
    masked = drafted == 0
    assert not close_loop(drafted, masked, dataclasses.replace(RULES, drafted=True)) and masked[-1]


def looping_pass(tiny_model_dir, stop_loops):
    """A one-hole state after one pass whose logits are sure of a two-token pattern over 8 positions."""
    from infill.checkpoint import load_model
    from infill.decode.state import new_state
    from infill.decode.stepping import advance

    cfg = DecoderConfig(rule="left_run", threshold=0.7, refresh_every=1, stop_loops=stop_loops)
    multi = dataclasses.replace(RULES, single_line=False)
    state = new_state(load_model(tiny_model_dir), [7] + [0] * 12 + [3], [slice(1, 13)], [multi], cfg, None, 0)
    logits = torch.full((12, 12), -5.0)
    for i in range(8):
        logits[i, 5 + i % 2] = 8.0
    advance(state, logits, expired=False)
    return state


def test_a_loop_committed_in_a_pass_ends_the_decoding(tiny_model_dir):
    stopped = looping_pass(tiny_model_dir, stop_loops=True)
    assert stopped.done and stopped.passes == 1
    assert stopped.ids[0, 1:13].tolist() == [5, 6] * 4 + [1] * 4
    going = looping_pass(tiny_model_dir, stop_loops=False)
    assert not going.done and int(going.masked.sum()) == 4  # decoding the copies that hole_text cuts
