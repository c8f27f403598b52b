"""What each step of `infill train` (`training.train`) trains on: random windows of the corpus's
token files (`Windows`), the teacher's decoded canvases (`read_canvases`, for `distill`) and the
laid-out edit canvases (`read_laid`), each phase's batch arrays (`make_batch`, `distill_batch`,
`product_batch` with the product's layouts: FIM rearrangements and snippet context), the makers
that mix canvases and clean causal windows into them, and the thread that builds the next batches
while the device runs the current step (`Prefetcher`).
"""
from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

import numpy as np

from infill.canvas import EDIT_LAYOUTS
from infill.fim_ar import Sentinels, fim_batch
from infill.tokenizer import CodeTokenizer
from training.noising import Special, canvas_sample, diffusion_batch, distill_sample, noise_window
from training.snippet_windows import SnippetWindows, noised_row


class Windows:
    """Random fixed-length windows of a uint16 token file (memory-mapped) or of token ids in memory."""

    def __init__(self, source: Path | np.ndarray, length: int):
        self.ids = source if isinstance(source, np.ndarray) else np.memmap(source, dtype=np.uint16, mode="r")
        self.length = length
        if len(self.ids) <= length:
            where = "these tokens" if isinstance(source, np.ndarray) else source
            raise ValueError(f"{where}: {len(self.ids)} tokens, fewer than one window of {length}")

    def sample(self, rng: np.random.Generator, batch: int) -> np.ndarray:
        starts = rng.integers(0, len(self.ids) - self.length, size=batch)
        return np.stack([self.ids[s:s + self.length] for s in starts]).astype(np.int64)  # (B, length)


Taught = tuple[np.ndarray, tuple[int, int]]  # a teacher's decoded canvas (N,) and its hole [start, stop)


def read_canvases(paths: list[Path]) -> list[Taught]:
    """The teacher's decoded canvases of JSONL files written by `training.distill`."""
    records = [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]
    if not records:
        raise ValueError(f"no decoded canvases in {', '.join(map(str, paths)) or '--teacher (none given)'}")
    return [(np.asarray(r["ids"], dtype=np.int64), tuple(r["hole"])) for r in records]


# a laid-out canvas (N,) with its answers, its holes, its focus
Laid = tuple[np.ndarray, list[tuple[int, int]], np.ndarray]


def read_laid(paths: list[Path]) -> tuple[list[Laid], str]:
    """The canvases of JSONL files written by `training.edit_canvases`, and their layout."""
    records = [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]
    layouts = {r.get("layout") for r in records}
    if not records or len(layouts) != 1 or not layouts <= set(EDIT_LAYOUTS):
        raise ValueError(f"{', '.join(map(str, paths))}: need canvases of one layout of {EDIT_LAYOUTS}, "
                         f"got {len(records)} records of layouts {sorted(map(str, layouts))}")
    return [(np.asarray(r["ids"], dtype=np.int64), [tuple(h) for h in r["holes"]],
             np.asarray(r.get("focus", []), dtype=np.int64)) for r in records], layouts.pop()


def with_canvases(arrays: tuple[np.ndarray, ...], laid: list[Laid], n: int, sp: Special,
                  rng: np.random.Generator, length: int) -> tuple[np.ndarray, ...]:
    """A batch's (inputs, targets, weights[, teacher flags]) with `n` rows of laid-out canvases
    added at its end (never a teacher's rows)."""
    rows = [canvas_sample(ids, holes, sp, rng, length, focus)
            for ids, holes, focus in (laid[i] for i in rng.integers(0, len(laid), n))]
    added = [np.concatenate([a, np.stack(x)]) for a, x in zip(arrays[:3], zip(*rows))]
    return tuple(added) + tuple(np.concatenate([flags, np.zeros(n, bool)]) for flags in arrays[3:])


def with_laid(make, laid: list[Laid], n: int, sp: Special, length: int):
    """A batch maker with `n` rows of laid-out canvases added to what `make` makes."""
    return lambda rng: with_canvases(make(rng), laid, n, sp, rng, length)


