"""The sliding window: a cached pass runs the last pass's commits and `window` positions past the
leftmost mask, the rest of the canvas from its kept keys/values."""
import pytest
import torch

from engine.worker.runner import ModelRunner
from runner_fim import complete_fim, start_fim
from infill import decode
from infill.commit import DecoderConfig

REQUEST = ("import os\n", "\nprint(os.getcwd())\n", "multi_line", 24)


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def test_only_rules_that_commit_from_the_left_slide():
    DecoderConfig(rule="left_run", window=8)
    with pytest.raises(ValueError, match="setting 'window'"):
        DecoderConfig(rule="threshold", window=8)


def test_a_cached_pass_runs_the_window_and_scores_only_it(runner):
    decoding = start_fim(runner, *REQUEST, None, {"rule": "left_to_right", "window": 4, "refresh_every": 1 << 16})
    state = decoding.states[0]
    runner.step([decoding])  # the first pass runs the whole canvas and commits hole position 0
    assert state.scored == slice(1, 5)
    assert state.positions.tolist() == list(range(state.span.start, state.span.start + 5))  # position 0 and 1..4
    assert decode.step_tokens(state) == 5
    runner.step([decoding])  # commits position 1: the window moves on by one
    assert state.scored == slice(2, 6) and state.positions[0] == state.span.start + 1
    context = state.ids.shape[1] - len(state.positions)
    assert all(k.shape[2] == context for k, _ in state.context)


def test_refreshing_every_pass_answers_as_the_whole_window_does(runner):
    """With a full pass every step nothing is stale, so the window only limits what is scored:
    the left-to-right answer cannot change."""
    for window in (1, 3, 8):
        whole = complete_fim(runner, *REQUEST, None, {"rule": "left_to_right", "refresh_every": 1})
        sliding = complete_fim(runner, *REQUEST, None, {"rule": "left_to_right", "refresh_every": 1, "window": window})
        assert sliding.text == whole.text and sliding.forward_passes == whole.forward_passes


def test_the_kept_canvas_is_not_written_by_a_sliding_window(runner):
    decoding = start_fim(runner, *REQUEST, None, {"rule": "left_run", "window": 4, "refresh_every": 1 << 16})
    runner.step([decoding])  # the first pass: the runner keeps the canvas for the next keystrokes
    kept = {key: [(k.clone(), v.clone()) for k, v in kv] for key, (_, kv) in runner.prefixes._entries.items()}
    while not decoding.done:
        runner.step([decoding])
    for key, before in kept.items():
        after = runner.prefixes._entries[key][1]
        assert all(torch.equal(k, k2) and torch.equal(v, v2) for (k, v), (k2, v2) in zip(before, after))
