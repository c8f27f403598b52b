"""A request's life in the worker, on a fake model runner over a real ipc:// socket: a cancel
between steps, deadlines (work that never ran is dropped, work that ran is answered), requests in
flight sharing steps, a newer request of a session superseding the older, and the load bounds
(a wait for room too long, a full intake) answered as overloaded."""
# The fixtures imported from worker_fakes are the tests' parameters: not redefinitions.
# ruff: noqa: F811
from __future__ import annotations

import pytest

from engine.wire.protocol import Cancel, ErrorCode, Health, HealthOk, encode
from engine.worker.scheduler import SchedulerConfig
from worker_fakes import GATED_DEADLINE_MS, FakeRunner, RawPeer, request, serving
from worker_fakes import client, ipc_address, raw, served  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(120)


def test_cancel_answers_a_live_request_between_steps(served, raw):
    raw.send(encode(request("slow", prefix="gated:0.05", deadline_ms=GATED_DEADLINE_MS)))
    raw.send(encode(request("held", prefix="hold")))  # never finishes on its own
    raw.send(encode(Cancel("held")))
    raw.send(encode(Cancel("never-sent")))  # unknown ids are ignored
    cancelled = raw.recv()
    assert (cancelled.id, cancelled.stop_reason, cancelled.items) == ("held", "cancelled", [])
    served[1].gate.set()  # "slow" ran beside it all along
    assert raw.recv().id == "slow"
    assert not raw.sock.poll(200)  # one reply per request


def test_expired_work_is_dropped_if_it_never_ran_else_answered_anytime(ipc_address):
    runner = FakeRunner()
    with serving(runner, ipc_address, SchedulerConfig(max_live=1)) as address:
        peer = RawPeer(address)
        peer.send(encode(request("running", prefix="hold", deadline_ms=300)))
        peer.send(encode(request("waiting", deadline_ms=50)))  # no room beside "running"
        replies = {r.id: r for r in (peer.recv(), peer.recv())}
        assert not peer.sock.poll(200)
        peer.close()
    assert (replies["waiting"].stop_reason, replies["waiting"].items) == ("deadline", [])
    late = replies["running"]
    assert late.stop_reason == "deadline" and late.items[0].text == "hold|\n"
    assert late.items[0].forward_passes >= 1
    assert set(runner.batches) == {1}


def test_requests_in_flight_together_share_steps(served, raw, client):
    for i in range(4):
        raw.send(encode(request(f"r{i}", prefix="sleep:0.2")))
    replies = [raw.recv() for _ in range(4)]
    assert not raw.sock.poll(100)
    assert sorted(r.id for r in replies) == ["r0", "r1", "r2", "r3"]
    assert all(r.stop_reason == "done" and r.items[0].forward_passes == 10 for r in replies)
    health = client.health()
    assert health.step_requests == 40 and health.forward_passes == health.steps < 40
    assert max(served[1].batches) > 1


def test_a_newer_request_of_the_session_supersedes_the_older(served, raw):
    other = RawPeer(served[0])  # a client sends each call in flight on a socket of its own
    try:
        other.send(encode(request("old", prefix="hold", session="doc")))
        other.send(encode(Health()))  # answered once "old" is on its way to the main loop
        assert isinstance(other.recv(), HealthOk)
        raw.send(encode(request("elsewhere", prefix="hold", session="other-doc")))
        raw.send(encode(request("new", session="doc")))
        superseded, answered = other.recv(), raw.recv()
        assert (superseded.id, superseded.stop_reason, superseded.items) == ("old", "cancelled", [])
        assert (answered.id, answered.stop_reason) == ("new", "done")
        raw.send(encode(Cancel("elsewhere")))
        assert raw.recv().id == "elsewhere"
        assert not raw.sock.poll(100) and not other.sock.poll(100)
    finally:
        other.close()


def test_a_request_that_waits_too_long_for_room_is_refused_at_once(ipc_address):
    with serving(FakeRunner(), ipc_address, SchedulerConfig(max_live=1, max_wait_s=0.2, shed_queue=1)) as address:
        peer = RawPeer(address)
        peer.send(encode(request("a", prefix="hold")))
        peer.send(encode(request("b", deadline_ms=5000)))
        refused = peer.recv()
        assert (refused.id, refused.code) == ("b", ErrorCode.OVERLOADED) and "waited" in refused.message
        peer.send(encode(Cancel("a")))
        assert peer.recv().stop_reason == "cancelled"
        peer.close()


def test_beyond_its_bounds_the_worker_answers_overloaded(ipc_address):
    with serving(FakeRunner(), ipc_address, SchedulerConfig(max_live=1, max_waiting=1, max_wait_s=None)) as address:
        peer = RawPeer(address)
        peer.send(encode(request("a", prefix="hold")))
        peer.send(encode(request("b", prefix="hold", session="s")))
        peer.send(encode(request("c")))
        refused = peer.recv()
        assert (refused.id, refused.code) == ("c", ErrorCode.OVERLOADED) and "retry" in refused.message
        peer.send(encode(request("d", session="s", deadline_ms=100)))  # supersedes "b": room for it
        superseded, waited = peer.recv(), peer.recv()
        assert (superseded.id, superseded.stop_reason) == ("b", "cancelled")
        assert (waited.id, waited.stop_reason, waited.items) == ("d", "deadline", [])  # "a" holds the batch
        peer.send(encode(Cancel("a")))
        assert peer.recv().stop_reason == "cancelled"
        assert not peer.sock.poll(100)
        peer.close()
