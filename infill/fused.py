"""A served model's projections fused: one linear layer for each layer's queries, keys and values, one
for its MLP's gate and up.

On the CPU a decoding pass runs a few rows (a sliding window of about 10 positions), where each
linear layer costs mostly its call: one product of width q + k + v instead of three, and one of
width 2 x intermediate instead of two, makes a cached pass of the bundled model's int8 copy
1.08-1.24x faster (`bench.fused`; the model card has the figures). The fused model computes what
the model did, its parameters laid end to end: an int8 model's rows keep their int8 values and
scales (only a pass that wants some rows' outputs, `Transformer.hidden`'s `rows`, quantizes the last
layer's queries on the range of every row's activations, not of those rows' alone); it is for
inference only (training, adapters and checkpoints keep the Qwen2 layout of `infill.model`).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from infill.model import MLP, Attention, Transformer


def stacked(layers: list[nn.Module]) -> nn.Module:
    """One linear layer whose outputs are those of `layers` (same input width) laid end to end:
    fp32 ones (`nn.Linear`), or dynamically quantized int8 ones, whose rows keep their int8 values
    and their scales (one scale per row of the result)."""
    if all(isinstance(layer, DynamicLinear) for layer in layers):
        return _stacked_int8(layers)
    first = layers[0]
    bias = first.bias is not None
    out = nn.Linear(first.in_features, sum(layer.out_features for layer in layers), bias=bias,
                    device=first.weight.device, dtype=first.weight.dtype)
    with torch.no_grad():
        out.weight.copy_(torch.cat([layer.weight for layer in layers]))
        if bias:
            out.bias.copy_(torch.cat([layer.bias for layer in layers]))
    return out


def _row_scales(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Scales and zero points per row (out,) of a quantized weight (out, in), per tensor or per row."""
    if weight.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        rows = weight.shape[0]
        return (torch.full((rows,), weight.q_scale(), dtype=torch.float64),
                torch.full((rows,), weight.q_zero_point(), dtype=torch.int64))
    return weight.q_per_channel_scales(), weight.q_per_channel_zero_points()


def _stacked_int8(layers: list[DynamicLinear]) -> DynamicLinear:
    weights = [layer.weight() for layer in layers]  # quantized (out_i, in)
    scales, zero_points = (torch.cat(parts) for parts in zip(*map(_row_scales, weights)))
    # the same int8 values: each row dequantized and quantized again on its own scale
    weight = torch.quantize_per_channel(torch.cat([w.dequantize() for w in weights]), scales, zero_points, 0,
                                        torch.qint8)
    biases = [layer.bias() for layer in layers]
    bias = None if biases[0] is None else torch.cat(biases)
    out = DynamicLinear(layers[0].in_features, weight.shape[0], bias_=bias is not None, dtype=torch.qint8)
    out.set_weight_bias(weight, bias)
    return out


class FusedAttention(Attention):
    """`Attention` whose queries, keys and values come from one product (`qkv_proj`)."""

    def __init__(self, attention: Attention):
        nn.Module.__init__(self)  # not Attention's: the layers are `attention`'s
        self.cfg = attention.cfg
        self.qkv_proj = stacked([attention.q_proj, attention.k_proj, attention.v_proj])
        self.widths = (attention.q_proj.out_features, attention.k_proj.out_features, attention.v_proj.out_features)
        self.o_proj = attention.o_proj
        if attention.cfg.qk_norm:
            self.q_norm, self.k_norm = attention.q_norm, attention.k_norm

    def project(self, x: torch.Tensor, queries: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        q, k, v = self.qkv_proj(x).split(self.widths, dim=-1)  # (B, T, nh * hd), (B, T, nkv * hd) x2
        return (q if queries is None else q[:, queries]), k, v


class FusedMLP(MLP):
    """`MLP` whose gate and up come from one product (`gate_up_proj`)."""

    def __init__(self, mlp: MLP):
        nn.Module.__init__(self)  # not MLP's: the layers are `mlp`'s
        self.gate_up_proj = stacked([mlp.gate_proj, mlp.up_proj])
        self.down_proj = mlp.down_proj

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


def fuse_projections(model: Transformer) -> None:
    """Fuse the projections of every layer of `model`, in place."""
    for layer in model.model.layers:
        layer.self_attn = FusedAttention(layer.self_attn)
        layer.mlp = FusedMLP(layer.mlp)
