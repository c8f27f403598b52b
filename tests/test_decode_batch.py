"""Step-wise and batched decoding: many requests in shared forward passes decode as each does alone."""
import pytest
import torch

from engine.worker.runner import ModelRunner
from runner_fim import complete_fim, start_fim
from infill import decode
from infill.batch import batch_window_pass
from infill.decode.passes import full_pass, window_pass
from infill.fim import fill

REQUESTS = [  # (prefix, suffix, mode, max_tokens): different canvases, holes and modes
    ("def read(path):\n    return ", "\n", "single_line", 8),
    ("x = 1\n", "", "multi_line", 12),
    ("class Counter:\n    def __init__(self, start=0):\n        self.", "\n\n", "single_line", 10),
    ("import os\n", "\nprint(os.getcwd())\n", "multi_line", 16),
    ("if not os.path.exists(path):\n    return ", "", "single_line", 5),
]
CONFIGS = [{}, {"rule": "left_to_right"}, {"threshold": 0.3, "refresh_every": 3}, {"rule": "fixed", "steps": 3},
           {"rule": "factor", "confidence": "margin", "block": 4, "refresh_every": 1},
           {"rule": "verify", "drafts": 3, "refresh_every": 5},
           {"rule": "left_run", "threshold": 0.5, "window": 4, "refresh_every": 1 << 16},
           {"rule": "verify", "drafts": 2, "window": 3, "refresh_every": 4},
           {"rule": "left_run", "lookup": 8, "lookup_key": 1, "lookup_hide": True, "refresh_every": 1 << 16}]


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def decode_together(runner: ModelRunner, overrides: dict, stagger: bool) -> list:
    """Decode REQUESTS in shared steps; with `stagger`, request i joins at step i (continuous batching)."""
    waiting = [start_fim(runner, *r, None, overrides) for r in REQUESTS]
    live, started = [], list(waiting)
    while waiting or live:
        live += [waiting.pop(0)] if stagger and waiting else waiting
        waiting = waiting if stagger else []
        runner.step(live)
        live = [d for d in live if not d.done]
    return [runner.answers(d)[0] for d in started]


@pytest.mark.parametrize("overrides", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
@pytest.mark.parametrize("stagger", [False, True], ids=["together", "staggered"])
def test_a_batch_decodes_as_each_request_alone(runner, overrides, stagger):
    alone = [complete_fim(runner, *r, None, overrides) for r in REQUESTS]
    together = decode_together(runner, overrides, stagger)
    for one, answer in zip(alone, together):
        assert (answer.text, answer.forward_passes, answer.stop_reason) == (one.text, one.forward_passes, "done")
        assert answer.confidence == pytest.approx(one.confidence, abs=1e-5)


def test_batched_tokens_match_fill_alone(runner):
    alone = [fill(runner.model, runner.tok, *r).tokens for r in REQUESTS]
    together = [answer.tokens for answer in decode_together(runner, {}, stagger=True)]
    assert together == alone


def test_ragged_windows_in_one_pass_equal_each_window_alone(runner):
    model = runner.model
    torch.manual_seed(1)
    cases = [(40, slice(20, 30)), (25, slice(3, 20)), (60, slice(50, 52))]  # (canvas length, window)
    windows, positions, contexts, expected = [], [], [], []
    with torch.no_grad():
        for n, window in cases:
            ids = torch.randint(8, model.cfg.vocab_size, (1, n))  # (1, N)
            _, context = full_pass(model, ids, window)
            expected.append(window_pass(model, ids, window, context))  # (W, d)
            windows.append(ids[0, window])
            positions.append(torch.arange(window.start, window.stop))
            contexts.append(context)
        batched, _ = batch_window_pass(model, windows, positions, contexts)
    for got, want in zip(batched, expected):
        assert got.shape == want.shape and torch.allclose(got, want, atol=1e-5)


def test_a_step_counts_one_forward_for_all_cached_windows(runner):
    overrides = {"rule": "left_to_right", "refresh_every": 2}
    states = [start_fim(runner, *r, None, overrides).states[0] for r in REQUESTS[:3]]
    assert decode.step(runner.model, states).forwards == 3  # first passes are full passes, one each
    assert decode.step(runner.model, states).forwards == 1  # then all three windows share one forward
    assert all(s.passes == 2 for s in states)


def test_finish_fills_the_rest_from_the_last_pass(runner):
    d = start_fim(runner, "x = 1\n", "", "multi_line", 12, None, {"rule": "left_to_right"})
    runner.step([d])
    assert not d.done
    runner.fill_rest(d)
    out = runner.answers(d)[0]
    assert d.done and out.stop_reason == "deadline" and out.forward_passes == 1
    assert d.states[0].last_best is not None and int(d.states[0].masked.sum()) == 0
