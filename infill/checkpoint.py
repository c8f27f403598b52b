"""Reading and writing model folders: `config.json` + `model.safetensors` (+ `tokenizer.json`).

Our own checkpoints store a `ModelConfig` as `config.json`; public checkpoints (Hugging Face
layout) are recognised by their `model_type`/`architectures` and translated by `infill.families`.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from infill.model import ModelConfig, Transformer


def save_model(model: Transformer, folder: Path, dtype: torch.dtype = torch.float16) -> None:
    """Write config.json and model.safetensors (tied weights stored once)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.cfg.save(folder / "config.json")
    state = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()}
    if model.cfg.tie_word_embeddings:
        state.pop("lm_head.weight", None)
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _read_state(folder: Path) -> dict[str, torch.Tensor]:
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors in {folder}: is this a model folder?")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        state.update(load_file(str(f)))
    return state


def is_own_config(raw: dict) -> bool:
    """Our ModelConfig (also when it holds a translated public model); HF configs carry model_type."""
    return "model_type" not in raw


def load_model(folder: Path, device: str = "cpu", dtype: torch.dtype = torch.float32) -> Transformer:
    """Load any supported model folder into our Transformer, in eval mode."""
    folder = Path(folder)
    config_path = folder / "config.json"
    if not config_path.exists():
        raise FileNotFoundError(f"{config_path} is missing: point --model at a model folder")
    raw = json.loads(config_path.read_text())
    state = _read_state(folder)
    if is_own_config(raw):
        cfg = ModelConfig.load(config_path)
    else:
        from infill.families import translate

        cfg, state = translate(raw, state)
    model = Transformer(cfg)
    if cfg.tie_word_embeddings:
        state = {k: v for k, v in state.items() if k != "lm_head.weight"}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not (cfg.tie_word_embeddings and k == "lm_head.weight")]
    if missing or unexpected:
        raise ValueError(f"checkpoint in {folder} does not fit: missing {missing[:5]}, unexpected {unexpected[:5]}")
    return model.to(device=device, dtype=dtype).eval()
