"""End-to-end tests of the language server: a real pygls client drives `python -m lsp_server` over
stdio, and the server starts (and stops) its own worker on a real model.

The model is the bundled one. A small model writes poor code, so these tests check the shape of
the answers, not their text. The cursor sits inside an identifier (`import o|`), where the
worker's token healing makes the model write a character or more; typing through needs two or
more, which the model writes at `from os import pa|`.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.lsp.client import LanguageClient

import fake_worker
from engine.launch import start_worker_process, stop_worker
from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SOURCE = "import o\n\n\ndef add(a, b):\n    return a + b\n"
URI = "file:///tmp/infill-e2e/example.py"
CURSOR = types.Position(line=0, character=8)
TYPED_SOURCE = "from os import pa\n\n\ndef add(a, b):\n    return a + b\n"  # the model writes `th`
TYPED_URI = "file:///tmp/infill-e2e/typed.py"
TYPED_CURSOR = types.Position(line=0, character=17)
OPTIONS = {"maxTokens": 8, "deadlineMs": 20000}  # few tokens, and a deadline the busy CPU can meet
EXIT_WAIT_S = 30
ANSWER_WAIT_S = 60  # only a server that never answers takes this long


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process this user can see, from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # the process ended while we looked
            continue
        table[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline)
    return table


async def logged(log: Path, text: str) -> None:
    """Returns once the server's log holds `text`; fails after ANSWER_WAIT_S."""
    deadline = time.monotonic() + ANSWER_WAIT_S
    while text not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, f"the server never logged {text!r}"
        await asyncio.sleep(0.05)


async def held_at(gate: Path) -> None:
    """Returns once a job's step waits at the fake worker's closed `gate` (`tests/fake_worker.py`):
    its request is in flight at the worker."""
    deadline = time.monotonic() + ANSWER_WAIT_S
    while not fake_worker.held_marker(gate).exists():
        assert time.monotonic() < deadline, f"no job's step reached the gate {gate}"
        await asyncio.sleep(0.02)


def worker_pids(marker: str) -> list[int]:
    """Worker processes (`python -m engine`) whose parent's command line contains `marker`."""
    table = processes()
    parents = {pid for pid, (_, cmdline) in table.items() if marker in cmdline}
    return [pid for pid, (ppid, cmdline) in table.items() if ppid in parents and "-m engine" in cmdline]


def is_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class Session:
    """A server process and its client; `edits` collects any edit the server asks the client for."""

    def __init__(self, client: LanguageClient, process: asyncio.subprocess.Process, log: Path):
        self.client, self.process, self.log = client, process, log
        self.capabilities = types.ServerCapabilities()
        self.edits: list[types.ApplyWorkspaceEditParams] = []

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def refuse_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            self.edits.append(params)
            return types.ApplyWorkspaceEditResult(applied=False)

    async def open(self, options: dict) -> None:
        """Initialize (offering to apply edits, which the server must never ask for) and open URI."""
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(apply_edit=True))
        result = await self.client.initialize_async(types.InitializeParams(
            capabilities=capabilities, initialization_options=options))
        self.capabilities = result.capabilities
        self.client.initialized(types.InitializedParams())
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=URI, language_id="python", version=1, text=SOURCE)))

    async def inline(self, position: types.Position, uri: str = URI) -> list[types.InlineCompletionItem]:
        context = types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked)
        result = await self.client.text_document_inline_completion_async(types.InlineCompletionParams(
            context=context, text_document=types.TextDocumentIdentifier(uri), position=position))
        assert isinstance(result, list)
        return result

    async def completion(self, position: types.Position, uri: str = URI) -> list[types.CompletionItem]:
        result = await self.client.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri), position=position))
        assert isinstance(result, types.CompletionList)
        return list(result.items)

    async def end(self) -> int:
        """Shutdown and exit; returns the server's exit code."""
        await self.client.shutdown_async(None)
        self.client.exit(None)
        code = await asyncio.wait_for(self.process.wait(), EXIT_WAIT_S)
        await self.client.stop()
        return code


