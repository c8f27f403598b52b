"""int8 weights: the quantized model is a copy that predicts as the fp32 one does, on any path."""
import pytest
import torch

from infill.model import ModelConfig, Transformer
from infill.quantize import for_inference


def small_model() -> Transformer:
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=96, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=16,
                      intermediate_size=128, max_position_embeddings=64)
    return Transformer(cfg).eval()


def test_fp32_is_the_model_itself():
    model = small_model()
    assert for_inference(model, "fp32") is model


def test_int8_is_a_quantized_copy_with_close_logits():
    model = small_model()
    original = model.lm_head.weight.clone()
    quantized = for_inference(model, "int8")
    assert quantized is not model and torch.equal(model.lm_head.weight, original)  # the fp32 model is untouched
    assert type(quantized.lm_head) is not torch.nn.Linear  # a dynamically quantized one
    ids = torch.randint(0, 96, (2, 40))
    with torch.inference_mode():
        full, cache = model(ids[:, :32])
        qfull, qcache = quantized(ids[:, :32])
        window, _ = model(ids[:, 32:], cache=cache)  # the cached step the decoder runs
        qwindow, _ = quantized(ids[:, 32:], cache=qcache)
    for exact, approx in ((full, qfull), (window, qwindow)):
        assert approx.shape == exact.shape and approx.dtype == torch.float32
        scale = exact.abs().max()
        assert (approx - exact).abs().max() <= 0.05 * scale
        agree = (approx.argmax(-1) == exact.argmax(-1)).float().mean()
        assert agree >= 0.9


def test_unknown_weights_are_refused():
    with pytest.raises(ValueError, match="unknown weights"):
        for_inference(small_model(), "int4")
