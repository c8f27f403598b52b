"""Tests of the worker's intake under hostile load, over real ipc:// sockets: text caps, checks
before layout, layout bounded per step, the bounded intake queue, refused decoder overrides and
the rate-limited log of rejected frames."""
from __future__ import annotations

import re
import threading
import time

import msgpack
import pytest

from engine.wire.protocol import (MAX_DEADLINE_MS, MAX_PREFIX_CHARS, MAX_SNIPPET_TEXT_CHARS,
                                    MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS, MAX_TOKENS, Cancel,
                                    CompleteRequest, Error, ErrorCode, Health, HealthOk, MsgType, Result,
                                    Snippet, encode)
from engine.worker.scheduler import SchedulerConfig
from worker_fakes import FakeDecoding, FakeRunner, RawPeer, request, serving

pytestmark = pytest.mark.timeout(30)

LAYOUT_S_PER_CHAR = 10e-6  # LayoutCostRunner: a maximal request's layout takes 0.36 s


class LayoutCostRunner(FakeRunner):
    """FakeRunner whose layout (`start`) takes time in proportion to the context, as tokenizing does."""

    def start(self, job, deadline) -> FakeDecoding:
        time.sleep(sum(map(len, job.pieces)) * LAYOUT_S_PER_CHAR)
        return super().start(job, deadline)


