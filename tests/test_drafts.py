"""Guesses for the `verify` rule: context lookup (pure) and exact checking in the decoder."""
import torch

from engine.worker.runner import ModelRunner
from runner_fim import complete_fim, start_fim
from infill.drafts import context_drafts, guesses

MASK, PAD, NEWLINE = 0, 1, 9
HOLE = slice(6, 10)  # canvas positions 6..9


def canvas(before: list[int], after: list[int]) -> torch.Tensor:
    assert len(before) == HOLE.start
    return torch.tensor(before + [MASK] * (HOLE.stop - HOLE.start) + after)


def test_the_tokens_after_the_nearest_earlier_occurrence_are_guessed():
    ids = canvas([20, 21, 30, 20, 21, 31], [40])
    ids[HOLE.start:HOLE.start + 2] = torch.tensor([20, 21])  # two hole positions committed
    assert context_drafts(ids, HOLE, first=2, count=3).tolist() == [31]  # stops at the hole's edge
    ids[HOLE.start + 1] = 22
    assert context_drafts(ids, HOLE, first=2, count=3).tolist() == []


def test_a_key_is_looked_up_after_the_hole_when_nothing_before_it_matches():
    ids = canvas([50, 51, 52, 53, 20, 21], [60, 20, 21, 22, 23, 24, 20, 21, 25])
    assert context_drafts(ids, HOLE, first=0, count=2).tolist() == [22, 23]  # the first occurrence after it
    assert context_drafts(ids, HOLE, first=0, count=0).tolist() == []


def test_guesses_prefer_the_lookup_and_stop_before_an_end():
    ids = canvas([50, 20, 21, 30, 20, 21], [40])
    last_best = torch.tensor([7, 8, NEWLINE, 11])  # the last pass's top-1 per hole position
    ends = torch.tensor([PAD, NEWLINE])
    assert guesses(last_best, ids, HOLE, 0, 4, ends).tolist() == [30, 20, 21, 11]  # looked up to the hole, then top-1
    no_match = canvas([50, 51, 52, 53, 54, 55], [40])
    assert guesses(last_best, no_match, HOLE, 0, 4, ends).tolist() == [7, 8]  # the newline ends the guesses


def run_both(runner: ModelRunner, request: tuple, drafts: int):
    never = 1 << 16  # and no budget of passes: each answer whole
    plain = complete_fim(runner, *request, None, {"rule": "left_to_right", "refresh_every": never, "max_passes": 0})
    checked = complete_fim(runner, *request, None, {"rule": "verify", "drafts": drafts, "refresh_every": never,
                                                    "max_passes": 0})
    return plain, checked


def test_verify_answers_exactly_what_left_to_right_decoding_answers(tiny_model_dir):
    torch.set_num_threads(1)
    runner = ModelRunner(tiny_model_dir)
    requests = [("def read(path):\n    return ", "\n", "single_line", 8), ("x = 1\n", "", "multi_line", 24),
                ("a = b\nc = d\na = b\nc = d\na = ", "\n", "multi_line", 16)]
    for request in requests:
        for drafts in (1, 4, 16):
            plain, checked = run_both(runner, request, drafts)
            assert checked.text == plain.text
            assert checked.forward_passes <= plain.forward_passes


def test_verify_commits_several_tokens_per_pass_on_repeated_code():
    from infill.paths import bundled_model_dir

    torch.set_num_threads(1)
    runner = ModelRunner(bundled_model_dir())
    prefix = ("def area(shape):\n    return shape.width * shape.height\n\n\n"
              "def perimeter(shape):\n    return 2 * (shape.width + shape.height)\n\n\n"
              "def scaled_area(shape, k):\n    return ")
    plain, checked = run_both(runner, (prefix, "\n", "single_line", 32), drafts=4)
    assert checked.text == plain.text and len(plain.text) > 10
    assert checked.forward_passes < plain.forward_passes


def test_a_verify_decoding_past_its_deadline_answers_from_its_last_pass(tiny_model_dir):
    import time

    runner = ModelRunner(tiny_model_dir)
    decoding = start_fim(runner, "x = 1\n", "", "multi_line", 24, None, {"rule": "verify", "refresh_every": 1 << 16})
    runner.step([decoding])
    runner.step([decoding])  # a cached pass with guess windows
    assert not decoding.done, "the hole should outlast two passes"
    decoding.states[0].deadline = time.monotonic() - 1
    runner.step([decoding])
    out = runner.answers(decoding)[0]
    assert decoding.done and out.stop_reason == "deadline" and out.forward_passes == 3
