"""Battles with stand-in backends and an OpenAI-shaped server in the test: random pairs in random
order, the judges, no-answer sides that lose without stopping the run, pairs counted apart, and the
OpenAI FIM backend against a real HTTP server (answering, down, garbage, and one that never answers
within the test, cut at its budget; no test decides by a clock)."""
from __future__ import annotations

import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.arena.backends import Answer, Ask, OpenAIBackend, WorkerBackend
from bench.arena.battles import BATTLE, EMPTY, IDENTICAL, NO_ANSWER, draw, fight, pair_table
from bench.arena.config import ArenaConfig, ArenaSettings, BackendSpec, PairWeight
from bench.arena.judges import SandboxJudge
from bench.arena.run import run_battles, summarize

ASK = Ask("def add(a, b):\n    return ", "\n", "single_line", 16, budget_ms=300, grace_ms=100)
TESTED = {"task_id": "t/add", "prompt": "def add(a, b):\n    return ", "suffix": "\n", "canonical_solution": "a + b\n",
          "test": "def check(f):\n    assert f(2, 3) == 5\n", "entry_point": "add"}
REFERENCE = {"task_id": "r/1", "prompt": "x = ", "suffix": "\n", "canonical_solution": "compute(1, 2)\n"}


class Fixed:
    """A backend that always answers `text` (or fails with `error`)."""

    def __init__(self, name: str, text: str = "", error: str | None = None):
        self.name, self.text, self.error, self.asked = name, text, error, 0

    def answer(self, ask: Ask) -> Answer:
        self.asked += 1
        return Answer("" if self.error else self.text, 5.0, 1, self.error)

    def close(self) -> None:
        pass


def battle(task, top, bottom):
    with ThreadPoolExecutor(2) as pool:
        return fight(pool, {top.name: top, bottom.name: bottom}, (top.name, bottom.name), task, "set", "300ms",
                     ASK, SandboxJudge())


def test_the_tests_judge_runs_each_answer_in_the_sandbox():
    won = battle(TESTED, Fixed("good", "a + b\n"), Fixed("bad", "a - b\n"))
    assert won.kind == BATTLE and won.outcome == 1.0 and won.judge == "tests"
    assert won.top.score == {"passed": True} and won.bottom.score == {"passed": False}
    assert battle(TESTED, Fixed("bad", "a - b\n"), Fixed("worse", "a * b\n")).outcome == 0.5


def test_the_reference_judge_takes_exact_match_then_similarity():
    assert battle(REFERENCE, Fixed("near", "compute(1, 3)"), Fixed("exact", "compute(1, 2)")).outcome == 0.0
    assert battle(REFERENCE, Fixed("near", "compute(1, 3)"), Fixed("far", "print()")).outcome == 1.0
    assert battle(REFERENCE, Fixed("a", "zzz"), Fixed("b", "yyy")).outcome == 0.5


def test_no_answer_loses_and_empty_identical_or_unanswered_pairs_are_counted_apart():
    down = Fixed("down", error="WorkerTimeout: no reply")
    lost = battle(REFERENCE, down, Fixed("up", "print()"))
    assert lost.kind == BATTLE and lost.outcome == 0.0 and lost.top.error and lost.top.score is None
    assert battle(REFERENCE, Fixed("a", ""), Fixed("b", "  ")).kind == EMPTY
    assert battle(REFERENCE, Fixed("a", "f(1)\n"), Fixed("b", "f(1)")).kind == IDENTICAL
    assert battle(REFERENCE, down, Fixed("also", error="garbage")).kind == NO_ANSWER


def test_pairs_are_drawn_by_weight_and_shown_in_either_order():
    rng = random.Random(3)
    uniform = pair_table(["a", "b", "c"], ())
    assert sorted(pair for pair, _ in uniform) == [("a", "b"), ("a", "c"), ("b", "c")]
    draws = [draw(rng, uniform) for _ in range(3000)]
    tops = sum(top == "a" for top, bottom in draws if {top, bottom} == {"a", "b"})
    pairs_ab = sum({top, bottom} == {"a", "b"} for top, bottom in draws)
    assert 0.4 < tops / pairs_ab < 0.6 and 0.28 < pairs_ab / 3000 < 0.38
    weighted = pair_table(["a", "b", "c"], (PairWeight("a", "b", 9.0), PairWeight("b", "c", 1.0)))
    drawn = [frozenset(draw(rng, weighted)) for _ in range(2000)]
    assert frozenset("ac") not in drawn and 0.85 < drawn.count(frozenset("ab")) / 2000 < 0.95


