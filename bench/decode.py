"""Decoder benchmark: the left-to-right baseline and named decoder configurations on the same tasks.

`python -m bench.decode --tasks PATH [--limit N] [--json]` decodes every task in this process
with each configuration, judges completions by the task's tests in a sandboxed subprocess when it
has them, else by exact match, and reports per configuration: pass@1, exact match, edit
similarity, forwards per generated token, real tokens (pads not counted) per forward, p50/p90 ms
per completion and wall-time speedup over its baseline.

Each configuration's baseline is the one-token-per-pass left-to-right decoder with the same
context cache (the same refresh interval and sliding window), run on the same tasks, so that a
speedup counts parallel commits, not caching. The classic baseline (a refresh every 4 passes, no
window) always runs too: the other baselines' speedup over it is what their cache alone gains.
`--cache` adds the cost of one decoding step with and without the context cache at several
context lengths. With `--json` the last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from bench.quality import edit_similarity, exact_match, has_tests, judging_program, load_tasks, percentile, select_tasks
from bench.sandbox import run_program
from infill.commit import NEVER, DecoderConfig
from infill.decode.passes import encode, full_pass, window_pass
from infill.decoder_defaults import decoder_config, model_decoder_defaults
from infill.fim import fill
from infill.paths import bundled_model_dir
from infill.serving import open_model, open_tokenizer
from infill.weights import WEIGHTS

BASELINE = ("baseline", DecoderConfig(rule="left_to_right"))
CONFIGS = {
    "threshold-0.9": DecoderConfig(rule="threshold", threshold=0.9),
    "threshold-0.7": DecoderConfig(rule="threshold", threshold=0.7),
    "factor-1": DecoderConfig(rule="factor", factor=1.0),
    "margin-0.5": DecoderConfig(rule="threshold", threshold=0.5, confidence="margin"),
    "block-4": DecoderConfig(rule="threshold", threshold=0.9, block=4),
    "block-8-0.7": DecoderConfig(rule="threshold", threshold=0.7, block=8),
    "l2r-no-refresh": DecoderConfig(rule="left_to_right", refresh_every=NEVER),
    "threshold-0.9-no-refresh": DecoderConfig(rule="threshold", threshold=0.9, refresh_every=NEVER),
    "run-0.9-no-refresh": DecoderConfig(rule="left_run", threshold=0.9, refresh_every=NEVER),
    "run-0.7-no-refresh": DecoderConfig(rule="left_run", threshold=0.7, refresh_every=NEVER),
    "run-0.5-no-refresh": DecoderConfig(rule="left_run", threshold=0.5, refresh_every=NEVER),
    "run-0.3-no-refresh": DecoderConfig(rule="left_run", threshold=0.3, refresh_every=NEVER),
    "run-0.3-remask-0.1": DecoderConfig(rule="left_run", threshold=0.3, remask=0.1, refresh_every=NEVER),
    "verify-4": DecoderConfig(rule="verify", drafts=4, refresh_every=NEVER),  # the left-to-right answer
    "verify-8": DecoderConfig(rule="verify", drafts=8, refresh_every=NEVER),  # in fewer passes
    "verify-16": DecoderConfig(rule="verify", drafts=16, refresh_every=NEVER),
    # sliding windows: a cached pass runs the last pass's commits and 8-16 positions from the leftmost mask
    "l2r-window-8": DecoderConfig(rule="left_to_right", window=8, refresh_every=NEVER),
    "run-0.7-window-8": DecoderConfig(rule="left_run", threshold=0.7, window=8, refresh_every=NEVER),
    "run-0.5-window-8": DecoderConfig(rule="left_run", threshold=0.5, window=8, refresh_every=NEVER),
    "run-0.5-window-12": DecoderConfig(rule="left_run", threshold=0.5, window=12, refresh_every=NEVER),
    "run-0.5-window-16": DecoderConfig(rule="left_run", threshold=0.5, window=16, refresh_every=NEVER),
    "verify-4-window-8": DecoderConfig(rule="verify", drafts=4, window=8, refresh_every=NEVER),
    "l2r-2-lengths": DecoderConfig(rule="left_to_right", lengths=2),  # multi-line: L and L/2, likeliest kept
    "l2r-grow": DecoderConfig(rule="left_to_right", grow=True),
    "l2r-no-loop-cut": DecoderConfig(rule="left_to_right", cut_loops=False),
}


def baseline_for(cfg: DecoderConfig) -> DecoderConfig:
    """The left-to-right decoder with `cfg`'s context cache: its refresh interval and window."""
    return DecoderConfig(rule="left_to_right", refresh_every=cfg.refresh_every, window=cfg.window)


