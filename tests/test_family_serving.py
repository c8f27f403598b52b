"""A tiny checkpoint of each public family, served by a real worker process (`python -m engine
--model DIR`), answers `infill complete --worker` and an editor through `infill lsp --worker`.

The models are random, so their texts mean nothing: the tests check that a completion came back
from the worker, free of special tokens, through each front end.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from engine.launch import spawn_local_worker, stop_worker
from infill.family_tokens import load_tokenizer
from infill.paths import REPO_ROOT
from infill.tiny import write_tiny

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

FAMILIES = ["dream", "open-dcoder", "coda", "llada"]
SOURCE = "def area(radius):\n    return 3.14 * radius\n\n\nprint(area(2))\n"
CURSOR = (1, 24)  # 0-based line and column: after `3.14 * radius`
INFILL = str(Path(sys.executable).parent / "infill")


@pytest.fixture(scope="module", params=FAMILIES)
def served(request, tmp_path_factory):
    """(family folder, its tokenizer, the address of a worker serving it)."""
    folder = write_tiny(request.param, tmp_path_factory.mktemp(request.param) / "model")
    proc, address = spawn_local_worker(folder, threads=1, flags=["--weights", "fp32"])
    tok = load_tokenizer(folder, json.loads((folder / "config.json").read_text()))
    yield folder, tok, address
    stop_worker(proc)


def free_of_specials(tok, text: str) -> bool:
    return tok.decode(tok.encode(text)) == text and not set(tok.encode(text)) & set(tok.banned_ids)


def test_infill_complete_gets_the_workers_answer(served, tmp_path):
    folder, tok, address = served
    source = tmp_path / "shapes.py"
    source.write_text(SOURCE)
    done = subprocess.run([INFILL, "complete", str(source), "--line", str(CURSOR[0]), "--col", str(CURSOR[1]),
                           "--invoked", "--json", "--worker", address, "--max-tokens", "8",
                           "--deadline-ms", "30000"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout)
    assert answer["stop_reason"] == "done" and answer["forward_passes"] >= 1  # the worker decoded it
    assert all(free_of_specials(tok, text) for text in answer["completions"])


async def test_an_editor_gets_an_answer_through_the_language_server(served, tmp_path):
    folder, tok, address = served
    client = LanguageClient("infill-tests", "0")
    await client.start_io(sys.executable, "-m", "lsp_server", "--worker", address, "--stats-log", "",
                          "--log-file", str(tmp_path / "lsp.log"), cwd=REPO_ROOT)
    try:
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options={"deadlineMs": 30000, "maxTokens": 8}))
        client.initialized(types.InitializedParams())
        uri = (tmp_path / "shapes.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=SOURCE)))
        items = await client.text_document_inline_completion_async(types.InlineCompletionParams(
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked),
            text_document=types.TextDocumentIdentifier(uri), position=types.Position(*CURSOR)))
        assert isinstance(items, list)
        assert all(free_of_specials(tok, item.insert_text) for item in items)
        log = (tmp_path / "lsp.log").read_text()
        assert "items; queue" in log  # the worker's Result reached the server (an empty text is dropped)
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
