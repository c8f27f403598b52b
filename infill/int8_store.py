"""int8 weight-only storage: a model folder half the size of fp16, read back by `load_model`.

Every matrix (linear layers, the embedding) is stored as int8 with one fp32 scale per output
channel (per row: `w ~ q * scale[:, None]`, `scale = max|row| / 127`, rounded to nearest); vectors
(norm weights, biases) stay fp16. The scale of tensor NAME is the tensor `NAME.scale`, and the
file's metadata says `weights: int8-per-channel`, so that `infill.checkpoint.load_model` knows to
dequantize; the model then computes as any other (fp32 on the CPU, or the worker's int8 path).

It exists so that two ~30M-parameter models travel back from a GPU machine within 64 MiB
(`scripts/gpu_session.sh`); the quality it costs is measured in that script's header.
"""
from __future__ import annotations

from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

SCALE_SUFFIX = ".scale"
METADATA = {"format": "pt", "weights": "int8-per-channel"}


def quantize_rows(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 (O, I), fp32 scales (O,)) of a float matrix (O, I), symmetric per row."""
    w = weight.detach().float()
    scale = w.abs().amax(dim=1) / 127.0  # (O,)
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # an all-zero row stays zero
    q = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q, scale


def quantized_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tensors to store: matrices as int8 plus NAME.scale, everything else fp16."""
    out: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        if tensor.ndim == 2 and tensor.is_floating_point():
            out[name], out[name + SCALE_SUFFIX] = quantize_rows(tensor)
        else:
            out[name] = tensor.detach().to(torch.float16)
    return {name: tensor.contiguous() for name, tensor in out.items()}


def save_int8(state: dict[str, torch.Tensor], path: Path) -> None:
    """Write `state` (a model's state dict, tied weights already dropped) as an int8 safetensors file."""
    save_file(quantized_state(state), str(path), metadata=METADATA)


def is_int8_file(path: Path) -> bool:
    """Whether a safetensors file holds int8 weights in this module's layout."""
    with safe_open(str(path), framework="pt") as f:
        return (f.metadata() or {}).get("weights") == METADATA["weights"]


def dequantized(state: dict[str, torch.Tensor], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """The float state dict in `dtype` of tensors read from an int8 file (read in fp32: exact)."""
    out = {}
    for name, tensor in state.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        scale = state.get(name + SCALE_SUFFIX)
        full = tensor.float() * scale.float()[:, None] if scale is not None else tensor.float()
        out[name] = full.to(dtype)
    return out