async def start_session(tmp_path: Path, env: dict[str, str], *flags: str,
                        options: dict | None = None) -> Session:
    """`python -m lsp_server` on stdio, initialized, with the example document open."""
    log = tmp_path / "lsp.log"
    client = LanguageClient("infill-tests", "0")
    await client.start_io(sys.executable, "-m", "lsp_server", "--log-file", str(log), *flags,
                          env=env, cwd=REPO_ROOT)
    session = Session(client, client._server, log)  # pygls keeps the process it started there
    try:
        await session.open(options or OPTIONS)
    except BaseException:
        session.process.kill()
        raise
    return session


@pytest.fixture
async def session(tmp_path, model_env):
    started = await start_session(tmp_path, model_env)
    yield started
    if started.process.returncode is None:
        await started.end()


async def test_inline_completion_and_completion_items(session):
    assert session.capabilities.inline_completion_provider is not None
    assert session.capabilities.completion_provider is not None
    here = types.Range(start=CURSOR, end=CURSOR)
    inline = await session.inline(CURSOR)
    assert inline and all(item.insert_text.strip() and item.range == here for item in inline)
    items = await session.completion(CURSOR)
    assert items and all(item.text_edit.range == here and item.text_edit.new_text.strip()
                         for item in items)
    assert all(item.label and item.insert_text_format == types.InsertTextFormat.PlainText
               and item.kind in (types.CompletionItemKind.Text, types.CompletionItemKind.Snippet)
               for item in items)
    assert session.edits == []


async def test_places_outside_the_document_get_empty_answers(session, tmp_path):
    assert await session.inline(types.Position(line=99, character=0)) == []
    assert await session.completion(types.Position(line=0, character=50)) == []
    not_utf8 = tmp_path / "latin1.py"
    not_utf8.write_bytes(b"name = '\xe9t\xe9'\n")  # never opened: the server reads it from disk
    assert await session.inline(CURSOR, uri=not_utf8.as_uri()) == []
    assert await session.inline(CURSOR, uri=(tmp_path / "missing.py").as_uri()) == []
    surrogate = "file:///tmp/infill-e2e/surrogate.py"  # JSON can carry a lone surrogate; UTF-8 cannot
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=surrogate, language_id="python", version=1, text="x = '\ud800'\n")))
    assert await session.inline(types.Position(line=0, character=2), uri=surrogate) == []
    assert len(await session.inline(CURSOR)) >= 1  # and the server still answers
    assert session.edits == []


async def test_shutdown_and_exit_stop_the_local_worker(tmp_path, model_env):
    session = await start_session(tmp_path, model_env)
    assert await session.inline(CURSOR)  # the worker is up
    workers = worker_pids(str(session.log))
    assert len(workers) == 1, "the server should have started exactly one worker"
    assert await session.end() == 0
    assert not is_running(workers[0]), f"worker pid {workers[0]} outlived the server"


async def test_a_killed_local_worker_is_restarted(session):
    assert await session.inline(CURSOR)
    [first] = worker_pids(str(session.log))
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 60  # a restart loads the model again
    while not (worker_pids(str(session.log)) and await session.inline(CURSOR)):
        assert time.monotonic() < deadline, "the worker was not restarted"
        await asyncio.sleep(0.2)
    [second] = worker_pids(str(session.log))
    assert second != first and not is_running(first)


