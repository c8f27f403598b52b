"""Write the bundled model's autoregressive twin in the Hugging Face Qwen2 layout, for vLLM or SGLang.

    python scripts/export_qwen2.py OUT [--model models/infill-py-16m-ar]

The twin (`models/infill-py-16m-ar`) is a Qwen2 in all but names: RMSNorm, rotate-half rotary
embeddings, grouped-query attention (6 heads of 64, 2 KV heads; head dim 64 is one vLLM's CPU
attention takes), SwiGLU, tied embeddings, tensors already named as Qwen2's. Qwen2 always has
Q/K/V biases, so zero ones are written (the same function; the weights keep their dtype);
`config.json` says `qwen2`; `generation_config.json` decodes greedily and stops at the end and at
the next file's head, as the project's causal runner does. The tokenizer goes to OUT/tokenizer
with a `tokenizer_config.json` naming its pad and end tokens: transformers 5 (which vLLM and SGLang
load tokenizers with) gives a folder whose config says `qwen2` Qwen2's own pre-tokenizer and NFC
normalizer instead of the file's (`    given` became `   `, ` given`: 132 tokens for 121 on a
HumanEval prompt), so the engine is pointed at the folder apart (`vllm serve OUT --tokenizer
OUT/tokenizer`) and a server not told so stops at start for want of a tokenizer.

The twin was trained on whole files only (`<|file|>` then the code), never on FIM sentinels. Its
chat template turns the upstream path's `chat` request (`upstream.templates.chat_prompt`: the code
around `<HOLE>` in a fence) into the prompt the causal runner gives it: `<|file|>` and the prefix.

The export serves the upstream path's end-to-end tests (`tests/test_upstream_vllm.py`) and
`bench/upstream_overhead.py`. OUT is created (its parents too) and may hold no file but this
script's own (a rerun replaces them).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

REPO = Path(__file__).resolve().parent.parent
TWIN = REPO / "models" / "infill-py-16m-ar"
TOKENIZER = "tokenizer"  # OUT's folder of the tokenizer, apart from config.json
WRITTEN = {".": ("config.json", "generation_config.json", "model.safetensors", TOKENIZER),
           TOKENIZER: ("tokenizer.json", "tokenizer_config.json")}
ATTENTION_PROJECTIONS = ("q_proj", "k_proj", "v_proj")
# the code before <HOLE> inside the user turn's fence (chat_prompt's shape), after the file's head
PREFIX_ONLY_CHAT = ("<|file|>{{ messages[-1]['content'].split('```\\n', 1)[1].rsplit('<HOLE>', 1)[0] }}")


def qwen2_config(ours: dict, dtype: str) -> dict:
    """Hugging Face's Qwen2 config of one of our causal configs (no QK norm, head dim implied)."""
    if ours.get("qk_norm") or not ours.get("causal"):
        raise SystemExit("error: only a causal checkpoint without QK norm has a Qwen2 layout")
    if ours["head_dim"] * ours["num_heads"] != ours["hidden_size"]:
        raise SystemExit("error: Qwen2 takes head_dim = hidden_size / heads; this checkpoint differs")
    return {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "vocab_size": ours["vocab_size"], "hidden_size": ours["hidden_size"],
        "intermediate_size": ours["intermediate_size"], "num_hidden_layers": ours["num_layers"],
        "num_attention_heads": ours["num_heads"], "num_key_value_heads": ours["num_kv_heads"],
        "hidden_act": "silu", "rms_norm_eps": ours["rms_norm_eps"], "rope_theta": ours["rope_theta"],
        "max_position_embeddings": ours["max_position_embeddings"],
        "tie_word_embeddings": ours["tie_word_embeddings"], "use_sliding_window": False,
        "sliding_window": None, "max_window_layers": ours["num_layers"], "attention_dropout": 0.0,
        "bos_token_id": None, "eos_token_id": ours["eos_token_id"], "pad_token_id": ours["pad_token_id"],
        "torch_dtype": dtype, "use_cache": True,
    }


def qwen2_tensors(ours: dict[str, torch.Tensor], layers: int) -> dict[str, torch.Tensor]:
    """The same tensors, unchanged, with zero Q/K/V biases added where the checkpoint has none."""
    tensors = dict(ours)
    for layer in range(layers):
        for projection in ATTENTION_PROJECTIONS:
            prefix = f"model.layers.{layer}.self_attn.{projection}"
            weight = tensors[f"{prefix}.weight"]  # (out_features, in_features)
            tensors.setdefault(f"{prefix}.bias", torch.zeros(weight.shape[0], dtype=weight.dtype))
    return tensors


def settings_files(ours: dict) -> dict[str, dict]:
    """tokenizer_config.json (pad, end, the prefix-only chat template) and generation_config.json
    (stops: the end, the next file's head; greedy: the default of requests that name no
    temperature, as the project's do not)."""
    added = {token["content"]: token["id"] for token in ours["added_tokens"]}
    stops = [added[name] for name in ("<|end|>", "<|file|>") if name in added]
    return {
        f"{TOKENIZER}/tokenizer_config.json": {"tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "<|pad|>",
                                  "eos_token": "<|end|>", "model_max_length": 1024,
                                  "clean_up_tokenization_spaces": False, "chat_template": PREFIX_ONLY_CHAT},
        "generation_config.json": {"eos_token_id": stops, "pad_token_id": added.get("<|pad|>"),
                                   "do_sample": False, "temperature": 0.0},
    }


def checked_out(out: Path) -> Path:
    """OUT and its tokenizer folder, made; refused when they hold any file this script does not write."""
    foreign = []
    for folder, names in WRITTEN.items():
        if (out / folder).is_dir():
            foreign += sorted(str(path.relative_to(out)) for path in (out / folder).iterdir()
                              if path.name not in names or (path.name == TOKENIZER) != path.is_dir())
    if foreign:
        raise SystemExit(f"error: {out} holds files this script did not write ({', '.join(foreign[:3])}); "
                         "give an empty or new folder")
    (out / TOKENIZER).mkdir(parents=True, exist_ok=True)
    return out


def export(model: Path, out: Path) -> None:
    ours = json.loads((model / "config.json").read_text())
    tensors = qwen2_tensors(load_file(str(model / "model.safetensors")), ours["num_layers"])
    dtype = str(tensors["model.embed_tokens.weight"].dtype).removeprefix("torch.")
    config = qwen2_config(ours, dtype)
    tokenizer = json.loads((model / "tokenizer.json").read_text())
    out = checked_out(out)
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name, content in settings_files(tokenizer).items():
        (out / name).write_text(json.dumps(content, indent=2) + "\n")
    shutil.copyfile(model / "tokenizer.json", out / TOKENIZER / "tokenizer.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write (created)")
    parser.add_argument("--model", type=Path, default=TWIN, help="our causal checkpoint (default: the twin)")
    args = parser.parse_args(argv)
    export(args.model, args.out)
    print(f"wrote {args.out} (Qwen2 layout of {args.model.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
