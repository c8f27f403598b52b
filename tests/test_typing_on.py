"""The worker's typing-through: the next keystroke takes over a running decoding that already
committed what was typed, and answers what that decoding would have, less the typed text."""
import time

import pytest
import torch

from engine.wire.protocol import CompleteRequest, Result
from engine.worker.core import EngineCore
from engine.worker.runner import ModelRunner
from infill import decode
from runner_fim import complete_fim
from engine.worker.scheduler import SchedulerConfig
from engine.worker.worker import Arrival

PREFIX = "def total(items):\n    return sum(item.price for item in "
SUFFIX = "\n\n\nprint(total([]))\n"
DECODER = {"reuse_prefix": False}  # each canvas encoded afresh: answers comparable one to one


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def job(rid: str, prefix: str) -> Arrival:
    request = CompleteRequest(rid, "fim", prefix, SUFFIX, mode="single_line", max_tokens=8,
                              deadline_ms=30000, decoder=dict(DECODER), session="editor:file")
    return Arrival(b"peer", request, time.monotonic())


def committed_text(runner: ModelRunner, core: EngineCore) -> str:
    """What the one running request has committed from the left, after its prefix."""
    decoding = core.scheduler.running[0].payload.decoding
    return runner.tok.decode(decode.committed_run(decoding.states[0]))[len(decoding.healed[0]):]


def run_to_the_end(core: EngineCore) -> dict[str, Result]:
    replies = {}
    while not core.is_idle:
        replies.update((j.request.id, reply) for j, reply in core.step())
    return replies


def test_a_keystroke_that_types_what_was_committed_takes_the_decoding_over(runner):
    alone = complete_fim(runner, PREFIX, SUFFIX, "single_line", 8, None, dict(DECODER)).text
    core = EngineCore(runner, SchedulerConfig(max_wait_s=None, max_slowdown=None))
    assert core.add(job("first", PREFIX)) == []
    core.step()
    committed = committed_text(runner, core)
    assert committed and alone.startswith(committed)
    typed = committed[0]
    replies = dict((j.request.id, reply) for j, reply in core.add(job("next", PREFIX + typed)))
    assert replies["first"].stop_reason == "cancelled" and core.stats.carried == 1
    assert core.scheduler.running[0].payload.request.id == "next"  # in the batch at once
    replies = run_to_the_end(core)
    assert replies["next"].items[0].text == alone[len(typed):]


def test_a_keystroke_that_types_something_else_decodes_afresh(runner):
    core = EngineCore(runner, SchedulerConfig(max_wait_s=None, max_slowdown=None))
    core.add(job("first", PREFIX))
    core.step()
    other = "Q" if not committed_text(runner, core).startswith("Q") else "Z"
    replies = dict((j.request.id, reply) for j, reply in core.add(job("next", PREFIX + other)))
    assert replies["first"].stop_reason == "cancelled" and core.stats.carried == 0
    alone = complete_fim(runner, PREFIX + other, SUFFIX, "single_line", 8, None, dict(DECODER)).text
    assert run_to_the_end(core)["next"].items[0].text == alone
