"""`infill complete` and the language server give the same completion for the same file and position.

Both run as real processes against ONE fake worker (`tests/fake_worker.py`), whose completion is
`PID:prefix`: the same request gives the same text on both sides, and the text is long and
multi-line, so each side's decision, windows and post-processing show in what comes back. The
server runs on stdio (`python -m lsp_server --worker ADDR`) under a pygls client that opens the
file, as an editor would; `infill complete FILE --line N --col M --json --worker ADDR` reads it.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

INFILL = str(Path(sys.executable).parent / "infill")  # the console script installed with the project
DEADLINE_MS = 20000  # the same settings on both sides; a deadline the busy CPU can meet
SOURCE = ("import os\n\n\ndef add(a, b):\n    return a + b\n\n\nNAMES = [\n\n]\n"
          "total = add(1, 2)\n")
END_OF_RETURN = (4, 16)  # after `return a + b`: single line
IN_THE_LIST = (8, 0)  # the blank line in `NAMES = [`: multi-line
MID_LINE = (10, 8)  # `total = |add(1, 2)`: nothing while typing, a single line when asked


@pytest.fixture
def worker(fake_worker_at):
    return fake_worker_at


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path.resolve() / "example.py"
    path.write_text(SOURCE)
    return path


async def complete_with_the_cli(worker: str, source: Path, position: tuple[int, int],
                                *flags: str) -> dict:
    line, col = position
    done = await asyncio.to_thread(
        subprocess.run, [INFILL, "complete", str(source), "--line", str(line), "--col", str(col),
                         "--json", "--worker", worker, "--deadline-ms", str(DEADLINE_MS), *flags],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture
async def editor(worker, source, tmp_path):
    """A language server on `worker` under a client that has opened `source`."""
    client = LanguageClient("infill-tests", "0")
    await client.start_io(sys.executable, "-m", "lsp_server", "--worker", worker, "--stats-log", "",
                          "--log-file", str(tmp_path / "lsp.log"), cwd=REPO_ROOT)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), initialization_options={"deadlineMs": DEADLINE_MS}))
    client.initialized(types.InitializedParams())
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=source.as_uri(), language_id="python", version=1, text=SOURCE)))
    yield client
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def inline_texts(client: LanguageClient, source: Path, position: tuple[int, int],
                       trigger: types.InlineCompletionTriggerKind) -> list[str]:
    items = await client.text_document_inline_completion_async(types.InlineCompletionParams(
        context=types.InlineCompletionContext(trigger_kind=trigger),
        text_document=types.TextDocumentIdentifier(source.as_uri()),
        position=types.Position(*position)))
    return [item.insert_text for item in items]


@pytest.mark.parametrize("position, mode", [(END_OF_RETURN, "single_line"),
                                            (IN_THE_LIST, "multi_line"), (MID_LINE, "none")])
async def test_a_typing_user_sees_what_infill_complete_prints(editor, worker, source, position, mode):
    shown = await inline_texts(editor, source, position, types.InlineCompletionTriggerKind.Automatic)
    printed = await complete_with_the_cli(worker, source, position)
    assert printed["mode"] == mode
    assert printed["completions"] == shown
    assert printed["completion"] == (shown[0] if shown else "")
    if mode == "none":
        assert shown == [] and printed["timings"] is None  # no worker was asked
    else:
        assert len(shown) == 1 and ":import os" in shown[0]  # the fake's `PID:prefix`, post-processed
        assert ("\n" in shown[0]) == (mode == "multi_line")


async def test_an_invoked_completion_mid_line_is_the_same_on_both_sides(editor, worker, source):
    shown = await inline_texts(editor, source, MID_LINE, types.InlineCompletionTriggerKind.Invoked)
    printed = await complete_with_the_cli(worker, source, MID_LINE, "--invoked")
    assert printed["mode"] == "single_line" and printed["completions"] == shown
    assert len(shown) == 1 and "\n" not in shown[0]  # two candidates, one text: shown once
