"""What became of each keystroke of `bench.editor_latency`, and where its time went.

The editor's record (`bench/nvim_typing.lua`) says when each key was fed, which inline completion
request the plugin sent for it, when the response came and what it held, whether the plugin
cancelled it, and when its ghost text was drawn. The server's log (`infill lsp --log-file`, INFO)
says for each of its request ids how it ended (the answer line: mode, texts, latency, cache) and
the worker's timings (the `fim.ask` line: queue, layout, first pass, further passes, total).
`server_requests` reads the log; `join` pairs the editor's answered requests with the server's
answers: by the request id an answer's items carry, else by time (the plugin has at most one
request in flight, a debounce apart); `outcomes` gives every keystroke exactly one outcome of
`OUTCOMES`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

SHOWN = "shown"  # ghost text appeared, from the model's answer
TYPED_THROUGH = "typed_through"  # ghost text appeared, from the typing-through cache
KEPT = "kept"  # VS Code only: the ghost text at the key stayed through it, and its answer left it so
SUPERSEDED = "superseded"  # the next key came first (the request waited out the debounce, was cancelled, came late)
NO_COMPLETION = "no_completion"  # the server's decision: no completion wanted here
EMPTY = "empty"  # the model answered in time with nothing worth showing
DEADLINE = "deadline_missed"  # the worker gave no answer within the deadline
ERROR = "error"  # an error response, an answer not shown, or one the server's log does not explain
OUTCOMES = (SHOWN, TYPED_THROUGH, KEPT, SUPERSEDED, NO_COMPLETION, EMPTY, DEADLINE, ERROR)
SPLIT_PARTS = ("editor", "transport", "plan_and_worker_transport", "queue", "layout", "first_pass",
               "further_passes", "worker_other", "post_processing")

LOG_LINE = re.compile(r"^(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?P<level>\w+) (?P<name>\S+) "
                      r"\[(?P<rid>[^\]]*)\] (?P<message>.*)$")
ANSWER = re.compile(r"^(?P<mode>.+?): (?P<texts>\d+) texts in (?P<ms>[\d.]+) ms(?P<cache> from the cache)?$")
JOIN_SLACK_MS = 40.0  # an answer's log line and its response in the editor, on one clock, at most this far apart
WORKER_REPLY_MARK = " items; queue "  # in the log line of a worker's reply
ASK = re.compile(r"^\S+: (?P<stop>\w+), (?P<items>\d+) items; queue (?P<queue>[\d.]+), layout "
                 r"(?P<layout>[\d.]+), first pass (?P<first>[\d.]+), decode (?P<further>[\d.]+), total "
                 r"(?P<total>[\d.]+) ms$")


@dataclass(slots=True)
class ServerRequest:
    """One request as the server's log tells it."""

    rid: str
    mode: str = ""
    texts: int = 0
    latency_ms: float = 0.0
    cache_hit: bool = False
    answered_at: float = 0.0  # the answer line's time (s, the log's clock)
    ask_at: float | None = None  # when the worker's reply was logged
    worker: dict[str, float] = field(default_factory=dict)  # queue, layout, first, further, total (ms)
    stop_reason: str = ""
    worker_failure: str = ""  # "no completion: ..." (a timeout or an error)
    no_completion: bool = False
    superseded: bool = False


def _log_time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _note(request: ServerRequest, message: str, at: float) -> None:
    """Fold one log message into `request`."""
    if (ask := ASK.match(message)) is not None:
        request.ask_at, request.stop_reason = at, ask["stop"]
        request.worker = {name: float(ask[name]) for name in ("queue", "layout", "first", "further", "total")}
        request.worker["items"] = float(ask["items"])
    elif message.startswith("no completion: "):
        request.worker_failure = message
    elif message.startswith("no completion at "):
        request.no_completion = True
    elif message.startswith("superseded by a newer request"):
        request.superseded = True


def server_requests(log: Path) -> list[ServerRequest]:
    """The server's answered requests in the order of their answers (each request id's answer line
    is its last word), with what its other lines said."""
    seen: dict[str, ServerRequest] = {}
    answered: list[ServerRequest] = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        parsed = LOG_LINE.match(line)
        if parsed is None or parsed["rid"] == "-":
            continue
        request = seen.setdefault(parsed["rid"], ServerRequest(parsed["rid"]))
        at = _log_time(parsed["time"])
        if (answer := ANSWER.match(parsed["message"])) is not None and parsed["name"] == "lsp_server.completer":
            request.mode, request.texts = answer["mode"], int(answer["texts"])
            request.latency_ms, request.cache_hit = float(answer["ms"]), answer["cache"] is not None
            request.answered_at = at
            answered.append(request)
        else:
            _note(request, parsed["message"], at)
    return answered


