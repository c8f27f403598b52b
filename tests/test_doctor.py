"""`infill doctor` on each tiny family layout and the bundled model (every check passes), and on
broken folders (one line that says what is wrong and what to do); `infill serve`'s start line."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.doctor import diagnose, main, summary_line
from infill.paths import bundled_model_dir
from infill.tiny import write_tiny

FAMILIES = ["dream", "diffucoder", "open-dcoder", "coda", "llada"]


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("doctor")
    return {family: write_tiny(family, root / family) for family in FAMILIES}


def edit_json(path: Path, change) -> None:
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_check_passes_on_each_published_layout(tiny_dirs, family, capsys):
    assert main([str(tiny_dirs[family]), "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    names = [line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith("ok")]
    assert names == ["config", "family", "diffusion", "weights", "tokenizer", "snippets", "fields", "device",
                     "dtype", "memory", "completion"]
    assert "FAIL" not in out and "every check passed" in out
    assert f"family: {'dream' if family == 'diffucoder' else family} (" in out
    assert "pieces" in out  # the round trip was checked against the family's split


def test_every_check_passes_on_the_bundled_model():
    report = diagnose(bundled_model_dir(), "cpu", "fp32")
    assert report.failed == 0 and any(line.startswith("ok    completion:") for line in report.lines)


def break_disagree(folder: Path) -> None:
    lines = (folder / "merges.txt").read_text().splitlines()
    (folder / "merges.txt").write_text("\n".join(lines[:1] + lines[200:]) + "\n")


def break_specials(folder: Path) -> None:
    for name in ("config.json", "generation_config.json"):
        edit_json(folder / name, lambda raw: raw.pop("mask_token_id", None))

    def drop(settings):
        settings.pop("mask_token")
        settings["added_tokens_decoder"] = {i: e for i, e in settings["added_tokens_decoder"].items()
                                            if e["content"] != "<|mask|>"}

    edit_json(folder / "tokenizer_config.json", drop)
    (folder / "special_tokens_map.json").unlink()


def break_class(folder: Path) -> None:
    edit_json(folder / "tokenizer_config.json", lambda s: s.update(tokenizer_class="LlamaTokenizer"))


def break_autoregressive(folder: Path) -> None:
    for name in ("config.json", "generation_config.json"):
        edit_json(folder / name, lambda raw: raw.pop("mask_token_id", None))
    edit_json(folder / "tokenizer_config.json", lambda s: s.pop("mask_token"))


def break_shards(folder: Path) -> None:
    (folder / "model-00002-of-00002.safetensors").unlink()


BROKEN = {  # name: (family copied, how it is broken, the check that fails, what its line says)
    "layouts disagree": ("open-dcoder", break_disagree, "tokenizer",
                         "tokenizer.json and vocab.json + merges.txt disagree"),
    "no mask token": ("dream", break_specials, "tokenizer", "no mask token"),
    "unknown class": ("dream", break_class, "tokenizer", "names tokenizer_class 'LlamaTokenizer'"),
    "autoregressive": ("open-dcoder", break_autoregressive, "diffusion", "plain autoregressive qwen2 model"),
    "shards missing": ("coda", break_shards, "weights", "model-00002-of-00002.safetensors; the download is incomplete"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_each_broken_folder_gets_one_line_saying_what_to_do(tiny_dirs, tmp_path, case):
    family, breaking, check, says = BROKEN[case]
    folder = Path(shutil.copytree(tiny_dirs[family], tmp_path / "model"))
    breaking(folder)
    report = diagnose(folder, "cpu", "fp32")
    failed = [line for line in report.lines if line.startswith("FAIL")]
    assert report.failed == 1 and len(failed) == 1, report.lines
    assert failed[0].startswith(f"FAIL  {check}: ") and says in failed[0] and "\n" not in failed[0]
    assert str(folder) in failed[0]  # names the folder or the file
    assert says in summary_line(folder, "cpu", "fp32")


def test_a_device_the_machine_lacks_is_one_line(tiny_dirs, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    report = diagnose(tiny_dirs["dream"], "cuda", "bf16")
    [failed] = [line for line in report.lines if line.startswith("FAIL")]
    assert failed.startswith("FAIL  device: ") and "--device cpu" in failed


def test_a_dtype_the_device_cannot_do_says_which_to_pass(tiny_dirs, monkeypatch):
    import torch

    from cli import doctor

    real = torch.ones

    def no_half(*args, dtype=None, **kwargs):
        if dtype is torch.float16:
            raise RuntimeError('"addmm_impl_cpu_" not implemented for \'Half\'')
        return real(*args, dtype=dtype, **kwargs)

    monkeypatch.setattr(doctor, "resolve", lambda device, dtype: ("cpu", dtype))
    monkeypatch.setattr(torch, "ones", no_half)
    report = diagnose(tiny_dirs["dream"], "cpu", "fp16", complete=False)
    [failed] = [line for line in report.lines if line.startswith("FAIL")]
    assert failed.startswith("FAIL  dtype: cpu cannot compute in fp16") and "--dtype fp32" in failed


def test_serve_start_line_names_family_tokenizer_and_fields(tiny_dirs):
    line = summary_line(tiny_dirs["dream"], "cpu", "fp32")
    assert "dream (model_type 'Dream', qwen2 layout)" in line and "(class DreamTokenizer)" in line
    assert "'num_hidden_layers': 2" in line and "on cpu in fp32" in line and "\n" not in line


def test_serve_logs_the_summary_and_refuses_a_broken_folder_in_one_line(tiny_dirs, tmp_path, capsys):
    from engine.worker.cli import main as serve
    from engine.worker.cli import startup_summary
    from infill.serving import open_tokenizer

    line = startup_summary(tiny_dirs["llada"], open_tokenizer(tiny_dirs["llada"]), "cpu", "fp32")
    assert "family llada (model_type 'llada', llada layout)" in line and "begin [" in line and "\n" not in line
    for case in ("no mask token", "unknown class", "layouts disagree"):
        family, breaking, _, says = BROKEN[case]
        folder = Path(shutil.copytree(tiny_dirs[family], tmp_path / case.replace(" ", "-")))
        breaking(folder)
        with pytest.raises(SystemExit) as stopped:
            serve(["--model", str(folder), "--bind", "tcp://127.0.0.1:0", "--weights", "fp32"], prog="infill serve")
        assert stopped.value.code == 2
        assert says in capsys.readouterr().err.splitlines()[-1]
