"""The same text gets the same completion through the gateway, `infill complete` and the language
server, all three real processes on ONE fake worker (whose answer, `PID:prefix`, shows each
side's decision, windows and post-processing)."""
# The fixtures imported from test_completion_front_ends (editor, source, worker) are pytest's to
# pass in as arguments of the same names, which ruff reads as redefinitions of the imports.
# ruff: noqa: F811
from __future__ import annotations

import httpx
import pytest
from lsprotocol import types

from completion.positions import split_at
from gateway_procs import Gateway
from test_completion_front_ends import (DEADLINE_MS, END_OF_RETURN, IN_THE_LIST, SOURCE,  # noqa: F401
                                        complete_with_the_cli, editor, inline_texts, source, worker)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def gateway(worker):
    server = Gateway(["--worker", worker, "--deadline-ms", str(DEADLINE_MS)])
    yield server
    server.stop()


@pytest.mark.parametrize("position", [END_OF_RETURN, IN_THE_LIST])
async def test_the_gateway_answers_what_the_editor_shows_and_infill_complete_prints(
        editor, worker, source, gateway, position):
    shown = await inline_texts(editor, source, position, types.InlineCompletionTriggerKind.Automatic)
    printed = await complete_with_the_cli(worker, source, position)
    prefix, suffix = split_at(SOURCE, *position)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as client:
        answer = (await client.post("/v1/completions", json={"prompt": prefix, "suffix": suffix})).json()
        infill = (await client.post("/infill", json={"input_prefix": prefix, "input_suffix": suffix})).json()
    assert len(shown) == 1 and ":import os" in shown[0]
    assert answer["choices"][0]["text"] == shown[0] == printed["completion"] == infill["content"]
