"""The scripts whose figures the README cites, run whole on small inputs: `bench.next_edit_drafts`
(in process, the bundled model), `bench.upstream_check` (a fake worker and the gateway over it) and
`scripts/check_identity.py` (this tree against its own commit)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gateway_procs import Gateway
from infill.paths import REPO_ROOT
from tests.test_bench_next_edit import fake_tasks

FIM_TASKS = [{"task_id": f"t/{i}", "prompt": f"def f{i}(x):\n    y = x + {i}\n", "suffix": "\n    return y\n",
              "canonical_solution": "    y = y * 2\n"} for i in range(3)]
EVAL_DATA = REPO_ROOT.parent / "shared" / "data" / "human-eval-infilling"


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_next_edit_drafts_scores_the_rules_the_model_and_each_veto(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in fake_tasks()))
    done = subprocess.run([sys.executable, "-m", "bench.next_edit_drafts", "--tasks", str(tasks), "--veto", "0",
                           "0.9", "--threads", "1", "--json"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = last_json(done.stdout)
    overall = figures["overall"]
    assert figures["tasks"] == 2 and set(overall) >= {"rules", "model", "veto 0", "veto 0.9"}
    assert overall["rules"]["exact"] == 1.0 and overall["rules"]["false_edits_negatives"] == 0.0
    assert overall["veto 0"]["passes_per_job"] == 0.0  # whole drafts that stand take no pass
    assert overall["veto 0.9"]["passes_per_job"] == 1.0  # a veto scores each drafted token in one pass
    assert overall["model"]["passes_per_job"] > 1.0  # the model alone denoises every region


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_upstream_check_finds_the_gateway_answers_as_its_worker(tmp_path, fake_worker_at):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in FIM_TASKS))
    gateway = Gateway(["--worker", fake_worker_at, "--deadline-ms", "20000"])
    try:
        done = subprocess.run([sys.executable, "-m", "bench.upstream_check", "--worker", fake_worker_at,
                               "--backend", gateway.url, "--tasks", str(tasks), "--limit", "3", "--cancels", "2",
                               "--json"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=280)
    finally:
        gateway.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    figures = last_json(done.stdout)
    assert figures["same"] == 1.0 and figures["failed"] == 0, figures
    assert figures["cancel_max_ms"] is not None  # both cancels reached the stalled server


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(not EVAL_DATA.is_dir(), reason="shared/data is not beside this checkout (its FIM tasks)")
def test_check_identity_finds_this_tree_the_same_as_its_own_commit():
    done = subprocess.run([sys.executable, "scripts/check_identity.py", "--ref", "HEAD", "--lines", "1",
                           "--blocks", "1", "--edits", "2"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=580)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
