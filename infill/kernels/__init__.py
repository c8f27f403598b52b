"""Fused kernels of one denoising step: per-row statistics of the logits, and the commit.

    stats = row_stats(logits)                      # logits (R, V) float32, one row per hole position
    step = commit(holes, masked, offsets, stats.top1_id, stats.top1_prob, remaining, threshold=0.9)

`row_stats` gives each row's argmax, top-1 probability, top-1 minus top-2 probability margin and
log-sum-exp without materialising the softmax. `commit` writes, per request of a batch, every
masked position whose confidence reaches the threshold, and at least the `min_commit` most
confident ones while masks remain. Each function checks dtype, shape, contiguity and device, then
runs the `@cuda.jit` kernels (`infill.kernels.cuda`) when its tensors are on a CUDA device and the
`@njit` ones (`infill.kernels.cpu`, measured faster than torch ops) when they are on the CPU.

On a CUDA device, row stats have two implementations, chosen by `CUDA_ROW_STATS` (environment
variable `INFILL_CUDA_ROW_STATS`): "numba", the fused `@cuda.jit` kernel (one read of the logits),
or "torch", `torch_row_stats` (max, topk(2) and logsumexp: three reads and more launches). The
default is "numba" until `python -m bench.gpu` has measured both on a GPU (its "row stats" table
and its `row_stats.faster` figure); neither has been timed on a real GPU yet. The commit kernel is
not in the decoder's hot path (`infill.commit.select` ranks positions with torch ops).
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import torch

from infill.kernels import cpu

CUDA_ROW_STATS_CHOICES = ("numba", "torch")
CUDA_ROW_STATS = os.environ.get("INFILL_CUDA_ROW_STATS", "numba")  # "numba" until bench.gpu measures
if CUDA_ROW_STATS not in CUDA_ROW_STATS_CHOICES:
    raise ValueError(f"INFILL_CUDA_ROW_STATS must be one of {CUDA_ROW_STATS_CHOICES}, got {CUDA_ROW_STATS!r}")


class RowStats(NamedTuple):
    top1_id: torch.Tensor  # (R,) int64: the argmax, the lowest index on ties (0 for a row of only -inf)
    top1_prob: torch.Tensor  # (R,) float32: softmax probability of top1_id (0 for a row of only -inf)
    margin: torch.Tensor  # (R,) float32: top-1 minus top-2 probability (0 when the max is tied)
    lse: torch.Tensor  # (R,) float32: log-sum-exp of the row (-inf for a row of only -inf)


class Committed(NamedTuple):
    counts: torch.Tensor  # (B,) int64: positions committed per request by this call
    committed: torch.Tensor  # (N,) bool: the positions this call committed


def _check(tensor, name: str, dtype: torch.dtype, shape: tuple) -> None:
    """Raise unless tensor has dtype, is contiguous and matches shape (None: any size)."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dtype != dtype:
        raise TypeError(f"{name} must be {dtype}, got {tensor.dtype}")
    if tensor.dim() != len(shape) or any(want not in (None, got) for want, got in zip(shape, tensor.shape)):
        wanted = "(" + ", ".join("*" if n is None else str(n) for n in shape) + ")"
        raise ValueError(f"{name} must have shape {wanted}, got {tuple(tensor.shape)}")
    if not tensor.is_contiguous():
        raise ValueError(f"{name} must be contiguous (call .contiguous()), got strides {tensor.stride()}")


def _device(**tensors: torch.Tensor) -> torch.device:
    """The one CPU or CUDA device that holds all tensors."""
    devices = {name: t.device for name, t in tensors.items()}
    first = next(iter(devices.values()))
    if any(d != first for d in devices.values()):
        raise ValueError(f"tensors must share one device, got {devices}")
    if first.type not in ("cpu", "cuda"):
        raise ValueError(f"tensors must be on the CPU or a CUDA device, got {first}")
    return first


def row_stats(logits: torch.Tensor) -> RowStats:
    """Per-row max, argmax, second max and log-sum-exp of logits (R, V) float32, as RowStats.

    Entries are finite or -inf (banned tokens); a tied max counts twice, so its margin is 0.
    """
    _check(logits, "logits", torch.float32, (None, None))
    if logits.shape[1] == 0:
        raise ValueError("logits must have at least one column (the vocabulary is empty)")
    device = _device(logits=logits)
    if device.type == "cuda" and CUDA_ROW_STATS == "torch":
        return torch_row_stats(logits)
    rows = logits.shape[0]
    stats = RowStats(torch.empty(rows, dtype=torch.int64, device=device),
                     *(torch.empty(rows, dtype=torch.float32, device=device) for _ in range(3)))
    if device.type == "cuda":
        cuda_row_stats(logits, stats)
    else:
        cpu.row_stats_rows(*(t.detach().numpy() for t in (logits, *stats)))
    return stats


