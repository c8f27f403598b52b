"""Fused projections (infill.fused): the served model computes what the model computes, fp32 or int8."""
import copy

import pytest
import torch
from torch import nn

from infill.fused import FusedAttention, FusedMLP, fuse_projections
from infill.model import ModelConfig, Transformer
from infill.quantize import for_inference, int8_copy


def small_model(**options) -> Transformer:
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=96, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=16,
                      intermediate_size=128, max_position_embeddings=64, **options)
    model = Transformer(cfg).eval()
    for module in model.modules():  # biases that are not zero, so that a bias left out shows
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.normal_(module.bias)
    return model


def passes(model: Transformer, ids: torch.Tensor, rows: torch.Tensor | None = None) -> list[torch.Tensor]:
    """A full pass's logits and keys/values, then a cached window pass's hidden states (of `rows`)."""
    with torch.inference_mode():
        logits, cache = model(ids[:, :32])
        hidden, window_kv = model.hidden(ids[:, 32:], cache=cache, rows=rows)
    return [logits, *(t for kv in cache + window_kv for t in kv), hidden]


@pytest.mark.parametrize("options", [{}, {"qkv_bias": True, "qk_norm": True}])
def test_fused_fp32_model_computes_the_same(options):
    model = small_model(**options)
    fused = copy.deepcopy(model)
    fuse_projections(fused)
    for layer in fused.model.layers:
        assert isinstance(layer.self_attn, FusedAttention) and isinstance(layer.mlp, FusedMLP)
        assert not hasattr(layer.self_attn, "q_proj") and not hasattr(layer.mlp, "gate_proj")
    ids, rows = torch.randint(0, 96, (2, 40)), torch.tensor([1, 3])
    for exact, got in zip(passes(model, ids, rows), passes(fused, ids, rows)):
        assert got.shape == exact.shape
        torch.testing.assert_close(got, exact, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("options", [{}, {"qkv_bias": True}])
def test_int8_fused_rows_keep_their_values_and_scales(options):
    model = small_model(**options)
    served = for_inference(model, "int8")
    assert isinstance(served.model.layers[0].self_attn, FusedAttention)
    reference = int8_copy(model)
    attention, unfused = served.model.layers[1].self_attn, reference.model.layers[1].self_attn
    rows = [unfused.q_proj.weight(), unfused.k_proj.weight(), unfused.v_proj.weight()]
    fused = attention.qkv_proj.weight()
    assert torch.equal(fused.int_repr(), torch.cat([w.int_repr() for w in rows]))
    scales = torch.cat([torch.full((w.shape[0],), w.q_scale(), dtype=torch.float64) for w in rows])
    assert torch.equal(fused.q_per_channel_scales(), scales)
    ids = torch.randint(0, 96, (2, 40))
    for exact, got in zip(passes(reference, ids), passes(served, ids)):
        torch.testing.assert_close(got, exact, rtol=1e-5, atol=1e-5)
    # with query rows, the last layer's queries are quantized on the range of every row's activations
    # (one product), not of the query rows' alone: int8's own rounding, no more
    exact, got = passes(reference, ids, torch.tensor([1, 3]))[-1], passes(served, ids, torch.tensor([1, 3]))[-1]
    assert (got - exact).abs().max() <= 0.05 * exact.abs().max()
