"""The gateway's pure parts: FIM templates, request bodies, API keys, the metrics page and the
benchmark's target figures."""
from __future__ import annotations

import os

import pytest

from bench.gateway_load import targets
from gateway.api_keys import KeyFile, bearer_token
from engine.wire.protocol import Result, Timings
from gateway.bodies import infill_ask, openai_ask
from gateway.completer import finish_reason
from gateway.errors import ApiError
from gateway.metrics import Metrics
from gateway.templates import split_template


@pytest.mark.parametrize("prompt, name", [
    ("<fim_prefix>def f():\n    <fim_suffix>\n\nf()<fim_middle>", "starcoder"),
    ("<|fim_prefix|>def f():\n    <|fim_suffix|>\n\nf()<|fim_middle|>", "qwen"),
    ("<PRE> def f():\n     <SUF>\n\nf() <MID>", "codellama"),
    ("<｜fim▁begin｜>def f():\n    <｜fim▁hole｜>\n\nf()<｜fim▁end｜>", "deepseek"),
    ("<fim_suffix>\n\nf()<fim_prefix>def f():\n    <fim_middle>", "starcoder"),
])
def test_each_template_gives_the_same_prefix_and_suffix(prompt, name):
    assert split_template(prompt) == ("def f():\n    ", "\n\nf()", name)


def test_a_prompt_without_a_template_is_all_prefix_and_a_header_is_kept():
    assert split_template("x = 1\n") == ("x = 1\n", "", None)
    assert split_template("# a.py\n<fim_prefix>a<fim_suffix>b<fim_middle>")[:2] == ("# a.py\na", "b")


def test_bodies_read_each_dialect_and_name_the_field_at_fault():
    ask = openai_ask({"prompt": "a", "suffix": "b", "stop": "\n", "n": 2, "stream": True,
                      "stream_options": {"include_usage": True}, "temperature": 0.2})
    assert (ask.prefix, ask.suffix, ask.stop, ask.n, ask.stream, ask.include_usage) == ("a", "b", ["\n"], 2, True, True)
    ask = infill_ask({"input_prefix": "def f():\n", "prompt": "    ret", "input_suffix": "\n",
                      "input_extra": [{"filename": "g.py", "text": "def g(): ..."}], "n_predict": 0,
                      "t_max_predict_ms": 300})
    assert ask.prefix == "def f():\n    ret" and ask.warm_up and ask.deadline_ms == 300
    assert [s.path for s in ask.snippets] == ["g.py"]
    for body, status, param in [({"prompt": "a", "n": True}, 422, "n"),
                                ({"prompt": "a", "max_tokens": 0}, 400, "max_tokens"),
                                ({"prompt": "a", "stop": [1]}, 422, "stop"),
                                ({"prompt": "a", "echo": True}, 400, "echo")]:
        with pytest.raises(ApiError) as error:
            openai_ask(body)
        assert (error.value.status, error.value.param) == (status, param)


def test_a_key_file_is_read_again_when_it_changes(tmp_path):
    path = tmp_path / "keys"
    path.write_text("# comment\none\n\n")
    keys = KeyFile(path)
    assert keys.allows("one") and not keys.allows("two") and not keys.allows("# comment")
    path.write_text("two\n")
    os.utime(path, ns=(1, 1))  # a new stamp even within the file system's clock tick
    assert keys.allows("two") and not keys.allows("one")
    path.unlink()
    assert keys.allows("two")  # an unreadable file keeps the last keys
    assert bearer_token("Bearer abc") == "abc" and bearer_token("Basic abc") is None
    with pytest.raises(ValueError):
        KeyFile(tmp_path / "missing")


def test_the_metrics_page_counts_routes_statuses_and_latency_buckets():
    metrics = Metrics()
    metrics.observe("/v1/completions", 200, 0.03)
    metrics.observe("/v1/completions", 429, 0.2)
    page = metrics.render(2, lambda: 1)
    assert 'infill_gateway_errors_total{route="/v1/completions",status="429"} 1' in page
    assert 'infill_gateway_request_seconds_bucket{route="/v1/completions",le="0.05"} 1' in page
    assert 'infill_gateway_request_seconds_count{route="/v1/completions"} 2' in page
    assert "infill_gateway_workers 2\n" in page and "infill_gateway_workers_up 1\n" in page


def test_the_benchmark_targets_compare_the_gateway_with_the_worker():
    runs = [{"phase": p, "clients": c, "p50_ms": v, "first_chunk_p50_ms": f, "lost": 0}
            for p, c, v, f in [("worker", 1, 100.0, None), ("gateway", 1, 103.0, None), ("stream", 1, 110.0, 44.0),
                               ("worker", 16, 200.0, None), ("gateway", 16, 210.0, None), ("stream", 16, 220.0, 110.0)]]
    assert targets(runs) == {"gateway_added_p50_ms_at_fewest": 3.0, "gateway_p50_ratio_at_most": 1.05,
                             "first_chunk_over_full_p50": {1: 0.4, 16: 0.5}, "lost": 0}


@pytest.mark.parametrize("reasons, finish", [
    (["done"], "stop"), (["done", "deadline"], "length"), (["budget"], "length"), (["done", "done"], "stop")])
def test_an_answer_cut_by_its_deadline_or_its_budget_of_passes_finishes_by_length(reasons, finish):
    results = [Result(f"r{i}", [], Timings(0.0, 0.0, 0.0, 0.0), reason) for i, reason in enumerate(reasons)]
    assert finish_reason(results) == finish
