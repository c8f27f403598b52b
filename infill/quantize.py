"""The weights a CPU worker computes with: fp32, or int8 linear layers (dynamic quantization).

On the CPU the model is small enough that its matrix products, not memory, set the time of a
decoding step, and int8 products (fbgemm, through torch's dynamic quantization: weights int8 with one
scale per matrix, activations quantized per call) run them faster. The int8 copy's projections are
then fused (`infill.fused`): the same int8 values, each row on its own matrix's scale. Embeddings,
norms and attention stay fp32. Measured on two CPU cores with the bundled 16M model (`bench.decode
--weights`): see `models/infill-py-16m/MODEL_CARD.md` for the speed and the quality on the same tasks.
"""
from __future__ import annotations

import warnings

import torch
from torch import nn

from infill.fused import fuse_projections
from infill.model import Transformer
from infill.weights import WEIGHTS


def for_inference(model: Transformer, weights: str) -> Transformer:
    """`model` (fp32, CPU, eval) computing with `weights`; int8 returns a quantized copy, its
    projections fused (`infill.fused`)."""
    if weights not in WEIGHTS:
        raise ValueError(f"unknown weights {weights!r}; choose one of {', '.join(WEIGHTS)}")
    if weights == "fp32":
        return model
    weight = next(model.parameters())
    if weight.device.type != "cpu":
        raise ValueError("int8 weights are a CPU path; on a GPU use --dtype bf16, fp16 or fp32")
    if weight.dtype != torch.float32:
        raise ValueError(f"int8 weights quantize an fp32 model, not a {weight.dtype} one: load it in fp32")
    quantized = int8_copy(model)
    fuse_projections(quantized)
    return quantized


def int8_copy(model: Transformer) -> Transformer:
    """A copy of `model` whose linear layers are int8, each on its own scale, not fused (torch's
    dynamic quantization): what `for_inference` fuses, and `bench.fused`'s baseline."""
    with warnings.catch_warnings():  # torch's notices that this API moves to torchao one day
        warnings.filterwarnings("ignore", message=".*torchao.*")
        warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
        return torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8, inplace=False)
