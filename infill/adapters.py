"""LoRA adapter folders: a base model folder plus low-rank updates, merged into the weights at load.

`training.lora.save_adapters` writes an adapter folder; everything that opens a model folder
opens it as it opens the base:

- `adapter_config.json`: peft's LoRA config (`peft_type` "LORA", `r`, `lora_alpha`,
  `target_modules`, `use_rslora`), whose `base_model_name_or_path` names the base model folder
  (absolute, or relative to the adapter folder);
- `adapter_model.safetensors`: for each adapted linear layer NAME (our names, which are the
  Qwen2 names), `base_model.model.NAME.lora_A.weight` (r, in) and `...lora_B.weight` (out, r),
  as peft saves them;
- copies of the base's config.json, generation config and tokenizer files, so that code reading a
  model folder's config or tokenizer reads the base's.

Loading reads the base's weights (`weights_folder`), then adds scale * B @ A to each adapted
weight (`merge_adapters`): served, an adapted model costs exactly what its base costs. A base
may itself be an adapter folder (adapting an adapted model again): the chain is merged from the
bottom up. Reading needs no peft.
"""
from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from infill.folder_files import is_present, open_safetensors, read_json

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
PREFIX = "base_model.model."  # peft's prefix on the module names of a saved adapter
# peft LoRA settings that change what an adapter computes beyond scale * B @ A on its module's
# weight (or add tensors other than the A/B pairs): set, the folder is refused, not misread.
UNMERGED = ("use_dora", "fan_in_fan_out", "rank_pattern", "alpha_pattern", "lora_bias", "use_qalora", "use_bdlora",
            "alora_invocation_tokens", "modules_to_save", "trainable_token_indices", "target_parameters",
            "layer_replication", "arrow_config")
_TYPES = {"r": int, "lora_alpha": (int, float), "base_model_name_or_path": str}  # each value's JSON type
MAX_CHAIN = 8  # adapters stacked on one base; more is a loop in the folders' configs


def is_adapter_folder(folder: Path) -> bool:
    return is_present(Path(folder) / ADAPTER_CONFIG)  # a FIFO or a link to a device there is refused, not skipped


def read_adapter_config(folder: Path) -> dict:
    """The folder's adapter_config.json, or a ValueError saying what this reader cannot merge."""
    path = Path(folder) / ADAPTER_CONFIG
    raw = read_json(path, "LoRA adapter config")
    if raw.get("peft_type") != "LORA":
        raise ValueError(f"{path} is not a LoRA adapter config (peft_type {raw.get('peft_type')!r}, "
                         "not 'LORA'): only LoRA adapters are merged")
    unsupported = {key: raw[key] for key in UNMERGED if raw.get(key)}
    if raw.get("bias", "none") != "none":
        unsupported["bias"] = raw["bias"]
    wrong_types = {key: raw[key] for key, kinds in _TYPES.items() if raw.get(key) is not None
                   and (not isinstance(raw[key], kinds) or isinstance(raw[key], bool))}
    if wrong_types:
        raise ValueError(f"{path} gives {str(wrong_types)[:80]}: a number or a path goes there; the file is "
                         "damaged: adapt again")
    if unsupported or not isinstance(raw.get("r"), int) or raw["r"] < 1:
        raise ValueError(f"{path} asks for {unsupported or {'r': raw.get('r')}}: this loader merges plain "
                         "LoRA (r >= 1, no DoRA, no biases, no per-module ranks, no extra modules); adapt again "
                         "with `infill adapt`")
    return raw


def scale(config: dict) -> float:
    """What B @ A is multiplied by: alpha / r, or alpha / sqrt(r) with rank-stabilised LoRA."""
    rank, alpha = config["r"], float(config.get("lora_alpha", 8))
    return alpha / rank ** 0.5 if config.get("use_rslora") else alpha / rank


def base_folder(folder: Path) -> Path:
    """The model folder an adapter folder's config names, or a ValueError naming the missing path."""
    folder = Path(folder)
    named = read_adapter_config(folder).get("base_model_name_or_path")
    if not named:
        raise ValueError(f"{folder / ADAPTER_CONFIG} names no base model (base_model_name_or_path): "
                         "set it to the folder the adapters were trained on")
    base = Path(named).expanduser()
    base = base if base.is_absolute() else folder / base
    if not (base / "config.json").is_file():
        raise ValueError(f"{folder} holds LoRA adapters for the base model {base}, which is missing "
                         f"(no {base / 'config.json'}): put the base model there, or set "
                         f"base_model_name_or_path in {folder / ADAPTER_CONFIG} to where it is")
    return base


