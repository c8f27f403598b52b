"""LoRA adapters (peft) on our Transformer, for public checkpoints too large to fine-tune whole.

`add_adapters` injects peft's LoRA layers in place into the attention and MLP projections of an
`infill.model.Transformer` and freezes everything else, so that the training losses, which call
`model.hidden`, `model.lm_head` and `model.predictor_index` on the model itself, train the
adapters alone. `save_adapters` writes an adapter folder (`infill.adapters` says what it holds),
which every model-opening path serves with the adapters merged into the base's weights.
`checkpoint_layers` trades a second forward pass for activation memory (a 7B base on one GPU).
"""
from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import torch
from peft import LoraConfig, get_peft_model_state_dict, inject_adapter_in_model
from safetensors.torch import save_file
from torch.utils.checkpoint import checkpoint

from infill.adapters import ADAPTER_CONFIG, ADAPTER_WEIGHTS, PREFIX, adapter_chain
from infill.model import Transformer

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Files of a base folder that an adapter folder does not copy: weights (it names the base's),
# an adapter of the base's own, the base's model card (the adapted model writes its own).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack")
NOT_COPIED = {"model.safetensors.index.json", "pytorch_model.bin.index.json", ADAPTER_CONFIG, "README.md"}
MAX_COPIED_BYTES = 64 * 2**20  # a file this large is no config or tokenizer (Qwen2.5's tokenizer.json: ~7 MB)


def add_adapters(model: Transformer, rank: int = 16, alpha: float = 32,
                 dropout: float = 0.0) -> list[torch.nn.Parameter]:
    """Inject LoRA (rank, alpha, dropout) into every attention and MLP projection of `model`, in
    place; freeze every other parameter. Returns the adapters' parameters, in fp32 whatever the
    base's dtype (AdamW's updates to rank-r factors are lost in bf16)."""
    if any("lora_" in name for name, _ in model.named_parameters()):
        raise ValueError("the model already has LoRA adapters: add them once, to a freshly loaded model")
    config = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(TARGETS), bias="none")
    inject_adapter_in_model(config, model)
    trainable = []
    for name, param in model.named_parameters():
        param.requires_grad = "lora_" in name
        if param.requires_grad:
            param.data = param.data.float()
            trainable.append(param)
    return trainable


def checkpoint_layers(model: Transformer) -> None:
    """Make each layer recompute its activations in the backward pass rather than keep them, in
    place: a layer then keeps only its input (B, T, d) for backward, at the cost of a second
    forward pass per step (the README's figures for a 7B base say when that is needed)."""
    for layer in model.model.layers:
        layer.forward = partial(_recomputed, layer.forward)


def _recomputed(forward, *args):
    return checkpoint(forward, *args, use_reentrant=False)


def adapter_state(model: Transformer) -> dict[str, torch.Tensor]:
    """The adapters' tensors under the names peft saves them with, fp32 on the CPU."""
    state = get_peft_model_state_dict(model)
    return {PREFIX + name: tensor.detach().float().cpu().contiguous() for name, tensor in state.items()}


def save_adapters(model: Transformer, folder: Path, base: Path) -> None:
    """Write `model`'s adapters to `folder` as an adapter folder on the base model folder `base`
    (recorded as an absolute path), with copies of the base's config and tokenizer files. Files
    only: write into a temporary folder and rename it when this returns."""
    folder, base = Path(folder), Path(base).resolve()
    if folder.resolve() == base or folder.resolve() in map(Path.resolve, adapter_chain(base)):
        raise ValueError(f"{folder} is the base model folder (or one of its adapters): save the adapters "
                         "elsewhere, since the base must stay where it is")
    config = getattr(model, "peft_config", {}).get("default")
    if config is None:
        raise ValueError("the model has no LoRA adapters: call add_adapters first")
    folder.mkdir(parents=True, exist_ok=True)
    copy_model_files(base, folder)
    save_file(adapter_state(model), str(folder / ADAPTER_WEIGHTS), metadata={"format": "pt"})
    config.base_model_name_or_path = str(base)
    config.save_pretrained(str(folder))


def copy_model_files(base: Path, folder: Path) -> list[str]:
    """Copy the base's config, generation config, tokenizer and decoder files (every top-level
    file but weights, indexes, adapters, the model card and files over MAX_COPIED_BYTES) into
    `folder`; their names."""
    if not (Path(base) / "config.json").is_file():
        raise ValueError(f"{base} has no config.json: it is not a model folder")
    copied = []
    for path in sorted(Path(base).iterdir()):
        if (not path.is_file() or path.name in NOT_COPIED or path.name.startswith(".")
                or path.name.endswith(WEIGHT_SUFFIXES) or path.stat().st_size > MAX_COPIED_BYTES):
            continue
        shutil.copyfile(path, folder / path.name)
        copied.append(path.name)
    return copied
