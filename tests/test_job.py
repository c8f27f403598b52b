"""Jobs (`infill.job`) and their step-wise decoding (`infill.fim`): one hole or several, snippets."""
import pytest
import torch

from infill import decode
from infill.checkpoint import load_model
from infill.commit import DecoderConfig
from infill.fim import fill, job_answers, run_job, start_job
from infill.job import Hole, Job

PIECES = ("def read(path):\n    return ", "\n\n\ndef write(path, text):\n    ", "\n\nx = ", "\n")


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    torch.set_num_threads(1)
    return load_model(tiny_model_dir)


@pytest.mark.parametrize("pieces, holes, why", [
    (("a", "b"), (), "at least one hole"),
    (("a",), (Hole("single_line", 4),), "needs 2 text pieces"),
])
def test_a_bad_job_says_what_is_wrong(pieces, holes, why):
    with pytest.raises(ValueError, match=why):
        Job(pieces, holes)


@pytest.mark.parametrize("mode, budget", [("auto", 4), ("single_line", 0), ("single_line", "8")])
def test_a_bad_hole_says_what_is_wrong(mode, budget):
    with pytest.raises(ValueError, match="hole's"):
        Hole(mode, budget)


def test_a_fim_job_is_one_hole_between_prefix_and_suffix():
    job = Job.fim("x = ", "\n", "single_line", 8, snippets=("def f(): ...",), decoder={"threshold": 0.5})
    assert (job.prefix, job.suffix, job.one_hole, job.budget) == ("x = ", "\n", True, 8)
    assert dict(job.decoder) == {"threshold": 0.5} and job.snippets == ("def f(): ...",)


def test_a_one_hole_job_answers_as_fill(model, tiny_tokenizer):
    for mode in ("single_line", "multi_line"):
        filled = fill(model, tiny_tokenizer, PIECES[0], PIECES[1], mode, 12)
        [answer], _, _ = run_job(model, tiny_tokenizer, Job.fim(PIECES[0], PIECES[1], mode, 12))
        assert answer == filled


def test_a_three_hole_job_answers_each_hole_from_one_joint_state(model, tiny_tokenizer):
    job = Job(PIECES, (Hole("single_line", 6), Hole("multi_line", 8), Hole("single_line", 4)))
    decoding = start_job(model, tiny_tokenizer, job, DecoderConfig())
    assert len(decoding.states) == 1 and len(decoding.states[0].holes) == 3
    while decoding.unfinished:
        decode.step(model, decoding.unfinished)
    answers = job_answers(tiny_tokenizer, decoding)
    assert len(answers) == 3
    assert [len(a.tokens) for a in answers] == [6, 8, 4]
    assert all(a.forward_passes == decoding.states[0].passes for a in answers)
    assert "\n" not in answers[0].text[:-1] and "\n" not in answers[2].text[:-1]


def test_one_hole_and_three_hole_jobs_share_steps_and_answer_as_alone(model, tiny_tokenizer):
    jobs = [Job.fim("x = 1\n", "", "multi_line", 10),
            Job(PIECES, (Hole("single_line", 6), Hole("multi_line", 8), Hole("single_line", 4)))]
    cfg = DecoderConfig(rule="fixed", steps=4, refresh_every=3)
    alone = [[a.text for a in run_job(model, tiny_tokenizer, job, cfg)[0]] for job in jobs]
    decodings = [start_job(model, tiny_tokenizer, job, cfg) for job in jobs]
    steps = 0
    while unfinished := [state for d in decodings for state in d.unfinished]:
        decode.step(model, unfinished)
        steps += 1
    assert steps == 4
    assert [[a.text for a in job_answers(tiny_tokenizer, d)] for d in decodings] == alone


def test_snippets_reach_the_canvas_only_when_asked(model, tiny_tokenizer):
    job = Job.fim("x = ", "\n", "single_line", 4, snippets=("def helper(a, b):\n    return a",))
    plain = start_job(model, tiny_tokenizer, job, DecoderConfig()).states[0].ids[0].tolist()
    laid = start_job(model, tiny_tokenizer, job, DecoderConfig(), with_snippets=True).states[0].ids[0].tolist()
    assert tiny_tokenizer.snippet_id not in plain
    assert tiny_tokenizer.snippet_id in laid and len(laid) > len(plain)
    assert laid[-len(plain) + 1:] == plain[1:]  # the same prefix, hole and suffix after the snippet
