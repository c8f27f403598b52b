"""The upstream path against a real serving engine: vLLM's CPU build (`make vllm-env`) serving the
bundled model's autoregressive twin, exported to the Hugging Face Qwen2 layout
(`scripts/export_qwen2.py`), through the `openai` kind. The twin knows no FIM sentinels: with the
`chat` template its export's chat template gives it `<|file|>` and the prefix, as the project's
causal runner does, and it answers code; with a family's FIM template (`/v1/completions`; vLLM takes
no `suffix` for a model without FIM rendering) it reads the sentinels as text and writes past the
suffix, which the single-line rules cut to nothing, so that route is checked for reaching the engine
and answering once. A real language server's inline completion, `infill complete` (the gateway
fronts workers only, so the command line stands for the one-shot FIM route) with the base URL
written with and without `/v1`, the arena of the bundled diffusion model against the engine, and
`bench.upstream_overhead` get the engine's answers (which carry fields this project does not read:
`token_ids`, `kv_transfer_params`, ...), which its own request counter confirms. A
language server started before the engine listens says so once and answers once it is up.

Without `work/vllm-venv` the suite skips, saying how to make it; the export's parity with the
twin, under transformers, runs everywhere."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
import torch
from lsprotocol import types
from tokenizers import Tokenizer

from engine.launch import spawn_local_worker, stop_worker
from infill.paths import REPO_ROOT, bundled_model_dir
from infill.serving import open_model
from test_lsp_e2e import ANSWER_WAIT_S, start_session
from test_upstream_lsp import messages_of, open_text, until
from vllm_server import MODEL_NAME, VllmServer, export_twin, skip_reason

SOURCE = "import os\n\n\ndef read_lines(path):\n    with open(path) as handle:\n        return \n"
URI = "file:///tmp/infill-vllm/reader.py"
CURSOR = types.Position(line=5, character=15)
UPSTREAM = {"kind": "openai", "model": MODEL_NAME, "template": "chat"}
OPTIONS = {"maxTokens": 12, "deadlineMs": 30000, "mode": "single_line"}
COMPLETE_WAIT_S = 120
RETRIES_AFTER_START = 20

needs_vllm = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """The module's vLLM server, its port taken but not started (the first test starts it late)."""
    folder = tmp_path_factory.mktemp("vllm")
    server = VllmServer(export_twin(folder / "twin-qwen2"), folder / "vllm.log")
    yield server
    server.stop()


@pytest.fixture
def vllm(engine):
    return engine.ready()


def test_the_export_computes_what_the_twin_computes(tmp_path):
    """Every tensor Qwen2 has is in the export (its Q/K/V biases zeros), and the names, norms, rotary
    layout and tied head are the twin's: transformers' Qwen2 on the export gives the twin's logits."""
    transformers = pytest.importorskip("transformers")
    export = export_twin(tmp_path / "twin-qwen2")
    qwen2, loading = transformers.AutoModelForCausalLM.from_pretrained(export, dtype=torch.float32,
                                                                        output_loading_info=True)
    assert not loading["missing_keys"] and not loading["unexpected_keys"]  # vLLM leaves a missing tensor unset
    twin = open_model(bundled_model_dir().parent / "infill-py-16m-ar")
    ids = torch.tensor([[3, 100, 200, 300, 400, 500, 17, 42, 4000, 8000]])  # (B, T): the file head, then code
    with torch.no_grad():
        theirs, ours = qwen2.eval()(ids).logits, twin(ids)[0]
    assert theirs.shape == ours.shape == (1, 10, 8192)
    assert torch.allclose(theirs, ours.float(), atol=1e-3, rtol=1e-3)


def test_the_export_refuses_a_folder_holding_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    done = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "export_qwen2.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "notes.txt" in done.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "notes.txt"]


@needs_vllm
@pytest.mark.slow
@pytest.mark.timeout(900)  # the module's server starts inside the first test: 1-2 minutes, bounded at 10
async def test_an_engine_still_starting_gets_one_message_then_the_answers_come(tmp_path, engine):
    """The editor's server starts before the engine listens: the first keystroke's answer is empty
    with one message naming the URL; once vLLM has started, a keystroke after the backoff answers."""
    if engine.process is not None:
        pytest.skip("the engine was started by an earlier test: this one runs first in its module")
    session = await start_session(tmp_path, dict(os.environ), "--backend", engine.v1, "--backend-model", MODEL_NAME,
                                  "--backend-template", "chat", options=OPTIONS)
    shown = messages_of(session)
    open_text(session, URI, SOURCE)
    assert await answered(session.inline(CURSOR, URI)) == []
    await until(lambda: shown, "the status message")
    assert len(shown) == 1 and engine.root in shown[0] and "cannot connect" in shown[0]
    await asyncio.to_thread(engine.ready)
    for _ in range(RETRIES_AFTER_START):
        if await answered(session.inline(CURSOR, URI)):
            break
        await asyncio.sleep(0.5)  # the client's backoff after its one failure (upstream.backend)
    else:
        pytest.fail(f"no answer in {RETRIES_AFTER_START} keystrokes after the engine started")
    assert len(shown) == 1
    assert await session.end() == 0


