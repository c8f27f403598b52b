"""End-to-end tests of the language server: a real pygls client drives `python -m lsp_server` over
stdio, and the server starts (and stops) its own worker on a real model.

The model is the bundled one, or the small smoke model while the bundled one is still training.
The smoke model barely writes code, so these tests check the shape of the answers, not their text.
The cursor sits inside an identifier (`import o|`), where the worker's token healing makes even the
smoke model write a character or more.
"""
from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from infill.paths import REPO_ROOT, bundled_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SMOKE_MODEL = REPO_ROOT / "work" / "smoke-model"
SOURCE = "import o\n\n\ndef add(a, b):\n    return a + b\n"
URI = "file:///tmp/infill-e2e/example.py"
CURSOR = types.Position(line=0, character=8)
OPTIONS = {"maxTokens": 8, "deadlineMs": 20000}  # few tokens, and a deadline the busy CPU can meet
EXIT_WAIT_S = 30


@pytest.fixture
def model_env() -> dict[str, str]:
    """The environment for the server: the bundled model, or the smoke model while it is missing."""
    env = dict(os.environ)
    if not (bundled_model_dir() / "config.json").is_file():
        env["INFILL_MODEL"] = str(SMOKE_MODEL)
    return env


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
    """A started server and its client; `edits` collects any edit the server asks the client for."""

    def __init__(self, client: LanguageClient, log: Path, capabilities: types.ServerCapabilities):
        self.client, self.log, self.capabilities = client, log, capabilities
        self.edits: list[types.ApplyWorkspaceEditParams] = []

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
        code = await asyncio.wait_for(self.client._server.wait(), EXIT_WAIT_S)
        await self.client.stop()
        return code


async def start_session(tmp_path: Path, env: dict[str, str], *flags: str,
                        options: dict | None = None) -> Session:
    log = tmp_path / "lsp.log"
    client = LanguageClient("infill-tests", "0")
    await client.start_io(sys.executable, "-m", "lsp_server", "--log-file", str(log), *flags,
                          env=env, cwd=REPO_ROOT)
    result = await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), initialization_options=options or OPTIONS))
    client.initialized(types.InitializedParams())
    session = Session(client, log, result.capabilities)
    client.feature(types.WORKSPACE_APPLY_EDIT)(lambda params: session.edits.append(params))
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=URI, language_id="python", version=1, text=SOURCE)))
    return session


@pytest.fixture
async def session(tmp_path, model_env):
    started = await start_session(tmp_path, model_env)
    yield started
    if started.client._server.returncode is None:
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
    assert "0 of 1 items kept" not in session.log.read_text()
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


async def test_an_unreachable_worker_means_empty_answers_in_time(tmp_path):
    address = f"ipc://{tmp_path}/nobody.sock"
    session = await start_session(tmp_path, dict(os.environ), "--worker", address,
                                  options={"deadlineMs": 300})
    for _ in range(2):  # the first waits for the connection, the second for the request
        started = time.monotonic()
        assert await session.inline(CURSOR) == []
        assert time.monotonic() - started < 5.0
    assert worker_pids(str(session.log)) == []
    assert await session.end() == 0
