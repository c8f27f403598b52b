"""The arena through the real language server and the bundled models: an inline completion is two
answers (the diffusion model's and its autoregressive twin's) in the documented shape, and a pick
lands in SQLite; a vote for an unknown battle, and a vote into a corrupt store, get an error; a vote
with bad arguments (a 100 KB battle id, a wrong pick) gets a short error without a traceback and
the server serves on."""
from __future__ import annotations

import sqlite3
import sys
import uuid
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from engine.launch import spawn_local_worker, stop_worker
from infill.paths import REPO_ROOT, bundled_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SOURCE = ("def area(radius):\n    return \n\n\ndef mean(values):\n    total = \n    return total / len(values)\n\n\n"
          "def greet(name):\n    message = \n    print(message)\n")
URI = "file:///tmp/infill-arena/example.py"
CURSORS = [types.Position(line=1, character=11), types.Position(line=5, character=12),
           types.Position(line=10, character=14)]


@pytest.fixture(scope="module")
def workers():
    diffusion, diffusion_address = spawn_local_worker(bundled_model_dir(), threads=1)
    twin, twin_address = spawn_local_worker(bundled_model_dir().parent / "infill-py-16m-ar", threads=1)
    yield diffusion_address, twin_address
    assert stop_worker(diffusion) == 0 and stop_worker(twin) == 0


async def start_server(options: dict, log: Path) -> LanguageClient:
    client = LanguageClient("infill-arena-tests", "0")
    await client.start_io(sys.executable, "-m", "lsp_server", "--log-file", str(log), cwd=REPO_ROOT)
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                         initialization_options=options))
    client.initialized(types.InitializedParams())
    return client


async def start(workers, votes: Path, log: Path) -> LanguageClient:
    diffusion_address, twin_address = workers
    options = {"workerAddress": diffusion_address, "maxTokens": 12, "arena": True, "arenaVotes": str(votes),
               "arenaDeadlineMs": 30000, "mode": "single_line",
               "arenaBackends": [{"name": "diffusion"}, {"name": "twin", "address": twin_address}]}
    client = await start_server(options, log)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=URI, language_id="python", version=1, text=SOURCE)))
    return client


async def battle(client: LanguageClient) -> list[types.InlineCompletionItem]:
    """The first arena answer with two items among the cursors (the models may agree at one)."""
    for cursor in CURSORS:
        items = await client.text_document_inline_completion_async(types.InlineCompletionParams(
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked),
            text_document=types.TextDocumentIdentifier(URI), position=cursor))
        assert isinstance(items, list) and len(items) <= 2
        if len(items) == 2:
            return items
    pytest.fail("the two models gave the same (or an empty) answer at every cursor")


async def vote(client: LanguageClient, arguments: list):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="infill.arenaVote", arguments=arguments))


async def stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def test_an_arena_completion_is_two_answers_and_a_pick_lands_in_sqlite(workers, tmp_path):
    votes = tmp_path / "state" / "arena.sqlite3"
    client = await start(workers, votes, tmp_path / "lsp.log")
    try:
        top, bottom = await battle(client)
        assert top.insert_text and bottom.insert_text and top.insert_text != bottom.insert_text
        assert top.command.command == bottom.command.command == "infill.arenaVote"
        battle_id, pick = top.command.arguments
        assert pick == "top" and list(bottom.command.arguments) == [battle_id, "bottom"]
        reply = await vote(client, list(bottom.command.arguments))
        assert reply["pick"] == "bottom" and reply["store"] == str(votes)
        with pytest.raises(JsonRpcException, match="unknown"):
            await vote(client, list(bottom.command.arguments))  # a battle is voted on once
    finally:
        await stop(client)
    with sqlite3.connect(votes) as connection:
        rows = connection.execute("SELECT battle_id, top, bottom, pick, top_latency_ms, bottom_latency_ms, "
                                  "context_chars FROM votes").fetchall()
    assert len(rows) == 1
    stored_id, shown_top, shown_bottom, stored_pick, top_ms, bottom_ms, context_chars = rows[0]
    assert stored_id == battle_id and stored_pick == "bottom"
    assert {shown_top, shown_bottom} == {"diffusion", "twin"}
    assert top_ms > 0 and bottom_ms > 0 and context_chars > 0


async def test_a_corrupt_vote_store_answers_the_vote_with_an_error_and_is_left_alone(workers, tmp_path):
    votes = tmp_path / "arena.sqlite3"
    votes.write_bytes(b"not sqlite " * 200)
    client = await start(workers, votes, tmp_path / "lsp.log")
    try:
        top, _ = await battle(client)
        with pytest.raises(JsonRpcException, match="not a readable SQLite database"):
            await vote(client, list(top.command.arguments))
    finally:
        await stop(client)
    assert votes.read_bytes() == b"not sqlite " * 200


HUGE = "f" * 100_000  # hex digits, but no battle id is 100 KB long
BAD_VOTES = [([HUGE, "left"], "the first argument (str of 100000 chars) is not a battle id"),
             ([uuid.uuid4().hex, "x" * 100_000], "the pick is one of top, bottom, neither, got 'xxx"),
             ([{"battleId": HUGE}, "top"], "the first argument (dict) is not a battle id"),
             ([HUGE], "got 1 arguments")]


async def test_a_bad_vote_gets_a_short_error_without_a_traceback_and_the_server_serves_on(short_tmp, tmp_path):
    votes = tmp_path / "arena.sqlite3"
    nowhere = f"ipc://{short_tmp}/nobody.sock"  # a vote needs no worker
    client = await start_server({"workerAddress": nowhere, "arena": True, "arenaVotes": str(votes), "statsLog": "",
                                 "arenaBackends": [{"name": "a"}, {"name": "b", "address": nowhere}]},
                                tmp_path / "lsp.log")
    try:
        for arguments, said in BAD_VOTES:
            with pytest.raises(JsonRpcException) as refused:
                await vote(client, arguments)
            message = refused.value.message
            assert said in message and len(message) < 300, message[:1000]
            assert "Traceback" not in message and refused.value.data is None, message[:1000]
        with pytest.raises(JsonRpcException, match="is unknown: it was voted on already or is too old"):
            await vote(client, [uuid.uuid4().hex, "top"])  # still serving
    finally:
        await stop(client)
    assert not votes.exists()
