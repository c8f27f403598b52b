"""The gateway as a process, over a fake worker process (`tests/fake_worker.py`): each dialect's
bytes, streams that flow and add up to the answer, keys, bad input, a worker killed mid-stream,
next edits, and the same answer as `infill complete` and the language server give."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

import fake_worker
from engine.launch import start_worker_process, stop_worker
from gateway_procs import Gateway
from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

STREAM_PREFIX = "# fake-stream: 3 0.3\ndef f():\n"  # three steps; the cursor opens the body: multi-line


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    import tempfile
    folder = tempfile.mkdtemp(prefix="iw-")
    address = f"ipc://{folder}/w.sock"
    process = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    holder = {"address": address, "process": process}
    yield holder
    stop_worker(holder["process"])


@pytest.fixture(scope="module")
def gateway(worker):
    server = Gateway(["--worker", worker["address"], "--deadline-ms", "10000"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def http(gateway):
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        yield client


def sse_events(raw: bytes) -> list[str]:
    """The `data:` payloads of an event stream, checking its framing byte for byte."""
    text = raw.decode()
    assert text.endswith("\n\n")
    blocks = text[:-2].split("\n\n")
    assert all(block.startswith("data: ") and "\n" not in block for block in blocks), text
    return [block[len("data: "):] for block in blocks]


def test_an_openai_stream_flows_in_chunks_that_add_up_to_the_answer(http):
    body = {"model": "fake", "prompt": STREAM_PREFIX, "suffix": "\n", "max_tokens": 64}
    whole = http.post("/v1/completions", json=body).json()
    raw = http.post("/v1/completions", json={**body, "stream": True,
                                             "stream_options": {"include_usage": True}}).content
    events = sse_events(raw)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    usage = chunks.pop()
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] > 0
    texts = [chunk["choices"][0]["text"] for chunk in chunks]
    assert len([t for t in texts if t]) >= 2  # settled lines during decoding, then the rest
    assert "".join(texts) == whole["choices"][0]["text"]
    assert whole["choices"][0]["text"].count("\n") == 2 and "x3 = " in whole["choices"][0]["text"]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None] * (len(chunks) - 1) + ["stop"]
    assert all(c["object"] == "text_completion" and c["usage"] is None for c in chunks)


def test_a_fim_stream_carries_text_and_delta_content_and_its_answer_message_content(http):
    body = {"prompt": STREAM_PREFIX, "suffix": "\n"}
    whole = http.post("/v1/fim/completions", json=body).json()["choices"][0]
    assert whole["message"] == {"role": "assistant", "content": whole["text"]} and whole["text"]
    events = sse_events(http.post("/v1/fim/completions", json={**body, "stream": True}).content)
    chunks = [json.loads(event)["choices"][0] for event in events[:-1]]
    assert events[-1] == "[DONE]"
    assert all(c["delta"] == {"content": c["text"]} for c in chunks)
    assert "".join(c["delta"]["content"] for c in chunks) == whole["text"]


def test_a_llama_cpp_infill_stream_sends_content_then_stop(http):
    body = {"input_prefix": STREAM_PREFIX, "prompt": "", "input_suffix": "\n",
            "input_extra": [{"filename": "other.py", "text": "def g(): ...\n"}], "n_predict": 64}
    whole = http.post("/infill", json=body).json()
    assert whole["stop"] is True and whole["stop_type"] == "eos" and "x3" in whole["content"]
    events = [json.loads(e) for e in sse_events(http.post("/infill", json={**body, "stream": True}).content)]
    assert [e["stop"] for e in events] == [False] * (len(events) - 1) + [True]
    assert len(events) >= 3 and "".join(e["content"] for e in events) == whole["content"]
    assert http.post("/infill", json={**body, "n_predict": 0}).json()["content"] == ""  # a warm-up


def test_a_fim_template_in_the_prompt_is_split_into_prefix_and_suffix(http):
    templated = {"prompt": f"<fim_prefix>{STREAM_PREFIX}<fim_suffix>\n<fim_middle>"}
    plain = {"prompt": STREAM_PREFIX, "suffix": "\n"}
    assert (http.post("/v1/completions", json=templated).json()["choices"][0]["text"]
            == http.post("/v1/completions", json=plain).json()["choices"][0]["text"])


BAD_BODIES = [
    (b"{not json", 400, None),
    (b"[1, 2]", 422, None),
    (json.dumps({"prompt": 7}).encode(), 422, "prompt"),
    (json.dumps({"prompt": "x", "max_tokens": -1}).encode(), 400, "max_tokens"),
    (json.dumps({"prompt": "x", "max_tokens": 10**9}).encode(), 400, "max_tokens"),
    (json.dumps({"prompt": "x", "max_tokens": "16"}).encode(), 422, "max_tokens"),
    (json.dumps({"prompt": "x", "n": 9}).encode(), 400, "n"),
    (json.dumps({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]}).encode(), 400, "stop"),
    (json.dumps({"prompt": "x", "model": "gpt-4"}).encode(), 404, "model"),
    (json.dumps({"prompt": "x", "logprobs": 3}).encode(), 400, "logprobs"),
    (json.dumps({"suffix": "x"}).encode(), 400, "prompt"),
    (json.dumps({"prompt": "x" * (2 * 1024 * 1024)}).encode(), 413, None),
]


@pytest.mark.parametrize("raw, status, param", BAD_BODIES, ids=[str(i) for i in range(len(BAD_BODIES))])
def test_bad_input_gets_its_error_object_and_the_next_request_is_served(http, raw, status, param):
    answer = http.post("/v1/completions", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    assert error["param"] == param
    good = http.post("/v1/completions", json={"prompt": "def f(x):\n    return ", "suffix": "\n"})
    assert good.status_code == 200 and good.json()["choices"][0]["text"]


def test_unknown_routes_and_methods_answer_in_the_error_shape(http):
    assert http.get("/v2/nothing").json()["error"]["code"] == "not_found"
    assert http.get("/v1/completions").status_code == 405


def test_models_health_and_metrics(http):
    ids = [model["id"] for model in http.get("/v1/models").json()["data"]]
    assert ids == ["fake"] and not ids[0].startswith(("gpt", "o"))
    assert http.get("/health").json()["status"] == "ok"
    page = http.get("/metrics").text
    assert 'infill_gateway_requests_total{route="/v1/completions",status="200"}' in page
    assert "infill_gateway_workers_up 1" in page and "# TYPE infill_gateway_request_seconds histogram" in page


def test_n_candidates_and_a_stop_sequence(http):
    body = {"prompt": STREAM_PREFIX, "suffix": "\n", "n": 2}
    choices = http.post("/v1/completions", json=body).json()["choices"]
    assert [c["index"] for c in choices] == [0, 1]
    stopped = http.post("/v1/completions", json={**body, "n": 1, "stop": ["x2"]}).json()["choices"][0]
    assert stopped["text"] == choices[0]["text"].split("x2")[0] and stopped["finish_reason"] == "stop"
    events = sse_events(http.post("/v1/completions", json={**body, "stream": True}).content)
    indexes = {json.loads(e)["choices"][0]["index"] for e in events[:-1]}
    assert indexes == {0, 1}


def test_a_next_edit_in_inceptions_shape_renames_the_other_uses(http):
    before = ("# fake-rename: count total\nimport os\n\n\nX = 1\n\n\n"
              "def f(count):\n    y = count + 1\n    return count\n")
    after = before.replace("def f(count)", "def f(total)")
    content = ("<|recently_viewed_code_snippets|>\n<|/recently_viewed_code_snippets|>\n"
               f"<|current_file_content|>\ncurrent_file_path: src/f.py\n{after}<|/current_file_content|>\n"
               "<|code_to_edit|>\ndef f(total):\n    y = count + 1<|cursor|>\n    return count\n<|/code_to_edit|>\n"
               "<|edit_diff_history|>\n--- src/f.py\n+++ src/f.py\n@@ -8,1 +8,1 @@\n-def f(count):\n"
               "+def f(total):\n<|/edit_diff_history|>")
    answer = http.post("/v1/edit/completions", json={"model": "fake", "messages": [
        {"role": "user", "content": content}]})
    assert answer.status_code == 200, answer.text
    rewritten = answer.json()["choices"][0]["message"]["content"]
    assert rewritten is not None and "count" not in rewritten
    assert "total + 1" + fake_worker.WORKER_NOTE in rewritten  # the worker's answer, not the draft's
    nothing = content.replace("@@ -8,1 +8,1 @@", "")  # no hunk: no event to propagate
    answer = http.post("/v1/edit/completions", json={"messages": [{"role": "user", "content": nothing}]})
    assert answer.json()["choices"][0]["message"]["content"] is None


def test_a_worker_killed_mid_stream_ends_it_with_an_error_and_the_restarted_one_serves(worker, gateway):
    body = {"prompt": "# fake-stream: 6 0.5\ndef f():\n", "suffix": "\n", "stream": True}
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        with client.stream("POST", "/v1/completions", json=body) as response:
            lines = response.iter_lines()
            first = next(line for line in lines if line.startswith("data: "))
            text = json.loads(first[6:])["choices"][0]["text"]
            os.kill(int(text.split("= ")[1].split("\n")[0]), signal.SIGKILL)
            rest = [line[6:] for line in lines if line.startswith("data: ")]
        assert rest[-1] == "[DONE]" and "error" in json.loads(rest[-2])
        assert json.loads(rest[-2])["error"]["code"] == "no_worker"
        worker["process"].wait()
        worker["process"] = start_worker_process(fake_worker.argv(worker["address"]), worker["address"],
                                                 timeout_s=30)
        deadline = time.monotonic() + 20
        while client.get("/health").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        served = client.post("/v1/completions", json={**body, "stream": False}).json()
        assert f"= {worker['process'].pid}" in served["choices"][0]["text"]


def test_keys_none_wrong_and_right_and_a_key_file_read_again(worker, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text("# clients\nsecret-one\n")
    server = Gateway(["--worker", worker["address"], "--api-keys", str(keys)])
    try:
        body = {"prompt": "def f(x):\n    return ", "suffix": "\n"}
        with httpx.Client(base_url=server.url, timeout=30) as client:
            missing = client.post("/v1/completions", json=body)
            assert missing.status_code == 401 and missing.json()["error"]["type"] == "authentication_error"
            wrong = client.post("/v1/completions", json=body, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
            right = client.post("/v1/completions", json=body, headers={"Authorization": "Bearer secret-one"})
            assert right.status_code == 200
            assert client.get("/health").status_code == 200  # open, as llama.cpp's is
            keys.write_text("secret-two\n")
            old = client.post("/v1/completions", json=body, headers={"Authorization": "Bearer secret-one"})
            new = client.post("/v1/completions", json=body, headers={"Authorization": "Bearer secret-two"})
            assert (old.status_code, new.status_code) == (401, 200)
    finally:
        server.stop()


def test_a_bind_off_loopback_without_keys_refuses_to_start(worker):
    done = subprocess.run([sys.executable, "-m", "gateway", "--bind", "0.0.0.0:0", "--worker",
                           worker["address"]], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "without API keys" in done.stderr
