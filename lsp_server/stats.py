"""What happened to each completion: a local stats log, one JSON object per line.

The server remembers its last answers by request id (`record`); the client's notifications
`infill/didShowCompletion`, `infill/acceptCompletion` and `infill/rejectCompletion` name a request
id, and each becomes one line: the event, the request id, the document, the mode, the latency from
the request to the answer, whether the answer came from the typing-through cache, the characters
shown, and for an acceptance the characters taken. Nothing leaves the machine.
"""
from __future__ import annotations

import json
import logging
import os
import stat
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_server.protocol import ACCEPT_COMPLETION, DID_SHOW_COMPLETION, REJECT_COMPLETION, CompletionEvent

logger = logging.getLogger(__name__)

REMEMBERED_ANSWERS = 256
SHOWN, ACCEPTED, REJECTED = DID_SHOW_COMPLETION, ACCEPT_COMPLETION, REJECT_COMPLETION
EVENTS = {SHOWN: "show", ACCEPTED: "accept", REJECTED: "reject"}


def default_stats_path() -> Path:
    """`$XDG_STATE_HOME/infill/stats.jsonl`, or under `~/.local/state` without it."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "infill" / "stats.jsonl"


@dataclass(slots=True, frozen=True)
class Answer:
    request_id: str
    uri: str
    mode: str
    texts: tuple[str, ...]
    latency_ms: float
    cache_hit: bool


def event_line(kind: str, answer: Answer, index: int, accepted_chars: int | None,
               now: float) -> dict[str, Any]:
    """The stats record of one event about `answer`'s text number `index`."""
    shown = answer.texts[index] if 0 <= index < len(answer.texts) else ""
    line = {"event": kind, "request_id": answer.request_id, "time": round(now, 3),
            "uri": answer.uri, "mode": answer.mode, "latency_ms": round(answer.latency_ms, 1),
            "cache_hit": answer.cache_hit, "index": index, "shown_chars": len(shown)}
    if kind == "accept":
        line["accepted_chars"] = len(shown) if accepted_chars is None else accepted_chars
    return line


class StatsLog:
    """The remembered answers and the log file they are reported to (None: no log)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.answers: OrderedDict[str, Answer] = OrderedDict()

    def record(self, answer: Answer) -> None:
        self.answers[answer.request_id] = answer
        while len(self.answers) > REMEMBERED_ANSWERS:
            self.answers.popitem(last=False)

    def report(self, method: str, event: CompletionEvent) -> dict[str, Any] | None:
        """Write the line for a client's notification or command; None (logged) for an unknown
        request."""
        answer = None if event.request_id is None else self.answers.get(event.request_id)
        if answer is None:
            logger.info("%s for an unknown request id %r", method, event.request_id)
            return None
        line = event_line(EVENTS[method], answer, event.index, event.accepted_chars, time.time())
        self._write(line)
        return line

    def _write(self, line: dict[str, Any]) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            append_regular(self.path, (json.dumps(line) + "\n").encode("utf-8"))
        except OSError as exc:
            logger.warning("cannot write the stats log %s: %s", self.path, exc)


def append_regular(path: Path, data: bytes) -> None:
    """Append `data` to the regular file `path` (made 0600 if new); raises OSError for anything
    else in its place: a FIFO, a device or a socket is never written to, nor waited on."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.write(fd, data)
    finally:
        os.close(fd)
