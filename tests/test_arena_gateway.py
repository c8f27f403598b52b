"""The arena's OpenAI FIM backend against the project's own gateway (a live `python -m gateway`
on the bundled model): it answers a hole, and a model the gateway does not serve is no answer."""
from __future__ import annotations

import time
import urllib.error
import urllib.request

import pytest

from bench.arena.backends import Ask, OpenAIBackend
from bench.arena.config import BackendSpec
from gateway_procs import Gateway
from infill.paths import bundled_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ASK = Ask("def area(radius):\n    return 3.14159 * ", "\n\n\nprint(area(2))\n", "single_line", 16,
          budget_ms=60000, grace_ms=1000)


READY_S = 30  # the gateway writes its address a moment before its socket accepts


def wait_ready(url: str) -> None:
    deadline = time.monotonic() + READY_S
    while True:
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=5):
                return
        except (urllib.error.URLError, OSError):
            assert time.monotonic() < deadline, f"the gateway at {url} never answered GET /v1/models"
            time.sleep(0.1)


@pytest.fixture(scope="module")
def gateway():
    server = Gateway(["--deadline-ms", "30000", "--threads", "1"], startup_s=240)
    try:
        wait_ready(server.url)
        yield server.url + "/v1/completions"
    finally:
        server.stop()


def test_the_gateway_answers_as_an_arena_backend(gateway):
    backend = OpenAIBackend(BackendSpec("gateway", "openai", model=bundled_model_dir().name, url=gateway))
    answer = backend.answer(ASK)
    assert answer.answered, answer.error
    assert answer.text.strip() and "\n" not in answer.text and answer.latency_ms > 0


def test_a_model_the_gateway_does_not_serve_is_no_answer(gateway):
    backend = OpenAIBackend(BackendSpec("wrong", "openai", model="no-such-model", url=gateway))
    answer = backend.answer(ASK)
    assert not answer.answered and answer.error.startswith("HTTP 404")
