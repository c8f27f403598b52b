"""The `lookup` setting: drafts looked up in the canvas, written into the masks and checked by the next pass."""
from types import SimpleNamespace

import pytest
import torch

from engine.worker.runner import ModelRunner
from infill.commit import DecoderConfig
from infill.decode.answer import committed_run
from infill.decode.holes import HoleRules
from infill.decode.lookup import check_lookup, write_lookup
from infill.decode.state import new_state
from infill.decode.stepping import fill_rest
from infill.drafts import context_drafts, lookup_draft
from runner_fim import complete_fim

MASK, PAD, NEWLINE, SPECIAL = 0, 1, 9, 3
RULES = HoleRules(pad_id=PAD, newline_id=NEWLINE, banned_ids=[MASK, SPECIAL], first_allowed=None,
                  first_banned=[PAD, NEWLINE], single_line=True)
BEFORE = [50, 20, 21, 30, 40, 41]  # canvas positions 0..5; the hole is 6..11
HOLE = slice(6, 12)
VOCAB = 64


def fake_model() -> SimpleNamespace:
    """What laying a state out reads of a model: its device and its config."""
    weight = torch.zeros(1)
    return SimpleNamespace(model=SimpleNamespace(embed_tokens=SimpleNamespace(weight=weight)),
                           cfg=SimpleNamespace(logits_shift=True, mask_token_id=MASK, max_position_embeddings=64))


def state_after_one_pass(committed: list[int], **settings):
    """A one-hole state whose first positions hold `committed`, as a pass left it."""
    cfg = DecoderConfig(rule="left_run", lookup=16, lookup_key=2, **settings)
    hole = committed + [MASK] * (HOLE.stop - HOLE.start - len(committed))
    state = new_state(fake_model(), BEFORE + hole + [60], [HOLE], [RULES], cfg, None, 0)
    state.masked[:len(committed)] = False
    state.last_best, state.last_prob = torch.zeros(6, dtype=torch.long), torch.zeros(6)
    state.passes = 1
    return state


def sure_of(tokens: list[int], prob: float = 0.9) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (L, V) putting `prob` on each position's token (a uniform rest), and their log-sum-exp."""
    logits = torch.full((len(tokens), VOCAB), 0.0)
    rest = (1 - prob) / (VOCAB - 1)
    logits[torch.arange(len(tokens)), torch.tensor(tokens)] = torch.log(torch.tensor(prob / rest))
    return logits, torch.logsumexp(logits, dim=1)


def test_the_longest_key_wins_and_a_draft_stops_at_specials_and_after_the_line_end():
    ids = torch.tensor([20, 21, 30, 31, 7, 21, 32, NEWLINE, 33, 5] + [20, 21] + [MASK] * 4 + [40])
    hole = slice(10, 16)
    assert context_drafts(ids, hole, 2, 4, ngrams=(3, 2, 1)).tolist() == [30, 31, 7, 21]  # the key [20, 21]
    assert context_drafts(ids, hole, 2, 4, ngrams=(3,)).tolist() == []  # [5, 20, 21] occurs nowhere else
    banned, ends = torch.tensor([MASK, 7]), torch.tensor([PAD, NEWLINE])
    assert lookup_draft(ids, hole, 2, 4, 2, banned, ends).tokens.tolist() == [30, 31]  # cut before the special 7
    ids[10:12] = torch.tensor([7, 21])  # the key [7, 21] is followed by 32 and a line's end
    assert lookup_draft(ids, hole, 2, 4, 2, banned, ends).tokens.tolist() == [32, NEWLINE]


def test_a_draft_is_written_into_the_masks_and_is_not_yet_committed_text():
    state = state_after_one_pass([20, 21])
    write_lookup(state, *sure_of([0] * 6))
    assert state.ids[0, HOLE].tolist() == [20, 21, 30, 40, 41, MASK]  # what followed 20 21 before the hole
    assert state.looked.tolist() == [False, False, True, True, True, False]
    assert state.masked.tolist() == [False] * 5 + [True]
    assert committed_run(state) == [20, 21]  # a partial answer never shows an unchecked draft


def test_a_draft_stops_before_a_token_the_pass_before_it_finds_unlikely():
    state = state_after_one_pass([20, 21], lookup_first=0.5)
    write_lookup(state, *sure_of([0, 0, 30, 40, 42, 0]))  # the pass puts 0.9 on 42 where the draft says 41
    assert state.looked.tolist() == [False, False, True, True, False, False]
    assert state.ids[0, HOLE].tolist() == [20, 21, 30, 40, MASK, MASK]
    state = state_after_one_pass([20, 21], lookup_first=0.5)
    write_lookup(state, *sure_of([0, 0, 31, 0, 0, 0]))  # and no draft where its first token is unlikely
    assert state.looked is None and state.masked[2:].all()


def test_the_check_keeps_a_draft_up_to_its_first_unlikely_token():
    state = state_after_one_pass([20, 21], lookup_keep=0.5)
    write_lookup(state, *sure_of([0] * 6))
    logits, lse = sure_of([0, 0, 30, 40, 42, 0])  # the draft's third token (41) gets little
    assert check_lookup(state, logits, lse) == (4, 41)
    assert state.ids[0, HOLE].tolist() == [20, 21, 30, 40, MASK, MASK]
    assert state.masked.tolist() == [False] * 4 + [True] * 2 and not state.looked.any()
    assert state.committed_prob[2:4].tolist() == pytest.approx([0.9, 0.9])