def test_a_run_goes_on_past_a_dead_backend_and_tallies_per_condition(tmp_path):
    specs = tuple(BackendSpec(name, "worker", model="unused") for name in ("good", "bad", "dead"))
    config = ArenaConfig(tmp_path / "a.toml", ArenaSettings(budgets_ms=(100, 200), battles_per_task=4, rounds=100),
                         specs)
    backends = {"good": Fixed("good", "compute(1, 2)"), "bad": Fixed("bad", "print()"),
                "dead": Fixed("dead", error="unreachable: connection refused")}
    battles = run_battles(config, backends, {"ref": [REFERENCE] * 5}, SandboxJudge())
    assert len(battles) == 2 * 5 * 4
    summary = summarize(config, battles)
    assert set(summary["per_condition"]) == {"100ms", "200ms"}
    for data in summary["per_condition"].values():
        for pair, counts in data["pairs"].items():
            first, second = pair.split(" vs ")
            assert counts["losses"] == 0 if first == "good" else True
            assert counts["wins"] == 0 if first == "dead" else True
        assert data["backends"]["dead"]["no_answer"] == data["backends"]["dead"]["sides"]
        assert data["backends"]["good"]["exact"] == 1.0
    ranking = summary["ranking"]["scores"]
    assert ranking["good"]["rank"] == 1 and ranking["dead"]["estimate"] < ranking["bad"]["estimate"]
    json.dumps(summary)


class Completions(BaseHTTPRequestHandler):
    """POST /v1/completions in OpenAI's shape; the prompt picks the behaviour. A "slow" prompt is
    never answered: its handler waits for `release`, which only the fixture's teardown sets."""

    bodies: list[dict] = []
    slow_arrived = threading.Event()
    release = threading.Event()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Completions.bodies.append(body)
        if body["prompt"].startswith("slow"):
            Completions.slow_arrived.set()
            Completions.release.wait()
            return  # the client has given up by now
        if body["prompt"].startswith("garbage"):
            payload = b"<html>not json</html>"
        elif body["prompt"].startswith("fail"):
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b'{"error": "boom"}')
            return
        else:
            payload = json.dumps({"id": "cmpl-1", "object": "text_completion", "created": 0, "model": body["model"],
                                  "choices": [{"text": "a + b", "index": 0, "logprobs": None, "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    Completions.slow_arrived, Completions.release = threading.Event(), threading.Event()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Completions)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/completions"
    Completions.release.set()
    httpd.shutdown()
    httpd.server_close()


ANSWERED_BUDGET_MS = 30_000  # far past any loopback round trip: a backend that answers is never late
CUT_BUDGET_MS, CUT_GRACE_MS = 1500, 500  # a request nobody answers is cut at 2 s


def ask(prefix: str, budget_ms: int = ANSWERED_BUDGET_MS, grace_ms: int = 100) -> Ask:
    return Ask(prefix, "\nprint(add(1, 2))\n", "single_line", 16, budget_ms=budget_ms, grace_ms=grace_ms)


def test_the_openai_backend_sends_prompt_and_suffix_and_reads_the_text(server):
    backend = OpenAIBackend(BackendSpec("gateway", "openai", model="infill-py-16m", url=server))
    answer = backend.answer(ask("def add(a, b):\n    return "))
    assert answer.answered and answer.text == "a + b" and answer.forward_passes is None
    body = Completions.bodies[-1]
    assert body["prompt"] == "def add(a, b):\n    return " and body["suffix"] == "\nprint(add(1, 2))\n"
    assert body["max_tokens"] == 16 and body["model"] == "infill-py-16m" and body["stop"] == ["\n"]


def test_the_openai_backend_turns_each_failure_into_no_answer(server):
    backend = OpenAIBackend(BackendSpec("gateway", "openai", url=server))
    assert "garbage" in backend.answer(ask("garbage")).error
    assert "HTTP 500" in backend.answer(ask("fail")).error
    slow = backend.answer(ask("slow", CUT_BUDGET_MS, CUT_GRACE_MS))
    assert Completions.slow_arrived.is_set() and not Completions.release.is_set()  # asked, never answered
    assert not slow.answered and "timed out" in slow.error and slow.latency_ms >= CUT_BUDGET_MS
    down = OpenAIBackend(BackendSpec("down", "openai", url="http://127.0.0.1:9/v1/completions")).answer(ask("x"))
    assert "unreachable" in down.error


def test_a_worker_that_is_not_there_is_no_answer(short_tmp):
    backend = WorkerBackend(BackendSpec("gone", "worker", address=f"ipc://{short_tmp}/nobody.sock"))
    try:
        answer = backend.answer(ask("x = ", CUT_BUDGET_MS, CUT_GRACE_MS))
    finally:
        backend.close()
    assert not answer.answered and "WorkerTimeout" in answer.error
