"""The language server on an upstream over HTTP (`--backend URL`): this project's gateway, over a
fake worker process, in each dialect the server speaks (openai, fim, llama.cpp, edit), and small
misbehaving servers (`tests/upstream_server.py`). Inline completions give the worker path's answer,
a stream settles into its whole answer, a superseded keystroke closes its request at the gateway
(its metrics count the client gone), next edits come through `/v1/edit/completions`; a dead, slow,
401, 429 or garbage upstream means empty answers, one message to the editor and a server that goes
on; the API key appears in no log."""
from __future__ import annotations

import asyncio
import os
import re
import time

import httpx
import pytest
from lsprotocol import types

import fake_worker
from engine.launch import start_worker_process, stop_worker
from gateway_procs import Gateway
from test_lsp_e2e import ANSWER_WAIT_S, CURSOR, URI, start_session
from test_lsp_inline_edit import DEFINITION, SOURCE as RENAME_SOURCE, URI as RENAME_URI, apply, ask
from test_upstream import Server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

STREAM_TEXT = "# fake-stream: 3 0.2\ndef f():\n    \n"
STREAM_CURSOR = types.Position(line=2, character=4)
OPTIONS = {"maxTokens": 8, "deadlineMs": 20000}
KEY = "sk-upstream-secret-7f3a"
WAIT_S = 30.0


@pytest.fixture(scope="module")
def worker():
    import tempfile
    folder = tempfile.mkdtemp(prefix="iu-")
    address = f"ipc://{folder}/w.sock"
    process = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    yield address
    stop_worker(process)


@pytest.fixture(scope="module")
def gateway(worker):
    server = Gateway(["--worker", worker, "--deadline-ms", "20000"])
    yield server
    server.stop()


def metric(gateway: Gateway, name: str) -> float:
    page = httpx.get(f"{gateway.url}/metrics", timeout=10).text
    found = re.search(rf"^infill_gateway_{re.escape(name)} (\S+)$", page, re.MULTILINE)
    assert found, f"no metric {name}"
    return float(found.group(1))


def route_count(gateway: Gateway, route: str) -> int:
    page = httpx.get(f"{gateway.url}/metrics", timeout=10).text
    return sum(int(float(n)) for n in re.findall(
        rf'^infill_gateway_requests_total{{route="{re.escape(route)}",status="200"}} (\S+)$', page, re.MULTILINE))


async def until(condition, what: str) -> None:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < WAIT_S, f"{what} never happened"
        await asyncio.sleep(0.05)


def open_text(session, uri: str, text: str, version: int = 1) -> None:
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=text)))


def messages_of(session) -> list[str]:
    shown: list[str] = []
    session.client.feature(types.WINDOW_SHOW_MESSAGE)(lambda params: shown.append(params.message))
    return shown


async def texts_at(session, position: types.Position, uri: str = URI) -> list[str]:
    items = await asyncio.wait_for(session.inline(position, uri), ANSWER_WAIT_S)
    return [item.insert_text for item in items]


@pytest.mark.parametrize("kind", ["openai", "fim", "llama.cpp"])
async def test_inline_completions_through_the_gateway_are_the_workers_own(tmp_path, worker, gateway, kind):
    (tmp_path / "w").mkdir()
    stream_uri = "file:///tmp/infill-up/stream.py"
    direct = await start_session(tmp_path / "w", dict(os.environ), "--worker", worker, options=OPTIONS)
    open_text(direct, stream_uri, STREAM_TEXT)
    expected = [await texts_at(direct, CURSOR), await texts_at(direct, STREAM_CURSOR, stream_uri)]
    await direct.end()
    session = await start_session(tmp_path, dict(os.environ), "--backend", gateway.url, "--backend-kind", kind,
                                  options=OPTIONS)
    routes = {"openai": "/v1/completions", "fim": "/v1/fim/completions", "llama.cpp": "/infill"}
    served = route_count(gateway, routes[kind])
    open_text(session, stream_uri, STREAM_TEXT)
    answers = [await texts_at(session, CURSOR), await texts_at(session, STREAM_CURSOR, stream_uri)]
    assert all(expected) and answers == expected
    assert "x1 = " in expected[1][0]  # the streamed decoding, settled
    assert route_count(gateway, routes[kind]) > served  # one request per candidate
    assert await session.end() == 0


async def test_a_superseded_keystroke_closes_its_request_at_the_gateway(tmp_path, short_tmp, gateway):
    gate = short_tmp / "gate"
    text = f'gate:"{gate}"\ndef f(x):\n    return \n'
    options = {**OPTIONS, "backend": {"kind": "openai", "url": gateway.url, "stream": False}}
    session = await start_session(tmp_path, dict(os.environ), options=options)
    gated = "file:///tmp/infill-up/gated.py"
    open_text(session, gated, text)
    gone = metric(gateway, "client_gone_total")
    first = asyncio.ensure_future(session.inline(types.Position(line=2, character=11), gated))
    await until(fake_worker.held_marker(gate).exists, "the request reaching the worker")
    session.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=gated, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=2, character=11),
                              end=types.Position(line=2, character=11)), text="x")]))
    second = asyncio.ensure_future(session.inline(types.Position(line=2, character=12), gated))
    await until(lambda: metric(gateway, "client_gone_total") >= gone + 1, "the gateway seeing its client go")
    gate.touch()
    assert await asyncio.wait_for(first, ANSWER_WAIT_S) == []  # superseded
    await asyncio.wait_for(second, ANSWER_WAIT_S)
    assert await session.end() == 0


