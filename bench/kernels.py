"""CPU timing of the decoder-step kernels: the `@njit` path of `infill.kernels` against torch ops.

    python -m bench.kernels [--rows 8 64 256] [--vocab 8192] [--budget-ms 200] [--threads 1] [--json]

Row stats (max, argmax, second max, log-sum-exp per row of (rows, vocab) float32 logits):
`infill.kernels.row_stats` against the same four numbers from torch ops (`infill.kernels.torch_row_stats`:
max, topk(2), logsumexp),
and against the current decoder's `softmax(-1).max(-1)` (which computes less) for scale. Commit
(select, write, count per request): `infill.kernels.commit` against the same rule in torch ops.
Each candidate is checked against the kernel first, then timed for --budget-ms: the median of the
calls. The table goes to stdout; with `--json`, its last line is one JSON object with the numbers.
"""
from __future__ import annotations

import argparse
import json
import time
from functools import partial

import torch

from infill.kernels import commit, row_stats, torch_row_stats


def torch_commit(holes, masked, offsets, top1_id, confidence, remaining, threshold: float,
                 min_commit: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """The commit rule in torch ops: every masked position at or above threshold, and per request
    the min_commit most confident masked ones (rank by request, confidence down, index up)."""
    lengths = offsets.diff()  # (B,)
    request = torch.repeat_interleave(torch.arange(len(lengths)), lengths)  # (N,)
    ranked = torch.where(masked, confidence, float("-inf"))
    order = torch.argsort(ranked, descending=True, stable=True)
    order = order[torch.argsort(request[order], stable=True)]
    rank = torch.empty_like(order)
    rank[order] = torch.arange(len(order)) - offsets[request[order]]
    picked = masked & ((confidence >= threshold) | (rank < min_commit))
    holes[picked] = top1_id[picked]
    masked &= ~picked
    counts = torch.zeros(len(lengths), dtype=torch.int64).index_add_(0, request, picked.long())
    remaining -= counts
    return counts, picked


def median_ms(run, budget_ms: float, setup=lambda: ()) -> float:
    """Median wall time of run(*setup()) over budget_ms of calls (at least 5), in ms."""
    run(*setup())
    times, stop = [], time.perf_counter() + budget_ms / 1000
    while time.perf_counter() < stop or len(times) < 5:
        args = setup()
        start = time.perf_counter()
        run(*args)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2] * 1000


def time_row_stats(rows: int, vocab: int, budget_ms: float) -> dict:
    logits = torch.randn(rows, vocab, generator=torch.Generator().manual_seed(rows)) * 4  # (R, V)
    ours, theirs = row_stats(logits), torch_row_stats(logits)
    assert torch.equal(ours.top1_id, theirs[0]), "row stats: torch and njit disagree on the argmax"
    for got, want in zip(ours[1:], theirs[1:]):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
    return {"rows": rows, "njit_ms": median_ms(row_stats, budget_ms, lambda: (logits,)),
            "torch_ms": median_ms(torch_row_stats, budget_ms, lambda: (logits,)),
            "softmax_max_ms": median_ms(lambda x: torch.softmax(x, dim=-1).max(dim=-1), budget_ms,
                                        lambda: (logits,))}


def commit_case(requests: int, positions: int, seed: int) -> tuple:
    """Fresh arguments for one commit call: requests holes of `positions` each, half masked."""
    gen = torch.Generator().manual_seed(seed)
    n = requests * positions
    masked = torch.rand(n, generator=gen) < 0.5
    offsets = torch.arange(requests + 1) * positions
    remaining = masked.view(requests, positions).sum(dim=1)
    return (torch.zeros(n, dtype=torch.int64), masked, offsets, torch.randint(0, 8192, (n,), generator=gen),
            torch.rand(n, generator=gen), remaining, 0.9)


def time_commit(requests: int, positions: int, budget_ms: float) -> dict:
    ours, theirs = commit_case(requests, positions, 0), commit_case(requests, positions, 0)
    step, (counts, picked) = commit(*ours), torch_commit(*theirs)
    assert torch.equal(step.counts, counts) and torch.equal(step.committed, picked), "commit: torch and njit disagree"
    assert all(torch.equal(a, b) for a, b in zip(ours[:6], theirs[:6])), "commit: torch and njit wrote different state"
    setup = partial(commit_case, requests, positions, 0)  # fresh arguments per call: both candidates mutate them
    return {"requests": requests, "positions": requests * positions,
            "njit_ms": median_ms(commit, budget_ms, setup), "torch_ms": median_ms(torch_commit, budget_ms, setup)}


def print_tables(rows: list[dict], commits: list[dict], vocab: int) -> None:
    print(f"row stats, vocab {vocab}, float32 (ms, median)")
    print(f"{'rows':>6} {'njit':>9} {'torch':>9} {'softmax.max':>12} {'torch/njit':>11}")
    for r in rows:
        print(f"{r['rows']:>6} {r['njit_ms']:>9.3f} {r['torch_ms']:>9.3f} {r['softmax_max_ms']:>12.3f} "
              f"{r['torch_ms'] / r['njit_ms']:>10.1f}x")
    print("commit (ms, median)")
    print(f"{'requests':>8} {'positions':>9} {'njit':>9} {'torch':>9} {'torch/njit':>11}")
    for c in commits:
        print(f"{c['requests']:>8} {c['positions']:>9} {c['njit_ms']:>9.4f} {c['torch_ms']:>9.4f} "
              f"{c['torch_ms'] / c['njit_ms']:>10.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[8, 64, 256], help="row counts of the logits")
    parser.add_argument("--vocab", type=int, default=8192, help="vocabulary size (columns of the logits)")
    parser.add_argument("--budget-ms", type=float, default=200, help="time spent calling each candidate per shape")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (the njit path is serial)")
    parser.add_argument("--json", action="store_true", help="end with one JSON object of the numbers")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = [time_row_stats(r, args.vocab, args.budget_ms) for r in args.rows]
    commits = [time_commit(b, p, args.budget_ms) for b, p in ((1, 16), (4, 32), (8, 32))]
    print_tables(rows, commits, args.vocab)
    if args.json:
        print(json.dumps({"vocab": args.vocab, "threads": args.threads, "row_stats": rows, "commit": commits}))


if __name__ == "__main__":
    main()
