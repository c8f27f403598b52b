"""Damaged and hostile model folders (issue 43, finding 8 and the tokenizer of finding 12), through
the real `infill doctor` and `python -m engine` command lines as processes, and through `diagnose`
for the rarer damages: a shard cut short, wrong JSON types, zero heads, a million layers, config
files that are a FIFO or a link to /dev/zero, an oversized tokenizer.json. Each is one FAIL line
(doctor) or one line and exit status 2 (serve), never a traceback, and no process waits for ever:
every run is bounded by a generous timeout, which only a hang reaches."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli import doctor
from infill.folder_files import TOKENIZER_CAP_BYTES
from infill.paths import REPO_ROOT
from infill.tiny import write_tiny

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
HANG_S = 120  # far past any run here: reached only by a process that blocks for ever
SHARD = "model-00002-of-00002.safetensors"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return write_tiny("coda", tmp_path_factory.mktemp("hostile") / "coda")


@pytest.fixture
def folder(tiny, tmp_path) -> Path:
    return Path(shutil.copytree(tiny, tmp_path / "model"))


def set_field(key: str, value, **more):
    def change(folder: Path) -> None:
        raw = json.loads((folder / "config.json").read_text())
        raw.update({key: value, **more})
        (folder / "config.json").write_text(json.dumps(raw))
    return change


def truncate_shard(folder: Path) -> None:
    path = folder / SHARD
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def fifo(name: str):
    def change(folder: Path) -> None:
        (folder / name).unlink(missing_ok=True)
        os.mkfifo(folder / name)
    return change


def dev_zero(name: str):
    def change(folder: Path) -> None:
        (folder / name).unlink(missing_ok=True)
        os.symlink("/dev/zero", folder / name)
    return change


def oversized_tokenizer(folder: Path) -> None:
    with open(folder / "tokenizer.json", "r+b") as file:  # sparse: no disk, and never read
        file.truncate(TOKENIZER_CAP_BYTES + 1)


# name: (how the folder is damaged, the check that fails, what its line says)
DAMAGES = {
    "truncated shard": (truncate_shard, "weights", f"{SHARD} (weights) is damaged"),
    "hidden size a string": (set_field("hidden_size", "big"), "fields", "hidden_size is 'big', not a whole number"),
    "layers a list": (set_field("num_hidden_layers", [2]), "fields", "num_hidden_layers is [2], not a whole number"),
    "zero heads": (set_field("num_attention_heads", 0), "fields", "num_attention_heads is 0"),
    "zero key/value heads": (set_field("num_key_value_heads", 0), "fields", "num_kv_heads 0 is outside"),
    "a million layers": (set_field("num_hidden_layers", 10**6), "fields", "num_layers 1,000,000 is outside"),
    "config a FIFO": (fifo("config.json"), "config", "config.json (the model's config) is a FIFO"),
    "config /dev/zero": (dev_zero("config.json"), "config", "config.json (the model's config) is a character device"),
    "generation config a FIFO": (fifo("generation_config.json"), "tokenizer", "generation_config.json"),
    "tokenizer config /dev/zero": (dev_zero("tokenizer_config.json"), "tokenizer", "is a character device"),
    "tokenizer a FIFO": (fifo("tokenizer.json"), "tokenizer", "tokenizer.json (the tokenizer) is a FIFO"),
    "tokenizer over its cap": (oversized_tokenizer, "tokenizer", f"more than the {TOKENIZER_CAP_BYTES:,}"),
    "tokenizer past the embedding": (set_field("vocab_size", 100), "tokenizer", "config.json gives the model 100 "
                                                                                 "embedding rows"),
    "adapter config a FIFO": (fifo("adapter_config.json"), "weights", "adapter_config.json (LoRA adapter config) "
                                                                      "is a FIFO"),
    "rope scaling a list": (set_field("rope_scaling", [1]), "fields", "rope_scaling is [1], not an object"),
    "architectures a number": (set_field("architectures", 5), "family", "architectures is 5, not a list"),
    "mask id a string": (set_field("mask_token_id", "x"), "tokenizer", "mask_token_id is x, not a token id"),
    # Inside every cap, but about 10^14 parameters: more than any machine has; nothing is built.
    "weights past memory": (set_field("num_hidden_layers", 1024, hidden_size=65536, intermediate_size=2**20),
                            "memory", "but cpu has"),
}
# What serve says where its line differs from doctor's, or where only serve reads the file.
SERVE_SAYS = {"decoder a FIFO": (fifo("decoder.json"), None, "decoder.json (the decoder's settings) is a FIFO"),
              "weights past memory": (DAMAGES["weights past memory"][0], None, "GiB free on cpu: pass a smaller")}
BY_DOCTOR = ["truncated shard", "hidden size a string", "zero heads", "config a FIFO", "config /dev/zero",
             "a million layers", "tokenizer over its cap"]
BY_SERVE = ["truncated shard", "layers a list", "zero heads", "config a FIFO", "tokenizer config /dev/zero",
            "a million layers", "decoder a FIFO", "weights past memory"]


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=REPO_ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=HANG_S)


@pytest.mark.parametrize("case", BY_DOCTOR)
def test_infill_doctor_gives_each_damage_its_fail_line(folder, case):
    breaking, check, says = DAMAGES[case]
    breaking(folder)
    done = run(["-m", "cli", "doctor", str(folder), "--device", "cpu", "--no-completion"])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and failed[0].startswith(f"FAIL  {check}: ") and says in failed[0], done.stdout
    assert done.stdout.splitlines()[-1] == f"{folder}: 1 problem(s)"


@pytest.mark.parametrize("case", [c for c in DAMAGES if c not in BY_DOCTOR])
def test_rarer_damages_are_one_fail_line_too(folder, case):
    breaking, check, says = DAMAGES[case]
    breaking(folder)
    report = doctor.diagnose(folder, "cpu", "fp32", complete=False)
    failed = [line for line in report.lines if line.startswith("FAIL")]
    assert len(failed) == 1 and failed[0].startswith(f"FAIL  {check}: ") and says in failed[0], report.lines


@pytest.mark.parametrize("case", BY_SERVE)
def test_serve_refuses_a_damaged_folder_in_one_line(folder, case):
    breaking, _, says = {**DAMAGES, **SERVE_SAYS}[case]
    breaking(folder)
    done = run(["-m", "engine", "--model", str(folder), "--bind", "tcp://127.0.0.1:0", "--weights", "fp32"])
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("python -m engine: error: ") and says in last, done.stderr[-2000:]


def test_each_line_is_written_as_its_check_ends(folder, monkeypatch):
    """The static checks' lines are out before the device is even looked at, so that a later
    check that takes long, or fails badly, never hides them."""
    out, seen = io.StringIO(), []
    real = doctor.resolve

    def resolve(device: str, dtype: str):
        seen.append(out.getvalue())
        return real(device, dtype)

    monkeypatch.setattr(doctor, "resolve", resolve)
    report = doctor.diagnose(folder, "cpu", "fp32", complete=False, out=out)
    assert report.failed == 0 and out.getvalue().splitlines() == report.lines
    assert seen and seen[0].splitlines()[-1].startswith("ok    fields: ")