def _clock_offset_ms(results: Sequence[dict], by_rid: dict[str, ServerRequest]) -> float | None:
    """The server log's clock less the editor's (ms), the median over the results whose items name
    their server request; None when none does."""
    offsets = sorted(by_rid[r["request_id"]].answered_at * 1000.0 - r["response_ms"]
                     for r in results if r.get("request_id") in by_rid)
    return offsets[len(offsets) // 2] if offsets else None


def join(requests: Sequence[dict], answered: Sequence[ServerRequest]) -> int:
    """Give each editor request that got a result (not an error) its server request as
    `request["server"]`: the one its items name, else the answer logged nearest its response on
    the editor's clock (set by those named), within `JOIN_SLACK_MS`; in order when no item names
    one. Returns how many results are left without one (0 when the join is sound). A request
    cancelled as it was answered may have an answer in the log and an error in the editor: the
    clocks keep it from shifting the rest."""
    results = [request for request in requests if "response_ms" in request and not request.get("error")]
    by_rid = {server.rid: server for server in answered}
    offset = _clock_offset_ms(results, by_rid)
    if offset is None:
        for request, server in zip(results, answered):
            request["server"] = server
        return max(0, len(results) - len(answered))
    unjoined, free = 0, list(answered)
    for request in results:
        named = by_rid.get(request.get("request_id") or "")
        target = request["response_ms"] + offset
        nearest = named or min(free, key=lambda s: abs(s.answered_at * 1000.0 - target), default=None)
        near_enough = nearest is not None and abs(nearest.answered_at * 1000.0 - target) <= JOIN_SLACK_MS
        if not (named or near_enough):
            unjoined += 1
            continue
        request["server"] = nearest
        if nearest in free:
            free.remove(nearest)
    return unjoined


def _unshown_outcome(request: dict) -> str:
    """The outcome of a request whose answer came, uncancelled, and drew nothing."""
    server: ServerRequest | None = request.get("server")
    if request.get("error") or server is None:
        return ERROR
    if request.get("items", 0) > 0 or server.texts > 0:
        return ERROR  # an answer the plugin did not draw
    if server.superseded:
        return SUPERSEDED
    if server.no_completion or server.mode in ("none", "no mode"):
        return NO_COMPLETION  # the decision, or no hole here (no mode)
    if server.worker_failure:
        return DEADLINE if "within" in server.worker_failure else ERROR
    if server.stop_reason == "deadline" or not server.worker:
        return DEADLINE  # stopped by the deadline, or no time (or no worker) left to ask
    return EMPTY


def outcome_of(request: dict | None) -> str:
    """The outcome of a keystroke whose latest request is `request` (None: it sent none)."""
    if request is None or request.get("cancelled_ms") is not None and request.get("shown_ms") is None:
        return SUPERSEDED
    if request.get("shown_ms") is not None:
        server: ServerRequest | None = request.get("server")
        return TYPED_THROUGH if server is not None and server.cache_hit else SHOWN
    if "response_ms" not in request:
        return SUPERSEDED  # the editor stopped before it came (the file's last key)
    return _unshown_outcome(request)


def outcomes(keys: Sequence[dict], requests: Sequence[dict]) -> list[dict]:
    """One row per keystroke: its outcome, whether the plugin sent its request (a superseded key may
    have waited out the debounce), its latency to the ghost text (ms; shown ones only), and its
    request's split of that time (`split`, model-shown ones with the worker's timings)."""
    latest: dict[int, dict] = {}
    for request in requests:
        if request.get("key") is not None:
            latest[request["key"]] = request
    rows = []
    for number, key in enumerate(keys, start=1):
        request = latest.get(number)
        row = {"file": key["file"], "key": key["key"], "outcome": outcome_of(request), "requested": request is not None}
        if row["outcome"] in (SHOWN, TYPED_THROUGH):
            row["latency_ms"] = round(request["shown_ms"] - key["fed_ms"], 1)
        if row["outcome"] == SHOWN and request.get("server") is not None and request["server"].worker:
            row["split"] = split_of(key, request, request["server"])
        rows.append(row)
    return rows


def split_of(key: dict, request: dict, server: ServerRequest) -> dict[str, float]:
    """Where a shown answer's time went (ms): the editor (debounce and key handling before the
    request, drawing after the response), the LSP transport (the round trip less the server's
    time), the server before the worker's reply (planning and the worker's transport), the
    worker's queue, layout, first pass, further passes and the rest of its time, and the
    post-processing after its reply (from the log's millisecond clock)."""
    worker = server.worker
    post = max(0.0, (server.answered_at - server.ask_at) * 1000.0) if server.ask_at is not None else 0.0
    round_trip = request["response_ms"] - request["sent_ms"]
    inner = worker["queue"] + worker["layout"] + worker["first"] + worker["further"]
    return {
        "editor": round(request["sent_ms"] - key["fed_ms"] + request["shown_ms"] - request["response_ms"], 1),
        "transport": round(max(0.0, round_trip - server.latency_ms), 1),
        "plan_and_worker_transport": round(max(0.0, server.latency_ms - post - worker["total"]), 1),
        "queue": worker["queue"], "layout": worker["layout"], "first_pass": worker["first"],
        "further_passes": worker["further"], "worker_other": round(max(0.0, worker["total"] - inner), 1),
        "post_processing": round(post, 1),
    }
