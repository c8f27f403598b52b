"""Tests of engine.worker.scheduler: admission, deadlines, cancel, supersession, overload (pure, no clock)."""
from __future__ import annotations

import pytest

from engine.worker.scheduler import Outcome, Scheduler, SchedulerConfig, Sequence, admission_order


def seq(key: str, arrival: float = 0.0, deadline: float = 10.0, tokens: int = 10,
        session: str | None = None, prepared: bool = True) -> Sequence:
    return Sequence(key=key, session=session, arrival=arrival, deadline=deadline, step_tokens=tokens,
                    prepared=prepared)


def scheduler(**bounds) -> Scheduler:
    """A scheduler whose clock ticks in whole seconds: no wait bound unless given (it has tests of its own)."""
    return Scheduler(SchedulerConfig(**{"max_wait_s": None, **bounds}))


def outcomes(finals) -> list[tuple[str, str]]:
    return [(f.seq.key, str(f.outcome)) for f in finals]


def run_step(sched: Scheduler, now: float, done: set[str] = frozenset()):
    """One engine step: schedule, pretend to run, postprocess; returns (batch keys, finals)."""
    batch, finals = sched.schedule(now)
    finals += sched.postprocess(batch, [s.key in done for s in batch])
    return [s.key for s in batch], finals


def test_requests_join_the_running_batch_between_steps():
    sched = scheduler()
    sched.add(seq("a"))
    assert run_step(sched, 1.0) == (["a"], [])
    sched.add(seq("b", arrival=1.5))
    batch, finals = run_step(sched, 2.0, done={"a"})
    assert batch == ["a", "b"] and outcomes(finals) == [("a", "finished")]
    assert run_step(sched, 3.0, done={"b"})[0] == ["b"]
    assert sched.is_idle


def test_admission_respects_live_and_token_bounds_in_arrival_order():
    sched = scheduler(max_live=3, max_step_tokens=25)
    for key, tokens in (("a", 10), ("b", 10), ("c", 10), ("d", 1)):
        sched.add(seq(key, tokens=tokens))
    assert run_step(sched, 1.0)[0] == ["a", "b"]  # "c" would pass 25 tokens; "d" waits its turn
    assert run_step(sched, 2.0, done={"a", "b"})[0] == ["a", "b"]
    assert run_step(sched, 3.0)[0] == ["c", "d"]


def test_one_request_over_the_token_bound_still_runs_alone():
    sched = scheduler(max_step_tokens=5)
    sched.add(seq("big", tokens=50))
    sched.add(seq("small", tokens=1))
    assert run_step(sched, 1.0, done={"big"})[0] == ["big"]
    assert run_step(sched, 2.0)[0] == ["small"]


def test_expired_work_leaves_between_steps_running_or_not():
    sched = scheduler(max_live=1)
    sched.add(seq("ran", deadline=2.0))
    sched.add(seq("never-ran", deadline=1.5))
    assert run_step(sched, 1.0)[0] == ["ran"]
    batch, finals = sched.schedule(2.0)
    assert batch == [] and sorted(outcomes(finals)) == [("never-ran", "expired"), ("ran", "expired")]
    assert {f.seq.key: f.seq.steps for f in finals} == {"ran": 1, "never-ran": 0}
    assert sched.is_idle


def test_cancel_removes_a_live_request_once():
    sched = scheduler()
    sched.add(seq("a"))
    sched.add(seq("b"))
    run_step(sched, 1.0)
    assert outcomes(sched.cancel("a")) == [("a", "cancelled")]
    assert sched.cancel("a") == [] and sched.cancel("unknown") == []
    assert run_step(sched, 2.0)[0] == ["b"]


def test_a_newer_request_of_a_session_cancels_the_older():
    sched = scheduler()
    assert sched.add(seq("old", session="doc")) == []
    sched.add(seq("other", session="other-doc"))
    run_step(sched, 1.0)
    assert outcomes(sched.add(seq("new", session="doc"))) == [("old", "cancelled")]
    assert run_step(sched, 2.0)[0] == ["other", "new"]
    assert sched.add(seq("unrelated")) == []  # no session: supersedes nothing


