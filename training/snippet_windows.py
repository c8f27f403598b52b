"""Training rows with `<|snippet|>` context, read from what `training.snippet_data` built.

The reading half of the snippet data: no tree-sitter and no parsing, so the GPU machine, which has
neither, trains with snippets (`training.batches`). Each row is `[<|file|>] [snippets] [window]`.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from infill.canvas import SNIPPET_SHARE
from training.noising import CORPUS_SHAPES, HoleShapes, Special, noise_window

FULL_SHARE = 0.5  # training rows that keep every snippet of their record; the others keep the most important few


class SnippetWindows:
    """Training rows `[<|file|>] [snippets] [window]` from a file written by `training.snippet_data`,
    or from its arrays (`starts`, `offsets`, `ids`) made in memory."""

    def __init__(self, source: Path | Mapping[str, np.ndarray], file_id: int, snippet_id: int):
        data = source if isinstance(source, Mapping) else np.load(source)
        self.starts, self.offsets, self.ids = data["starts"], data["offsets"], data["ids"].astype(np.int64)
        self.file_id, self.snippet_id = file_id, snippet_id
        self._within: tuple[tuple[int, int], np.ndarray] | None = None  # (tokens, length) -> records that fit
        if len(self.starts) == 0:
            where = "these snippet arrays" if isinstance(source, Mapping) else source
            raise ValueError(f"{where} hold no windows: build them again with `python -m training.snippet_data`")

    def snippets(self, i: int, rng: np.random.Generator, room: int) -> np.ndarray:
        """Record i's snippet ids, or at 1 - FULL_SHARE only its last (most important) few,
        cut at a snippet's start so that they fit `room`."""
        ids = self.ids[self.offsets[i]:self.offsets[i + 1]]
        cuts = np.flatnonzero(ids == self.snippet_id)
        cuts = cuts[len(ids) - cuts <= room]
        if len(cuts) == 0:
            return ids[:0]
        keep_from = cuts[0] if rng.random() < FULL_SHARE else rng.choice(cuts)
        return ids[keep_from:]

    def records_within(self, tokens: int, length: int) -> np.ndarray:
        """The records whose window of `length` lies in the first `tokens` tokens: a token file
        sent cut short (the GPU session's `TRAIN_TOKENS`) holds only those; a record past its end
        would be read at its end, another file's text under this one's snippets."""
        if self._within is None or self._within[0] != (tokens, length):
            self._within = (tokens, length), np.flatnonzero(self.starts <= tokens - length)
        return self._within[1]

    def row(self, train: np.ndarray, rng: np.random.Generator, length: int) -> tuple[np.ndarray, int]:
        """One row (length,) of a random record within the token file `train`, and how many of its
        leading positions (head and snippets) are context, never holes."""
        within = self.records_within(len(train), length)
        if len(within) == 0:
            raise ValueError(f"no snippet window lies in the {len(train):,} training tokens: build the snippets "
                             "from this token file (`python -m training.snippet_data`)")
        i = int(within[rng.integers(0, len(within))])
        snippets = self.snippets(i, rng, length // SNIPPET_SHARE)
        keep = 1 + len(snippets)
        start = min(int(self.starts[i]), len(train) - (length - keep))
        window = np.asarray(train[start:start + length - keep], dtype=np.int64)
        return np.concatenate([[self.file_id], snippets, window]), keep


def noised_row(row: np.ndarray, keep: int, sp: Special, rng: np.random.Generator,
               shapes: HoleShapes = CORPUS_SHAPES):
    """(input ids, target ids, loss weights) of a row (L,) whose first `keep` positions are
    context: the rest is noised as a window (`training.noising.noise_window`, holes by `shapes`)."""
    inputs, targets, weights = noise_window(row[keep:], sp, rng, len(row) - keep, shapes)
    return (np.concatenate([row[:keep], inputs]), np.concatenate([row[:keep], targets]),
            np.concatenate([np.zeros(keep, np.float32), weights]))
