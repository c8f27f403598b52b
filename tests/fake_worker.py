"""A worker process on a fake model, for tests that need real processes: `python tests/fake_worker.py
ADDRESS [KEYS_DIR]`.

Its completion is `PID:prefix` (for each hole of an edit). A prefix may act in the request's
decoding step: "sleep:S" sleeps S seconds (the main loop does not tick meanwhile), "boom" raises,
and "once:PATH:ACTION" runs ACTION ("die" is a SIGKILL of this process, "hang" a 30 s sleep) the
first time any worker sees PATH, creating it, then answers normally: a request retried on a second
worker is answered there. "gate:PATH" (PATH is the rest of
the prefix's first line, without the quotes of `gate:"PATH"`, a line of Python) holds the step
until the file PATH exists, and at most `GATE_WAIT_S` (held past the watchdog's `LONGEST_STEP_S`,
the worker reads as hung); a step it holds first makes the file `held_marker(PATH)`. So a test
knows when a request is in flight at the worker, holds it there as long as it needs, then creates
PATH to let it go (and removes both files to hold the next one).

A prefix whose first line is "# fake-stream: N S" is decoded in N steps of S seconds each; its answer
is N lines `    xI = PID`, and a streamed request gets the first I lines (and their line break) after
step I, as a real worker streams its settled text.

A prefix whose first line is "# fake-deadline" is answered with the whole milliseconds left to the
request's deadline as its decoding starts: what the front end gave the worker, as a test can read it.

An edit whose text starts with the line "# fake-rename: OLD NEW" is answered instead with each hole's
`replaces` text with every OLD made NEW and each line so changed ending in `WORKER_NOTE` (a hole
without OLD comes back unchanged), so that tests can drive next-edit suggestions through real
processes and tell the worker's answer from the drafts (which rename, and never add the note).
"""
from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.wire.keys import load_server_keys  # noqa: E402
from engine.worker.scheduler import SchedulerConfig  # noqa: E402
from engine.worker.worker import Worker, serve_until_signal  # noqa: E402


@dataclass(slots=True)
class Completion:
    text: str
    confidence: float = 0.5
    forward_passes: int = 1
    stop_reason: str = "done"


@dataclass(slots=True, eq=False)
class Decoding:
    prefix: str
    holes: int = 1
    done: bool = False
    step_tokens: int = 1
    prepare_ms: float = 0.0
    prefill_ms: float = 0.0
    decode_ms: float = 0.0
    texts: list[str] | None = None  # the answer of each hole, when the request chose them
    steps_left: int = 1
    step_s: float = 0.0
    steps_run: int = 0


GATE_WAIT_S = 60.0  # far longer than any test holds a gate: only a test that never opens it waits this long
GATE = "gate:"


def held_marker(gate: Path) -> Path:
    """The file a step makes when it finds `gate` closed (missing) and waits there."""
    return gate.with_name(gate.name + ".held")


def wait_at_gate(gate: Path) -> None:
    """Return once the file `gate` exists, or after `GATE_WAIT_S`."""
    if gate.exists():
        return
    held_marker(gate).touch()
    deadline = time.monotonic() + GATE_WAIT_S
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def act(prefix: str) -> None:
    """What a request's prefix asks its (one) decoding step to do."""
    if prefix.startswith(GATE):
        wait_at_gate(Path(prefix.partition("\n")[0][len(GATE):].strip('"')))
    if prefix == "boom":
        raise RuntimeError("the fake model exploded")
    if prefix.startswith("sleep:"):
        time.sleep(float(prefix.split(":")[1]))
    if prefix.startswith("once:"):
        _, path, action = prefix.split(":")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        if action == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(30)


RENAME_MARKER = "# fake-rename: "
DEADLINE_MARKER = "# fake-deadline"
WORKER_NOTE = "  # renamed by the worker"
STREAM_MARKER = "# fake-stream: "


def stream_lines(steps: int) -> list[str]:
    return [f"    x{i} = {os.getpid()}" for i in range(1, steps + 1)]


def renamed(text: str, old: str, new: str) -> str:
    """`text` with every `old` made `new`, each line so changed ending in `WORKER_NOTE` before its
    line break ("\n" or "\r\n"; characters that are no line end to the LSP stay inside a line)."""
    lines = []
    for line in text.split("\n"):
        body, cr = (line[:-1], "\r") if line.endswith("\r") else (line, "")
        lines.append(body.replace(old, new) + WORKER_NOTE + cr if old in body else line)
    return "\n".join(lines)


def renamed_holes(job) -> list[str] | None:
    """Each hole's `replaces` renamed as the marker says (`renamed`), or None without the marker."""
    first_line = job.prefix.partition("\n")[0]
    if not first_line.startswith(RENAME_MARKER):
        return None
    old, new = first_line[len(RENAME_MARKER):].split()
    return [renamed(hole.replaces, old, new) for hole in job.holes]


def argv(address: str, keys_dir: Path | None = None) -> list[str]:
    """The command line of a fake worker process on `address`."""
    return [sys.executable, __file__, address] + ([str(keys_dir)] if keys_dir else [])


class FakeRunner:
    """The step-wise runner interface of `engine.worker.core`; every request takes one step."""

    def info(self) -> dict:
        return {"model": "fake", "family": "fake", "vocab_size": 8, "max_context": 8}

    def start(self, job, deadline) -> Decoding:
        decoding = Decoding(job.prefix, len(job.holes), texts=renamed_holes(job))
        first_line = job.prefix.partition("\n")[0]
        if first_line.startswith(STREAM_MARKER):
            steps, seconds = first_line[len(STREAM_MARKER):].split()
            decoding.steps_left, decoding.step_s = int(steps), float(seconds)
            decoding.texts = ["\n".join(stream_lines(int(steps)))]
        if first_line == DEADLINE_MARKER:
            decoding.texts = [str(int((deadline - time.monotonic()) * 1000))]
        return decoding

    def step(self, decodings: list[Decoding]) -> int:
        for decoding in decodings:
            act(decoding.prefix)
            time.sleep(decoding.step_s)
            decoding.steps_run += 1
            decoding.done = decoding.steps_run >= decoding.steps_left
        return 1

    def partial(self, decoding: Decoding) -> str | None:
        if decoding.step_s == 0.0:
            return None
        return "".join(line + "\n" for line in stream_lines(decoding.steps_left)[:decoding.steps_run])

    def fill_rest(self, decoding: Decoding) -> None:
        decoding.done = True

    def answers(self, decoding: Decoding) -> list[Completion]:
        if decoding.texts is not None:
            return [Completion(text) for text in decoding.texts]
        return [Completion(f"{os.getpid()}:{decoding.prefix}")] * decoding.holes

    def typed_on(self, decoding: Decoding, typed: str, deadline: float) -> None:
        return None


if __name__ == "__main__":
    keys = load_server_keys(Path(sys.argv[2])) if len(sys.argv) > 2 else None
    # its steps take what a test asks, so the load-shedding bounds are off (tests/test_scheduler.py)
    worker = Worker(FakeRunner(), sys.argv[1], keys, SchedulerConfig(max_wait_s=None, max_slowdown=None))
    sys.stderr.write(f"fake worker ready on {worker.address}\n")
    serve_until_signal(worker)