def test_a_finished_request_is_not_superseded_later():
    sched = scheduler()
    sched.add(seq("first", session="doc"))
    run_step(sched, 1.0, done={"first"})
    assert sched.add(seq("second", session="doc")) == []


def test_beyond_the_bounds_newcomers_are_refused_but_superseding_ones_fit():
    sched = scheduler(max_live=1, max_waiting=1)
    sched.add(seq("a"))
    sched.add(seq("b", session="doc"))
    assert outcomes(sched.add(seq("c"))) == [("c", "overloaded")]
    assert outcomes(sched.add(seq("d", session="doc"))) == [("b", "cancelled")]  # stale work goes first
    assert sched.num_live == 2
    assert run_step(sched, 1.0, done={"a"})[0] == ["a"]
    assert run_step(sched, 2.0)[0] == ["d"]


def test_every_request_leaves_exactly_once():
    sched = scheduler(max_live=2, max_waiting=2)
    seen: list[str] = []
    for i in range(8):
        seen += [k for k, _ in outcomes(sched.add(seq(f"r{i}", arrival=i, deadline=i + 3, session=f"s{i % 3}")))]
        _, finals = run_step(sched, float(i), done={f"r{i - 2}"})
        seen += [k for k, _ in outcomes(finals)]
    _, finals = run_step(sched, 100.0)
    seen += [k for k, _ in outcomes(finals)]
    assert sorted(seen) == sorted(f"r{i}" for i in range(8)) and sched.is_idle


def test_duplicate_keys_and_bad_bounds_are_refused():
    sched = scheduler()
    sched.add(seq("a"))
    with pytest.raises(ValueError, match="already live"):
        sched.add(seq("a"))
    with pytest.raises(ValueError, match="max_live"):
        SchedulerConfig(max_live=0)


def test_outcomes_are_the_reply_vocabulary():
    assert {str(o) for o in Outcome} == {"finished", "expired", "cancelled", "overloaded"}


def test_a_request_waiting_past_the_bound_is_refused_at_once():
    sched = scheduler(max_live=1, max_wait_s=0.25, shed_queue=1)
    sched.add(seq("running", arrival=0.0))
    sched.add(seq("old", arrival=0.0))
    sched.add(seq("new", arrival=0.2))
    assert run_step(sched, 0.1) == (["running"], [])  # both wait within the bound
    batch, finals = run_step(sched, 0.3)
    assert batch == ["running"] and outcomes(finals) == [("old", "overloaded")]
    batch, finals = run_step(sched, 0.4, done={"running"})
    assert batch == ["running"] and finals[0].seq.key == "running"
    assert run_step(sched, 0.44)[0] == ["new"]  # admitted before its wait reached the bound


def test_admission_comes_before_the_wait_bound():
    sched = scheduler(max_wait_s=0.25)
    sched.add(seq("late", arrival=0.0))
    assert run_step(sched, 5.0) == (["late"], [])  # room at once: it runs, however long it waited


def test_on_a_cpu_admission_keeps_every_request_within_twice_its_lone_step():
    sched = scheduler(max_slowdown=2.0)
    for key, tokens in (("a", 10), ("b", 10), ("c", 10)):
        sched.add(seq(key, tokens=tokens))
    assert run_step(sched, 1.0)[0] == ["a", "b", "c"]  # no cost known yet: the token bound alone
    for positions in (10, 30, 60):
        sched.observe(positions, 0.001 * positions)  # a CPU: 1 ms a position, no fixed cost
    sched.add(seq("d", tokens=10))
    assert run_step(sched, 2.0, done={"a", "b", "c"})[0] == ["a", "b", "c"]
    assert run_step(sched, 3.0)[0] == ["d"]
    sched.add(seq("e", tokens=10))
    sched.add(seq("f", tokens=10))
    assert run_step(sched, 4.0)[0] == ["d", "e"]  # 20 positions: twice a lone step of 10; "f" waits