def baseline_name(base: DecoderConfig, names: list[str]) -> str:
    """A baseline's name: the classic one's, a named configuration's that it equals, or its settings."""
    if base == BASELINE[1]:
        return BASELINE[0]
    same = [n for n in names if CONFIGS[n] == base]
    if same:
        return same[0]
    refresh = "no-refresh" if base.refresh_every >= NEVER else f"refresh-{base.refresh_every}"
    return "l2r-" + refresh + (f"-window-{base.window}" if base.window else "")


def worker_default(model_dir: Path, mode: str) -> str:
    """The name of the configuration the worker uses for this model and mode unless told otherwise."""
    cfg = decoder_config(model_decoder_defaults(model_dir), {}, mode)
    named = {BASELINE[0]: BASELINE[1], **CONFIGS}
    return next((name for name, c in named.items() if c == cfg), str(cfg))


@dataclass(slots=True)
class Outcome:
    ok: bool  # passed the tests, or matched exactly when the task has none
    exact: bool
    similarity: float
    ms: float
    passes: int
    tokens: int  # real middle tokens written (pads not counted)


def run_one(model, tok, task: dict, cfg: DecoderConfig, mode: str, max_tokens: int) -> Outcome:
    started = time.perf_counter()
    out = fill(model, tok, task["prompt"], task["suffix"], mode, max_tokens, cfg)
    ms = (time.perf_counter() - started) * 1e3
    exact = exact_match(out.text, task["canonical_solution"])
    ok = run_program(judging_program(task, out.text)).passed if has_tests(task) else exact
    tokens = sum(1 for t in out.tokens if t != tok.pad_id)
    return Outcome(ok, exact, edit_similarity(out.text, task["canonical_solution"]), ms, out.forward_passes, tokens)


def summarize(name: str, outcomes: list[Outcome], tested: bool, baseline: dict | None) -> dict:
    """One configuration's figures; `baseline` (its baseline's figures) gives the speedup."""
    total_ms = sum(o.ms for o in outcomes)
    passes, tokens = sum(o.passes for o in outcomes), sum(o.tokens for o in outcomes)
    n = max(1, len(outcomes))
    return {
        "name": name, "tasks": len(outcomes),
        "pass_at_1": round(sum(o.ok for o in outcomes) / n, 4) if tested else None,
        "exact_match": round(sum(o.exact for o in outcomes) / n, 4),
        "edit_similarity": round(sum(o.similarity for o in outcomes) / n, 4),
        "forwards_per_token": round(passes / max(1, tokens), 3),
        "tokens_per_forward": round(tokens / max(1, passes), 3),
        "p50_ms": round(percentile([o.ms for o in outcomes], 50) or 0, 1),
        "p90_ms": round(percentile([o.ms for o in outcomes], 90) or 0, 1),
        "baseline": baseline["name"] if baseline else name,
        "speedup": round(baseline["total_ms"] / total_ms, 3) if baseline and total_ms else 1.0,
        "total_ms": round(total_ms, 1),
    }


