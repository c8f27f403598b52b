"""Bundling a run's model: fp16 weights that answer like the fp32 ones."""
import torch

from infill.checkpoint import load_model
from training.bundle import bundle


def test_bundle_is_fp16_and_faithful(tiny_model_dir, tmp_path):
    size = bundle(tiny_model_dir, tmp_path / "shipped")
    assert (tmp_path / "shipped" / "tokenizer.json").exists() and size > 0
    a, b = load_model(tiny_model_dir), load_model(tmp_path / "shipped")
    ids = torch.randint(8, a.cfg.vocab_size, (1, 16))
    with torch.no_grad():
        assert torch.allclose(a(ids)[0], b(ids)[0], atol=1e-2)
