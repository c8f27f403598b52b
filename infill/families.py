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
from pathlib import Path

from infill.model import ModelConfig
from infill.model_shape import check_shape, real, whole

CONFIG = Path("config.json")  # the name a config is reported by when its folder is not known


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


def translate(raw: dict, names: Iterable[str], path: Path = CONFIG) -> tuple[ModelConfig, dict[str, str]]:
    """Our config, and our name for each of a public checkpoint's tensor names, for its
    config.json (at `path`) and the names of its tensors (no tensor is read)."""
    family = detect_family(raw)
    rename = _llada_name if family.layout == "llada" else str
    ours = {name: rename(name) for name in names}
    return _config_for(raw, family, "lm_head.weight" in ours.values(), path), ours


def model_config(raw: dict, has_lm_head: bool = True, path: Path = CONFIG) -> ModelConfig:
    """Our config for a public config.json (at `path`), its types and ranges checked
    (`infill.model_shape`); `has_lm_head` decides tying where the config is silent."""
    return _config_for(raw, detect_family(raw), has_lm_head, path)


def detect_family(raw: dict) -> Family:
    """The family a config.json belongs to, from `model_type`, else from `architectures`."""
    model_type = str(raw.get("model_type", ""))
    architectures = raw.get("architectures") or []
    if not isinstance(architectures, list) or not all(isinstance(a, str) for a in architectures):
        raise ValueError(f"config.json's architectures is {str(architectures)[:40]}, not a list of class names: "
                         "the config is damaged; restore the checkpoint's own config.json")
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


def _config_for(raw: dict, family: Family, has_lm_head: bool, path: Path) -> ModelConfig:
    """Our config, every field's type checked before use and the result's ranges after."""
    build = _llada_config if family.layout == "llada" else _qwen_config
    fields = build(raw, family, path)
    fields.setdefault("tie_word_embeddings", not has_lm_head)
    return check_shape(fields | _family_fields(raw, family, path), path)


def _positive(raw: dict, key: str, path: Path, default: int | None = None) -> int:
    """A count that divides others: a ValueError rather than a division by zero."""
    value = whole(raw, key, path, default)
    if value < 1:
        raise ValueError(f"{path}: {key} is {value}, but a model has at least one: the config is damaged; "
                         "restore the checkpoint's own config.json")
    return value


def _qwen_config(raw: dict, family: Family, path: Path) -> dict:
    is_qwen3 = family.layout == "qwen3"
    _require(raw, _QWEN3_NEEDS if is_qwen3 else _QWEN2_NEEDS, family)
    heads, hidden = _positive(raw, "num_attention_heads", path), _positive(raw, "hidden_size", path)
    default_head_dim = 128 if is_qwen3 else hidden // heads  # as transformers' configs
    return _tied(raw, "tie_word_embeddings", path) | dict(
        vocab_size=whole(raw, "vocab_size", path),
        hidden_size=hidden,
        num_layers=whole(raw, "num_hidden_layers", path),
        num_heads=heads,
        num_kv_heads=whole(raw, "num_key_value_heads", path, heads),
        head_dim=whole(raw, "head_dim", path, default_head_dim),
        intermediate_size=whole(raw, "intermediate_size", path),
        rope_theta=_rope_theta(raw, path),
        rms_norm_eps=real(raw, "rms_norm_eps", path, 1e-6),
        max_position_embeddings=whole(raw, "max_position_embeddings", path, 32768),
        qkv_bias=not is_qwen3,
        qk_norm=is_qwen3,
        rope_in_model_dtype=True,  # transformers' Qwen2/Qwen3 rotary returns cos/sin in the model dtype
    )


def _llada_config(raw: dict, family: Family, path: Path) -> dict:
    _require(raw, _LLADA_NEEDS, family)
    d_model, heads = _positive(raw, "d_model", path), _positive(raw, "n_heads", path)
    kv_heads = 1 if raw.get("multi_query_attention") else whole(raw, "n_kv_heads", path, heads)
    ffn = whole(raw, "mlp_hidden_size", path, 0) or whole(raw, "mlp_ratio", path, 4) * d_model
    return _tied(raw, "weight_tying", path) | dict(
        vocab_size=whole(raw, "embedding_size", path, 0) or whole(raw, "vocab_size", path),  # padded rows
        hidden_size=d_model,
        num_layers=whole(raw, "n_layers", path),
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=d_model // heads,
        intermediate_size=ffn,
        rope_theta=_rope_theta(raw, path),
        rms_norm_eps=real(raw, "rms_norm_eps", path, 1e-5),
        max_position_embeddings=whole(raw, "max_sequence_length", path, 4096),
        qkv_bias=bool(raw.get("include_qkv_bias")),
        qk_norm=False,
    )


def _tied(raw: dict, key: str, path: Path) -> dict:
    """{"tie_word_embeddings": ...} where the config says, else {} (the checkpoint's tensors decide)."""
    if raw.get(key) is None:
        return {}
    if not isinstance(raw[key], bool):
        raise ValueError(f"{path}: {key} is {str(raw[key])[:40]!r}, not true or false: the config is damaged")
    return {"tie_word_embeddings": raw[key]}


def _family_fields(raw: dict, family: Family, path: Path) -> dict:
    return {
        "causal": False,
        "logits_shift": family.logits_shift,
        "mask_token_id": _token_id(raw, "mask_token_id", family.mask_token_id, path),
        "pad_token_id": _token_id(raw, "pad_token_id", family.pad_token_id, path),
        "eos_token_id": _token_id(raw, "eos_token_id", family.eos_token_id, path),
        "family": family.name,
    }


def _token_id(raw: dict, key: str, default: int, path: Path) -> int:
    """A special token id from the config (the first, where it lists several), else the default."""
    value = raw.get(key)
    listed = {key: value[0] if value else None} if isinstance(value, list) else raw
    return whole(listed, key, path, default)


def _rope_theta(raw: dict, path: Path) -> float:
    """Rotary base; transformers >= 5 nests it in `rope_parameters`, older configs keep it at the top."""
    parameters, scaling = (_section(raw, key, path) for key in ("rope_parameters", "rope_scaling"))
    rope_type = parameters.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    if rope_type != "default":
        raise ValueError(f"rope type {str(rope_type)[:40]!r} is not supported: only plain rotary embeddings "
                         "('default')")
    return real(parameters, "rope_theta", path, real(raw, "rope_theta", path, 10000.0))


def _section(raw: dict, key: str, path: Path) -> dict:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"{path}: {key} is {str(value)[:40]}, not an object: the config is damaged; "
                         "restore the checkpoint's own config.json")
    return value


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
