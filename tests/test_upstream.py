"""The upstream clients (`upstream/`) on their own: the settings and the key file, the bodies of each
dialect and the answers read back, the token budget, and `HttpBackend` against misbehaving model
servers (`tests/upstream_server.py`, a real process on a real socket): each gets an empty answer,
one status message and a backoff instead of a retry storm."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.wire.protocol import CompleteRequest, Event, Hole
from gateway.templates import split_template
from upstream import budget, dialects
from upstream.backend import HttpBackend
from upstream.config import BackendSettingError, Upstream, read_key, upstream_of
from upstream.templates import NAMES, TEMPLATES, render, unfence

SERVER = Path(__file__).with_name("upstream_server.py")


def fim_request(prefix: str = "def f():\n    ", suffix: str = "\n", **fields) -> CompleteRequest:
    return CompleteRequest("r1", "fim", prefix, suffix, max_tokens=16, deadline_ms=5000, **fields)


def test_every_family_template_written_here_is_read_back_by_the_gateway():
    for template in TEMPLATES:
        assert split_template(render(template.name, "def f(", "):\n")) == ("def f(", "):\n", template.name)


def test_a_fenced_answer_is_unwrapped_and_an_unfenced_one_kept():
    assert unfence("```python\nreturn x\n```") == "return x"
    assert unfence("  ```\na\nb\n```\n") == "a\nb"
    assert unfence("return x  # ``` inside") == "return x  # ``` inside"


def test_settings_refuse_plain_http_off_loopback_an_unknown_kind_and_a_readable_key(tmp_path):
    assert upstream_of({"kind": "worker"}) is None and upstream_of({}) is None
    with pytest.raises(BackendSettingError, match="plain http"):
        upstream_of({"url": "http://10.1.2.3:8000"})
    assert upstream_of({"url": "http://10.1.2.3:8000", "allowInsecureHttp": True}).kind == "openai"
    assert upstream_of({"url": "https://api.example.com/", "kind": "fim"}).url == "https://api.example.com"
    with pytest.raises(BackendSettingError, match="kind"):
        upstream_of({"kind": "grpc", "url": "http://127.0.0.1:1"})
    key = tmp_path / "key"
    key.write_text("sk-secret-123\n")
    key.chmod(0o644)
    with pytest.raises(BackendSettingError, match="chmod 600") as refused:
        read_key(key)
    assert "sk-secret" not in str(refused.value)
    key.chmod(0o600)
    found = upstream_of({"url": "http://127.0.0.1:1", "apiKeyFile": str(key)})
    assert found.api_key == "sk-secret-123" and "sk-secret" not in repr(found)
    assert set(NAMES) >= {"starcoder", "qwen", "codellama", "deepseek", "chat"}


def test_each_dialect_has_its_path_and_body():
    request = fim_request(snippets=[])
    openai = dialects.call_for(Upstream("openai", "http://h"), request)
    assert openai.path == "/v1/completions" and openai.body["suffix"] == "\n"
    templated = dialects.call_for(Upstream("openai", "http://h", template="qwen"), request)
    assert "suffix" not in templated.body and templated.body["prompt"].startswith("<|fim_prefix|>def f")
    chat = dialects.call_for(Upstream("openai", "http://h", template="chat"), request)
    assert chat.path == "/v1/chat/completions" and chat.chat and "<HOLE>" in chat.body["messages"][0]["content"]
    llama = dialects.call_for(Upstream("llama.cpp", "http://h"), request)
    assert llama.path == "/infill" and llama.body["input_prefix"] == request.prefix
    assert dialects.call_for(Upstream("fim", "http://h"), request).path == "/v1/fim/completions"
    for call in (openai, templated, chat, llama):
        assert call.body["temperature"] == 0  # greedy: engines sample at 1 unless told


def test_an_edit_job_becomes_inceptions_sections_and_its_rewrite_one_item_per_region():
    request = CompleteRequest("e1", "edit", "def f(total):\n", "\n", document="file:///src/f.py",
                              holes=[Hole("single_line", 16, "    y = count\n"),
                                     Hole("single_line", 16, "    return count\n")],
                              pieces=["    z = 2\n"], events=[Event("def f(count):\n", "def f(total):\n")])
    call = dialects.call_for(Upstream("edit", "http://h"), request)
    content = call.body["messages"][0]["content"]
    assert call.path == "/v1/edit/completions" and "current_file_path: /src/f.py" in content
    assert "-def f(count):\n+def f(total):" in content
    assert "<|code_to_edit|>\n<|cursor|>    y = count\n    z = 2\n    return count\n" in content
    items = dialects.edit_items(request, "```\n    y = total\n    z = 2\n    return total\n```")
    assert [(i.hole, i.text) for i in items] == [(0, "    y = total\n"), (1, "    return total\n")]
    assert [i.text for i in dialects.edit_items(request, None)] == ["    y = count\n", "    return count\n"]
    with pytest.raises(dialects.BadAnswer):
        dialects.edit_items(request, "something else entirely")


def test_answers_without_text_or_with_an_error_object_are_bad():
    assert dialects.text_of({"choices": [{"message": {"content": "x"}}]}) == "x"
    assert dialects.text_of({"content": "y", "stop": True}) == "y"
    assert dialects.text_of({"choices": [], "usage": {}}, chunk=True) is None
    for bad in ({"choices": [{"index": 0}]}, {"error": {"message": "no"}}, {"choices": []}, [1]):
        with pytest.raises(dialects.BadAnswer):
            dialects.text_of(bad)


def test_the_budget_cuts_snippets_then_the_far_ends_at_line_breaks():
    request = fim_request("".join(f"line{i}\n" for i in range(2000)), "".join(f"after{i}\n" for i in range(1000)))
    assert budget.fit(request, 0) is request and budget.fit(request, 1_000_000) is request
    cut = budget.fit(request, 1000)
    assert budget.estimate_tokens(cut.prefix + cut.suffix) + request.max_tokens <= 1000
    assert cut.prefix.endswith("line1999\n") and cut.prefix.startswith("line")
    assert cut.suffix.startswith("after0\n") and cut.suffix.endswith("\n")


class Server:
    """`tests/upstream_server.py MODE` on a free port, with the requests it saw."""

    def __init__(self, mode: str, tmp_path: Path):
        self.log = tmp_path / f"{mode}.log"
        self.process = subprocess.Popen([sys.executable, str(SERVER), mode, str(self.log)],
                                        stderr=subprocess.PIPE, text=True)
        self.url = re.search(r"http://\S+", self.process.stderr.readline()).group(0)

    def requests(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def server(request, tmp_path):
    started = Server(request.param, tmp_path)
    yield started
    started.stop()


async def ask_three(backend: HttpBackend, deadline_ms: int = 2000) -> list[list[str]]:
    answers = []
    for _ in range(3):
        result = await backend.complete(CompleteRequest("r", "fim", "def f():\n    ", "\n", max_tokens=16,
                                                        deadline_ms=deadline_ms))
        answers.append([item.text for item in result.items])
    return answers


@pytest.mark.parametrize("server", ["slow", "401", "429", "500", "garbage", "redirect", "huge", "endless",
                                    "no_text", "error_200", "long"], indirect=True)
async def test_a_failing_upstream_gets_empty_answers_one_message_and_no_retry_storm(server, tmp_path):
    key = tmp_path / "key"
    key.write_text("sk-never-logged-42")
    key.chmod(0o600)
    messages: list[str] = []
    backend = HttpBackend(upstream_of({"url": server.url, "apiKeyFile": str(key)}), messages.append)
    answers = await ask_three(backend, deadline_ms=1500)
    await backend.aclose()
    assert answers == [[], [], []]
    assert len(messages) == 1 and server.url in messages[0] and "sk-never" not in messages[0]
    assert len(server.requests()) == 1  # the two after it fell in the backoff
    assert server.requests()[0].split()[1] == "True"  # the key went, as a header
    assert backend.failures == 1 and backend.quiet_until > 0


@pytest.mark.parametrize("server", ["ok", "fenced", "stream"], indirect=True)
async def test_a_good_upstream_answers_a_stream_adds_up_and_a_fenced_chat_answer_is_unwrapped(server):
    template = "chat" if server.process.args[2] == "fenced" else ""
    backend = HttpBackend(upstream_of({"url": server.url, "template": template}), lambda m: None)
    answers = await ask_three(backend)
    await backend.aclose()
    assert answers == [["pass"]] * 3 and len(server.requests()) == 3


async def test_an_unreachable_upstream_and_a_tls_failure_say_so_once(tmp_path):
    messages: list[str] = []
    dead = HttpBackend(upstream_of({"url": "http://127.0.0.1:9"}), messages.append)
    assert await ask_three(dead) == [[], [], []]
    good = Server("ok", tmp_path)
    try:
        tls = HttpBackend(upstream_of({"url": good.url.replace("http:", "https:")}), messages.append)
        assert await ask_three(tls) == [[], [], []]
        await tls.aclose()
    finally:
        good.stop()
    await dead.aclose()
    assert len(messages) == 2 and "cannot connect" in messages[0]
    assert re.search(r"SSL|TLS|ConnectError|record", messages[1]), messages[1]


async def test_a_recovered_upstream_is_asked_again_after_its_backoff(tmp_path):
    server = Server("500", tmp_path)
    backend = HttpBackend(upstream_of({"url": server.url}), lambda m: None)
    assert (await ask_three(backend))[0] == []
    backend.quiet_until = 0.0  # as if the backoff had run out
    assert (await backend.complete(fim_request())).items == []
    assert backend.failures == 2 and len(server.requests()) == 2
    server.stop()
    await backend.aclose()


async def test_edit_jobs_go_only_to_an_edit_upstream(tmp_path):
    server = Server("ok", tmp_path)
    backend = HttpBackend(upstream_of({"url": server.url, "kind": "fim"}), lambda m: None)
    job = CompleteRequest("e", "edit", "", "", holes=[Hole("single_line", 8, "x\n")])
    assert (await backend.complete(job)).items == [] and server.requests() == []
    server.stop()
    await backend.aclose()


def test_bench_arena_asks_fim_and_llama_cpp_upstreams_through_the_same_client(tmp_path):
    from bench.arena.backends import Ask, UpstreamBackend, open_backend
    from bench.arena.config import BackendSpec, backend_problem

    good, bad = Server("ok", tmp_path), Server("401", tmp_path)
    ask = Ask("def f():\n    ", "\n", "single_line", 16, 2000, 500)
    try:
        for kind in ("fim", "llama.cpp"):
            spec = BackendSpec("up", kind, url=good.url)
            assert backend_problem(spec) is None
            backend = open_backend(spec)
            assert isinstance(backend, UpstreamBackend) and backend.answer(ask).text == "pass"
            backend.close()
        refused = open_backend(BackendSpec("no", "fim", url=bad.url))
        answer = refused.answer(ask)
        refused.close()
        assert not answer.answered and "401" in answer.error
    finally:
        good.stop()
        bad.stop()
    assert [line.split()[0] for line in good.requests()] == ["/v1/fim/completions", "/infill"]
    assert backend_problem(BackendSpec("w", "worker", model="m", template="qwen"))[0] == "template"
