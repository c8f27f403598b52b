"""Whether a model's config describes a model that can be built here, checked before anything is.

A config.json is the folder's own word on the model's shape, and building the model trusts it:
10^6 layers cost minutes and gigabytes of modules even on the meta device, zero heads divide by
zero, a string where a count goes fails deep inside torch. `typed` checks the JSON types of our
own config's fields; `check_shape` checks every count against the caps below (each well above
what any public model uses) and against the others (heads that divide, ids inside the
vocabulary) before making the ModelConfig; `check_fits` compares the weights' bytes with the memory the device has free.
Each problem is one ValueError that names the file and the field.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from infill.model import ModelConfig

# field: (least, most). The largest public models stay well inside: Llama 3.1 405B has 126 layers,
# d 16384, 128 heads, FFN 53248; Gemma 3's vocabulary is 262,144; the longest contexts 10M tokens.
LIMITS = {
    "vocab_size": (1, 2**20),
    "hidden_size": (1, 65536),
    "num_layers": (1, 1024),
    "num_heads": (1, 1024),
    "num_kv_heads": (1, 1024),
    "head_dim": (2, 2048),
    "intermediate_size": (1, 2**20),
    "max_position_embeddings": (1, 2**24),
}
_TOKEN_IDS = ("mask_token_id",)  # pad and eos may be a family default past a tiny vocabulary: the tokenizer decides


def typed(raw: dict, path: Path) -> dict:
    """The fields of our own config.json that ModelConfig knows, each checked against the type of
    its default (a count is an int, never a bool; a float may be written as an int)."""
    known = {f.name: f for f in dataclasses.fields(ModelConfig)}
    kept = {}
    for name, value in raw.items():
        if name not in known:
            continue
        default = known[name].default
        if not _same_kind(value, default):
            raise ValueError(f"{path}: {name} is {_shown(value)}, not {_kind_name(default)}: the config is "
                             "damaged; restore the model folder's own config.json")
        kept[name] = float(value) if isinstance(default, float) else value
    return kept


def _same_kind(value, default) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, type(default))


def _kind_name(default) -> str:
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}[type(default)]


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def whole(raw: dict, key: str, path: Path, default: int | None = None) -> int:
    """`raw[key]` when it is a whole number (not a bool), `default` when absent or null; a
    ValueError naming the field otherwise, a KeyError when it is absent and has no default."""
    value = raw.get(key)
    if value is None:
        if default is None:
            raise KeyError(key)
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}: {key} is {_shown(value)}, not a whole number: the config is damaged; "
                         "restore the checkpoint's own config.json")
    return value


def real(raw: dict, key: str, path: Path, default: float) -> float:
    """`raw[key]` as a float when it is a number, `default` when absent or null."""
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{path}: {key} is {_shown(value)}, not a number: the config is damaged; "
                         "restore the checkpoint's own config.json")
    return float(value)


def check_shape(fields: dict, path: Path) -> ModelConfig:
    """The ModelConfig of `fields` when every count is inside LIMITS and fits the others (checked
    before it is made: its own checks would divide by zero heads), else a ValueError naming the field."""
    values = {f.name: f.default for f in dataclasses.fields(ModelConfig)} | fields
    for name, (least, most) in LIMITS.items():
        if not least <= values[name] <= most:
            raise ValueError(f"{path}: {name} {values[name]:,} is outside {least:,}..{most:,}, which every public "
                             "model keeps to: the config is damaged; restore the checkpoint's own config.json")
    problems = []
    if values["num_heads"] % values["num_kv_heads"]:
        problems.append(f"{values['num_heads']} heads do not divide among {values['num_kv_heads']} key/value heads")
    if values["head_dim"] % 2:
        problems.append(f"head_dim {values['head_dim']} is odd (rotary embeddings pair its dimensions)")
    problems += [f"{name} {values[name]} is not a positive number" for name in ("rope_theta", "rms_norm_eps")
                 if not (math.isfinite(values[name]) and values[name] > 0)]
    problems += [f"{name} outside the vocabulary ({values[name]}, of {values['vocab_size']} tokens)"
                 for name in _TOKEN_IDS if not 0 <= values[name] < values["vocab_size"]]
    if problems:
        raise ValueError(f"{path} cannot be served: {'; '.join(problems)}")
    return ModelConfig(**fields)


def weights_bytes(cfg: ModelConfig, bytes_per_value: int) -> int:
    return cfg.num_params() * bytes_per_value


def check_fits(cfg: ModelConfig, bytes_per_value: int, device: str, path: Path) -> None:
    """A ValueError when the weights alone need more memory than `device` has free now."""
    need, have = weights_bytes(cfg, bytes_per_value), memory_available(device)
    if have is not None and need > have:
        raise ValueError(f"{path}: the weights need {need / 2**30:.2f} GiB ({cfg.num_params():,} parameters), "
                         f"more than the {have / 2**30:.2f} GiB free on {device}: pass a smaller --dtype, "
                         "or serve it on a device with more memory")


def memory_available(device: str) -> int | None:
    """Bytes free on `device` now (MemAvailable on the CPU), or None when it cannot be told."""
    if device.startswith("cuda"):
        import torch

        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return free
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None
