"""bench.decode on the tiny model: cache figures, and each configuration timed against the
left-to-right decoder with its own context cache."""
import json

import pytest
import torch

from bench.decode import BASELINE, CONFIGS, NEVER, baseline_for, baseline_name, cache_costs, main
from infill.checkpoint import load_model
from infill.commit import DecoderConfig


def test_cache_costs_time_all_three_passes(tiny_model_dir):
    torch.set_num_threads(1)
    rows = cache_costs(load_model(tiny_model_dir), lengths=(64, 128), hole=8, repeats=1)
    assert [row["context"] for row in rows] == [64, 128]
    for row in rows:
        assert min(row["uncached_ms"], row["cached_ms"], row["reused_prefix_ms"]) > 0
        assert row["ratio"] == pytest.approx(row["cached_ms"] / row["uncached_ms"], rel=0.1)  # unrounded times


def test_named_configs_are_valid_and_distinct():
    assert len(set(map(repr, CONFIGS.values()))) == len(CONFIGS)


def test_a_baseline_shares_the_cache_and_nothing_else():
    cfg = DecoderConfig(rule="left_run", threshold=0.5, window=8, refresh_every=NEVER, drafts=8)
    assert baseline_for(cfg) == DecoderConfig(rule="left_to_right", window=8, refresh_every=NEVER)
    assert baseline_for(DecoderConfig(rule="threshold")) == BASELINE[1]
    assert baseline_name(BASELINE[1], []) == "baseline"
    assert baseline_name(baseline_for(cfg), []) == "l2r-no-refresh-window-8"
    assert baseline_name(baseline_for(cfg), ["run-0.7-no-refresh", "l2r-window-8"]) == "l2r-window-8"


def test_each_config_is_timed_against_its_own_cache(tiny_model_dir, tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task_id": f"t/{i}", "prompt": "def add(a, b):\n    return ",
                                         "suffix": "\n\nprint(add(1, 2))\n", "canonical_solution": "a + b"}) + "\n"
                             for i in range(2)))
    main(["--tasks", str(tasks), "--model", str(tiny_model_dir), "--mode", "single_line", "--max-tokens", "8",
          "--threads", "1", "--json", "--configs", "run-0.7-no-refresh,l2r-no-refresh,run-0.5-window-12,threshold-0.9"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    against = {row["name"]: row["baseline"] for row in report["configs"]}
    assert against == {"run-0.7-no-refresh": "l2r-no-refresh", "l2r-no-refresh": "baseline",
                       "run-0.5-window-12": "l2r-no-refresh-window-12", "threshold-0.9": "baseline"}
    assert [row["name"] for row in report["baselines"]] == ["baseline", "l2r-no-refresh", "l2r-no-refresh-window-12"]
    by_name = {row["name"]: row for row in report["baselines"]}
    run = report["configs"][0]
    assert run["speedup"] == pytest.approx(by_name["l2r-no-refresh"]["total_ms"] / run["total_ms"], rel=0.01)
