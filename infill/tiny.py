"""Tiny random checkpoints in each public layout, for tests and for checking an install.

    python -m infill.tiny FAMILY DIR      # FAMILY: dream, diffucoder, open-dcoder, coda, llada

A folder with the files the family publishes (`PUBLISHED`): `config.json` in its format, bf16
weights in two shards (`model-0000N-of-00002.safetensors`) with `model.safetensors.index.json`,
`generation_config.json`, and the tokenizer files as the family ships them:

- Dream (Dream-org) and DiffuCoder (Apple): `vocab.json` + `merges.txt`, `tokenizer_config.json`
  naming `DreamTokenizer` (its own tokenization_dream.py), `special_tokens_map.json`, no
  tokenizer.json;
- Open-dCoder and CoDA (Qwen2.5 / Qwen3 style): `tokenizer.json` and `vocab.json` + `merges.txt`,
  `tokenizer_config.json` naming `Qwen2Tokenizer`; CoDA adds `added_tokens.json` and
  `special_tokens_map.json`;
- LLaDA: `tokenizer.json` (whose post-processor adds `<|startoftext|>`, unverified) and
  `tokenizer_config.json` naming `PreTrainedTokenizerFast`, `special_tokens_map.json`.

The tokenizer is the family's kind (the same pre-tokenizer, the same added tokens in the same
order) with a small vocabulary trained here on a few standard-library modules, so the family's special
ids move down to just past the trained tokens; the config, the tokenizer and the generation config
state the moved ids and agree. Embedding rows are padded past the tokenizer, as the real ones are.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from infill.families import _LLADA_BLOCK, _LLADA_TOP, model_config
from infill.family_tokens import family_split
from infill.model import Transformer

MERGES = 400  # trained merges on top of the 256 byte tokens
ROW_MULTIPLE = 64  # embedding rows are padded to a multiple of this (past the tokenizer's size)

# Qwen2.5's added tokens from id 151643 on, in order; the families append their own after them.
QWEN_ADDED = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>",
    "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
]
NOT_SPECIAL = {"<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"}
ADDED = {  # per family: its added tokens in id order (LLaDA's ids 126080.. closed up, unverified names)
    "dream": QWEN_ADDED + ["<|beginoftext|>", "<|mask|>"],
    "diffucoder": QWEN_ADDED + ["<|beginoftext|>", "<|mask|>"],
    "open-dcoder": QWEN_ADDED + ["<|mask|>"],
    "coda": QWEN_ADDED + ["<tool_response>", "</tool_response>", "<think>", "</think>", "<|mask|>"],
    "llada": ["<|startoftext|>", "<|endoftext|>", "<|mdm_mask|>", "<|start_header_id|>", "<|end_header_id|>",
              "<|eot_id|>"],
}
# per family: (mask, pad, eos, bos) token texts; bos None where the family has none
ROLES = {
    "dream": ("<|mask|>", "<|endoftext|>", "<|endoftext|>", None),
    "diffucoder": ("<|mask|>", "<|endoftext|>", "<|endoftext|>", None),
    "open-dcoder": ("<|mask|>", "<|endoftext|>", "<|endoftext|>", None),
    "coda": ("<|mask|>", "<|endoftext|>", "<|im_end|>", None),
    "llada": ("<|mdm_mask|>", "<|endoftext|>", "<|endoftext|>", "<|startoftext|>"),
}
# per family: the tokenizer files its published folders hold (besides config.json, the weights and
# generation_config.json)
PUBLISHED = {
    "dream": ("vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"),
    "diffucoder": ("vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"),
    "open-dcoder": ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json"),
    "coda": ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "added_tokens.json",
             "special_tokens_map.json"),
    "llada": ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"),
}
TOKENIZER_CLASS = {"dream": "DreamTokenizer", "diffucoder": "DreamTokenizer", "open-dcoder": "Qwen2Tokenizer",
                   "coda": "Qwen2Tokenizer", "llada": "PreTrainedTokenizerFast"}
LAYOUT = {"dream": "qwen2", "diffucoder": "qwen2", "open-dcoder": "qwen2", "coda": "qwen3", "llada": "llada"}
SHAPE = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             intermediate_size=128, max_position_embeddings=512, rope_theta=10000.0, rms_norm_eps=1e-6,
             hidden_act="silu", use_sliding_window=False, torch_dtype="bfloat16")


STDLIB_SOURCES = ("textwrap", "string", "shlex", "fnmatch", "difflib", "json.decoder", "json.encoder")


def training_text() -> list[str]:
    """Python source of a few standard-library modules, in a fixed order: text that does not move
    when this project's code does (the package's own source did, and every edit to it changed the
    tiny tokenizers and so what their random models answer)."""
    return [Path(importlib.import_module(name).__file__).read_text() for name in STDLIB_SOURCES]


def train_vocabulary(family: str) -> Tokenizer:
    """A byte-level BPE of the family's kind: MERGES merges, then the family's added tokens."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = family_split(LAYOUT[family])  # LLaDA: GPT-2-style byte level (unverified)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=len(alphabet) + MERGES, initial_alphabet=alphabet,
                                  min_frequency=2, show_progress=False)
    tok.train_from_iterator(training_text(), trainer=trainer)
    for text in ADDED[family]:
        added = AddedToken(text, special=text not in NOT_SPECIAL, normalized=False)
        tok.add_tokens([added]) if text in NOT_SPECIAL else tok.add_special_tokens([added])
    return tok


