"""A model folder opened for serving, in one call: what every runner, benchmark and teacher did
by hand (read the weights onto a device in a dtype, compute with the chosen weights, read the
folder's tokenizer as its config says)."""
from __future__ import annotations

from pathlib import Path

from infill.checkpoint import DTYPES, load_model, read_config
from infill.family_tokens import load_tokenizer
from infill.model import Transformer
from infill.quantize import for_inference
from infill.tokenizer import ModelTokenizer


def open_model(folder: str | Path, device: str = "cpu", dtype: str = "fp32",
               weights: str = "fp32") -> Transformer:
    """The model of `folder` on `device` in `dtype` (bf16, fp16, fp32), computing with `weights`
    (fp32, or int8 on the CPU; `infill.quantize`), in eval mode."""
    return for_inference(load_model(Path(folder), device=device, dtype=DTYPES[dtype]), weights)


def open_tokenizer(folder: str | Path) -> ModelTokenizer:
    """The tokenizer `folder`'s model needs (its family's, read as its config says)."""
    folder = Path(folder)
    return load_tokenizer(folder, read_config(folder))
