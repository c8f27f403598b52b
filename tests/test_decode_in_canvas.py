"""A lone cached window runs in place in the canvas's keys/values its state keeps (`in_canvas_pass`):
the same keys as a context of the positions outside it, without copying the canvas."""
import pytest
import torch

import infill.decode.passes as passes
from engine.worker.runner import ModelRunner
from infill.decode.passes import in_canvas, in_canvas_pass, window_context, window_pass
from runner_fim import complete_fim, start_fim

SLIDING = {"rule": "left_run", "threshold": 0.5, "window": 4, "refresh_every": 1 << 16}
PREFIX = "def area(shape):\n    width = shape.width\n    return "


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def after_first_pass(runner: ModelRunner, overrides: dict):
    decoding = start_fim(runner, PREFIX, "\n", "single_line", 10, None, overrides)
    runner.step([decoding])
    [state] = decoding.unfinished
    return decoding, state


def test_a_window_in_place_sees_what_it_sees_against_its_context(runner):
    _, state = after_first_pass(runner, SLIDING)
    assert in_canvas(state)
    window = state.ids[0, state.positions]
    context, _ = window_context(state)
    expected = window_pass(runner.model, state.ids, state.positions, context)  # (W, d)
    kv_before = [(k.clone(), v.clone()) for k, v in state.kv]
    got = in_canvas_pass(runner.model, state, window)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)
    outside = torch.ones(state.ids.shape[1], dtype=torch.bool)
    outside[state.positions] = False
    for (k, v), (old_k, old_v) in zip(state.kv, kv_before):
        assert torch.equal(k[:, :, outside], old_k[:, :, outside])  # the context is left as it was
    [(k, _), *_] = state.kv
    assert not torch.equal(k[:, :, state.positions], kv_before[0][0][:, :, state.positions])  # the window's written


def test_a_lone_sliding_window_runs_in_place_and_decodes_as_before(runner, monkeypatch):
    before = complete_fim(runner, PREFIX, "\n", "single_line", 10, None, SLIDING)
    calls = []
    real = passes.batch_window_pass
    monkeypatch.setattr(passes, "batch_window_pass", lambda *a, **k: calls.append(1) or real(*a, **k))
    decoding, _ = after_first_pass(runner, SLIDING)
    while not decoding.done:
        runner.step([decoding])
    [answer] = runner.answers(decoding)
    assert calls == [] and answer.forward_passes > 1  # every cached pass in place
    assert (answer.text, answer.forward_passes) == (before.text, before.forward_passes)


def test_windows_of_several_requests_still_run_batched(runner, monkeypatch):
    calls = []
    real = passes.batch_window_pass
    monkeypatch.setattr(passes, "batch_window_pass", lambda model, windows, *a, **k: calls.append(len(windows))
                        or real(model, windows, *a, **k))
    decodings = [after_first_pass(runner, SLIDING)[0] for _ in range(2)]
    runner.step(decodings)
    assert calls == [2]
