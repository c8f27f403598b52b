"""Public checkpoint layouts against transformers' reference models, on tiny random checkpoints.

Each parity test writes a tiny checkpoint in a public layout (Qwen2, Qwen3, LLaDA), loads it with
`infill.checkpoint.load_model` and compares logits with transformers' model: our causal mode against
its default causal mask, our bidirectional mode against it with a mask that hides nothing. Config
tests read configs copied from the public checkpoints, which need no weights.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

from infill.checkpoint import load_model, save_model
from infill.families import model_config
from infill.model import ModelConfig, Transformer

VOCAB = 300
MASK, EOS = VOCAB - 1, VOCAB - 2  # tiny vocabularies cannot hold the families' real special ids
TINY = dict(
    vocab_size=VOCAB,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=96,
    max_position_embeddings=128,
    rope_parameters={"rope_type": "default", "rope_theta": 1000.0},
    attn_implementation="eager",
    mask_token_id=MASK,
    eos_token_id=EOS,
    pad_token_id=EOS,
)

# Llama's names -> LLaDA's (LLaDA-8B is a Llama block under other names).
LLAMA_TOP_TO_LLADA = {
    "model.embed_tokens.weight": "model.transformer.wte.weight",
    "model.norm.weight": "model.transformer.ln_f.weight",
    "lm_head.weight": "model.transformer.ff_out.weight",
}
LLAMA_BLOCK_TO_LLADA = {
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ff_norm",
    "self_attn.q_proj": "q_proj",
    "self_attn.k_proj": "k_proj",
    "self_attn.v_proj": "v_proj",
    "self_attn.o_proj": "attn_out",
    "mlp.gate_proj": "ff_proj",
    "mlp.up_proj": "up_proj",
    "mlp.down_proj": "ff_out",
}

# Trimmed from the public config.json files (shared/reference/checkpoints/*/config.json).
CODA_1_7B = {
    "architectures": ["CoDALanguageModel"], "model_type": "CoDA", "attention_bias": False, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 6144, "mask_token_id": 151669,
    "max_position_embeddings": 40960, "num_attention_heads": 16, "num_hidden_layers": 28,
    "num_key_value_heads": 8, "pad_token_id": 151643, "rms_norm_eps": 1e-6, "rope_scaling": None,
    "rope_theta": 1000000, "use_sliding_window": False, "vocab_size": 151936,
}
LLADA_8B = {
    "architectures": ["LLaDAModelLM"], "model_type": "llada", "activation_type": "silu", "alibi": False,
    "attention_layer_norm": False, "bias_for_layer_norm": False, "block_group_size": 1, "block_type": "llama",
    "d_model": 4096, "embedding_size": 126464, "eos_token_id": 126081, "include_bias": False,
    "include_qkv_bias": False, "input_emb_norm": False, "layer_norm_type": "rms", "layer_norm_with_affine": True,
    "mask_token_id": 126336, "max_sequence_length": 4096, "mlp_hidden_size": 12288, "mlp_ratio": 4,
    "multi_query_attention": None, "n_heads": 32, "n_kv_heads": 32, "n_layers": 32, "pad_token_id": 126081,
    "rms_norm_eps": 1e-5, "rope": True, "rope_theta": 500000.0, "scale_logits": False, "vocab_size": 126464,
    "weight_tying": False,
}
FAST_DLLM_V2_1_5B = {
    "architectures": ["Fast_dLLM_QwenForCausalLM"], "model_type": "Fast_dLLM_Qwen", "bd_size": 32,
    "hidden_size": 1536, "intermediate_size": 8960, "num_attention_heads": 12, "num_hidden_layers": 28,
    "num_key_value_heads": 2, "rope_theta": 1000000.0, "tie_word_embeddings": True, "vocab_size": 151936,
}
# Qwen2 shapes of Dream-7B and Open-dCoder-0.5B (CHECKPOINTS.md), without special ids.
DREAM_7B = {
    "architectures": ["DreamModel"], "model_type": "Dream", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rope_theta": 1000000.0,
    "tie_word_embeddings": False, "vocab_size": 152064,
}
OPEN_DCODER_0_5B = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2, "rope_theta": 1000000.0,
    "tie_word_embeddings": True, "vocab_size": 151936,
}


def randomize(model: torch.nn.Module) -> None:
    """Weights far from the initial ones (unit norms, zero biases), so every tensor shows in the logits."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            param.copy_(1 + 0.2 * noise if "norm" in name else 0.1 * noise)


def write_qwen2(folder: Path, tie: bool = False, layers: int = 2) -> torch.nn.Module:
    config = Qwen2Config(**{**TINY, "num_hidden_layers": layers}, num_key_value_heads=2, tie_word_embeddings=tie)
    model = Qwen2ForCausalLM(config)
    randomize(model)
    model.save_pretrained(folder)
    return model.eval()


def write_qwen3(folder: Path) -> torch.nn.Module:
    # head_dim * heads (128) differs from hidden_size (64): the explicit head_dim must be honoured.
    model = Qwen3ForCausalLM(Qwen3Config(**TINY, num_key_value_heads=2, head_dim=32))
    randomize(model)
    model.save_pretrained(folder)
    return model.eval()


