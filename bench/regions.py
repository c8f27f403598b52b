"""Several holes of one file decoded jointly in one job, against the same holes one request each.

`python -m bench.regions --files F [F ...] [--holes K] [--count N] [--seed S] [--json]` cuts N
jobs of K single-line holes (whole lines after their indentation, spread through one file) from
the given source files, or from a file of JSON lines with `text` fields (the corpus's
`val_files.jsonl`). Each job is decoded twice, in this process, with the model's single-line
decoder defaults:

- **joint**: one job, every hole masked at once, all of them decoded in the same passes;
- **separate**: one one-hole request per hole, left to right, the way next-edit systems reach
  other sites today ("jump, then ask again"): each request sees the holes before it filled with
  their own answers and the holes after it as empty lines.

Per side: exact match and edit similarity against the cut lines, forward passes and p50/p90 ms
per job, and the joint side's speedup in wall time. With `--json` the last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

import torch

from bench.quality import edit_similarity, exact_match, parse_override, percentile
from infill.commit import DecoderConfig
from infill.decoder_defaults import decoder_config, model_decoder_defaults
from infill.fim import run_job
from infill.job import Hole, Job
from infill.paths import bundled_model_dir
from infill.serving import open_model, open_tokenizer
from infill.weights import DEFAULT_WEIGHTS, WEIGHTS

MIN_LINE_CHARS = 8  # a line worth predicting has at least this many characters after its indent
MIN_GAP_LINES = 2  # holes of one job are this many lines apart at least
HOLE_TOKENS = 32
CONTEXT_LINES = 80  # a job keeps this many lines around its holes: one function or a screenful


@dataclass(frozen=True, slots=True)
class Cut:
    """K holes of one file: the text pieces around them and the lines they hide."""

    source: str
    pieces: tuple[str, ...]
    targets: tuple[str, ...]


def candidate_lines(lines: list[str]) -> list[int]:
    """Lines worth predicting: enough text after the indentation, a line break at the end."""
    return [i for i, line in enumerate(lines) if len(line.strip()) >= MIN_LINE_CHARS and line.endswith("\n")]


def cut_job(source: str, text: str, holes: int, rng: random.Random) -> Cut | None:
    """`holes` lines of a window of `text`, at least MIN_GAP_LINES apart; None when it has too few."""
    lines = text.splitlines(keepends=True)
    start = rng.randrange(max(1, len(lines) - CONTEXT_LINES + 1))
    window = lines[start:start + CONTEXT_LINES]
    chosen: list[int] = []
    for i in rng.sample(candidate_lines(window), len(candidate_lines(window))):
        if all(abs(i - j) > MIN_GAP_LINES for j in chosen):
            chosen.append(i)
        if len(chosen) == holes:
            break
    if len(chosen) < holes:
        return None
    pieces, targets, last = [], [], 0
    for i in sorted(chosen):
        line = window[i]
        indent = line[:len(line) - len(line.lstrip())]
        pieces.append(("\n" if pieces else "") + "".join(window[last:i]) + indent)  # a hole's line break follows it
        targets.append(line[len(indent):].rstrip("\n"))
        last = i + 1
    pieces.append("\n" + "".join(window[last:]))
    return Cut(source, tuple(pieces), tuple(targets))


def read_sources(paths: list[Path]) -> list[tuple[str, str]]:
    """(name, text) of each source file, or of each JSON line with a `text` field."""
    sources = []
    for path in paths:
        if path.suffix == ".jsonl":
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                sources.append((entry.get("path", str(path)), entry["text"]))
        else:
            sources.append((str(path), path.read_text()))
    return sources


def cut_jobs(sources: list[tuple[str, str]], holes: int, count: int, seed: int) -> list[Cut]:
    rng = random.Random(seed)
    cuts: list[Cut] = []
    for _ in range(count * 20):  # files too short for `holes` holes are drawn again
        if len(cuts) == count or not sources:
            break
        name, text = rng.choice(sources)
        cut = cut_job(name, text, holes, rng)
        if cut is not None:
            cuts.append(cut)
    return cuts


@dataclass(slots=True)
class Side:
    texts: list[str]
    forward_passes: int
    ms: float


def joint(model, tok, cut: Cut, cfg: DecoderConfig) -> Side:
    job = Job(cut.pieces, tuple(Hole("single_line", HOLE_TOKENS) for _ in cut.targets))
    started = time.perf_counter()
    answers, _, _ = run_job(model, tok, job, cfg)
    ms = (time.perf_counter() - started) * 1e3
    return Side([a.text.rstrip("\n") for a in answers], answers[0].forward_passes, ms)


def separate(model, tok, cut: Cut, cfg: DecoderConfig) -> Side:
    texts, passes, started = [], 0, time.perf_counter()
    for i in range(len(cut.targets)):
        before = "".join(piece + text for piece, text in zip(cut.pieces[:i], texts)) + cut.pieces[i]
        after = "".join(cut.pieces[i + 1:])  # later holes stay empty lines
        [answer], _, _ = run_job(model, tok, Job.fim(before, after, "single_line", HOLE_TOKENS), cfg)
        texts.append(answer.text.rstrip("\n"))
        passes += answer.forward_passes
    return Side(texts, passes, (time.perf_counter() - started) * 1e3)


def summarize(name: str, cut_sides: list[tuple[Cut, Side]]) -> dict:
    pairs = [(text, target) for cut, side in cut_sides for text, target in zip(side.texts, cut.targets)]
    ms = [side.ms for _, side in cut_sides]
    return {"name": name, "jobs": len(cut_sides), "holes": len(pairs),
            "exact_match": round(fmean(exact_match(t, r) for t, r in pairs), 4),
            "edit_similarity": round(fmean(edit_similarity(t, r) for t, r in pairs), 4),
            "forward_passes": round(fmean(side.forward_passes for _, side in cut_sides), 2),
            "p50_ms": round(percentile(ms, 50), 1), "p90_ms": round(percentile(ms, 90), 1),
            "mean_ms": round(fmean(ms), 1)}


def format_table(rows: list[dict], speedup: float) -> str:
    keys = ("name", "jobs", "holes", "exact_match", "edit_similarity", "forward_passes", "p50_ms", "p90_ms")
    lines = [" | ".join(keys)] + [" | ".join(str(row[k]) for k in keys) for row in rows]
    return "\n".join(lines + [f"joint over separate, wall time (mean per job): {speedup:.2f}x"])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.regions", description=__doc__.splitlines()[0])
    p.add_argument("--files", type=Path, nargs="+", required=True,
                   help="source files, or .jsonl files of {path, text} (e.g. work/corpus/val_files.jsonl)")
    p.add_argument("--holes", type=int, default=4, help="single-line holes per job (K)")
    p.add_argument("--count", type=int, default=20, help="jobs (N)")
    p.add_argument("--seed", type=int, default=0, help="seed of the cuts")
    p.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled model)")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--weights", default=DEFAULT_WEIGHTS, choices=WEIGHTS, help="the model's linear layers")
    p.add_argument("--decoder", action="append", default=[], metavar="KEY=VALUE", type=parse_override,
                   help="a decoder setting over the model's single-line defaults, for both sides "
                        "(repeatable), e.g. window=8")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.holes < 1 or args.count < 1:
        parser.error("--holes and --count must be at least 1")
    torch.set_num_threads(args.threads)
    model_dir = args.model or bundled_model_dir()
    model, tok = open_model(model_dir, weights=args.weights), open_tokenizer(model_dir)
    try:
        cfg = decoder_config(model_decoder_defaults(model_dir), dict(args.decoder), "single_line", edit=True)
    except ValueError as exc:
        parser.error(str(exc))
    cuts = cut_jobs(read_sources(args.files), args.holes, args.count, args.seed)
    if not cuts:
        parser.error(f"no file has {args.holes} lines worth predicting; give longer files or fewer --holes")
    joint(model, tok, cuts[0], cfg)  # warm-up: lazy tables and first allocations stay out of the timings
    rows = [summarize("joint", [(cut, joint(model, tok, cut, cfg)) for cut in cuts]),
            summarize("separate", [(cut, separate(model, tok, cut, cfg)) for cut in cuts])]
    speedup = rows[1]["mean_ms"] / rows[0]["mean_ms"]
    print(format_table(rows, speedup))
    if args.json:
        print(json.dumps({"joint": rows[0], "separate": rows[1], "speedup": round(speedup, 2),
                          "holes_per_job": args.holes, "model": model_dir.name, "weights": args.weights,
                          "decoder": dict(args.decoder),
                          "files": [str(f) for f in args.files], "seed": args.seed}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
