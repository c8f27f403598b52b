"""Teacher answers for self-distillation: the model's own left-to-right fills of holes cut from
training files (`python -m training.distill --out FILE`).

Parallel decoding commits several positions per pass only where the model is sure of them while
the positions before them are still masked. A model that is fine-tuned to predict, from such
partly masked holes, what its own left-to-right decoding answers (and to be sure of it where it
already predicts it: certainty forcing, as in dParallel) should commit more per pass at the same
answers; the model card measures how far that got. This module writes those answers; `infill
train --phase distill` trains on them (`training.noising.distill_sample`).

Holes come from the training split only (`train.bin`); the held-out files and the evaluation
sets never enter, as in the corpus itself. Each record is one decoded canvas:
`{"ids": [...], "hole": [start, stop], "mode": MODE}`, the hole holding the teacher's answer and
the pads after it. The teacher's answer is cut as the product cuts it (at a loop) and after as many
lines as the true middle had, so the pads say where the training file's middle ended.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from infill import decode
from infill.commit import NEVER, DecoderConfig
from infill.fim import HOLE_TOKENS, start_request
from infill.model import Transformer
from infill.paths import bundled_model_dir, work_dir
from infill.repetition import cut_loop
from infill.serving import open_model
from infill.tokenizer import CodeTokenizer
from infill.weights import WEIGHTS
from training.heldout import cut_hole

MAX_FILE_TOKENS = 6000  # a file longer than this is read from its start only
TEACHERS = {  # left to right, one token per pass, no refresh; multi-line holes in the worker's window of 12, for speed
    "single_line": DecoderConfig(rule="left_to_right", refresh_every=NEVER),
    "multi_line": DecoderConfig(rule="left_to_right", refresh_every=NEVER, window=12),
}


def training_texts(train_bin: Path, tok: CodeTokenizer, rng: np.random.Generator) -> Iterator[str]:
    """Random files of the training split: from a random token on, the next file's text."""
    ids = np.memmap(train_bin, dtype=np.uint16, mode="r")
    while True:
        at = int(rng.integers(0, len(ids) - 1))
        chunk = np.asarray(ids[at:at + 2 * MAX_FILE_TOKENS])
        starts = np.flatnonzero(chunk == tok.file_id)
        if len(starts) == 0:
            continue
        stop = starts[1] if len(starts) > 1 else len(chunk)
        yield tok.decode(chunk[starts[0] + 1:min(stop, starts[0] + 1 + MAX_FILE_TOKENS)].tolist())


def holes(texts: Iterator[str], rng: random.Random, count: int, multi_share: float) -> list[tuple[dict, str]]:
    """`count` (task, mode) holes: one line (single-line mode), or 2-4 lines (multi-line) at `multi_share`."""
    jobs = []
    while len(jobs) < count:
        multi = rng.random() < multi_share
        task = cut_hole(next(texts), rng, rng.randint(2, 4) if multi else 1)
        if task is not None:
            jobs.append((task, "multi_line" if multi else "single_line"))
    return jobs


def teacher_middle(hole: list[int], lines: int, pad_id: int, newline_id: int) -> list[int]:
    """The decoded hole as a training target: up to its first pad, a loop cut to its first copy,
    at most `lines` lines, then pads to the hole's length."""
    middle = cut_loop(hole[:hole.index(pad_id)] if pad_id in hole else hole)
    newlines = [i for i, t in enumerate(middle) if t == newline_id]
    if len(newlines) >= lines:
        middle = middle[:newlines[lines - 1] + 1]
    return middle + [pad_id] * (len(hole) - len(middle))


@torch.inference_mode()
def teach(model: Transformer, tok: CodeTokenizer, jobs: list[tuple[dict, str]]) -> list[dict]:
    """The canvases of (task, mode) holes after the teacher decoded them side by side, as records
    {"ids", "hole", "mode"}, in the jobs' order."""
    states = [start_request(model, tok, task["prompt"], task["suffix"], mode, HOLE_TOKENS[mode],
                            TEACHERS[mode])[0][0] for task, mode in jobs]
    while unfinished := [state for state in states if not state.done]:
        decode.step(model, unfinished)
    records = []
    for (task, mode), state in zip(jobs, states):
        ids, span = state.ids[0].tolist(), state.span
        ids[span] = teacher_middle(ids[span], task["canonical_solution"].count("\n"), tok.pad_id, tok.newline_id)
        records.append({"ids": ids, "hole": [span.start, span.stop], "mode": mode})
    return records


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=work_dir() / "corpus", help="folder made by `infill corpus build`")
    p.add_argument("--model", type=Path, default=bundled_model_dir(), help="the teacher (and student) model folder")
    p.add_argument("--count", type=int, default=1000, help="holes to decode")
    p.add_argument("--multi-share", type=float, default=0.4, help="share of holes of 2-4 lines (multi-line mode)")
    p.add_argument("--weights", choices=WEIGHTS, default="int8", help="weights the teacher computes with")
    p.add_argument("--threads", type=int, default=1, help="CPU threads for torch")
    p.add_argument("--batch", type=int, default=1,
                   help="holes decoded side by side, one forward per step for all (on two CPU cores 8 saved 5%%)")
    p.add_argument("--seed", type=int, default=0, help="seed of the file, line and mode choice")
    p.add_argument("--out", type=Path, required=True, help="JSONL file the records are appended to")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    tok = CodeTokenizer(args.model / "tokenizer.json")
    model = open_model(args.model, weights=args.weights)
    rng = random.Random(args.seed)
    texts = training_texts(args.corpus / "train.bin", tok, np.random.default_rng(args.seed))
    started, written = time.monotonic(), 0
    with args.out.open("a") as out:
        while written < args.count:
            jobs = holes(texts, rng, min(args.batch, args.count - written), args.multi_share)
            out.writelines(json.dumps(record) + "\n" for record in teach(model, tok, jobs))
            out.flush()
            written += len(jobs)
            print(f"{written} holes, {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
