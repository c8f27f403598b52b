"""Streamed requests: the runner's settled text always starts its final answer, loops included,
and the worker sends it in Partial replies before the Result."""
from __future__ import annotations

import asyncio

from hypothesis import given, settings, strategies as st

from engine.client.async_client import AsyncWorkerClient
from engine.wire.protocol import CompleteRequest, Partial, Result
from engine.worker.runner import ModelRunner
from engine.worker.worker import Worker
from infill.job import Job
from infill.repetition import LOOP_SPAN, cut_loop, settled_length


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=60), st.lists(st.integers(0, 3), max_size=40))
def test_what_settles_is_kept_by_any_continuation(ids, more):
    kept = settled_length(ids)
    assert cut_loop(ids + more)[:kept] == ids[:kept] and kept <= len(ids)


def test_a_loop_decided_in_full_settles_where_it_is_cut():
    ids = [5, 6] + [1, 2] * 20
    assert settled_length(ids) == len(cut_loop(ids)) == 4 and len(ids) > LOOP_SPAN


def test_each_partial_of_a_decoding_starts_its_answer(tiny_model_dir):
    runner = ModelRunner(tiny_model_dir)
    job = Job.fim("def add(a, b):\n", "\n\nprint(add(1, 2))\n", "multi_line", 48)
    decoding, partials = runner.start(job, None), []
    while not decoding.done:
        runner.step([decoding])
        partials.append(runner.partial(decoding))
    final = runner.answers(decoding)[0].text
    assert all(final.startswith(text) for text in partials)
    assert [len(p) for p in partials] == sorted(len(p) for p in partials)


async def test_a_worker_sends_partials_then_the_result(tiny_model_dir, short_tmp):
    worker = Worker(ModelRunner(tiny_model_dir), f"ipc://{short_tmp}/w.sock")
    serving = asyncio.get_running_loop().run_in_executor(None, worker.serve)
    client = AsyncWorkerClient(worker.address)
    try:
        request = CompleteRequest("r1", "fim", "def add(a, b):\n", "\n", mode="multi_line",
                                  max_tokens=48, deadline_ms=20000,
                                  decoder={"threshold": 0.99, "stop_loops": False})  # a random model's text
    #   loops: with stop_loops it would end at its first copy, before anything settled to stream
        replies = [reply async for reply in client.stream(request)]
    finally:
        client.close()
        worker.stop()
        await serving
    assert isinstance(replies[-1], Result) and all(isinstance(r, Partial) for r in replies[:-1])
    assert len(replies) >= 2, replies  # text settled before the end
    final = replies[-1].items[0].text
    assert all(final.startswith(r.text) for r in replies[:-1])
