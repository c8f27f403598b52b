"""The rows an `infill adapt` run trains on, and how a batch is drawn from them.

A run's files are tokenized with the base's tokenizer and joined as the corpus joins files. Three
kinds of rows make each batch (`Rows`): repository windows with editor-shaped holes
(`training.noising.EDITOR_SHAPES`); repository windows with the `<|snippet|>` context the language
server would send for them (`training.snippet_data`), for models with a snippet token; and replay,
windows of the running interpreter's standard library under the corpus objective.
"""
from __future__ import annotations

import random
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from infill.tokenizer import ModelTokenizer
from training.batches import Windows
from training.evalguard import EvalGuard
from training.noising import CORPUS_SHAPES, EDITOR_SHAPES, Special, noise_window
from training.repo_files import RepoError, RepoFile
from training.snippet_data import TrainFile, package_index, window_record
from training.snippet_windows import SnippetWindows, noised_row


class RowLayout(Protocol):
    """What the rows read of a run's `training.adapt.AdaptConfig` (named here, not imported: adapt
    imports this module)."""

    seq_len: int
    batch: int
    snippet_share: float
    replay_share: float
    seed: int


REPLAY_CHARS = 2_000_000  # standard-library text tokenized for replay (about 600k tokens)
MIN_TOKENS = 64  # less code than this is nothing to learn from
SNIPPET_WINDOWS_PER_FILE = 8


def tokenized(tok: ModelTokenizer, texts: list[str]) -> list[np.ndarray]:
    """Each text's token ids (N_i,), encoded in one batch (the tokenizer's threads)."""
    return [np.asarray(ids, dtype=np.int64) for ids in tok.encode_batch(texts)]


def stream(tok: ModelTokenizer, pieces: list[np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """The pieces joined as the corpus joins files (each after the tokenizer's head, or a
    newline when it has none), and where each piece starts in it."""
    head = list(tok.head_ids) or [tok.newline_id]
    joined, starts, at = [], [], 0
    for ids in pieces:
        joined += [np.asarray(head, np.int64), ids]
        starts.append(at + len(head))
        at += len(head) + len(ids)
    return np.concatenate(joined) if joined else np.zeros(0, np.int64), starts


def replay_texts(seed: int, guard: EvalGuard | None, chars: int = REPLAY_CHARS) -> list[str]:
    """Standard-library modules of this interpreter (which the bundled corpus holds), drawn by
    `seed` up to about `chars` of text, leaving out any that overlaps the evaluation sets."""
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and "test" not in p.parts)
    random.Random(seed).shuffle(paths)
    texts, total = [], 0
    for path in paths:
        if total >= chars:
            break
        text = path.read_text("utf-8", "replace")
        if guard is None or not guard.overlaps(text):
            texts.append(text)
            total += len(text)
    return texts


def snippet_records(tok: ModelTokenizer, files: list[RepoFile], pieces: list[np.ndarray], starts: list[int],
                    seq_len: int, rng: np.random.Generator) -> dict[str, np.ndarray] | None:
    """The arrays of `training.snippet_data.SnippetWindows` for the repository's Python files:
    windows at random places with the snippets the server would send there (the whole
    repository is the workspace), or None when none has any."""
    python = [TrainFile(f.path, f.text, start, ids) for f, start, ids in zip(files, starts, pieces)
              if f.path.endswith((".py", ".pyi")) and len(ids)]
    if not python:
        return None
    index, imports_of = package_index(python)
    records = [window_record(f, index, imports_of[f.name], tok, seq_len, rng)
               for f in python for _ in range(min(SNIPPET_WINDOWS_PER_FILE, 1 + len(f.ids) // (seq_len // 2)))]
    records = [(start, ids) for start, ids in records if ids]
    if not records:
        return None
    offsets = np.cumsum([0] + [len(ids) for _, ids in records])
    return {"starts": np.asarray([s for s, _ in records], np.int64), "offsets": offsets.astype(np.int64),
            "ids": np.asarray([i for _, ids in records for i in ids], np.int64)}


@dataclass(slots=True)
class Rows:
    """What a batch is drawn from, and how many rows of each kind a step takes."""

    repo: Windows
    snippets: SnippetWindows | None
    replay: Windows | None
    n_repo: int
    n_snippets: int
    n_replay: int
    sp: Special

    def batch(self, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """(inputs, targets, weights), each (B, T): repository rows with editor-shaped holes
        (some with snippet context, never noised), then replay rows with the corpus's holes."""
        rows = [noise_window(w, self.sp, rng, self.repo.length, EDITOR_SHAPES)
                for w in self.repo.sample(rng, self.n_repo)]
        for _ in range(self.n_snippets):
            row, keep = self.snippets.row(self.repo.ids, rng, self.repo.length)
            rows.append(noised_row(row, keep, self.sp, rng, EDITOR_SHAPES))
        if self.replay is not None:
            rows += [noise_window(w, self.sp, rng, self.repo.length, CORPUS_SHAPES)
                     for w in self.replay.sample(rng, self.n_replay)]
        return tuple(np.stack(x) for x in zip(*rows))


def make_rows(tok: ModelTokenizer, files: list[RepoFile], config: RowLayout, guard: EvalGuard | None,
              rng: np.random.Generator) -> tuple[Rows, dict]:
    """The batch maker of a run, and what went into it (files, tokens, rows per step)."""
    pieces = tokenized(tok, [f.text for f in files])
    ids, starts = stream(tok, pieces)
    if len(ids) < MIN_TOKENS:
        raise RepoError(f"the repository's source files hold {len(ids)} tokens: too little code to learn from")
    length = min(config.seq_len, len(ids) - 1)
    records = snippet_records(tok, files, pieces, starts, length, rng) if tok.snippet_id is not None else None
    n_snippets = round(config.batch * config.snippet_share) if records else 0
    snippets = SnippetWindows(records, tok.head_ids[0], tok.snippet_id) if n_snippets else None
    replay_ids = stream(tok, tokenized(tok, replay_texts(config.seed, guard)))[0] if config.replay_share else None
    n_replay = round(config.batch * config.replay_share) if replay_ids is not None and len(replay_ids) > length else 0
    replay = Windows(replay_ids, length) if n_replay else None
    sp = Special.of(tok)
    rows = Rows(Windows(ids, length), snippets, replay, config.batch - n_snippets - n_replay, n_snippets, n_replay, sp)
    return rows, {"files": len(files), "tokens": int(len(ids)), "seq_len": length,
                  "rows_per_step": {"repository": rows.n_repo, "with_snippets": n_snippets, "replay": n_replay}}