def test_on_a_gpu_the_fixed_cost_lets_batches_grow():
    sched = scheduler(max_slowdown=2.0)
    for positions in (10, 100, 1000):
        sched.observe(positions, 0.020 + 0.000001 * positions)  # 20 ms a step, whatever its size
    fixed, per_position = sched.cost.fit()
    assert abs(fixed - 0.020) < 1e-4 and abs(per_position - 1e-6) < 1e-7
    for key in "abcdef":
        sched.add(seq(key, tokens=100))
    assert run_step(sched, 1.0)[0] == list("abcdef")


def test_steps_of_one_size_are_taken_as_cost_per_position():
    sched = scheduler()
    sched.observe(50, 0.1)
    sched.observe(50, 0.1)
    assert sched.cost.fit() == (0.0, 0.002)
    assert sched.cost.predict(100) == 0.2


def test_one_request_over_the_slowdown_bound_still_runs_alone():
    sched = scheduler(max_slowdown=1.0)
    sched.observe(10, 1.0)
    sched.add(seq("slow", tokens=10))
    assert run_step(sched, 1.0)[0] == ["slow"]


def test_one_request_waiting_its_turn_is_not_shed():
    sched = scheduler(max_live=1, max_wait_s=0.1)  # shed_queue 2: a standing queue only
    sched.add(seq("running"))
    sched.add(seq("next"))
    assert run_step(sched, 1.0) == (["running"], [])  # "next" waited 1 s, alone in the queue
    sched.add(seq("third", arrival=1.0))
    batch, finals = run_step(sched, 1.5)
    assert outcomes(finals) == [("next", "overloaded"), ("third", "overloaded")]


def test_a_session_running_sequence_and_admission_at_once():
    sched = scheduler(max_live=1)
    sched.add(seq("a", session="s"))
    assert sched.running_of("s") is None  # waiting, not running
    run_step(sched, 1.0)
    assert sched.running_of("s").key == "a" and sched.running_of(None) is None
    newer = seq("b", session="s")
    assert outcomes(sched.add(newer)) == [("a", "cancelled")]
    sched.admit_now(newer, 2.0)  # it took "a"'s place: no wait for admission
    assert sched.running == [newer] and newer.admitted_at == 2.0 and not sched.waiting


def test_admission_stops_at_the_first_request_not_laid_out():
    sched = scheduler()
    sched.add(seq("ready"))
    sched.add(seq("raw", prepared=False))
    sched.add(seq("behind"))  # laid out, but arrived after "raw": first come, first served
    assert [s.key for s in sched.unprepared()] == ["raw"]
    assert run_step(sched, 1.0)[0] == ["ready"]
    sched.unprepared()[0].prepared = True
    assert sched.unprepared() == []
    assert run_step(sched, 2.0)[0] == ["ready", "raw", "behind"]


def test_requests_not_laid_out_expire_are_cancelled_superseded_and_count_towards_the_bound():
    sched = scheduler(max_live=1, max_waiting=2)
    sched.add(seq("late", deadline=1.5, prepared=False))
    sched.add(seq("old", session="doc", prepared=False))
    sched.add(seq("gone", prepared=False))
    assert outcomes(sched.add(seq("refused", prepared=False))) == [("refused", "overloaded")]
    assert outcomes(sched.add(seq("new", session="doc", prepared=False))) == [("old", "cancelled")]
    assert outcomes(sched.cancel("gone")) == [("gone", "cancelled")]
    batch, finals = run_step(sched, 2.0)
    assert batch == [] and outcomes(finals) == [("late", "expired")]
    assert [s.key for s in sched.unprepared()] == ["new"]


