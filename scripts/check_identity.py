"""Same answers before and after a refactoring: completions and next edits of two commits compared.

    .venv/bin/python scripts/check_identity.py --ref COMMIT [--lines 60] [--blocks 40] [--edits 40]

Each side (the commit `--ref`, checked out in a temporary git worktree, and this working tree)
runs its own worker on the bundled model (`python -m engine`, threads 1, its prefix cache off, so
that no request depends on the one before) and answers, one request at a time, the same tasks
through its own command line, as a user would get them:
- FIM tasks (held-out HumanEval infilling: `--lines` single-line and `--blocks` multi-line holes,
  a seeded sample) through `infill complete FILE --line L --col C --invoked --json`: the texts
  shown, the mode, the forward passes and the stop reason;
- next-edit tasks (`--edits` of them, synthesized by `training.edit_synth` from this project's own
  Python files) through `python -m bench.next_edit --json` against that side's worker: its figures.
The script prints each difference and exits 1 if there is one, 0 when every answer is the same.
Deadlines are long (30 s), so that a slow step never changes an answer.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "human-eval-infilling"
PYTHON = sys.executable
DEADLINE_MS = "30000"
COMPLETE_MODULES = ("cli.complete", "lsp_server.oneshot")  # where `infill complete` lives, newest first
# answer fields that depend on the machine's speed, not on the code
TIMED = {"timings", "latency_ms", "p50_ms", "p95_ms", "mean_ms", "server_p50_ms", "server_p95_ms",
         "client_p50_ms", "client_p95_ms", "speedup", "seconds"}


def sample(name: str, count: int, seed: int) -> list[dict]:
    with gzip.open(DATA / f"HumanEval-{name}Infilling.jsonl.gz", "rt", encoding="utf-8") as stream:
        tasks = [json.loads(line) for line in stream if line.strip()]
    return random.Random(seed).sample(tasks, count)


def worktree(ref: str, folder: Path) -> Path:
    side = folder / "ref"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(side), ref], check=True,
                   stdout=subprocess.DEVNULL)
    for tracked_elsewhere in ("models",):  # the bundled model, as this tree has it
        shutil.rmtree(side / tracked_elsewhere, ignore_errors=True)
        (side / tracked_elsewhere).symlink_to(REPO / tracked_elsewhere)
    return side


def environment(side: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(side), "TORCH_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def start_worker(side: Path, address: str) -> subprocess.Popen:
    worker = subprocess.Popen([PYTHON, "-m", "engine", "--bind", address, "--threads", "1",
                               "--prefix-cache-mb", "0"], cwd=side, env=environment(side),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return worker


def complete_module(side: Path) -> str:
    return next(m for m in COMPLETE_MODULES if (side / (m.replace(".", "/") + ".py")).is_file())


def fim_answer(side: Path, address: str, task: dict, folder: Path) -> dict:
    path = folder / f"{task['task_id'].replace('/', '_')}.py"
    path.write_text(task["prompt"] + task["suffix"], encoding="utf-8")
    lines = task["prompt"].split("\n")
    entry = f"import sys; from {complete_module(side)} import main; sys.exit(main(sys.argv[1:]))"
    argv = [PYTHON, "-c", entry, str(path), "--line", str(len(lines) - 1), "--col",
            str(len(lines[-1])), "--invoked", "--json", "--worker", address, "--deadline-ms",
            DEADLINE_MS]
    for _ in range(50):  # the worker may still be loading its model
        done = subprocess.run(argv, cwd=side, env=environment(side), capture_output=True, text=True)
        if done.returncode == 0:
            answer = json.loads(done.stdout.strip().splitlines()[-1])
            return {k: v for k, v in answer.items() if k not in TIMED}
        time.sleep(1.0)
    raise RuntimeError(f"infill complete failed on {side}: {done.stderr[-2000:]}")


def edit_tasks(folder: Path, count: int, seed: int) -> Path:
    """Next-edit tasks synthesized by this tree's `training.edit_synth` from this project's own
    Python files, which no model here was trained on."""
    out = folder / "edits.jsonl"
    sources = [str(REPO / package) for package in ("completion", "lsp_server", "gateway", "bench")]
    subprocess.run([PYTHON, "-m", "training.edit_synth", "--files", *sources, "--count", str(count),
                    "--seed", str(seed), "--out", str(out)], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)
    return out


def next_edit_figures(side: Path, address: str, tasks: Path) -> dict:
    done = subprocess.run([PYTHON, "-m", "bench.next_edit", "--tasks", str(tasks), "--worker", address,
                           "--deadline-ms", DEADLINE_MS, "--json"], cwd=side, env=environment(side),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"bench.next_edit failed on {side}: {done.stderr[-2000:]}")
    figures = untimed(json.loads(done.stdout.strip().splitlines()[-1]))
    figures.pop("worker", None)  # each side's own socket
    return figures


def untimed(value):
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMED and "ms" not in k}
    return value


def side_answers(side: Path, tasks: list[dict], edits: Path, folder: Path) -> dict:
    address = f"ipc://{folder}/worker.sock"
    worker = start_worker(side, address)
    try:
        answers = {task["task_id"]: fim_answer(side, address, task, folder) for task in tasks}
        answers["next_edit"] = next_edit_figures(side, address, edits)
        return answers
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/check_identity.py", description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, help="the commit to compare this working tree with")
    parser.add_argument("--lines", type=int, default=60, help="single-line FIM tasks (default 60)")
    parser.add_argument("--blocks", type=int, default=40, help="multi-line FIM tasks (default 40)")
    parser.add_argument("--edits", type=int, default=40, help="next-edit tasks (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    tasks = sample("SingleLine", args.lines, args.seed) + sample("MultiLine", args.blocks, args.seed)
    with tempfile.TemporaryDirectory(prefix="identity-") as tmp:
        folder = Path(tmp)
        edits = edit_tasks(folder, args.edits, args.seed)
        try:
            ref = worktree(args.ref, folder)
            results = {}
            for name, side in (("ref", ref), ("here", REPO)):
                (folder / f"{name}-run").mkdir()
                results[name] = side_answers(side, tasks, edits, folder / f"{name}-run")
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder / "ref")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    differ = [key for key in results["ref"] if results["ref"][key] != results["here"].get(key)]
    for key in differ:
        print(f"{key}:\n  {args.ref}: {results['ref'][key]}\n  here: {results['here'].get(key)}")
    passes = sum(a.get("forward_passes", 0) for k, a in results["here"].items() if k != "next_edit")
    print(f"{len(tasks)} FIM tasks ({args.lines} lines, {args.blocks} blocks; {passes} forward passes) "
          f"and {args.edits} next-edit tasks: {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