async def test_next_edits_come_through_the_edit_dialect(tmp_path, gateway):
    options = {"deadlineMs": 20000, "nextEditDrafts": "model",
               "backend": {"kind": "edit", "url": gateway.url}}
    session = await start_session(tmp_path, dict(os.environ), options=options)
    open_text(session, RENAME_URI, RENAME_SOURCE)
    served = route_count(gateway, "/v1/edit/completions")
    session.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=RENAME_URI, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=DEFINITION, end=types.Position(line=5, character=9)), text="total")]))
    edits = (await ask(session, 2))["edits"]
    renamed = RENAME_SOURCE.replace("    count = 0", "    total = 0")
    assert edits and "count" not in apply(renamed, edits).split("\n", 1)[1]
    assert route_count(gateway, "/v1/edit/completions") == served + 1
    assert await session.end() == 0


@pytest.mark.parametrize("mode", ["dead", "slow", "401", "429", "garbage"])
async def test_a_failing_upstream_means_empty_answers_one_message_and_a_server_that_goes_on(tmp_path, mode):
    server = None if mode == "dead" else Server(mode, tmp_path)
    key = tmp_path / "key"
    key.write_text(KEY + "\n")
    key.chmod(0o600)
    url = "http://127.0.0.1:9" if server is None else server.url
    session = await start_session(tmp_path, dict(os.environ), "--backend", url, "--backend-key-file", str(key),
                                  options={"maxTokens": 8, "deadlineMs": 800})
    shown = messages_of(session)
    try:
        for _ in range(4):
            assert await texts_at(session, CURSOR) == []
        await until(lambda: shown, "the status message")
        assert len(shown) == 1 and url in shown[0]
        if server is not None:
            # the first keystroke's candidates (asked at once); the later keystrokes fell in the
            # backoff: no retry storm
            assert 1 <= len(server.requests()) <= 2
        assert await session.end() == 0
    finally:
        if server is not None:
            server.stop()
    log = session.log.read_text()
    assert KEY not in log and "Traceback" not in log
    assert "no completions from the upstream" in log


async def test_an_unusable_backend_setting_says_so_and_insecure_http_is_refused(tmp_path, short_tmp):
    session = await start_session(tmp_path, dict(os.environ), "--worker", f"ipc://{short_tmp}/nobody.sock",
                                  options={**OPTIONS, "deadlineMs": 500})
    shown = messages_of(session)
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"infill": {"backend": {"kind": "openai", "url": "http://192.0.2.7:8000"}}}))
    await until(lambda: shown, "the message")
    assert "plain http" in shown[0] and "allowInsecureHttp" in shown[0]
    assert await texts_at(session, CURSOR) == []
    assert await session.end() == 0


async def test_the_arena_battles_a_worker_against_upstreams_of_any_kind(tmp_path, worker, gateway):
    """Both sides are the same fake worker, so the pair is no battle and one item comes back; each
    upstream side's request reached the gateway in its own dialect."""
    backends = [{"name": "worker"}, {"name": "openai", "backend": {"kind": "openai", "url": gateway.url}},
                {"name": "llama", "backend": {"kind": "llama.cpp", "url": gateway.url}}]
    options = {**OPTIONS, "workerAddress": worker, "arena": True, "arenaBackends": backends,
               "arenaDeadlineMs": 20000, "arenaVotes": str(tmp_path / "votes.sqlite3")}
    session = await start_session(tmp_path, dict(os.environ), options=options)
    served = route_count(gateway, "/v1/completions") + route_count(gateway, "/infill")
    answers = [await texts_at(session, CURSOR) for _ in range(4)]
    assert all(len(texts) == 1 and texts[0] for texts in answers)
    assert route_count(gateway, "/v1/completions") + route_count(gateway, "/infill") >= served + 4
    assert await session.end() == 0


def test_infill_complete_through_the_gateway_prints_the_workers_answer_with_or_without_v1(tmp_path, worker,
                                                                                          gateway):
    import json
    import subprocess
    import sys

    from infill.paths import REPO_ROOT

    source = tmp_path / "example.py"
    source.write_text("def add(a, b):\n    return \n")
    base = [sys.executable, "-m", "cli", "complete", str(source), "--line", "1", "--col", "11", "--json"]
    answers = [subprocess.run(base + flags, check=False, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
               for flags in (["--worker", worker], ["--backend", gateway.url], ["--backend", f"{gateway.url}/v1"],
                             ["--backend", f"{gateway.url}/v1/"])]
    assert [a.returncode for a in answers] == [0] * 4, [a.stderr[-2000:] for a in answers]
    direct, *upstream = (json.loads(a.stdout.strip().splitlines()[-1]) for a in answers)
    assert direct["completion"] and [u["completion"] for u in upstream] == [direct["completion"]] * 3
    dead = subprocess.run(base + ["--backend", "http://127.0.0.1:9"], check=False, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert dead.returncode == 1 and "cannot connect" in dead.stderr
