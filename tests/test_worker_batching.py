"""Continuous batching on the real bundled model behind a real socket: shared steps, supersession,
expiry, overload, and exactly one reply per request."""
from __future__ import annotations

import contextlib
import threading

import pytest
import zmq

from engine.wire.protocol import CompleteRequest, Error, ErrorCode, Health, Hole, Result, decode, encode
from engine.worker.scheduler import SchedulerConfig
from engine.worker.worker import Worker
from infill.job import Hole as JobHole
from infill.job import Job
from infill.paths import bundled_model_dir
from runner_fim import complete_fim

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PROMPTS = [
    ("def area(radius):\n    return 3.14159 * ", "\n", "single_line", 16),
    ("import os\n\ndef read(path):\n", "\n", "multi_line", 24),
    ("class Counter:\n    def __init__(self, start=0):\n        self.", "\n", "single_line", 20),
    ("for i in range(", "):\n    print(i)\n", "single_line", 8),
]
LONG = ("import os\n\n\ndef main():\n", "\n", "multi_line", 96)  # the bundled model commits one token a pass


@pytest.fixture(scope="module")
def runner():
    import torch

    from engine.worker.runner import ModelRunner

    torch.set_num_threads(1)
    return ModelRunner(bundled_model_dir())


@contextlib.contextmanager
def serving(runner, folder, scheduler: SchedulerConfig | None = None):
    worker = Worker(runner, f"ipc://{folder}/w.sock", scheduler=scheduler)
    thread = threading.Thread(target=worker.serve, name="test-worker")
    thread.start()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(worker.address)
    try:
        yield sock
    finally:
        sock.close()
        ctx.term()
        worker.stop()
        thread.join(timeout=10)


def request(rid: str, prompt: tuple, **fields) -> CompleteRequest:
    prefix, suffix, mode, max_tokens = prompt
    return CompleteRequest(rid, "fim", prefix, suffix, mode=mode, max_tokens=max_tokens,
                           **{"deadline_ms": 30_000, **fields})


def recv(sock: zmq.Socket):
    assert sock.poll(30_000), "no reply from the worker"
    return decode(sock.recv())


def replies(sock: zmq.Socket, count: int) -> dict:
    """The next `count` replies by request id, then checks that no other reply follows."""
    got = [recv(sock) for _ in range(count)]
    assert not sock.poll(200), "a request was answered twice"
    by_id = {r.id: r for r in got}
    assert len(by_id) == count
    return by_id


def test_concurrent_requests_share_steps_and_decode_as_alone(runner, short_tmp):
    alone = [complete_fim(runner, *p, None, {}) for p in PROMPTS]
    # every request must join the shared steps, however slow a busy machine makes them: no shedding
    with serving(runner, short_tmp, SchedulerConfig(max_wait_s=None, max_slowdown=None)) as sock:
        for i, prompt in enumerate(PROMPTS):
            sock.send(encode(request(f"r{i}", prompt)))
        results = replies(sock, len(PROMPTS))
        sock.send(encode(Health()))
        health = recv(sock)
    items = [results[f"r{i}"].items[0] for i in range(len(PROMPTS))]
    assert [(i.text, i.forward_passes) for i in items] == [(a.text, a.forward_passes) for a in alone]
    assert health.step_requests == sum(i.forward_passes for i in items)
    assert health.steps < health.step_requests  # several requests per step: batched
    assert health.forward_passes < health.step_requests


def test_supersession_overload_and_expiry_each_get_one_reply(runner, short_tmp):
    with serving(runner, short_tmp, SchedulerConfig(max_live=1, max_waiting=0)) as sock:
        sock.send(encode(request("old", LONG, session="inline:a.py")))
        sock.send(encode(request("new", PROMPTS[0], session="inline:a.py")))  # room: "old" goes first
        superseded = replies(sock, 2)
        sock.send(encode(request("first", LONG)))
        sock.send(encode(request("refused", PROMPTS[1])))
        overloaded = replies(sock, 2)
        sock.send(encode(request("late", LONG, deadline_ms=1)))
        expired = replies(sock, 1)["late"]
    assert (superseded["old"].stop_reason, superseded["old"].items) == ("cancelled", [])
    assert superseded["new"].stop_reason == "done" and superseded["new"].items[0].text
    assert isinstance(overloaded["refused"], Error) and overloaded["refused"].code == ErrorCode.OVERLOADED
    first = overloaded["first"]  # answered: its decoding ended, or ran its budget of passes
    assert first.stop_reason in ("done", "budget") and first.items[0].forward_passes > 1
    assert isinstance(expired, Result) and expired.stop_reason == "deadline"


EDIT = ["def area(radius):\n    return ", "\n\n\ndef perimeter(radius):\n    return ",
        "\n\n\ndef diameter(radius):\n    return ", "\n"]


def edit_request(rid: str) -> CompleteRequest:
    holes = [Hole("single_line", 12, "3.14 * radius ** 2")] + [Hole("single_line", 12)] * 2
    return CompleteRequest(rid, "edit", EDIT[0], EDIT[-1], holes=holes, pieces=EDIT[1:-1], deadline_ms=30_000)


def test_a_three_hole_edit_and_a_fim_request_share_steps_and_answer_as_alone(runner, short_tmp):
    job = Job(tuple(EDIT), (JobHole("single_line", 12, "3.14 * radius ** 2"),) + (JobHole("single_line", 12),) * 2)
    alone = [a.text for a in runner.complete(job, None)]
    fim_alone = complete_fim(runner, *PROMPTS[0], None, {})
    with serving(runner, short_tmp, SchedulerConfig(max_wait_s=None, max_slowdown=None)) as sock:
        sock.send(encode(edit_request("edit")))
        sock.send(encode(request("fim", PROMPTS[0])))
        results = replies(sock, 2)
        sock.send(encode(Health()))
        health = recv(sock)
    edit, fim = results["edit"], results["fim"]
    assert [item.hole for item in edit.items] == [0, 1, 2] and all(item.text for item in edit.items)
    assert [item.text for item in edit.items] == alone  # `replaces` shown in this model's canvas, both times
    assert fim.items[0].text == fim_alone.text
    passes = edit.items[0].forward_passes + fim.items[0].forward_passes
    assert health.step_requests == passes and health.steps < passes  # the two shared steps
    assert edit.timings.prefill_ms > 0 and edit.timings.prepare_ms > 0