@pytest.mark.parametrize("ending", ["stdin closed", "SIGTERM"])
async def test_losing_the_client_without_shutdown_stops_the_local_worker(tmp_path, model_env, ending):
    session = await start_session(tmp_path, model_env)
    assert await session.inline(CURSOR)
    workers = worker_pids(str(session.log))
    assert len(workers) == 1
    server = session.process
    if ending == "SIGTERM":
        server.send_signal(signal.SIGTERM)
    else:
        server.stdin.close()
    assert await asyncio.wait_for(server.wait(), EXIT_WAIT_S) != 0  # no shutdown request came
    assert not is_running(workers[0]), f"worker pid {workers[0]} outlived the server"
    await session.client.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_tcp_server(tmp_path, model_env):
    port, log, token_file = free_port(), tmp_path / "lsp.log", tmp_path / "lsp.token"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lsp_server", "--tcp", str(port), "--log-file", str(log),
        "--token-file", str(token_file), env=model_env, cwd=REPO_ROOT)
    client = LanguageClient("infill-tests", "0")
    deadline = time.monotonic() + EXIT_WAIT_S
    while True:  # connect as soon as it listens; the token file is written before it listens
        try:
            await client.start_tcp("127.0.0.1", port)
            break
        except OSError:
            assert time.monotonic() < deadline and process.returncode is None, "the server never listened"
            await asyncio.sleep(0.1)
    session = Session(client, process, log)
    await session.open({**OPTIONS, "token": token_file.read_text().strip()})
    assert await session.inline(CURSOR)
    workers = worker_pids(str(log))
    assert await session.end() == 0
    assert len(workers) == 1 and not is_running(workers[0])
    assert not token_file.exists()


async def test_an_unreachable_worker_means_empty_answers_in_time(tmp_path):
    """In time: each request gets an empty answer once its deadline has passed, and the server
    says it gave up. The first request may come while the server still waits for the worker's
    hello; the second comes after the server stopped waiting and sent it to the worker anyway."""
    address = f"ipc://{tmp_path}/nobody.sock"
    session = await start_session(tmp_path, dict(os.environ), "--worker", address,
                                  options={"deadlineMs": 300})
    assert await asyncio.wait_for(session.inline(CURSOR), ANSWER_WAIT_S) == []
    await logged(session.log, "does not answer yet; requests will try it anyway")
    assert await asyncio.wait_for(session.inline(CURSOR), ANSWER_WAIT_S) == []
    log = session.log.read_text()
    assert log.count("single_line: 0 texts") == 2 and "Traceback" not in log
    assert "no completion: no reply to CompleteRequest" in log  # its client waited out the deadline
    assert worker_pids(str(session.log)) == []
    assert await session.end() == 0


def change_at(position: types.Position, text: str, uri: str, version: int) -> types.DidChangeTextDocumentParams:
    """An incremental change that inserts `text` at `position`."""
    here = types.Range(start=position, end=position)
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(range=here, text=text)])


async def automatic(session: Session, position: types.Position,
                    uri: str = URI) -> list[types.InlineCompletionItem]:
    context = types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic)
    result = await session.client.text_document_inline_completion_async(types.InlineCompletionParams(
        context=context, text_document=types.TextDocumentIdentifier(uri), position=position))
    assert isinstance(result, list)
    return result


NO_PLACE = re.compile(r"\] no completion at \d+:\d+$", re.MULTILINE)  # what the server logs when it
#   decides there is no place to complete (the mode `none`)


def no_place_count(log: str) -> int:
    return len(NO_PLACE.findall(log))


async def test_no_automatic_completion_inside_a_string_but_one_when_invoked(session):
    session.client.text_document_did_change(change_at(types.Position(line=1, character=0),
                                                      'NAME = "ab"\n', URI, 2))
    inside = types.Position(line=1, character=9)
    assert await automatic(session, inside) == []
    assert no_place_count(session.log.read_text()) == 1
    replies = session.log.read_text().count(" items; queue")
    await session.inline(inside)  # invoked: the worker is asked for two candidates (a small
    log = session.log.read_text()  # model may write nothing usable there)
    assert no_place_count(log) == 1 and log.count(" items; queue") == replies + 2
    go = "file:///tmp/infill-e2e/main.go"  # other languages go through their own grammar
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=go, language_id="go", version=1, text='package main\n\n// Say hello\nvar s = "hi"\n')))
    context = types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic)
    for line, character in [(2, 6), (3, 10)]:  # in a comment, in a string
        result = await session.client.text_document_inline_completion_async(
            types.InlineCompletionParams(context=context, text_document=types.TextDocumentIdentifier(go),
                                         position=types.Position(line=line, character=character)))
        assert result == []
    assert no_place_count(session.log.read_text()) == 3