class GatedRunner(FakeRunner):
    """FakeRunner whose steps wait for `gate`: the test holds the main loop inside a step."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.stepping = threading.Event(), threading.Event()

    def step(self, decodings: list[FakeDecoding]) -> int:
        self.stepping.set()
        assert self.gate.wait(10), "the test never opened the gate"
        return super().step(decodings)


@pytest.fixture
def ipc_address(short_tmp) -> str:
    return f"ipc://{short_tmp}/w.sock"


def maximal_request(rid: str) -> CompleteRequest:
    """The most a client may ask for: every text at its cap, the longest deadline."""
    snippets = [Snippet("t" * MAX_SNIPPET_TEXT_CHARS, f"{i}.py", 0)
                for i in range(MAX_SNIPPETS_TOTAL_CHARS // MAX_SNIPPET_TEXT_CHARS)]
    return CompleteRequest(rid, "fim", "p" * MAX_PREFIX_CHARS, "s" * MAX_SUFFIX_CHARS, snippets,
                           mode="multi_line", max_tokens=MAX_TOKENS, deadline_ms=MAX_DEADLINE_MS)


def replies_by_id(peer: RawPeer, count: int) -> dict[str, list]:
    replies: dict[str, list] = {}
    for _ in range(count):
        reply = peer.recv(timeout_ms=5000)
        replies.setdefault(reply.id, []).append(reply)
    assert not peer.sock.poll(200), "a reply more than expected"
    return replies


def hold_the_main_loop(runner: GatedRunner, peer: RawPeer) -> None:
    """Send a request "first" and wait until the main loop is inside its step."""
    peer.send(encode(request("first", prefix="first")))
    assert runner.stepping.wait(5), "the main loop never stepped"


def test_ten_maximal_requests_do_not_hold_a_normal_one_past_its_deadline(ipc_address):
    runner = LayoutCostRunner()
    with serving(runner, ipc_address) as address:
        flood, editor = RawPeer(address), RawPeer(address)
        try:
            for i in range(10):
                flood.send(encode(maximal_request(f"big{i}")))
            editor.send(encode(request("normal", deadline_ms=500)))
            # Laying the burst out in one go would take 3.6 s: answered by then is too late.
            reply = editor.recv(timeout_ms=2500)
            laid_out_by_then = len(runner.calls)
        finally:
            flood.close()
            editor.close()
    assert isinstance(reply, Result) and reply.id == "normal" and reply.stop_reason in ("done", "deadline")
    assert laid_out_by_then < 11  # answered while most of the burst still waited to be laid out


def test_an_expired_request_is_answered_without_being_laid_out(ipc_address):
    runner = GatedRunner()
    with serving(runner, ipc_address) as address:
        peer = RawPeer(address)
        hold_the_main_loop(runner, peer)
        peer.send(encode(request("late", prefix="late", deadline_ms=20)))
        peer.send(encode(Health()))
        assert isinstance(peer.recv(), HealthOk)  # "late" has arrived (the IO thread keeps order)
        time.sleep(0.05)  # "late" passes its deadline while the main loop is held
        runner.gate.set()
        replies = replies_by_id(peer, 2)
        peer.close()
    late, = replies["late"]
    assert (late.stop_reason, late.items) == ("deadline", [])
    assert replies["first"][0].stop_reason == "done"
    assert [call["prefix"] for call in runner.calls] == ["first"]


def test_a_request_the_scheduler_refuses_is_not_laid_out(ipc_address):
    runner = GatedRunner()
    full_at_one = SchedulerConfig(max_live=1, max_waiting=0, max_wait_s=None, max_slowdown=None)
    with serving(runner, ipc_address, full_at_one) as address:
        peer = RawPeer(address)
        hold_the_main_loop(runner, peer)
        peer.send(encode(request("refused", prefix="refused")))
        peer.send(encode(Health()))
        assert isinstance(peer.recv(), HealthOk)
        runner.gate.set()
        replies = replies_by_id(peer, 2)
        peer.close()
    assert replies["refused"][0].code == ErrorCode.OVERLOADED
    assert [call["prefix"] for call in runner.calls] == ["first"]


def test_beyond_the_intake_bound_requests_are_refused_at_once_and_each_gets_one_reply(ipc_address):
    runner = GatedRunner()
    holds_two = SchedulerConfig(max_live=1, max_waiting=1, max_wait_s=None, max_slowdown=None)
    with serving(runner, ipc_address, holds_two) as address:  # in flight: at most 2 * 2 = 4
        peer = RawPeer(address)
        hold_the_main_loop(runner, peer)
        for i in range(10):
            peer.send(encode(request(f"r{i}", prefix=f"r{i}")))
        at_once = replies_by_id(peer, 7)  # while the main loop is still held
        for _ in range(100):
            peer.send(encode(Cancel("r0")))
        runner.gate.set()
        later = replies_by_id(peer, 4)
        peer.close()
    assert sorted(at_once) == [f"r{i}" for i in range(3, 10)]
    assert all(reply.code == ErrorCode.OVERLOADED and "intake" in reply.message
               for reply in sum(at_once.values(), []))
    assert {rid: len(replies) for rid, replies in later.items()} == {"first": 1, "r0": 1, "r1": 1, "r2": 1}
    assert later["r0"][0].stop_reason == "cancelled"
    assert [later[rid][0].code for rid in ("r1", "r2")] == [ErrorCode.OVERLOADED] * 2  # the scheduler's bound
    assert later["first"][0].stop_reason == "done"


def test_a_prefix_over_its_cap_is_too_large_and_the_worker_keeps_serving(ipc_address):
    with serving(FakeRunner(), ipc_address) as address:
        peer = RawPeer(address)
        payload = msgpack.unpackb(encode(request("huge"))[1:]) | {"prefix": "p" * (MAX_PREFIX_CHARS + 1)}
        refused = peer(bytes([MsgType.COMPLETE_REQUEST]) + msgpack.packb(payload))
        after = peer(encode(request("after")))
        peer.close()
    assert isinstance(refused, Error) and (refused.id, refused.code) == ("huge", ErrorCode.TOO_LARGE)
    assert "'prefix'" in refused.message and str(MAX_PREFIX_CHARS) in refused.message
    assert isinstance(after, Result) and after.stop_reason == "done"


def test_a_request_that_runs_its_budget_of_passes_says_so(model_worker):
    peer = RawPeer(model_worker)
    bounded = peer(encode(request("b", mode="multi_line", max_tokens=12,
                                  decoder={"rule": "left_to_right", "max_passes": 2})))
    peer.close()
    assert isinstance(bounded, Result) and bounded.stop_reason == "budget"
    assert [item.forward_passes for item in bounded.items] == [2]


@pytest.fixture(scope="module")
def model_worker(tiny_model_dir, tmp_path_factory):
    from engine.worker.runner import ModelRunner

    address = f"ipc://{tmp_path_factory.mktemp('mw')}/w.sock"
    with serving(ModelRunner(tiny_model_dir), address) as bound:
        yield bound


@pytest.mark.parametrize("overrides, setting", [
    ({"temperature": 0.5}, "temperature"),
    ({"threshold": "high"}, "threshold"),
    ({"threshold": 2.0}, "threshold"),
    ({"steps": True}, "steps"),
    ({"lengths": 9}, "lengths"),
    ({"grow": 1}, "grow"),
    ({"rule": "verify", "remask": 0.5}, "remask"),
    ({"window": 8}, "window"),  # the default rule does not commit from the left
    ({"max_passes": -1}, "max_passes"),
])
def test_bad_decoder_overrides_are_invalid_fields_naming_the_setting(model_worker, overrides, setting):
    peer = RawPeer(model_worker)
    refused = peer(encode(request("bad", decoder=overrides)))
    peer.close()
    assert isinstance(refused, Error) and (refused.id, refused.code) == ("bad", ErrorCode.INVALID_FIELD)
    assert refused.message.startswith("field 'decoder'") and f"'{setting}'" in refused.message


def test_after_bad_decoder_overrides_the_worker_keeps_serving(model_worker):
    peer = RawPeer(model_worker)
    refused = peer(encode(request("bad", decoder={"threshold": "high"})))
    after = peer(encode(request("good", max_tokens=4, decoder={"threshold": 0.5})))
    peer.close()
    assert refused.code == ErrorCode.INVALID_FIELD
    assert isinstance(after, Result) and after.stop_reason == "done"


def test_a_flood_of_bad_frames_logs_a_bounded_number_of_lines(ipc_address, caplog):
    frames = 500
    with serving(FakeRunner(), ipc_address) as address:
        peer = RawPeer(address)
        for _ in range(frames):
            peer.send(bytes([MsgType.COMPLETE_REQUEST]) + b"\xc1")
        assert all(peer.recv().code == ErrorCode.MALFORMED for _ in range(frames))
        summed = wait_for_logged_rejections(caplog, frames)
        assert isinstance(peer(encode(Health())), HealthOk)
        peer.close()
    lines, one_by_one, summaries = summed
    assert one_by_one + summaries == frames  # every rejected frame is logged or counted in a summary
    assert one_by_one < frames / 10 and lines < frames / 10


def wait_for_logged_rejections(caplog, frames: int, within_s: float = 10.0) -> tuple[int, int, int]:
    """(lines, frames logged one by one, frames counted in summaries) from engine.worker.worker, once
    they account for `frames` (the summary of the last period comes when the period is over)."""
    give_up = time.monotonic() + within_s
    while True:
        records = [r.getMessage() for r in caplog.records if r.name == "engine.worker.worker"]
        one_by_one = sum(message.startswith("rejected a frame") for message in records)
        summaries = sum(int(m.group(1)) for message in records
                        if (m := re.match(r"(\d+) more rejected frames were not logged", message)))
        if one_by_one + summaries >= frames or time.monotonic() > give_up:
            return len(records), one_by_one, summaries
        time.sleep(0.1)