def test_context_match_says_on_which_side_of_the_hole_it_found_the_draft():
    from infill.drafts import context_match

    ids = torch.tensor([20, 21, 30, 5] + [20, 21] + [MASK] * 3 + [20, 21, 31])
    hole = slice(4, 9)
    found = context_match(ids, hole, 2, 2, ngrams=(2,))
    assert found.tokens.tolist() == [30, 5] and found.before  # the prefix first
    ids[1] = 22  # the key [20, 21] now stands only after the hole
    found = context_match(ids, hole, 2, 2, ngrams=(2,))
    assert found.tokens.tolist() == [31] and not found.before


def test_a_draft_from_before_the_hole_stands_on_the_looser_bound_one_from_after_it_does_not():
    def checked(before_text: list[int], after_text: list[int]) -> tuple[int, int] | None:
        cfg = DecoderConfig(rule="left_run", lookup=16, lookup_key=2, lookup_keep=1.0, lookup_keep_before=0.05)
        state = new_state(fake_model(), before_text + [20, 21] + [MASK] * 3 + after_text, [slice(6, 11)], [RULES],
                          cfg, None, 0)
        state.masked[:2] = False
        state.last_best, state.last_prob = torch.zeros(5, dtype=torch.long), torch.zeros(5)
        state.passes = 1
        write_lookup(state, *sure_of([0] * 5))
        assert state.looked[2]  # 30 first, then what followed it there
        logits, lse = sure_of([0, 0, 42, 5, 5], prob=0.8)  # the check's top-1 is 42; the draft's 30 gets about 0.003
        logits[2, 30] = lse[2] + torch.log(torch.tensor(0.1))  # now about 0.1: short of top-1, over 0.05
        lse = torch.logsumexp(logits, dim=1)
        state.last_best = logits.argmax(dim=1)
        return check_lookup(state, logits, lse)

    assert checked([50, 20, 21, 30, 5, 5], [60]) is None  # looked up before the hole: it stands
    assert checked([50, 5, 5, 5, 5, 5], [20, 21, 30]) == (2, 30)  # after it: left to right's token wins


def test_a_refused_position_commits_only_another_sure_token():
    from infill.decode.lookup import commit_refused

    state = state_after_one_pass([20, 21, 30, 40])
    state.last_best[4], state.last_prob[4] = 42, 0.95  # the threshold is 0.9
    assert commit_refused(state, (4, 41)).tolist() == [False] * 4 + [True, False]
    assert not commit_refused(state, (4, 42)).any()  # the refused token itself
    state.last_prob[4] = 0.3
    assert not commit_refused(state, (4, 41)).any()  # not as sure as the threshold


def test_a_line_end_that_stands_closes_the_line():
    state = state_after_one_pass([20, 21])
    state.ids[0, 3:6] = torch.tensor([20, 21, NEWLINE])  # now 20 21 is followed by a line's end before the hole
    write_lookup(state, *sure_of([0] * 6))
    assert state.ids[0, HOLE].tolist() == [20, 21, NEWLINE, MASK, MASK, MASK]
    assert check_lookup(state, *sure_of([0, 0, NEWLINE, 0, 0, 0])) is None
    assert state.ids[0, HOLE].tolist() == [20, 21, NEWLINE, PAD, PAD, PAD] and state.done


def test_at_the_deadline_an_unchecked_draft_stands():
    state = state_after_one_pass([20, 21])
    write_lookup(state, *sure_of([0] * 6))
    fill_rest(state)
    assert state.done and state.ids[0, HOLE].tolist()[:5] == [20, 21, 30, 40, 41]


def test_lookup_is_left_unused_by_rules_it_would_break():
    assert DecoderConfig(rule="left_run", lookup=8).looks_up
    assert DecoderConfig(rule="left_run", lookup=8, window=8).looks_up  # the window runs the draft
    for settings in ({"rule": "verify"}, {"rule": "left_to_right"},
                     {"rule": "left_run", "remask": 0.1}, {"rule": "left_run", "lookup": 0}):
        assert not DecoderConfig(**{"lookup": 8, **settings}).looks_up


LINE = "2 * (shape.width + shape.height) + 4 * shape.border_width\n"
PREFIX = f"def perimeter(shape):\n    return {LINE}\n\ndef outer_perimeter(shape):\n    return "


def test_repeated_code_is_copied_in_fewer_passes():
    from infill.paths import bundled_model_dir

    torch.set_num_threads(1)
    runner = ModelRunner(bundled_model_dir())
    plain = complete_fim(runner, PREFIX, "\n", "single_line", 32, None, {"lookup": 0, "max_passes": 0})
    unhidden = {"lookup": 16, "lookup_hide": False, "lookup_keep": 0.5,  # not the bundled model's single lines
                "lookup_keep_before": 0.0, "max_passes": 0}  # each answer whole
    looked = complete_fim(runner, PREFIX, "\n", "single_line", 32, None, {**unhidden, "lookup_first": 0.02})
    assert looked.text == LINE  # the line before, taken whole
    assert looked.forward_passes <= plain.forward_passes // 2
    refused = complete_fim(runner, PREFIX, "\n", "single_line", 32, None, {**unhidden, "lookup_keep": 1.0})
    assert refused.text == plain.text  # a draft the check refuses leaves the answer as it was


def test_the_bundled_single_lines_keep_a_line_repeated_from_before_the_hole_that_left_to_right_would_not_write():
    from infill.paths import bundled_model_dir

    torch.set_num_threads(1)
    runner = ModelRunner(bundled_model_dir())
    bundled = complete_fim(runner, PREFIX, "\n", "single_line", 32, None, {})
    assert bundled.text == LINE  # `.border_width` stands at lookup_keep_before
    strict = complete_fim(runner, PREFIX, "\n", "single_line", 32, None, {"lookup_keep_before": 0.0})
    assert strict.text.startswith("2 * (shape.width + shape.height) + 4 * shape.height")  # top-1 at `.border_width`
    assert strict.forward_passes > bundled.forward_passes
