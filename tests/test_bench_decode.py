"""bench.decode's cache figures on the tiny model: every timing present and positive."""
import pytest
import torch

from bench.decode import CONFIGS, cache_costs
from infill.checkpoint import load_model


def test_cache_costs_time_all_three_passes(tiny_model_dir):
    torch.set_num_threads(1)
    rows = cache_costs(load_model(tiny_model_dir), lengths=(64, 128), hole=8, repeats=1)
    assert [row["context"] for row in rows] == [64, 128]
    for row in rows:
        assert min(row["uncached_ms"], row["cached_ms"], row["reused_prefix_ms"]) > 0
        assert row["ratio"] == pytest.approx(row["cached_ms"] / row["uncached_ms"], rel=0.1)  # unrounded times


def test_named_configs_are_valid_and_distinct():
    assert len(set(map(repr, CONFIGS.values()))) == len(CONFIGS)
