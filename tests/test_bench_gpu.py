"""bench.gpu at tiny sizes on the CPU: every table is filled, the figures are consistent, and the
JSON object is the last line; scripts/gpu_check.sh runs it all in its tiny mode."""
import json
import os
import subprocess
import sys

import pytest
import torch

from bench import gpu


def test_tiny_gpu_bench_runs_on_the_cpu(capsys):
    assert gpu.main(["--tiny", "--device", "cpu", "--json"]) == 0
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    report = lines[-1]
    sections = [line["section"] for line in lines[:-1]]  # printed as each finished, before the whole
    assert sections == ["setup", "forward", "decoders", "implied", "copy_gb_s", "row_stats", "commit"]
    assert all(lines[sections.index(name)][name] == report[name] for name in sections[1:])
    assert [(r["requests"], r["positions"]) for r in report["commit"]] == [(1, 32), (32, 1024)]
    assert all(r["device_ms"] > 0 and r["cpu_ms"] > 0 for r in report["commit"])
    assert report["device"] == "cpu" and report["tiny"] and "forward latency" in out
    steps = {(r["model"], r["batch"], r["context"]) for r in report["forward"] if r["ms"] > 0}
    assert len(steps) == 2 * len(gpu.TINY["batches"]) * len(gpu.TINY["contexts"])  # both models, every size
    assert [d["decoder"] for d in report["decoders"]] == ["default", "verify-8"]
    for dec in report["decoders"]:
        assert dec["tasks"] == gpu.TINY["tasks"] and "error" not in dec
        assert dec["tokens_per_forward"] == round(dec["tokens"] / dec["forwards"], 3) > 0
    one = next(r for r in report["implied"] if r["batch"] == 2)
    assert abs(one["tokens_per_s_total"] - 2 * one["tokens_per_s_per_request"]) < 0.2  # both rounded
    assert {(r["vocab"], r["rows"]) for r in report["row_stats"]} == {(512, 4), (2048, 4)}
    assert all(r["faster"] in ("numba", "torch") and r["kernel_gb_s"] > 0 for r in report["row_stats"])


def test_cut_tasks_are_single_line_holes_of_this_repository():
    tasks = gpu.cut_tasks(5)
    assert len(tasks) == 5 and len({t["name"] for t in tasks}) == 5
    for task in tasks:
        assert "\n" not in task["reference"] and task["reference"].strip()
        assert task["suffix"].startswith("\n")
        path, line = task["name"].split(":")
        source = (gpu.PACKAGE_DIR / path).read_text().splitlines()
        assert task["prompt"].splitlines()[-1] + task["reference"] == source[int(line) - 1]


def test_cut_tasks_read_the_package_given(tmp_path):
    source = "def area(radius):\n    return 3.14159 * radius * radius\n"
    (tmp_path / "one.py").write_text(source)
    tasks = gpu.cut_tasks(3, tmp_path)
    assert [task["name"] for task in tasks] == ["one.py:2"]
    assert tasks[0]["prompt"] + tasks[0]["reference"] + tasks[0]["suffix"] == source


@pytest.mark.slow
def test_gpu_check_script_runs_tiny_on_the_cpu(tmp_path):
    root = gpu.Path(__file__).parents[1]
    env = os.environ | {"GPU_CHECK_TINY": "1", "OUT": str(tmp_path), "PYTHON": sys.executable}
    result = subprocess.run([str(root / "scripts" / "gpu_check.sh")], env=env, capture_output=True, text=True,
                            timeout=280)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert {p.name for p in tmp_path.iterdir()} == {"imports.txt", "env.txt", "pytest.txt", "bench.txt",
                                                   "bench.json", "summary.txt"}
    assert "missing (needed): none" in (tmp_path / "imports.txt").read_text()
    tests = (tmp_path / "pytest.txt").read_text()
    if torch.cuda.is_available():  # a GPU machine: the gpu tests run, and none may skip
        assert " passed" in tests and "skipped" not in tests and "failed" not in tests
    else:  # no CUDA here: every gpu test skips itself
        assert "skipped" in tests and " passed" not in tests
    assert json.loads((tmp_path / "bench.json").read_text())["tiny"] is True


@pytest.mark.slow
def test_a_cut_benchmark_leaves_its_finished_sections(tmp_path):
    """bench.gpu interrupted (SIGINT, as `timeout --signal=INT` sends) after some sections: the
    check's bench.json holds those, marked partial."""
    root = gpu.Path(__file__).parents[1]
    env = os.environ | {"GPU_CHECK_TINY": "1", "OUT": str(tmp_path), "PYTHON": sys.executable, "BENCH_TIMEOUT": "1",
                        "TESTS_TIMEOUT": "1"}
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bench_stub.py").write_text(
        "import json, sys, time\n"
        "print(json.dumps({'section': 'setup', 'setup': {'device': 'cpu', 'tiny': True}}), flush=True)\n"
        "print(json.dumps({'section': 'forward', 'forward': [{'ms': 1.0}]}), flush=True)\n"
        "time.sleep(30)\n")
    stub = tmp_path / "python"
    stub.write_text(f"#!/bin/sh\nif [ \"$1 $2\" = '-m bench.gpu' ]; "
                    f"then exec {sys.executable} {fake / 'bench_stub.py'}; fi\n"
                    f"exec {sys.executable} \"$@\"\n")
    stub.chmod(0o755)
    result = subprocess.run([str(root / "scripts" / "gpu_check.sh")], env=env | {"PYTHON": str(stub)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0  # the benchmark was cut
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["partial"] is True and report["forward"] == [{"ms": 1.0}] and report["tiny"] is True
