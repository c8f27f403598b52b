"""Reading a decoding back: each hole's tokens and confidence, and its answers (`infill.answer.HoleAnswer`)."""
from __future__ import annotations

import torch

from infill.answer import HoleAnswer
from infill.decode.state import DecodeState


def best(states: list[DecodeState]) -> DecodeState:
    """Of one request's candidate holes (several lengths), the one the model finds likeliest."""
    return max(states, key=lambda state: state.mean_log_prob)


def hole_tokens(state: DecodeState) -> list[list[int]]:
    """Each hole's tokens, pad included, left to right."""
    return [state.ids[0, hole.span].tolist() for hole in state.holes]


def committed_run(state: DecodeState) -> list[int]:
    """A one-hole state's committed tokens from the hole's start up to its first mask or
    looked-up token no pass has checked yet."""
    hole, masked = state.ids[0, state.span], state.masked
    if state.looked is not None:
        masked = masked | state.looked
    run = int(torch.nonzero(masked)[0]) if masked.any() else len(masked)
    return hole[:run].tolist()


def confidences(state: DecodeState) -> list[float]:
    """Each hole's mean top-1 probability of the tokens it committed (0 when it committed none)."""
    means = []
    for hole in state.holes:
        kept = state.committed_prob[hole.part]
        filled = kept[kept > 0]
        means.append(float(filled.mean()) if len(filled) else 0.0)
    return means


def results(state: DecodeState, texts: list[str]) -> list[HoleAnswer]:
    """Each hole's answer, left to right, given its text: its tokens, the mean top-1 probability
    of the tokens it committed, and the passes and stop reason of the whole state."""
    return [HoleAnswer(text, tokens, confidence, state.passes, state.stop_reason)
            for text, tokens, confidence in zip(texts, hole_tokens(state), confidences(state), strict=True)]
