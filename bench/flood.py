"""A normal completion while a burst of maximal requests arrives: does the worker keep answering?

    python -m bench.flood [--burst 10] [--rounds 3] [--model DIR] [--threads T]
                          [--address ADDR] [--json]

It starts one worker on the bundled model (or --model) on a private ipc:// socket, or measures the
running worker at --address. First it times a normal single-line completion alone, --rounds
times. Then, each round, one socket sends --burst maximal requests at once (prefix, suffix and
snippets at the protocol's caps, cut from real code; the longest deadline; the most tokens),
another sends the normal completion right after them, and a third asks for Health every 20 ms
to see how long the main loop went without a tick (a stall). The round ends when the normal
completion is answered (or its deadline plus 5 s have passed: "timeout"); the burst is then
cancelled and its replies read before the next round.

Reported: the normal completion's latency alone and under the burst (median over the rounds,
ms), its outcomes under the burst (done, deadline, overloaded, timeout, ...), and the longest
main-loop stall seen in any round (ms). A human table goes to stdout; with --json its last line
is one JSON object: {"alone_ms", "under_burst_ms", "outcomes", "max_stall_ms"}.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import zmq

from completion.settings import DEFAULT_DEADLINE_MS
from engine.client.calls import WorkerError, WorkerTimeout
from engine.launch import spawn_local_worker, stop_worker
from engine.wire.protocol import (MAX_DEADLINE_MS, MAX_PREFIX_CHARS, MAX_SNIPPET_TEXT_CHARS,
                                    MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS, MAX_TOKENS, Cancel,
                                    CompleteRequest, Snippet, encode)
from engine.client.sync_client import WorkerClient
from infill.paths import bundled_model_dir

NORMAL_PREFIX = "def area(radius):\n    return 3.14159 * "
NORMAL_SUFFIX = "\n\n\nprint(area(2))\n"
# the text the maximal requests are cut from: the worker's own source, in the checkout or an installed copy
CODE_FILE = Path(importlib.util.find_spec("engine.worker.worker").origin)
HEALTH_EVERY_S = 0.02
LATE_S = 5.0  # past its deadline, a reply that has not come counts as a timeout
DRAIN_S = 60.0  # for the cancelled burst's replies to come back


def normal_request(rid: str) -> CompleteRequest:
    return CompleteRequest(rid, "fim", NORMAL_PREFIX, NORMAL_SUFFIX, mode="single_line", max_tokens=16,
                           deadline_ms=DEFAULT_DEADLINE_MS)


def maximal_request(rid: str, code: str) -> CompleteRequest:
    """Every text at its cap, cut from real code so that tokenizing costs what it would."""
    def cut(chars: int) -> str:
        return (code * (chars // len(code) + 1))[:chars]

    snippets = [Snippet(cut(MAX_SNIPPET_TEXT_CHARS), f"lib{i}.py", 0)
                for i in range(MAX_SNIPPETS_TOTAL_CHARS // MAX_SNIPPET_TEXT_CHARS)]
    return CompleteRequest(rid, "fim", cut(MAX_PREFIX_CHARS), cut(MAX_SUFFIX_CHARS), snippets,
                           mode="multi_line", max_tokens=MAX_TOKENS, deadline_ms=MAX_DEADLINE_MS)


def timed_normal(address: str, rid: str) -> tuple[float, str]:
    """(latency in ms, outcome) of one normal completion."""
    started = time.perf_counter()
    with WorkerClient(address, timeout_s=LATE_S) as client:
        try:
            outcome = client.complete(normal_request(rid)).stop_reason
        except WorkerError as exc:
            outcome = exc.code
        except WorkerTimeout:
            outcome = "timeout"
    return (time.perf_counter() - started) * 1e3, outcome


class StallProbe(threading.Thread):
    """Asks for Health every HEALTH_EVERY_S until stopped; keeps the largest main-loop age seen."""

    def __init__(self, address: str) -> None:
        super().__init__(name="stall-probe", daemon=True)
        self.address, self.max_age_s, self._stop_flag = address, 0.0, threading.Event()

    def run(self) -> None:
        with WorkerClient(self.address, timeout_s=LATE_S) as client:
            while not self._stop_flag.wait(HEALTH_EVERY_S):
                self.max_age_s = max(self.max_age_s, client.health().loop_age_s)

    def stop(self) -> None:
        self._stop_flag.set()
        self.join()


def burst_round(address: str, burst: int, round_no: int, code: str) -> tuple[float, str, float]:
    """(the normal completion's latency in ms, its outcome, the longest stall in ms) of one round."""
    flood = zmq.Context.instance().socket(zmq.DEALER)
    flood.setsockopt(zmq.LINGER, 0)
    flood.connect(address)
    probe = StallProbe(address)
    probe.start()
    ids = [f"flood-{round_no}-{i}" for i in range(burst)]
    try:
        for rid in ids:
            flood.send(encode(maximal_request(rid, code)))
        latency_ms, outcome = timed_normal(address, f"normal-{round_no}")
        for rid in ids:
            flood.send(encode(Cancel(rid)))
        drain(flood, burst)
    finally:
        probe.stop()
        flood.close()
    return latency_ms, outcome, probe.max_age_s * 1e3


def drain(sock: zmq.Socket, replies: int) -> None:
    give_up = time.monotonic() + DRAIN_S
    while replies and sock.poll(max(0, int((give_up - time.monotonic()) * 1000))):
        sock.recv()
        replies -= 1


def measure(address: str, burst: int, rounds: int) -> dict:
    code = CODE_FILE.read_text()
    alone = [timed_normal(address, f"alone-{i}")[0] for i in range(rounds)]
    under = [burst_round(address, burst, i, code) for i in range(rounds)]
    return {"alone_ms": statistics.median(alone),
            "under_burst_ms": statistics.median(latency for latency, _, _ in under),
            "outcomes": dict(Counter(outcome for _, outcome, _ in under)),
            "max_stall_ms": max(stall for _, _, stall in under)}


def format_table(figures: dict, header: str) -> str:
    outcomes = ", ".join(f"{name} {count}" for name, count in sorted(figures["outcomes"].items()))
    return "\n".join([header,
                      f"{'normal alone, median ms':<36}{figures['alone_ms']:>10.0f}",
                      f"{'normal under the burst, median ms':<36}{figures['under_burst_ms']:>10.0f}",
                      f"{'its outcomes under the burst':<36}{outcomes:>10}",
                      f"{'longest main-loop stall, ms':<36}{figures['max_stall_ms']:>10.0f}"])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.flood", description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=10, help="maximal requests sent at once (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="bursts, and lone completions (default 3)")
    parser.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled model)")
    parser.add_argument("--threads", type=int, default=None, help="the worker's torch threads")
    parser.add_argument("--address", default=None,
                        help="measure the worker running there instead of starting one")
    parser.add_argument("--json", action="store_true",
                        help="end with one JSON line: alone_ms, under_burst_ms, outcomes, max_stall_ms")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.burst < 1 or args.rounds < 1:
        parser.error("--burst and --rounds must be at least 1")
    proc = None
    address = args.address
    if address is None:
        proc, address = spawn_local_worker(args.model or bundled_model_dir(), args.threads)
    try:
        figures = measure(address, args.burst, args.rounds)
    finally:
        if proc is not None:
            stop_worker(proc)
    print(format_table(figures, f"{args.burst} maximal requests at once, {args.rounds} rounds, worker {address}"))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
