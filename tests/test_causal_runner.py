"""The causal runner on the bundled autoregressive twin: its cached left-to-right answers are a
plain greedy loop's (the whole sequence re-encoded each pass), it refuses what it cannot serve,
stops at its deadline, and the worker serves the twin like any model."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

from engine.client.calls import WorkerError
from engine.launch import spawn_local_worker, stop_worker
from engine.wire.protocol import CompleteRequest, Hole, ProtocolError
from engine.client.sync_client import WorkerClient
from engine.worker.causal_runner import CausalRunner, is_causal
from infill.job import Job
from infill.paths import bundled_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

TWIN = bundled_model_dir().parent / "infill-py-16m-ar"
PROMPTS = [
    ("def add(a, b):\n    return ", "single_line"),
    ("import os\n\ndef list_files(path):\n    for name in os.", "single_line"),
    ("values = [1, 2, 3]\nfor index in ra", "single_line"),  # the cursor inside a word: healed
    ("class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n",
     "multi_line"),
]


@pytest.fixture(scope="module")
def runner() -> CausalRunner:
    assert is_causal(TWIN), f"{TWIN} should hold the autoregressive twin"
    torch.set_num_threads(2)
    return CausalRunner(TWIN)


def greedy_reference(runner: CausalRunner, prefix: str, mode: str, max_tokens: int) -> list[int]:
    """Greedy decoding without a cache: each token from a full pass over everything so far."""
    tok, model = runner.tok, runner.model
    healed = tok.heal(prefix)
    ids = list(tok.head_ids) + healed.ids
    ends = set(tok.end_ids) | set(tok.head_ids) | {tok.end_id}
    banned = [i for i in range(tok.vocab_size) if i in set(tok.banned_ids) and i not in ends]
    allowed = set(tok.tokens_starting_with(healed.text)) if healed.text else None
    written: list[int] = []
    while len(written) < max_tokens:
        with torch.inference_mode():
            logits, _ = model(torch.tensor([ids + written]))
        row = logits[0, -1].float().clone()
        row[banned] = float("-inf")
        if not written:
            if allowed is not None:
                row[[i for i in range(row.shape[0]) if i not in allowed]] = float("-inf")
            row[sorted(ends)] = float("-inf")
        token = int(torch.argmax(row))
        if token in ends:
            break
        written.append(token)
        text = tok.decode(written)
        if mode == "single_line" and "\n" in tok.token_texts[token]:
            break
        if mode == "multi_line" and "\n\n" in text.replace(" ", "").replace("\t", ""):
            break
    return written


@pytest.mark.parametrize("prefix,mode", PROMPTS)
def test_cached_answers_equal_a_plain_greedy_loop(runner, prefix, mode):
    max_tokens = 24
    decoding = runner.start(Job.fim(prefix, "\n", mode, max_tokens), None)
    while not decoding.done:
        runner.step([decoding])
    expected = greedy_reference(runner, prefix, mode, max_tokens)
    assert decoding.state.tokens == expected
    [answer] = runner.answers(decoding)
    if mode == "single_line":
        text = runner.tok.decode(expected)[len(decoding.state.healed):]
        assert answer.text == text[:text.index("\n") + 1] if "\n" in text else text
    assert answer.forward_passes >= len(expected) and answer.stop_reason == "done"


def test_the_suffix_is_not_shown_to_the_model(runner):
    prefix = "def add(a, b):\n    return "
    [one] = runner.complete(Job.fim(prefix, "\nprint(add(1, 2))\n", "single_line", 16), None)
    [other] = runner.complete(Job.fim(prefix, "\nclass Unrelated:\n    pass\n", "single_line", 16), None)
    assert one.text == other.text


def test_a_past_deadline_stops_after_the_first_pass_with_what_is_written(runner):
    decoding = runner.start(Job.fim("def add(a, b):\n    return ", "\n", "single_line", 24), time.monotonic())
    while not decoding.done:
        runner.step([decoding])
    [answer] = runner.answers(decoding)
    assert answer.forward_passes == 1 and answer.stop_reason == "deadline"
    assert len(decoding.state.tokens) <= 1


def test_edits_and_decoder_overrides_are_refused_with_the_reason(runner):
    edit = Job(("a = ", "\nb = ", "\n"), (Hole("single_line", 4), Hole("single_line", 4)))
    with pytest.raises(ProtocolError, match="serves fim jobs only"):
        runner.start(edit, None)
    with pytest.raises(ProtocolError, match="no decoder overrides"):
        runner.start(Job.fim("a = ", "\n", "single_line", 4, decoder={"rule": "threshold"}), None)
    with pytest.raises(ProtocolError, match="context"):
        runner.start(Job.fim("a = ", "\n", "single_line", 4096), None)


def test_a_diffusion_folder_is_not_causal(tmp_path: Path):
    assert not is_causal(bundled_model_dir())
    assert not is_causal(tmp_path)


def test_the_worker_serves_the_twin_like_any_model():
    proc, address = spawn_local_worker(TWIN, threads=1)
    try:
        with WorkerClient(address, timeout_s=60) as client:
            assert client.info().model == TWIN.name
            result = client.complete(CompleteRequest("twin-1", "fim", "def add(a, b):\n    return ", "\n",
                                                     max_tokens=16, deadline_ms=30000))
            assert result.stop_reason == "done" and result.items[0].text.strip()
            assert result.items[0].forward_passes >= 1
            with pytest.raises(WorkerError, match="fim jobs only"):
                client.complete(CompleteRequest("twin-2", "edit", "a = ", "\n", deadline_ms=30000,
                                                holes=[Hole("single_line", 4)] * 2, pieces=["\nb = "]))
    finally:
        assert stop_worker(proc) == 0
