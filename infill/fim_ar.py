"""Fill-in-the-middle for the autoregressive twin: PSM and SPM rearrangements of its training
windows (pure NumPy), and the prompt a FIM-trained causal model is asked with.

A causal model only continues text. Trained on windows cut in three (prefix, middle, suffix) and
reordered so that the middle comes last, it learns to write a middle that meets a suffix (Bavarian
et al. 2022, "Efficient Training of Language Models to Fill in the Middle": a FIM rate up to 0.9
costs left-to-right quality nothing measurable; PSM and SPM trained jointly do best). The bundled
tokenizer has no FIM tokens of its own; the rearrangements use its special tokens:

    PSM:  <|before|> prefix <|after|> suffix <|edit|> middle <|end|>
    SPM:  <|before|> <|after|> suffix <|edit|> prefix middle <|end|>

SPM is the paper's variant in which prefix and middle stay contiguous, so that a word cut at the
cursor continues as it would in plain text. The diffusion model adapted from this checkpoint
meets `<|edit|>`, `<|before|>` and `<|after|>` again in edit canvases; adaptation teaches them
their meaning there. Half the middles are whole lines (one line, or a block of up to eight), as the
product's holes are; the others lie between two points drawn uniformly over the window's tokens
(a window may span files, as the corpus windows of both phases do). `infill.causal` lays a twin's request out with
`fim_prompt` when its config says `fim_sentinels`, so that an A/B comparison gives both models the
prefix and the suffix.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infill.tokenizer import AFTER, BEFORE, EDIT, END

N_SENTINELS = 4  # a rearranged window holds this many more tokens than the text it moves
FIM_RATE = 0.5  # share of windows rearranged (StarCoder's rate; the rest stay left to right)
SPM_SHARE = 0.5  # share of the rearranged windows in SPM order
LINE_SHARE = 0.5  # rearranged windows whose middle is whole lines (one line half the time), as the product's holes
MAX_LINES = 8


@dataclass(frozen=True, slots=True)
class Sentinels:
    prefix: int
    suffix: int
    middle: int
    end: int
    head: int  # the canvas head (`<|file|>`) a rearranged window starts with, as a request does
    newline: int  # where lines start, for middles of whole lines

    @classmethod
    def of(cls, tok) -> "Sentinels":
        """The sentinels' ids in a `CodeTokenizer`."""
        ids = [tok.tok.token_to_id(token) for token in (BEFORE, AFTER, EDIT, END)]
        if None in ids:
            raise ValueError("the tokenizer lacks <|before|>, <|after|>, <|edit|> or <|end|>: rebuild the corpus")
        return cls(*ids, head=tok.file_id, newline=tok.newline_id)


def rearrange(core: np.ndarray, cut: tuple[int, int], st: Sentinels, spm: bool) -> np.ndarray:
    """`core` (N,) split at cut = (a, b) into prefix [:a], middle [a:b], suffix [b:], laid out in
    PSM or SPM order: (N + N_SENTINELS,)."""
    a, b = cut
    prefix, middle, suffix = core[:a], core[a:b], core[b:]
    head = fim_prompt(st, prefix.tolist(), suffix.tolist(), spm)
    return np.concatenate([np.asarray(head, core.dtype), middle, np.asarray([st.end], core.dtype)])


def pick_cut(core: np.ndarray, newline: int, rng: np.random.Generator) -> tuple[int, int]:
    """Where the middle of `core` starts and stops: at LINE_SHARE whole lines (one line, or two to
    MAX_LINES) when it has enough, else two points drawn uniformly."""
    starts = np.flatnonzero(core[:-1] == newline) + 1
    if rng.random() < LINE_SHARE and len(starts) >= 2:
        i = int(rng.integers(0, len(starts) - 1))
        lines = 1 if rng.random() < 0.5 else int(rng.integers(2, MAX_LINES + 1))
        return int(starts[i]), int(starts[min(i + lines, len(starts) - 1)])
    a, b = sorted(int(x) for x in rng.integers(0, len(core) + 1, size=2))
    return a, b


def fim_window(window: np.ndarray, st: Sentinels, rng: np.random.Generator, rate: float = FIM_RATE,
               spm_share: float = SPM_SHARE, keep: int = 0) -> np.ndarray:
    """The window (L,), or at `rate` its rearrangement (L,). Its first `keep` tokens (a canvas head
    and snippets) stay in place; with none, the head is put first, as every request starts with
    it. The rest loses its last tokens to the sentinels and is cut in three (`pick_cut`)."""
    head = window[:keep] if keep else np.asarray([st.head], window.dtype)
    if rng.random() >= rate or len(window) - len(head) < N_SENTINELS + 1:
        return window
    dropped = N_SENTINELS + (0 if keep else 1)  # the sentinels' room, and the head's when it is put first
    core = window[keep:len(window) - dropped]
    cut = pick_cut(core, st.newline, rng)
    return np.concatenate([head, rearrange(core, cut, st, rng.random() < spm_share)])


def fim_batch(windows: np.ndarray, st: Sentinels, rng: np.random.Generator, rate: float = FIM_RATE,
              spm_share: float = SPM_SHARE, keeps: np.ndarray | None = None) -> np.ndarray:
    """`fim_window` on every row of windows (B, L) -> (B, L); keeps (B,): tokens each row keeps in place."""
    keeps = np.zeros(len(windows), int) if keeps is None else keeps
    return np.stack([fim_window(w, st, rng, rate, spm_share, int(k)) for w, k in zip(windows, keeps)])


def fim_prompt(st: Sentinels, prefix: list[int], suffix: list[int], spm: bool = False) -> list[int]:
    """What a FIM-trained causal model continues with the middle (then `<|end|>`): the layout of
    `rearrange` up to its middle."""
    if spm:
        return [st.prefix, st.suffix, *suffix, st.middle, *prefix]
    return [st.prefix, *prefix, st.suffix, *suffix, st.middle]


def fim_context(tok, prefix: str, suffix: str, room: int) -> tuple[list[int], list[int], str]:
    """(prefix ids, suffix ids, healed text) within `room` tokens: the prefix healed (its last
    piece re-opened into the middle), keeping its end; the suffix keeping its start (a quarter of
    the room unless the prefix needs less)."""
    healed = tok.heal(prefix)
    suffix_ids = tok.encode(suffix)
    n_suffix = min(len(suffix_ids), max(room // 4, room - len(healed.ids)))
    n_prefix = min(len(healed.ids), room - n_suffix)
    return healed.ids[len(healed.ids) - n_prefix:], suffix_ids[:n_suffix], healed.text