def test_admission_order_is_newest_first_once_a_queue_stands():
    waiting = [seq("old"), seq("mid"), seq("new")]
    assert [s.key for s in admission_order(waiting, newest_first=True)] == ["old", "mid", "new"]  # no queue yet
    waiting[1].passed_over = True
    assert [s.key for s in admission_order(waiting, newest_first=True)] == ["new", "mid", "old"]
    assert [s.key for s in admission_order(waiting, newest_first=False)] == ["old", "mid", "new"]
    assert admission_order([], newest_first=True) == []
    assert not SchedulerConfig().newest_first  # measured worse for editors (see the scheduler)


def test_a_busy_worker_admits_the_newest_keystroke_first():
    sched = Scheduler(SchedulerConfig(max_live=1, max_wait_s=None, newest_first=True))
    sched.add(seq("running", session="editor 1"))
    assert run_step(sched, 0.1)[0] == ["running"]
    for key, arrival in (("old", 0.2), ("mid", 0.3), ("new", 0.4)):
        sched.add(seq(key, arrival=arrival, session=key))
    assert run_step(sched, 0.5, done={"running"})[0] == ["running"]
    assert run_step(sched, 0.6, done={"new"})[0] == ["new"]
    assert run_step(sched, 0.7, done={"mid"})[0] == ["mid"]
    assert run_step(sched, 0.8)[0] == ["old"]


def test_newest_first_leaves_the_oldest_to_the_wait_bound():
    sched = Scheduler(SchedulerConfig(max_live=1, max_wait_s=0.25, newest_first=True))
    sched.add(seq("running", arrival=0.0))
    assert run_step(sched, 0.0)[0] == ["running"]
    sched.add(seq("old", arrival=0.0))
    sched.add(seq("new", arrival=0.2))
    batch, finals = run_step(sched, 0.1, done={"running"})
    assert batch == ["running"] and outcomes(finals) == [("running", "finished")]
    batch, finals = run_step(sched, 0.3)
    assert batch == ["new"] and outcomes(finals) == []  # alone in the queue, "old" waits its turn
    sched.add(seq("newer", arrival=0.3))
    batch, finals = run_step(sched, 0.35)
    assert batch == ["new"] and outcomes(finals) == [("old", "overloaded")]  # a standing queue: shed


def test_a_standing_queue_goes_newest_first_within_the_bounds_and_lays_out_the_newest_first():
    sched = Scheduler(SchedulerConfig(max_live=3, max_step_tokens=25, max_wait_s=None, newest_first=True))
    sched.add(seq("first"))
    assert run_step(sched, 1.0)[0] == ["first"]
    for key, tokens in (("a", 10), ("b", 10), ("c", 1)):
        sched.add(seq(key, tokens=tokens))
    assert run_step(sched, 2.0, done={"first"})[0] == ["first", "a"]  # arrival order; "b" would pass 25
    assert run_step(sched, 3.0, done={"a"})[0] == ["a", "c", "b"]  # "b" and "c" were passed over
    sched.add(seq("raw", prepared=False))
    sched.add(seq("rawer", prepared=False))
    assert [s.key for s in sched.unprepared()] == ["raw", "rawer"]
    assert run_step(sched, 4.0)[0] == ["c", "b"]  # "raw", first in arrival order, is not laid out
    assert [s.key for s in sched.unprepared()] == ["rawer", "raw"]
    sched.unprepared()[1].prepared = True
    assert run_step(sched, 5.0, done={"c", "b"})[0] == ["c", "b"]  # the newest is not laid out: none joins
    sched.unprepared()[0].prepared = True
    assert run_step(sched, 6.0)[0] == ["rawer", "raw"]


def test_by_default_a_standing_queue_keeps_arrival_order():
    sched = Scheduler(SchedulerConfig(max_live=1, max_wait_s=None))
    sched.add(seq("running", session="editor 1"))
    assert run_step(sched, 0.1)[0] == ["running"]
    sched.add(seq("paused", arrival=0.2, session="editor 2"))  # its editor stopped typing first
    sched.add(seq("typing", arrival=0.3, session="editor 3"))
    assert run_step(sched, 0.4, done={"running"})[0] == ["running"]
    assert run_step(sched, 0.5)[0] == ["paused"]
