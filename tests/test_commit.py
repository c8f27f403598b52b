"""Commit rules on crafted confidences (no model)."""
import pytest
import torch

from infill.commit import DecoderConfig, block_candidates, factor_count, select

CONF = torch.tensor([0.95, 0.20, 0.91, 0.60, 0.99, 0.10])
ALL = torch.ones(6, dtype=torch.bool)


def chosen(cfg, conf=CONF, masked=ALL, steps_done=0):
    return torch.nonzero(select(cfg, conf, masked, steps_done)).flatten().tolist()


def test_threshold_commits_every_confident_position():
    assert chosen(DecoderConfig(threshold=0.9)) == [0, 2, 4]


def test_threshold_commits_at_least_one():
    assert chosen(DecoderConfig(threshold=0.999)) == [4]


def test_left_to_right_is_one_leftmost_position():
    masked = torch.tensor([False, True, True, True, True, True])
    assert chosen(DecoderConfig(rule="left_to_right"), masked=masked) == [1]


def test_left_run_commits_the_sure_positions_right_after_the_leftmost():
    run = DecoderConfig(rule="left_run", threshold=0.9)
    conf = torch.tensor([0.10, 0.95, 0.93, 0.50, 0.99, 0.99])
    assert chosen(run, conf=conf) == [0, 1, 2]  # the leftmost always; 4 and 5 lie past a gap
    masked = torch.tensor([False, False, True, True, True, True])
    assert chosen(run, conf=conf, masked=masked) == [2]  # 3 is not sure, so the run stops


def test_left_run_may_end_on_a_sure_end_token_with_end_in_run():
    conf = torch.tensor([0.10, 0.95, 0.93, 0.90, 0.99])
    masked = torch.tensor([True, True, False, False, False])  # the end at 2 is no candidate: not leftmost
    closers = torch.tensor([False, False, True, False, False])
    on = DecoderConfig(rule="left_run", threshold=0.9, end_in_run=True)
    assert torch.nonzero(select(on, conf, masked, 0, closers=closers)).flatten().tolist() == [0, 1, 2]  # and no further
    off = DecoderConfig(rule="left_run", threshold=0.9)
    assert torch.nonzero(select(off, conf, masked, 0, closers=closers)).flatten().tolist() == [0, 1]
    unsure = torch.tensor([0.10, 0.95, 0.50, 0.90, 0.99])
    assert torch.nonzero(select(on, unsure, masked, 0, closers=closers)).flatten().tolist() == [0, 1]
    lower = DecoderConfig(rule="left_run", threshold=0.9, end_in_run=True, end_threshold=0.4)
    assert torch.nonzero(select(lower, unsure, masked, 0, closers=closers)).flatten().tolist() == [0, 1, 2]


def test_fixed_schedule_spreads_over_steps():
    assert len(chosen(DecoderConfig(rule="fixed", steps=3))) == 2
    assert len(chosen(DecoderConfig(rule="fixed", steps=3), steps_done=2)) == 6  # last step takes the rest


def test_factor_rule():
    # sorted: .99 .95 .91 .60 ...; n=3 needs c_3 >= 1 - 1/4 = .75 (ok); n=4 needs .60 >= .8 (no)
    assert factor_count(torch.tensor([0.99, 0.95, 0.91, 0.60]), 1.0) == 3
    assert factor_count(torch.tensor([0.3]), 1.0) == 1
    assert chosen(DecoderConfig(rule="factor", factor=1.0)) == [0, 2, 4]


def test_blocks_keep_commits_in_the_leftmost_open_block():
    masked = torch.tensor([False, False, True, True, True, True])
    assert block_candidates(masked, 2).tolist() == [False, False, True, True, False, False]
    assert chosen(DecoderConfig(threshold=0.9, block=2), masked=masked) == [2]  # .91 beats .60 inside the block


def test_only_masked_positions_are_committed():
    masked = torch.tensor([False, True, False, True, False, True])
    for rule in ("threshold", "factor", "fixed", "left_to_right"):
        picked = chosen(DecoderConfig(rule=rule), masked=masked)
        assert picked and all(masked[i] for i in picked)


@pytest.mark.parametrize("bad", [dict(rule="magic"), dict(threshold=0), dict(confidence="entropy"), dict(steps=0)])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError):
        DecoderConfig(**bad)


HOLES = [slice(0, 3), slice(3, 6)]  # CONF as two holes of three positions


def test_one_ranking_spans_all_holes():
    cfg = DecoderConfig(threshold=0.9)
    assert torch.nonzero(select(cfg, CONF, ALL, 0, HOLES)).flatten().tolist() == [0, 2, 4]
    cfg = DecoderConfig(threshold=0.999)  # at least one commit per step, not one per hole
    assert torch.nonzero(select(cfg, CONF, ALL, 0, HOLES)).flatten().tolist() == [4]


def test_left_to_right_and_blocks_act_per_hole():
    masked = torch.tensor([False, True, True, True, True, True])
    got = select(DecoderConfig(rule="left_to_right"), CONF, masked, 0, HOLES)
    assert torch.nonzero(got).flatten().tolist() == [1, 3]
    masked = torch.tensor([False, False, False, True, True, True])  # the first hole is finished
    got = select(DecoderConfig(rule="left_to_right"), CONF, masked, 0, HOLES)
    assert torch.nonzero(got).flatten().tolist() == [3]
    got = select(DecoderConfig(threshold=0.5, block=2), CONF, ALL, 0, HOLES)  # blocks [0, 1] and [3, 4]
    assert torch.nonzero(got).flatten().tolist() == [0, 3, 4]
