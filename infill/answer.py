"""The one answer record of a hole, from the decoder to the worker's reply (no torch here).

`HoleAnswer` is what one hole's decoding answers: its text (which `infill.fim` reads from its
tokens), its tokens, its confidence, the passes run and why it stopped. The denoising decoder
(`infill.decode.results`) and the causal runner both answer with it, and the worker's core makes it
the wire's `Item` in one place (`engine.worker.core.item_of`). The worker's process imports it
without torch.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HoleAnswer:
    """One hole's answer."""

    text: str
    tokens: list[int]  # the hole as decoded, pad included (a causal model: the tokens it wrote)
    confidence: float  # mean top-1 probability of the tokens it committed
    forward_passes: int  # of the whole decoding (the holes of one canvas share them)
    stop_reason: str  # "done", "deadline" or "budget" (it ran its passes)
