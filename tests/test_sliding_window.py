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


def test_a_window_scores_a_lookup_draft_and_runs_window_positions_past_it(runner):
    from infill.decode.regions import slide

    decoding = start_fim(runner, *REQUEST, None, {"rule": "left_run", "window": 4, "lookup": 8, "lookup_hide": True,
                                                  "threshold": 1.0, "refresh_every": 1 << 16})
    state = decoding.states[0]
    runner.step([decoding])  # commits hole position 0
    draft = slice(1, 4)
    state.masked[draft], state.looked = False, torch.zeros_like(state.masked)
    state.looked[draft] = True
    slide(state, 1)
    assert state.scored == slice(1, 8)  # the draft, then 4 past the first mask after it
    assert state.positions.tolist() == list(range(state.span.start + 1, state.span.start + 8))
    [(keys, _)] = state.window_kv[:1]
    assert keys.shape[2] == 7 and keys.data_ptr() != state.kv[0][0].data_ptr()  # a copy: the pass rewrites `kv`


def test_a_refused_draft_takes_back_the_canvas_keys_a_window_reads_next():
    from types import SimpleNamespace

    from infill.decode.lookup import forget_refused

    now, saw = torch.ones(1, 1, 5, 2), torch.zeros(1, 1, 5, 2)  # (1, nkv, W, hd): canvas positions 5..9
    canvas = torch.ones(1, 1, 12, 2)  # the kept keys/values, as this pass's window wrote them
    state = SimpleNamespace(positions=torch.arange(5, 10), span=slice(6, 10), window_kv=[(now, now)],
                            masks_kv=[(saw, saw)], slides=True, kv=[(canvas, canvas.clone())])
    forget_refused(state, 2)  # refused at hole position 2: canvas 8
    [(keys, values)] = state.kv
    assert keys[0, 0, :, 0].tolist() == [1] * 8 + [0, 0] + [1] * 2  # canvas 8 and 9 as the check saw them
    assert torch.equal(keys, values)


def test_a_window_checks_lookup_drafts_as_the_whole_hole_does():
    """At threshold 1.0 with hidden drafts, a window of 12 takes the answer the whole hole takes
    (each row checking a draft reads the canvas's kept keys after it, copied before its pass), here in
    6 passes where left to right takes 40; a window reading its own pass's keys there, or keeping a
    refused draft's, answers otherwise."""
    from infill.paths import bundled_model_dir

    bundled = ModelRunner(bundled_model_dir())
    prefix = ("def area(shape):\n    width = shape.width\n    height = shape.height\n    return width * height\n\n\n"
              "def perimeter(shape):\n    width = shape.width\n    height = shape.height\n"
              "    return 2 * (width + height)\n\n\ndef scaled_area(shape, k):\n")
    request = (prefix, "\n    return k * width * height\n", "multi_line", 40, None)
    hidden = {"threshold": 1.0, "lookup": 16, "lookup_hide": True, "lookup_keep": 1.0, "lookup_key": 2, "max_passes": 0}
    whole = complete_fim(bundled, *request, {**hidden, "window": 0})
    sliding = complete_fim(bundled, *request, {**hidden, "window": 12})
    plain = complete_fim(bundled, *request, {"threshold": 1.0, "lookup": 0, "window": 12, "max_passes": 0})
    assert sliding.tokens == whole.tokens
    assert sliding.forward_passes <= plain.forward_passes // 4
