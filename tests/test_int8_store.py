"""int8 weight-only storage: what it writes, and `load_model` reading it back."""
import torch
from safetensors import safe_open

from infill.checkpoint import load_model, save_model
from infill.int8_store import SCALE_SUFFIX, dequantized, is_int8_file, quantize_rows
from infill.model import ModelConfig, Transformer


def test_rows_round_to_within_half_a_step():
    torch.manual_seed(0)
    weight = torch.randn(16, 64) * torch.logspace(-3, 1, 16)[:, None]  # rows of very different ranges
    weight[3] = 0.0
    q, scale = quantize_rows(weight)
    assert q.dtype == torch.int8 and scale.shape == (16,)
    back = dequantized({"w": q, "w" + SCALE_SUFFIX: scale}, torch.float32)["w"]
    assert torch.all((back - weight).abs() <= scale[:, None] / 2 + 1e-7)
    assert torch.all(back[3] == 0) and q.abs().max() == 127


def test_an_int8_folder_loads_as_the_model_it_came_from(tmp_path):
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=300, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=16,
                      intermediate_size=128, max_position_embeddings=128)
    model = Transformer(cfg).eval()
    save_model(model, tmp_path / "fp16")
    save_model(model, tmp_path / "int8", int8=True)
    path = tmp_path / "int8" / "model.safetensors"
    assert is_int8_file(path) and not is_int8_file(tmp_path / "fp16" / "model.safetensors")
    with safe_open(str(path), framework="pt") as f:
        assert f.get_tensor("model.layers.0.mlp.up_proj.weight").dtype == torch.int8
        assert f.get_tensor("model.norm.weight").dtype == torch.float16
        assert "lm_head.weight" not in f.keys()  # tied: stored once
    assert path.stat().st_size < 0.6 * (tmp_path / "fp16" / "model.safetensors").stat().st_size

    loaded = load_model(tmp_path / "int8")
    assert loaded.lm_head.weight is loaded.model.embed_tokens.weight
    ids = torch.randint(0, 300, (2, 24))
    with torch.no_grad():
        want, got = model(ids)[0], loaded(ids)[0]
    assert (want - got).abs().max() < 0.05 * want.abs().max()
    assert load_model(tmp_path / "int8", dtype=torch.bfloat16).model.norm.weight.dtype == torch.bfloat16
