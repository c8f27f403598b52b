"""CPU timing of the int8 model's passes with fused projections (`infill.fused`) against the same
int8 weights unfused, in one process.

    OMP_WAIT_POLICY=PASSIVE python -m bench.fused [--model DIR] [--threads 2] [--rounds 8] [--json]

(the worker's OpenMP setting, `engine.worker.cli`).

For each (context, rows) shape: a cached window pass (`infill.decode.passes.window_pass`, the rows
against the context's keys/values) and a full pass (`encode`, context and rows together). The two
models take turns, round after round, and each figure is the median of its rounds (ms per pass);
their outputs are checked equal first. The table goes to stdout; with `--json`, its last line is
one JSON object with the numbers.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from torch import nn

from infill.decode.passes import encode, window_pass
from infill.paths import bundled_model_dir
from infill.quantize import for_inference, int8_copy
from infill.serving import load_model

SHAPES = ((160, 10), (200, 13), (180, 34), (1000, 12), (1000, 40))  # (canvas tokens, window rows): a
#   sliding window and a first pass's hole, in a short file and in a full canvas


def ms_per_call(call, repeats: int) -> float:
    started = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - started) * 1e3 / repeats


def time_shape(models: dict[str, nn.Module], canvas: int, rows: int, rounds: int) -> dict:
    """Medians (ms) of each model's window and full passes over one shape, taking turns."""
    vocab = next(iter(models.values())).cfg.vocab_size
    ids = torch.randint(8, vocab, (1, canvas))
    window = slice(canvas - 20 - rows, canvas - 20)
    contexts = {name: encode(model, ids, window)[1] for name, model in models.items()}
    outputs = [window_pass(model, ids, window, contexts[name]) for name, model in models.items()]
    assert all(torch.allclose(out, outputs[0], atol=1e-4) for out in outputs), "the fused model computes otherwise"
    times = {(name, kind): [] for name in models for kind in ("window", "full")}
    for _ in range(rounds):
        for name, model in models.items():
            times[name, "window"].append(ms_per_call(lambda: window_pass(model, ids, window, contexts[name]), 20))
            times[name, "full"].append(ms_per_call(lambda: encode(model, ids, window), 3))
    row = {"canvas": canvas, "rows": rows}
    row.update({f"{kind}_{name}_ms": round(statistics.median(values), 2) for (name, kind), values in times.items()})
    for kind in ("window", "full"):
        row[f"{kind}_speedup"] = round(row[f"{kind}_unfused_ms"] / row[f"{kind}_fused_ms"], 3)
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fused", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model folder (default: the bundled model)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--rounds", type=int, default=8, help="turns each model takes per shape")
    parser.add_argument("--json", action="store_true", help="end with one JSON object of the numbers")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = load_model(args.model or bundled_model_dir(), device="cpu", dtype=torch.float32).eval()
    models = {"unfused": int8_copy(model), "fused": for_inference(model, "int8")}
    with torch.inference_mode():
        rows = [time_shape(models, canvas, count, args.rounds) for canvas, count in SHAPES]
    print(f"{'canvas':>7}{'rows':>6}{'window ms (unfused / fused)':>30}{'x':>7}"
          f"{'full ms (unfused / fused)':>28}{'x':>7}")
    for row in rows:
        print(f"{row['canvas']:>7}{row['rows']:>6}{row['window_unfused_ms']:>16.2f} / {row['window_fused_ms']:<11.2f}"
              f"{row['window_speedup']:>7.2f}{row['full_unfused_ms']:>14.2f} / {row['full_fused_ms']:<11.2f}"
              f"{row['full_speedup']:>7.2f}")
    if args.json:
        print(json.dumps({"threads": args.threads, "rounds": args.rounds, "shapes": rows}))


if __name__ == "__main__":
    main()