def family_config(family: str, ids: dict[str, int], rows: int) -> dict:
    """config.json in the family's own format, with the tokenizer's ids."""
    stated = {k: v for k, v in ids.items() if v is not None}
    if family == "llada":
        return {
            "architectures": ["LLaDAModelLM"], "model_type": "llada", "activation_type": "silu", "alibi": False,
            "attention_layer_norm": False, "bias_for_layer_norm": False, "block_group_size": 1,
            "block_type": "llama", "d_model": SHAPE["hidden_size"], "embedding_size": rows, "vocab_size": rows,
            "include_bias": False, "include_qkv_bias": False, "input_emb_norm": False, "layer_norm_type": "rms",
            "layer_norm_with_affine": True, "max_sequence_length": SHAPE["max_position_embeddings"],
            "mlp_hidden_size": SHAPE["intermediate_size"], "n_heads": SHAPE["num_attention_heads"],
            "n_kv_heads": SHAPE["num_attention_heads"], "n_layers": SHAPE["num_hidden_layers"],
            "rms_norm_eps": 1e-5, "rope": True, "rope_theta": SHAPE["rope_theta"], "scale_logits": False,
            "weight_tying": False, "torch_dtype": "bfloat16", **stated,
        }
    if family == "coda":  # CoDA's config states only the mask and pad (its eos is in tokenizer_config.json)
        return {"architectures": ["CoDALanguageModel"], "model_type": "CoDA", "attention_bias": False,
                "head_dim": 32, **SHAPE, "vocab_size": rows, "mask_token_id": ids["mask_token_id"],
                "pad_token_id": ids["pad_token_id"]}
    architecture, model_type, tied = {"dream": ("DreamModel", "Dream", False),
                                      "diffucoder": ("DreamModel", "Dream", False),
                                      "open-dcoder": ("Qwen2ForCausalLM", "qwen2", True)}[family]
    return {"architectures": [architecture], "model_type": model_type, **SHAPE, "vocab_size": rows,
            "tie_word_embeddings": tied, **stated}


def tokenizer_settings(family: str, tok: Tokenizer) -> dict:
    """tokenizer_config.json: the added tokens by id, the named roles and the family's class."""
    mask, pad, eos, bos = ROLES[family]
    decoder = {str(i): {"content": t.content, "lstrip": False, "normalized": False, "rstrip": False,
                        "single_word": False, "special": t.special}
               for i, t in sorted(tok.get_added_tokens_decoder().items())}
    settings = {"add_prefix_space": False, "added_tokens_decoder": decoder, "bos_token": bos, "eos_token": eos,
                "pad_token": pad, "mask_token": mask, "errors": "replace",
                "model_max_length": SHAPE["max_position_embeddings"], "tokenizer_class": TOKENIZER_CLASS[family]}
    if family != "llada":  # LLaDA's tokenizer.json says whether it adds its start token
        settings["add_bos_token"] = False
    if TOKENIZER_CLASS[family] == "DreamTokenizer":  # the class is the folder's own Python file
        settings["auto_map"] = {"AutoTokenizer": ["tokenization_dream.DreamTokenizer", None]}
    return settings


def special_tokens_map(family: str) -> dict:
    mask, pad, eos, bos = ROLES[family]
    return {k: v for k, v in {"bos_token": bos, "eos_token": eos, "pad_token": pad, "mask_token": mask}.items()
            if v is not None}


