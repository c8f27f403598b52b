"""Reading public masked-diffusion checkpoints into our Transformer.

Three tensor layouts are supported, recognised by `model_type` (failing that, `architectures`) in
the checkpoint's config.json:

- Qwen2 names (Dream, Dream-Coder, DiffuCoder, DreamOn, Open-dCoder): QKV biases, tied or untied
  embeddings. These are our own names, so the tensors pass through unchanged.
- Qwen3 names (CoDA): per-head q/k RMSNorm before rotary, no biases, explicit head_dim.
- LLaDA names: its own tensor names, renamed here to ours; multi-head attention, untied head.

Each family fixes what its config may leave out: whether logits are shifted (models adapted from an
autoregressive checkpoint predict position i from the hidden state at i-1), the mask token, eos and
pad. Values the config states win over the family's defaults.

All supported families attend bidirectionally. Block-causal checkpoints (Fast-dLLM v2: causal across
blocks of 32, bidirectional inside one) are refused with an error, since our attention has no
block-causal mask and serving them bidirectionally would silently change their outputs. D2F, the
other block-causal family, publishes LoRA adapters, which this loader does not read.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from infill.model import ModelConfig


@dataclass(frozen=True, slots=True)
class Family:
    """What a public family fixes beyond its config.json (ids from its tokenizer and papers)."""

    name: str
    layout: str  # tensor names and block shape: "qwen2", "qwen3" or "llada"
    logits_shift: bool  # adapted from an autoregressive model: position i is read from i-1
    mask_token_id: int
    eos_token_id: int
    pad_token_id: int


# Family(name, layout, logits_shift, mask_token_id, eos_token_id, pad_token_id)
DREAM = Family("dream", "qwen2", True, 151666, 151643, 151643)
OPEN_DCODER = Family("open-dcoder", "qwen2", True, 151665, 151643, 151643)
CODA = Family("coda", "qwen3", True, 151669, 151645, 151643)
LLADA = Family("llada", "llada", False, 126336, 126081, 126081)

# Dream, Dream-Coder, DiffuCoder and DreamOn all say "Dream"; Open-dCoder ships a plain Qwen2
# config, and a plain Qwen3 config is read with CoDA's defaults (CoDA's own says "CoDA").
_BY_MODEL_TYPE = {"dream": DREAM, "qwen2": OPEN_DCODER, "coda": CODA, "qwen3": CODA, "llada": LLADA}
_BY_ARCHITECTURE = {
    "DreamModel": DREAM,
    "Qwen2ForCausalLM": OPEN_DCODER,
    "CoDALanguageModel": CODA,
    "Qwen3ForCausalLM": CODA,
    "LLaDAModelLM": LLADA,
}
_BLOCK_CAUSAL_MODEL_TYPES = {"fast_dllm_qwen"}

# Config values our blocks implement, per layout: a key that is present must hold one of these.
_QWEN2_NEEDS = {"hidden_act": ("silu",), "use_sliding_window": (False,)}
_QWEN3_NEEDS = {**_QWEN2_NEEDS, "attention_bias": (False,)}
_LLADA_NEEDS = {
    "block_type": ("llama",),  # separate q/k/v, SwiGLU as ff_proj (gate) and up_proj
    "activation_type": ("silu",),
    "layer_norm_type": ("rms",),
    "layer_norm_with_affine": (True,),
    "bias_for_layer_norm": (False, None),
    "include_bias": (False,),
    "attention_layer_norm": (False,),
    "alibi": (False,),
    "rope": (True,),
    "input_emb_norm": (False,),
    "scale_logits": (False,),
    "block_group_size": (1,),
}

# LLaDA tensor names -> ours. The leaf `ff_out` is the LM head at `model.transformer.ff_out` but the
# down projection inside a block (`model.transformer.blocks.{i}.ff_out`): top-level names are
# looked up whole, block names only through the block pattern.
_LLADA_TOP = {
    "model.transformer.wte.weight": "model.embed_tokens.weight",
    "model.transformer.ln_f.weight": "model.norm.weight",
    "model.transformer.ff_out.weight": "lm_head.weight",
}
_LLADA_BLOCK = {
    "attn_norm": "input_layernorm",
    "ff_norm": "post_attention_layernorm",
    "q_proj": "self_attn.q_proj",
    "k_proj": "self_attn.k_proj",
    "v_proj": "self_attn.v_proj",
    "attn_out": "self_attn.o_proj",
    "ff_proj": "mlp.gate_proj",
    "up_proj": "mlp.up_proj",
    "ff_out": "mlp.down_proj",
}
_LLADA_BLOCK_TENSOR = re.compile(r"model\.transformer\.blocks\.(\d+)\.(\w+)\.(weight|bias)")


def translate(raw: dict, names: Iterable[str]) -> tuple[ModelConfig, dict[str, str]]:
    """Our config, and our name for each of a public checkpoint's tensor names, for its
    config.json and the names of its tensors (no tensor is read)."""
    family = detect_family(raw)
    rename = _llada_name if family.layout == "llada" else str
    ours = {name: rename(name) for name in names}
    return _config_for(raw, family, has_lm_head="lm_head.weight" in ours.values()), ours


def model_config(raw: dict, has_lm_head: bool = True) -> ModelConfig:
    """Our config for a public config.json; `has_lm_head` decides tying where the config is silent."""
    return _config_for(raw, detect_family(raw), has_lm_head)


def detect_family(raw: dict) -> Family:
    """The family a config.json belongs to, from `model_type`, else from `architectures`."""
    model_type = str(raw.get("model_type", ""))
    architectures = raw.get("architectures") or []
    if model_type.lower() in _BLOCK_CAUSAL_MODEL_TYPES or "bd_size" in raw:
        raise ValueError(
            f"model_type {model_type!r} is block-causal (causal across blocks, bidirectional inside one); "
            "our attention is bidirectional or causal only, so this checkpoint is not supported"
        )
    if model_type.lower() in _BY_MODEL_TYPE:
        return _BY_MODEL_TYPE[model_type.lower()]
    for architecture in architectures:
        if architecture in _BY_ARCHITECTURE:
            return _BY_ARCHITECTURE[architecture]
    raise ValueError(
        f"unsupported checkpoint: model_type {model_type!r}, architectures {architectures}; supported "
        f"model_type values are {sorted(_BY_MODEL_TYPE)} and architectures {sorted(_BY_ARCHITECTURE)}, "
        "or a folder written by infill.checkpoint.save_model"
    )


def family_and_why(raw: dict) -> tuple[str, str]:
    """(family name, the config field that decided it)."""
    if "model_type" not in raw:  # infill.checkpoint.is_own_config
        return raw.get("family", "infill"), "config.json is this project's own (no model_type)"
    family = detect_family(raw)
    model_type = str(raw.get("model_type", ""))
    if model_type.lower() in _BY_MODEL_TYPE:
        return family.name, f"model_type {model_type!r}, {family.layout} layout"
    named = next(a for a in raw.get("architectures") or [] if a in _BY_ARCHITECTURE)
    return family.name, f"architectures {named!r}, {family.layout} layout"


def _config_for(raw: dict, family: Family, has_lm_head: bool) -> ModelConfig:
    if family.layout == "llada":
        return _llada_config(raw, family, has_lm_head)
    return _qwen_config(raw, family, has_lm_head)


def _qwen_config(raw: dict, family: Family, has_lm_head: bool) -> ModelConfig:
    is_qwen3 = family.layout == "qwen3"
    _require(raw, _QWEN3_NEEDS if is_qwen3 else _QWEN2_NEEDS, family)
    heads = raw["num_attention_heads"]
    default_head_dim = 128 if is_qwen3 else raw["hidden_size"] // heads  # as transformers' configs
    return ModelConfig(
        vocab_size=raw["vocab_size"],
        hidden_size=raw["hidden_size"],
        num_layers=raw["num_hidden_layers"],
        num_heads=heads,
        num_kv_heads=raw.get("num_key_value_heads") or heads,
        head_dim=raw.get("head_dim") or default_head_dim,
        intermediate_size=raw["intermediate_size"],
        rope_theta=_rope_theta(raw),
        rms_norm_eps=raw.get("rms_norm_eps", 1e-6),
        max_position_embeddings=raw.get("max_position_embeddings", 32768),
        tie_word_embeddings=raw.get("tie_word_embeddings", not has_lm_head),
        qkv_bias=not is_qwen3,
        qk_norm=is_qwen3,
        rope_in_model_dtype=True,  # transformers' Qwen2/Qwen3 rotary returns cos/sin in the model dtype
        **_family_fields(raw, family),
    )


def _llada_config(raw: dict, family: Family, has_lm_head: bool) -> ModelConfig:
    _require(raw, _LLADA_NEEDS, family)
    d_model, heads = raw["d_model"], raw["n_heads"]
    kv_heads = 1 if raw.get("multi_query_attention") else raw.get("n_kv_heads") or heads
    return ModelConfig(
        vocab_size=raw.get("embedding_size") or raw["vocab_size"],  # embedding rows, padded vocab
        hidden_size=d_model,
        num_layers=raw["n_layers"],
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=d_model // heads,
        intermediate_size=raw.get("mlp_hidden_size") or raw.get("mlp_ratio", 4) * d_model,
        rope_theta=_rope_theta(raw),
        rms_norm_eps=raw.get("rms_norm_eps", 1e-5),
        max_position_embeddings=raw.get("max_sequence_length", 4096),
        tie_word_embeddings=raw.get("weight_tying", not has_lm_head),
        qkv_bias=bool(raw.get("include_qkv_bias")),
        qk_norm=False,
        **_family_fields(raw, family),
    )


def _family_fields(raw: dict, family: Family) -> dict:
    return {
        "causal": False,
        "logits_shift": family.logits_shift,
        "mask_token_id": _token_id(raw, "mask_token_id", family.mask_token_id),
        "pad_token_id": _token_id(raw, "pad_token_id", family.pad_token_id),
        "eos_token_id": _token_id(raw, "eos_token_id", family.eos_token_id),
        "family": family.name,
    }


def _token_id(raw: dict, key: str, default: int) -> int:
    """A special token id from the config (the first, where it lists several), else the default."""
    value = raw.get(key)
    if isinstance(value, list):
        value = value[0] if value else None
    return default if value is None else int(value)


def _rope_theta(raw: dict) -> float:
    """Rotary base; transformers >= 5 nests it in `rope_parameters`, older configs keep it at the top."""
    parameters = raw.get("rope_parameters") or {}
    scaling = raw.get("rope_scaling") or {}
    rope_type = parameters.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    if rope_type != "default":
        raise ValueError(f"rope type {rope_type!r} is not supported: only plain rotary embeddings ('default')")
    return float(parameters.get("rope_theta", raw.get("rope_theta", 10000.0)))


def _require(raw: dict, needs: dict[str, tuple], family: Family) -> None:
    wrong = {key: raw[key] for key, allowed in needs.items() if key in raw and raw[key] not in allowed}
    if wrong:
        wanted = {key: needs[key] for key in wrong}
        raise ValueError(f"{family.name} config sets {wrong}; this loader implements only {wanted}")


def _llada_name(name: str) -> str:
    if name in _LLADA_TOP:
        return _LLADA_TOP[name]
    match = _LLADA_BLOCK_TENSOR.fullmatch(name)
    if match is None or match[2] not in _LLADA_BLOCK:
        raise ValueError(f"LLaDA tensor {name!r} has no counterpart in our model")
    layer, leaf, kind = match.groups()
    return f"model.layers.{layer}.{_LLADA_BLOCK[leaf]}.{kind}"