async def test_typing_through_a_shown_completion_needs_no_worker_call(session):
    """At `from os import pa|` the bundled model writes `th`: asked again there, the server shows
    it from its cache; after the user types `t`, the cache shows the rest, `h`."""
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=TYPED_URI, language_id="python", version=1, text=TYPED_SOURCE)))
    shown = (await automatic(session, TYPED_CURSOR, TYPED_URI))[0].insert_text
    assert len(shown) >= 2, f"the model wrote {shown!r}: too short to type through"
    again = await automatic(session, TYPED_CURSOR, TYPED_URI)
    assert [item.insert_text for item in again] == [shown]
    assert session.log.read_text().count("typing through") == 1
    session.client.text_document_did_change(change_at(TYPED_CURSOR, shown[0], TYPED_URI, 2))
    after = types.Position(line=TYPED_CURSOR.line, character=TYPED_CURSOR.character + 1)
    assert [item.insert_text for item in await automatic(session, after, TYPED_URI)] == [shown[1:]]
    assert session.log.read_text().count("typing through") == 2


async def test_a_newer_request_for_the_document_supersedes_the_older(session):
    older, newer = await asyncio.gather(session.inline(CURSOR), session.inline(CURSOR))
    assert older == [] and len(newer) >= 1
    assert "superseded by a newer request" in session.log.read_text()


async def test_completion_events_reach_the_stats_log_and_settings_can_change(tmp_path, model_env):
    stats = tmp_path / "stats.jsonl"
    session = await start_session(tmp_path, model_env, options={**OPTIONS, "statsLog": str(stats)})
    item = (await session.inline(CURSOR))[0]
    event = item.command.arguments[0]
    assert item.command.command == "infill.acceptCompletion" and event["index"] == 0
    session.client.protocol.notify("infill/didShowCompletion", event)
    session.client.protocol.notify("infill/acceptCompletion", {**event, "acceptedChars": 1})
    session.client.protocol.notify("infill/rejectCompletion", {"requestId": "unknown"})
    await session.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=item.command.command, arguments=item.command.arguments))  # what VS Code runs
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"infill": {**OPTIONS, "maxLines": 3}}))
    items = await session.completion(CURSOR)  # answered after the notifications: they are done
    assert items[0].data["index"] == 0 and items[0].data["requestId"] != event["requestId"]
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert [(line["event"], line["request_id"]) for line in lines] == [
        ("show", event["requestId"]), ("accept", event["requestId"]), ("accept", event["requestId"])]
    assert lines[1]["accepted_chars"] == 1 and lines[0]["latency_ms"] > 0
    assert "max_lines=3" in session.log.read_text()
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={**OPTIONS, "languages": ["rust", "go"]}))
    assert await session.inline(types.Position(line=4, character=16)) == []
    assert "python is not among the languages" in session.log.read_text()
    assert await session.end() == 0


async def test_a_cancelled_request_gets_the_cancelled_error_and_the_server_goes_on(tmp_path, short_tmp):
    """The request's job waits at the fake worker's closed gate (its prefix says so) until the
    cancel has come; then the gate opens and the next request is answered."""
    address, gate = f"ipc://{short_tmp}/w.sock", short_tmp / "gate"
    worker = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    try:
        session = await start_session(tmp_path, dict(os.environ), "--worker", address,
                                      options={"deadlineMs": 20000})
        slow, text = "file:///tmp/infill-e2e/slow.py", f'gate:"{gate}"'
        session.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=slow, language_id="python", version=1, text=text)))
        params = types.InlineCompletionParams(
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked),
            text_document=types.TextDocumentIdentifier(slow),
            position=types.Position(line=0, character=len(text)))
        pending = session.client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, params,
                                                       msg_id="cancel-me")
        await held_at(gate)
        session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancel-me"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(asyncio.wrap_future(pending), ANSWER_WAIT_S)
        assert "superseded" not in session.log.read_text()
        gate.touch()
        assert isinstance(await session.inline(CURSOR), list)  # and the next request is answered
        assert await session.end() == 0
    finally:
        gate.touch()  # a failed check: the held step ends, so that the worker stops at once
        stop_worker(worker)