@needs_vllm
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_engine_tokenizes_as_the_twin_was_trained(vllm):
    """transformers would give the export Qwen2's pre-tokenizer (its config says qwen2): the engine
    reads the tokenizer from its own folder, and a prompt's ids are the twin's own."""
    prompt = 'def mean(values):\n    """ The mean of the given 2 or 3 values."""\n    return sum(values) / len(values)'
    twin = Tokenizer.from_file(str(bundled_model_dir().parent / "infill-py-16m-ar" / "tokenizer.json"))
    assert vllm.token_ids(prompt) == twin.encode(prompt).ids


@needs_vllm
@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_the_language_servers_inline_completion_is_the_engines(tmp_path, vllm):
    served = vllm.requests_done()
    session = await start_session(tmp_path, dict(os.environ), "--backend", vllm.v1, "--backend-model", MODEL_NAME,
                                  "--backend-template", "chat", options=OPTIONS)
    open_text(session, URI, SOURCE)
    items = await answered(session.inline(CURSOR, URI))
    assert items and all(item.insert_text.strip() for item in items)
    assert vllm.requests_done() > served
    assert await session.end() == 0


@needs_vllm
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_infill_complete_answers_the_same_with_the_base_url_as_users_write_it(tmp_path, vllm):
    source = tmp_path / "reader.py"
    source.write_text(SOURCE)
    served = vllm.requests_done()
    answers = [complete(source, url, "chat") for url in (vllm.root, vllm.v1, f"{vllm.v1}/")]
    assert answers[0]["completion"].strip()
    assert all({**answer, "timings": None} == {**answers[0], "timings": None} for answer in answers)
    assert vllm.requests_done() == served + 3


@needs_vllm
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_fim_route_reaches_the_engine_and_answers_once(tmp_path, vllm):
    """`/v1/completions` with the Qwen sentinels in the prompt: one request at the engine, one
    answer (the twin's text past the suffix, cut by the single-line rules), no message."""
    source = tmp_path / "reader.py"
    source.write_text(SOURCE)
    served = vllm.requests_done()
    answer = complete(source, vllm.v1, "qwen")
    assert answer["stop_reason"] == "done" and isinstance(answer["completions"], list)
    assert vllm.requests_done() == served + 1


@needs_vllm
@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_the_arena_battles_the_diffusion_worker_against_the_engine(tmp_path, vllm):
    process, address = spawn_local_worker(bundled_model_dir(), threads=1)
    try:
        backends = [{"name": "diffusion"}, {"name": "vllm", "backend": {**UPSTREAM, "url": vllm.v1}}]
        options = {**OPTIONS, "workerAddress": address, "arena": True, "arenaBackends": backends,
                   "arenaDeadlineMs": 30000, "arenaVotes": str(tmp_path / "votes.sqlite3")}
        served = vllm.requests_done()
        session = await start_session(tmp_path, dict(os.environ), options=options)
        open_text(session, URI, SOURCE)
        items = await answered(session.inline(CURSOR, URI))
        assert len(items) == 2 and items[0].insert_text != items[1].insert_text  # a battle: two answers
        assert vllm.requests_done() > served
        assert await session.end() == 0
    finally:
        assert stop_worker(process) == 0


async def answered(awaitable):
    return await asyncio.wait_for(awaitable, ANSWER_WAIT_S)


def complete(source, url: str, template: str) -> dict:
    """`infill complete --json` at CURSOR through the engine at `url` with `template`; stderr empty."""
    done = subprocess.run([sys.executable, "-m", "cli", "complete", str(source), "--line", str(CURSOR.line),
                           "--col", str(CURSOR.character), "--mode", "single_line", "--max-tokens", "12",
                           "--deadline-ms", "30000", "--backend", url, "--backend-model", MODEL_NAME,
                           "--backend-template", template, "--json"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=COMPLETE_WAIT_S)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_vllm
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_overhead_bench_measures_each_request_against_the_engines_own_time(vllm):
    done = subprocess.run([sys.executable, "-m", "bench.upstream_overhead", "--backend", vllm.v1,
                           "--backend-model", MODEL_NAME, "--backend-template", "chat", "--limit", "3", "--json"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=COMPLETE_WAIT_S)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["requests"] == 3 and figures["failed"] == 0
    assert 0 < figures["engine_p50_ms"] <= figures["infill_p50_ms"] and figures["overhead_p50_ms"] >= 0