def cuda_row_stats(logits: torch.Tensor, stats: RowStats) -> None:
    """The `@cuda.jit` row stats of checked CUDA logits into stats, on torch's current stream; the
    split path's scratch comes from torch's caching allocator (no host copy, no device sync)."""
    from infill.kernels import cuda  # numba.cuda costs ~0.1 s to import; CPU serving never needs it

    rows, chunks = logits.shape[0], cuda.row_chunks(logits.shape[1])
    scratch = ()
    if chunks > 1:
        scratch = tuple(torch.empty(rows, chunks, dtype=dtype, device=logits.device)
                        for dtype in (torch.float32, torch.int64, torch.float32, torch.float32))
    cuda.launch_on_tensors(cuda.launch_row_stats, (logits, *stats), scratch)


def torch_row_stats(logits: torch.Tensor) -> RowStats:
    """The same four numbers from torch ops on checked logits (R, V) float32, on their device:
    the alternative `CUDA_ROW_STATS` chooses between (and the reference `bench.gpu` times)."""
    top, top_id = logits.max(dim=-1)  # (R,), (R,): the first index of the max
    if logits.shape[1] > 1:
        second = logits.topk(2, dim=-1).values[:, 1]  # (R,): a tied max counts twice
    else:
        second = torch.full_like(top, float("-inf"))
    lse = torch.logsumexp(logits, dim=-1)  # (R,): -inf for a row of only -inf
    allowed = lse > float("-inf")
    top1_prob = torch.where(allowed, torch.exp(top - lse), 0.0)
    margin = torch.where(allowed, top1_prob - torch.exp(second - lse), 0.0)
    return RowStats(torch.where(allowed, top_id, 0), top1_prob, margin, lse)


def _check_offsets(offsets: torch.Tensor, positions: int) -> None:
    """On the CPU, offsets must run from 0 to positions without going down (on a GPU the check
    would cost a device sync, so there it is the caller's word)."""
    if offsets.device.type != "cpu":
        return
    bounds = offsets.tolist()
    if bounds[0] != 0 or bounds[-1] != positions or any(a > b for a, b in zip(bounds, bounds[1:])):
        raise ValueError(f"offsets must rise from 0 to {positions} (the number of positions), got {bounds}")


def _check_commit(holes, masked, offsets, top1_id, confidence, remaining, min_commit: int) -> torch.device:
    """Check commit's arguments; return their device."""
    _check(holes, "holes", torch.int64, (None,))
    for name, t, dtype in (("masked", masked, torch.bool), ("top1_id", top1_id, torch.int64),
                           ("confidence", confidence, torch.float32)):
        _check(t, name, dtype, (holes.shape[0],))
    _check(offsets, "offsets", torch.int64, (None,))
    if offsets.shape[0] < 1:
        raise ValueError("offsets must hold B + 1 bounds for B requests, got none")
    _check(remaining, "remaining", torch.int64, (offsets.shape[0] - 1,))
    if min_commit < 0:
        raise ValueError(f"min_commit must be >= 0, got {min_commit}")
    device = _device(holes=holes, masked=masked, offsets=offsets, top1_id=top1_id, confidence=confidence,
                     remaining=remaining)
    _check_offsets(offsets, holes.shape[0])
    return device


def commit(holes: torch.Tensor, masked: torch.Tensor, offsets: torch.Tensor, top1_id: torch.Tensor,
           confidence: torch.Tensor, remaining: torch.Tensor, threshold: float, min_commit: int = 1) -> Committed:
    """Commit confident positions of B requests whose N hole positions lie flat, request b owning
    offsets[b]:offsets[b+1].

    In place: holes (N,) int64 get top1_id (N,) int64 at the committed positions, masked (N,) bool
    is cleared there and remaining (B,) int64 loses each request's count. A masked position is
    committed when confidence (N,) float32 >= threshold (compared in float32); a request that
    commits fewer than min_commit that way also commits its most confident masked positions (lowest
    index on ties) until min_commit or none is left. threshold <= 0 commits every masked position.
    """
    device = _check_commit(holes, masked, offsets, top1_id, confidence, remaining, min_commit)
    step = Committed(torch.empty(offsets.shape[0] - 1, dtype=torch.int64, device=device),
                     torch.empty(holes.shape[0], dtype=torch.bool, device=device))
    arrays = (holes, masked, offsets, top1_id, confidence, remaining, *step)
    if device.type == "cuda":
        from infill.kernels import cuda

        cuda.launch_on_tensors(cuda.launch_commit, arrays, threshold=threshold, min_commit=min_commit)
    else:
        cpu.commit_requests(*(t.detach().numpy() for t in arrays), np.float32(threshold), min_commit)
    return step