def write_llada(folder: Path) -> torch.nn.Module:
    """A Llama model written under LLaDA's tensor names with a LLaDA-style config.json."""
    llama_fields = {k: v for k, v in TINY.items() if k not in ("mask_token_id", "eos_token_id", "pad_token_id")}
    model = LlamaForCausalLM(LlamaConfig(**llama_fields, num_key_value_heads=4, rms_norm_eps=1e-5))
    randomize(model)
    folder.mkdir(parents=True, exist_ok=True)
    state = {llada_name(name): tensor.contiguous() for name, tensor in model.state_dict().items()}
    save_file(state, str(folder / "model.safetensors"))
    config = {
        **LLADA_8B, "d_model": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 4, "mlp_hidden_size": 96,
        "vocab_size": VOCAB, "embedding_size": VOCAB, "max_sequence_length": 128, "rope_theta": 1000.0,
        "mask_token_id": MASK, "eos_token_id": EOS, "pad_token_id": EOS,
    }
    (folder / "config.json").write_text(json.dumps(config))
    return model.eval()


def llada_name(llama_name: str) -> str:
    if llama_name in LLAMA_TOP_TO_LLADA:
        return LLAMA_TOP_TO_LLADA[llama_name]
    _, _, layer, rest = llama_name.split(".", 3)  # model.layers.{i}.{module}.{weight|bias}
    module, kind = rest.rsplit(".", 1)
    return f"model.transformer.blocks.{layer}.{LLAMA_BLOCK_TO_LLADA[module]}.{kind}"


WRITERS = {
    "qwen2-untied": write_qwen2,
    "qwen2-tied": lambda folder: write_qwen2(folder, tie=True),
    "qwen3": write_qwen3,
    "llada": write_llada,
}