def adapter_chain(folder: Path) -> list[Path]:
    """The adapter folders from `folder` down to the first base that holds weights, bottom first."""
    chain, current = [], Path(folder)
    while is_adapter_folder(current):
        if len(chain) == MAX_CHAIN:
            raise ValueError(f"{folder}: more than {MAX_CHAIN} adapter folders stacked on one another "
                             f"({', '.join(map(str, chain[:3]))}, ...): their base_model_name_or_path loop")
        chain.append(current)
        current = base_folder(current)
    return chain[::-1]


def weights_folder(folder: Path) -> Path:
    """The folder holding the weights a model folder loads: itself, or its adapters' base."""
    chain = adapter_chain(folder)
    return base_folder(chain[0]) if chain else Path(folder)


def read_pairs(folder: Path) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Each adapted module's name and its (A (r, in), B (out, r)) in fp32 on the CPU."""
    path = Path(folder) / ADAPTER_WEIGHTS
    if not is_present(path):
        raise ValueError(f"{folder} has {ADAPTER_CONFIG} but no {ADAPTER_WEIGHTS}: the adapters were not saved")
    tensors: dict[str, torch.Tensor] = {}
    with open_safetensors(path, "LoRA adapters") as f:
        for key in f.keys():
            tensors[key.removeprefix(PREFIX)] = f.get_tensor(key).float()
    names = {key.rsplit(".lora_", 1)[0] for key in tensors if ".lora_" in key}
    unpaired = sorted(n for n in names if {f"{n}.lora_A.weight", f"{n}.lora_B.weight"} - set(tensors))
    if unpaired or not names or len(tensors) != 2 * len(names):
        raise ValueError(f"{path} does not hold lora_A/lora_B pairs only (unpaired: {unpaired[:3]}, "
                         f"{len(tensors)} tensors): the file is damaged; adapt again")
    return {n: (tensors[f"{n}.lora_A.weight"], tensors[f"{n}.lora_B.weight"]) for n in sorted(names)}


def merge_adapters(model: nn.Module, folder: Path) -> int:
    """Add each adapter's scale * B @ A to its module's weight, in place; the number merged."""
    config = read_adapter_config(folder)
    factor = scale(config)
    pairs = read_pairs(folder)
    for name, (a, b) in pairs.items():
        linear = _target(model, name, folder)
        if a.shape != (config["r"], linear.in_features) or b.shape != (linear.out_features, config["r"]):
            raise ValueError(f"{folder}: adapter {name} has A {tuple(a.shape)}, B {tuple(b.shape)}, which do not "
                             f"fit rank {config['r']} on a {linear.in_features} -> {linear.out_features} layer: "
                             "the adapters were trained on another base model")
        with torch.no_grad():
            weight = linear.weight
            delta = (b.to(weight.device) @ a.to(weight.device)).mul_(factor)  # (out, r) @ (r, in) -> (out, in)
            weight.copy_((weight.float() + delta).to(weight.dtype))
    return len(pairs)


def _target(model: nn.Module, name: str, folder: Path) -> nn.Linear:
    try:
        module = model.get_submodule(name)
    except AttributeError:
        module = None
    if not isinstance(module, nn.Linear):
        raise ValueError(f"{folder}: the adapters name {name!r}, which is no linear layer of the base model: "
                         "the adapters were trained on another base model")
    embeddings = getattr(getattr(model, "model", None), "embed_tokens", None)
    if embeddings is not None and module.weight is embeddings.weight:
        raise ValueError(f"{folder}: adapter {name!r} is on a head tied to the embeddings, which merging "
                         "would change too: adapt without the head")
    return module


def describe(folder: Path) -> str:
    """One line on an adapter folder: rank, alpha, modules, and the base."""
    config = read_adapter_config(folder)
    pairs = read_pairs(folder)
    return (f"LoRA rank {config['r']} (alpha {config.get('lora_alpha')}) on {len(pairs)} linear layers, "
            f"merged into {base_folder(folder)}")