def write_tokenizer(family: str, tok: Tokenizer, folder: Path) -> None:
    """The family's tokenizer files (`PUBLISHED`), written from `tok`."""
    files = PUBLISHED[family]
    if "tokenizer.json" in files:
        if family == "llada":  # its start token, added to every text by the post-processor
            bos = ROLES[family][3]
            saved = Tokenizer.from_str(tok.to_str())
            saved.post_processor = processors.TemplateProcessing(
                single=f"{bos} $A", pair=f"{bos} $A $B", special_tokens=[(bos, tok.token_to_id(bos))])
            saved.save(str(folder / "tokenizer.json"))
        else:
            tok.save(str(folder / "tokenizer.json"))
    if "vocab.json" in files:
        tok.model.save(str(folder))  # vocab.json + merges.txt
    _write_json(folder / "tokenizer_config.json", tokenizer_settings(family, tok))
    if "special_tokens_map.json" in files:
        _write_json(folder / "special_tokens_map.json", special_tokens_map(family))
    if "added_tokens.json" in files:
        _write_json(folder / "added_tokens.json", {t.content: i for i, t in tok.get_added_tokens_decoder().items()})


def write_tiny(family: str, folder: Path, seed: int = 0) -> Path:
    """Write a tiny random checkpoint of `family` into `folder` and return it."""
    if family not in ADDED:
        raise ValueError(f"unknown family {family!r}; one of {', '.join(ADDED)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = train_vocabulary(family)
    size = tok.get_vocab_size(with_added_tokens=True)
    rows = math.ceil((size + 1) / ROW_MULTIPLE) * ROW_MULTIPLE
    mask, pad, eos, bos = (tok.token_to_id(t) if t else None for t in ROLES[family])
    ids = {"mask_token_id": mask, "pad_token_id": pad, "eos_token_id": eos, "bos_token_id": bos}
    config = family_config(family, ids, rows)
    write_tokenizer(family, tok, folder)
    _write_json(folder / "config.json", config)
    _write_json(folder / "generation_config.json", {k: v for k, v in ids.items() if v is not None and
                                                    (family != "coda" or k == "mask_token_id")})
    write_shards(folder, random_state(family, config, seed))
    return folder


def random_state(family: str, config: dict, seed: int) -> dict[str, torch.Tensor]:
    """Random bf16 tensors under the family's own names."""
    torch.manual_seed(seed)
    tied = config.get("tie_word_embeddings", False) or config.get("weight_tying", False)
    model = Transformer(model_config(config, has_lm_head=not tied))
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(1 + 0.1 * torch.randn_like(param) if "norm" in name else 0.1 * torch.randn_like(param))
    state = {name: t.to(torch.bfloat16).contiguous() for name, t in model.state_dict().items()}
    if tied:
        state.pop("lm_head.weight")
    if family == "llada":
        state = {_llada_name(name): t for name, t in state.items()}
    return state


def _llada_name(ours: str) -> str:
    top = {v: k for k, v in _LLADA_TOP.items()}
    if ours in top:
        return top[ours]
    block = {v: k for k, v in _LLADA_BLOCK.items()}
    _, _, layer, rest = ours.split(".", 3)  # model.layers.{i}.{module}.{weight|bias}
    module, kind = rest.rsplit(".", 1)
    return f"model.transformer.blocks.{layer}.{block[module]}.{kind}"


def write_shards(folder: Path, state: dict[str, torch.Tensor], shards: int = 2) -> None:
    """The tensors in `shards` safetensors files and the index that names each tensor's file."""
    names = sorted(state)
    per_shard = math.ceil(len(names) / shards)
    weight_map = {}
    for n in range(shards):
        file = f"model-{n + 1:05d}-of-{shards:05d}.safetensors"
        part = {name: state[name] for name in names[n * per_shard:(n + 1) * per_shard]}
        save_file(part, str(folder / file), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(part, file))
    total = sum(t.numel() * t.element_size() for t in state.values())
    _write_json(folder / "model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})


def _write_json(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m infill.tiny", description=__doc__.split("\n")[0])
    parser.add_argument("family", choices=sorted(ADDED), help="the family whose layout and tokenizer to copy")
    parser.add_argument("dir", type=Path, help="the folder to write (created if missing)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    args = parser.parse_args(argv)
    print(write_tiny(args.family, args.dir, args.seed))


if __name__ == "__main__":
    main()