def random_ids(batch: int = 2, length: int = 12) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("layout", WRITERS)
def test_causal_logits_match_transformers(tmp_path, layout):
    reference = WRITERS[layout](tmp_path)
    model = load_model(tmp_path)
    model.cfg.causal = True
    ids = random_ids()
    with torch.no_grad():
        expected = reference(ids).logits
        ours, _ = model(ids)
    assert ours.shape == expected.shape
    torch.testing.assert_close(ours, expected, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("layout", WRITERS)
def test_bidirectional_logits_match_transformers_without_its_causal_mask(tmp_path, layout):
    reference = WRITERS[layout](tmp_path)
    model = load_model(tmp_path)
    assert model.cfg.causal is False
    ids = random_ids()
    batch, length = ids.shape
    see_everything = torch.zeros(batch, 1, length, length)  # additive mask: 0 everywhere, nothing hidden
    with torch.no_grad():
        expected = reference(ids, attention_mask=see_everything).logits
        ours, _ = model(ids)
    torch.testing.assert_close(ours, expected, atol=1e-4, rtol=1e-4)


def test_one_layer_modes_differ_only_where_the_causal_mask_hides_keys(tmp_path):
    """With one layer the last position attends to the same keys in both modes; earlier ones lose the
    keys after them. (With more layers the last position changes too: the states it attends to were
    built under different masks.)"""
    write_qwen2(tmp_path, layers=1)
    model = load_model(tmp_path)
    ids = random_ids()
    with torch.no_grad():
        bidirectional, _ = model(ids)
        model.cfg.causal = True
        causal, _ = model(ids)
    torch.testing.assert_close(bidirectional[:, -1], causal[:, -1], atol=1e-5, rtol=1e-5)
    assert ((bidirectional[:, :-1] - causal[:, :-1]).abs().amax(dim=-1) > 1e-3).all()


@pytest.mark.parametrize("tie", [True, False])
def test_qwen2_tying_follows_the_checkpoint(tmp_path, tie):
    write_qwen2(tmp_path, tie=tie)
    model = load_model(tmp_path)
    assert model.cfg.tie_word_embeddings is tie
    assert (model.lm_head.weight is model.model.embed_tokens.weight) is tie
    assert model.cfg.qkv_bias and not model.cfg.qk_norm


def test_tiny_checkpoints_keep_their_stated_special_ids(tmp_path):
    write_qwen3(tmp_path)
    cfg = load_model(tmp_path).cfg
    assert (cfg.mask_token_id, cfg.eos_token_id, cfg.pad_token_id) == (MASK, EOS, EOS)
    assert cfg.qk_norm and not cfg.qkv_bias and cfg.head_dim == 32


@pytest.mark.parametrize(
    "raw, family, logits_shift, mask_token_id",
    [
        (DREAM_7B, "dream", True, 151666),
        ({**DREAM_7B, "mask_token_id": 151665}, "dream", True, 151665),  # the config's own id wins
        (OPEN_DCODER_0_5B, "open-dcoder", True, 151665),
        (CODA_1_7B, "coda", True, 151669),
        (LLADA_8B, "llada", False, 126336),
        ({k: v for k, v in LLADA_8B.items() if k != "model_type"}, "llada", False, 126336),  # by architectures
    ],
)
def test_family_sets_logit_shift_and_mask_id(raw, family, logits_shift, mask_token_id):
    cfg = model_config(raw)
    assert (cfg.family, cfg.logits_shift, cfg.mask_token_id) == (family, logits_shift, mask_token_id)
    assert cfg.causal is False


def test_public_configs_map_to_their_published_shapes():
    coda = model_config(CODA_1_7B, has_lm_head=False)
    assert (coda.num_layers, coda.hidden_size, coda.num_heads, coda.num_kv_heads) == (28, 2048, 16, 8)
    assert (coda.head_dim, coda.intermediate_size, coda.rope_theta) == (128, 6144, 1e6)
    assert (coda.pad_token_id, coda.eos_token_id, coda.tie_word_embeddings) == (151643, 151645, True)
    llada = model_config(LLADA_8B)
    assert (llada.num_layers, llada.hidden_size, llada.num_heads, llada.num_kv_heads) == (32, 4096, 32, 32)
    assert (llada.head_dim, llada.intermediate_size, llada.rope_theta, llada.rms_norm_eps) == (128, 12288, 5e5, 1e-5)
    assert (llada.vocab_size, llada.eos_token_id, llada.tie_word_embeddings) == (126464, 126081, False)
    dcoder = model_config(OPEN_DCODER_0_5B)
    assert (dcoder.head_dim, dcoder.num_kv_heads, dcoder.tie_word_embeddings, dcoder.qkv_bias) == (64, 2, True, True)


def test_block_causal_checkpoint_is_refused():
    with pytest.raises(ValueError, match="block-causal"):
        model_config(FAST_DLLM_V2_1_5B)


def test_unknown_model_type_names_what_was_seen_and_what_is_supported():
    with pytest.raises(ValueError, match="'gpt2'.*GPT2LMHeadModel.*supported.*llada"):
        model_config({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})


@pytest.mark.parametrize(
    "raw, complaint",
    [
        ({**LLADA_8B, "alibi": True}, "alibi"),
        ({**CODA_1_7B, "attention_bias": True}, "attention_bias"),
        ({**DREAM_7B, "rope_scaling": {"type": "yarn", "factor": 4.0}}, "yarn"),
    ],
)
def test_features_we_do_not_implement_are_refused(raw, complaint):
    with pytest.raises(ValueError, match=complaint):
        model_config(raw)


@pytest.mark.parametrize("tie", [True, False])
def test_own_checkpoint_round_trip(tmp_path, tie):
    cfg = ModelConfig(vocab_size=VOCAB, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=16,
                      intermediate_size=96, tie_word_embeddings=tie, mask_token_id=MASK)
    model = Transformer(cfg).eval()
    randomize(model)
    save_model(model, tmp_path, dtype=torch.float32)
    loaded = load_model(tmp_path)
    assert loaded.cfg == cfg
    ids = random_ids()
    with torch.no_grad():
        torch.testing.assert_close(loaded(ids)[0], model(ids)[0], atol=0, rtol=0)


@pytest.mark.parametrize("layout", ["qwen2-untied", "qwen3"])
def test_bf16_rotary_is_cast_to_the_model_dtype_as_transformers_does(tmp_path, layout):
    """In bf16 transformers' Qwen2/Qwen3 rotary embeddings return cos/sin in bf16: ours are the same
    numbers for these layouts (kept in fp32 they would not be), and the logits stay close."""
    written = WRITERS[layout](tmp_path)  # its rotary buffer in fp32, as from_pretrained in bf16 keeps it
    model = load_model(tmp_path, dtype=torch.bfloat16)
    assert model.cfg.rope_in_model_dtype
    positions = torch.arange(300)[None]
    probe = torch.zeros(1, 300, 64, dtype=torch.bfloat16)
    want_cos, want_sin = written.model.rotary_emb(probe, positions)
    cos, sin = model._rotary(positions)
    assert cos.dtype == sin.dtype == torch.bfloat16
    assert torch.equal(cos[:, 0], want_cos) and torch.equal(sin[:, 0], want_sin)
    model.cfg.rope_in_model_dtype = False
    assert model._rotary(positions)[0].dtype == torch.float32
    model.cfg.rope_in_model_dtype = True
    reference = type(written).from_pretrained(tmp_path, dtype=torch.bfloat16).eval()
    ids = random_ids(length=48)
    see_everything = torch.zeros(ids.shape[0], 1, ids.shape[1], ids.shape[1], dtype=torch.bfloat16)
    with torch.no_grad():
        expected = reference(ids, attention_mask=see_everything).logits.float()
        ours, _ = model(ids)
    torch.testing.assert_close(ours.float(), expected, atol=0.1, rtol=0.05)


def test_llada_keeps_rotary_in_full_precision(tmp_path):
    write_llada(tmp_path)
    assert not load_model(tmp_path).cfg.rope_in_model_dtype  # its reference: rope_full_precision