@torch.no_grad()
def cache_costs(model, lengths=(256, 512, 1024), hole=32, repeats=5) -> list[dict]:
    """Milliseconds of one step over a hole of `hole` tokens (3/4 of the way in, as a canvas lays it
    out), with and without the context cache; and of a first full pass that reuses the keys/values
    of everything before the hole from an earlier keystroke (`engine.worker.prefix_cache`)."""
    rows = []
    for n in lengths:
        ids = torch.randint(8, model.cfg.vocab_size, (1, n))
        window = slice(3 * n // 4 - hole, 3 * n // 4)
        _, context, whole = encode(model, ids, window)
        prefix = [(k[:, :, :window.start], v[:, :, :window.start]) for k, v in whole]
        timings = {}
        for label, step in (("uncached_ms", lambda: full_pass(model, ids, window)),
                            ("cached_ms", lambda: window_pass(model, ids, window, context)),
                            ("reused_prefix_ms", lambda: encode(model, ids, window, prefix))):
            step()
            started = time.perf_counter()
            for _ in range(repeats):
                step()
            timings[label] = (time.perf_counter() - started) * 1e3 / repeats
        rows.append({"context": n, **{k: round(v, 2) for k, v in timings.items()},
                     "ratio": round(timings["cached_ms"] / timings["uncached_ms"], 3)})
    return rows


def format_table(baselines: list[dict], configs: list[dict], cache: list[dict]) -> str:
    head = (f"{'config':<26}{'pass@1':>8}{'exact':>8}{'edit':>7}{'tok/fwd':>9}{'fwd/tok':>9}{'p50 ms':>9}"
            f"{'p90 ms':>9}{'speedup':>9}  vs")
    lines = [head]
    for row in baselines + configs:
        p = "-" if row["pass_at_1"] is None else f"{row['pass_at_1']:.3f}"
        vs = "" if row["baseline"] == row["name"] else row["baseline"]
        lines.append(f"{row['name']:<26}{p:>8}{row['exact_match']:>8.3f}{row['edit_similarity']:>7.3f}"
                     f"{row['tokens_per_forward']:>9.2f}{row['forwards_per_token']:>9.2f}{row['p50_ms']:>9.1f}"
                     f"{row['p90_ms']:>9.1f}{row['speedup']:>9.2f}  {vs}")
    for row in cache:
        lines.append(f"step at {row['context']} context: cached {row['cached_ms']} ms, uncached "
                     f"{row['uncached_ms']} ms ({row['ratio']:.0%}); first pass reusing the prefix "
                     f"{row['reused_prefix_ms']} ms")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.decode", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=Path, required=True, help="FIM task file (.jsonl or .jsonl.gz)")
    p.add_argument("--limit", type=int, help="first N tasks")
    p.add_argument("--sample", type=int, help="a seeded random subset of N tasks")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample")
    p.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled model)")
    p.add_argument("--mode", default="multi_line", choices=["single_line", "multi_line"], help="completion mode")
    p.add_argument("--max-tokens", type=int, default=64, help="hole length cap")
    p.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated names from {', '.join(CONFIGS)}")
    p.add_argument("--cache", action="store_true", help="also time one step with and without the context cache")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--weights", default="fp32", choices=WEIGHTS, help="the model's linear layers: fp32, or int8 (CPU)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    model_dir = args.model or bundled_model_dir()
    model, tok = open_model(model_dir, weights=args.weights), open_tokenizer(model_dir)
    tasks = select_tasks(load_tasks(args.tasks), args.limit, args.sample, args.seed)
    tested = any(has_tests(t) for t in tasks)
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        build_parser().error(f"unknown configs {unknown}; known: {', '.join(CONFIGS)}")
    if tasks:  # warm-up: lazy tables (token texts) and first-call allocations stay out of the timings
        fill(model, tok, tasks[0]["prompt"], tasks[0]["suffix"], args.mode, args.max_tokens)

    def figures(name: str, cfg: DecoderConfig, baseline: dict | None) -> dict:
        return summarize(name, [run_one(model, tok, t, cfg, args.mode, args.max_tokens) for t in tasks],
                         tested, baseline)

    classic = figures(BASELINE[0], BASELINE[1], None)
    baselines = {BASELINE[1]: classic}  # the others' speedup over it is what their cache alone gains
    for base in [baseline_for(CONFIGS[n]) for n in names]:
        if base not in baselines:
            baselines[base] = figures(baseline_name(base, names), base, classic)
    configs = [baselines.get(CONFIGS[n]) or figures(n, CONFIGS[n], baselines[baseline_for(CONFIGS[n])]) for n in names]
    cache = cache_costs(model) if args.cache else []
    print(format_table([row for row in baselines.values() if row["name"] not in names], configs, cache))
    if args.json:
        default = worker_default(model_dir, args.mode)
        ours = baselines.get(baseline_for(CONFIGS[default])) if default in names else None
        print(json.dumps({"baseline": ours or baselines[BASELINE[1]], "baselines": list(baselines.values()),
                          "configs": configs, "default": default, "cache": cache, "tasks_path": str(args.tasks),
                          "model": model_dir.name, "mode": args.mode, "weights": args.weights}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
