"""The arena's backends: what answers one hole, and how long it took.

`WorkerBackend` asks an engine worker (one it started on a model folder, or one running at an
address) with the backend's decoder overrides; a causal checkpoint is the same, served by the
worker's causal runner. `OpenAIBackend` posts OpenAI's `/v1/completions` shape (`prompt`,
`suffix`, `max_tokens`, greedy, `stop` at a newline for a single line) to any compatible server,
the project's gateway among them. `UpstreamBackend` asks a fim, llama.cpp (or templated openai)
server with the language server's own upstream client (`upstream.backend`), so that an A/B of
the bundled model against an upstream sees what the editor would. Every failure is an `Answer`
with `error` set (the backend is down, answered an error or garbage, or came later than its
budget plus the grace): the battle counts it as no answer, and the run goes on.
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Protocol

from bench.arena.config import BackendSpec
from engine.client.calls import WorkerError, WorkerTimeout
from engine.launch import spawn_local_worker, stop_worker
from engine.wire.protocol import CompleteRequest, ProtocolError
from engine.client.sync_client import WorkerClient
from upstream.backend import HttpBackend
from upstream.config import Upstream, base_url

HTTP_ERROR_CHARS = 200  # how much of a failing server's body an error keeps


@dataclass(frozen=True, slots=True)
class Ask:
    """One hole to answer, and by when."""

    prefix: str
    suffix: str
    mode: str
    max_tokens: int
    budget_ms: int  # the deadline the backend is given
    grace_ms: int  # a reply later than budget + grace is no answer


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    latency_ms: float  # wall time seen by the arena
    forward_passes: int | None  # None when the backend does not say (an OpenAI server)
    error: str | None = None  # why there is no answer

    @property
    def answered(self) -> bool:
        return self.error is None


class Backend(Protocol):
    name: str

    def answer(self, ask: Ask) -> Answer: ...

    def close(self) -> None: ...


def late(answer: Answer, ask: Ask) -> Answer:
    """`answer`, or no answer when it came after the budget and the grace."""
    if answer.error is None and answer.latency_ms > ask.budget_ms + ask.grace_ms:
        return Answer("", answer.latency_ms, answer.forward_passes,
                      f"slow: answered after {answer.latency_ms:.0f} ms, budget {ask.budget_ms} ms "
                      f"+ {ask.grace_ms} ms grace")
    return answer


class WorkerBackend:
    def __init__(self, spec: BackendSpec):
        self.name, self.decoder = spec.name, dict(spec.decoder)
        self.process: subprocess.Popen | None = None
        address = spec.address
        if address is None:
            flags = [] if spec.max_context is None else ["--max-context", str(spec.max_context)]
            self.process, address = spawn_local_worker(spec.model, threads=spec.threads, flags=flags)
        self.client = WorkerClient(address, client_name=f"bench.arena:{spec.name}")

    def answer(self, ask: Ask) -> Answer:
        self.client.timeout_s = ask.grace_ms / 1000.0  # a completion waits its deadline plus this
        started = time.perf_counter()
        try:
            request = CompleteRequest(uuid.uuid4().hex, "fim", ask.prefix, ask.suffix, mode=ask.mode,
                                      max_tokens=ask.max_tokens, deadline_ms=ask.budget_ms,
                                      decoder=dict(self.decoder))
            result = self.client.complete(request)
        except (WorkerError, WorkerTimeout, ProtocolError, OSError) as exc:
            return Answer("", elapsed_ms(started), None, f"{type(exc).__name__}: {exc}")
        latency_ms = elapsed_ms(started)
        if not result.items:
            return Answer("", latency_ms, 0, f"no items ({result.stop_reason})")
        item = result.items[0]
        return late(Answer(item.text, latency_ms, item.forward_passes), ask)

    def close(self) -> None:
        self.client.close()
        if self.process is not None:
            stop_worker(self.process)


class OpenAIBackend:
    def __init__(self, spec: BackendSpec):
        self.name, self.url, self.model = spec.name, spec.url, spec.model or spec.name
        self.api_key = os.environ.get(spec.api_key_env) if spec.api_key_env else None

    def body(self, ask: Ask) -> bytes:
        payload = {"model": self.model, "prompt": ask.prefix, "suffix": ask.suffix,
                   "max_tokens": ask.max_tokens, "temperature": 0}
        if ask.mode == "single_line":
            payload["stop"] = ["\n"]
        return json.dumps(payload).encode()

    def answer(self, ask: Ask) -> Answer:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, self.body(ask), headers, method="POST")
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=(ask.budget_ms + ask.grace_ms) / 1000.0) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as exc:
            body = exc.read()[:HTTP_ERROR_CHARS].decode("utf-8", "replace")
            return Answer("", elapsed_ms(started), None, f"HTTP {exc.code}: {body}")
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            return Answer("", elapsed_ms(started), None, f"unreachable: {getattr(exc, 'reason', exc)}")
        latency_ms = elapsed_ms(started)
        text, problem = completion_text(raw)
        if problem is not None:
            return Answer("", latency_ms, None, problem)
        return late(Answer(text, latency_ms, None), ask)

    def close(self) -> None:
        return None


class UpstreamBackend:
    def __init__(self, spec: BackendSpec):
        self.name, self.loop = spec.name, asyncio.new_event_loop()
        key = (os.environ.get(spec.api_key_env) or "") if spec.api_key_env else ""
        url = base_url(spec.url.removesuffix("/v1/completions"))  # with or without /v1, as users write it
        self.upstream = Upstream(spec.kind, url, spec.model or "", spec.template or "", api_key=key)
        self.problems: list[str] = []
        self.client = self.loop.run_until_complete(self._open())

    async def _open(self) -> HttpBackend:
        return HttpBackend(self.upstream, self.problems.append)

    def answer(self, ask: Ask) -> Answer:
        request = CompleteRequest(uuid.uuid4().hex, "fim", ask.prefix, ask.suffix, mode=ask.mode,
                                  max_tokens=ask.max_tokens, deadline_ms=ask.budget_ms + ask.grace_ms)
        started, failures = time.perf_counter(), self.client.failures
        result = self.loop.run_until_complete(self.client.complete(request))
        latency_ms = elapsed_ms(started)
        if self.client.failures > failures or not result.items:
            return Answer("", latency_ms, None, self.problems[-1] if self.problems else "no answer")
        return late(Answer(result.items[0].text, latency_ms, None), ask)

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


def completion_text(raw: bytes) -> tuple[str, str | None]:
    """`choices[0].text` of an OpenAI completion, or a reason it is none (garbage)."""
    try:
        reply = json.loads(raw)
        text = reply["choices"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        return "", f"garbage: not an OpenAI completion: {raw[:HTTP_ERROR_CHARS]!r}"
    if not isinstance(text, str):
        return "", f"garbage: choices[0].text is {type(text).__name__}, not text"
    return text, None


def elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1e3


def open_backend(spec: BackendSpec) -> Backend:
    """The backend a spec declares (starting its worker, when it names a model)."""
    if spec.kind in ("fim", "llama.cpp") or (spec.kind == "openai" and spec.template):
        return UpstreamBackend(spec)
    if spec.kind == "openai":
        return OpenAIBackend(spec)
    return WorkerBackend(spec)