def with_causal(make, windows: Windows, n: int):
    """A batch maker for the joint objective: (what `make` makes, `n` clean windows of T+1 tokens)."""
    return lambda rng: (make(rng), windows.sample(rng, n))


def make_batch(data: Windows, batch: int, phase: str, sp: Special, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """One step's arrays: (windows,) for `ar`, (inputs, targets, weights) for `diffusion`."""
    windows = data.sample(rng, batch)
    return (windows,) if phase == "ar" else diffusion_batch(windows, sp, rng, windows.shape[1])


def distill_batch(data: Windows, canvases: list[Taught], batch: int, share: float, sp: Special,
                  rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """(inputs, targets, weights) of shape (B, T) for `distill`: round(B * share) rows from the
    teacher's canvases, the rest corpus windows under the diffusion objective; then the (B,) flags
    of the teacher's rows."""
    n_taught = round(batch * share)
    rows = [distill_sample(*canvases[i], sp, rng, data.length) for i in rng.integers(0, len(canvases), n_taught)]
    if batch > n_taught:
        rows += [noise_window(w, sp, rng, data.length) for w in data.sample(rng, batch - n_taught)]
    return tuple(np.stack(x) for x in zip(*rows)) + (np.arange(batch) < n_taught,)


def product_batches(args, data: Windows, tok: CodeTokenizer, sp: Special, batch: int):
    """The maker of `batch` rows for `ar` and `diffusion` with the product's layouts (--fim-rate,
    --snippets), or None when the run trains neither."""
    if args.phase == "distill" or not (args.snippets or (args.phase == "ar" and args.fim_rate)):
        return None
    snippets = SnippetWindows(args.snippets, tok.file_id, tok.snippet_id) if args.snippets else None
    sentinels = Sentinels.of(tok)
    return lambda rng: product_batch(data, snippets, batch, args, sp, sentinels, rng)


def product_batch(data: Windows, snippets: SnippetWindows | None, batch: int, args, sp: Special,
                  sentinels: Sentinels, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """`make_batch`'s arrays of `batch` rows, round(`batch` * --snippet-share) of them with snippet
    context before their window (never noised), the rest corpus windows; `ar` rows rearranged at
    --fim-rate."""
    n_snippets = round(batch * args.snippet_share) if snippets else 0
    rows = [snippets.row(data.ids, rng, data.length) for _ in range(n_snippets)]
    windows = list(data.sample(rng, batch - n_snippets)) + [row for row, _ in rows]
    keeps = np.array([0] * (batch - n_snippets) + [keep for _, keep in rows])
    if args.phase == "ar":
        return (fim_batch(np.stack(windows), sentinels, rng, args.fim_rate, args.fim_spm, keeps),)
    noised = [noised_row(window, int(keep), sp, rng) for window, keep in zip(windows, keeps)]
    return tuple(np.stack(x) for x in zip(*noised))


class Prefetcher(threading.Thread):
    """Builds the next batches on a side thread while the device runs the current step.

    It owns the run's data generator, so a saved run resumes after the batches queued here."""

    def __init__(self, make, rng: np.random.Generator, depth: int = 4):
        super().__init__(daemon=True)
        self.make, self.rng, self.ready = make, rng, queue.Queue(maxsize=depth)
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                batch = self.make(self.rng)
            except Exception as error:  # handed to the training loop, which would otherwise wait forever
                batch = error
            while not self.stopped.is_set():
                try:
                    self.ready.put(batch, timeout=0.1)
                    break
                except queue.Full:
                    continue

    def next(self) -> tuple[np.ndarray, ...]:
        batch = self.ready.get()
        if isinstance(batch, Exception):
            raise RuntimeError("building a training batch failed") from batch
        return batch

    def stop(self) -> None:
        """End the thread (the run is over), so the generator's state no longer moves."""
        self.stopped.set()
        self.join()
