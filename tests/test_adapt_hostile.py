"""`infill adapt` pointed at hostile or careless folders (issue 43): output folders that are not
its own, repositories with files it must skip (empty, binary, duplicate, a loop, a pipe, a name
that is not UTF-8, a sparse 2 GB file), a repository whose git config names a command, and a
planted pickle in the run folder. Real folders and real git; each run is bounded by a step budget,
and nothing here asserts a duration."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import training.adapt as adapt_module
from training.adapt import main
from training.repo_files import gather

from tests.test_adapt import GEOMETRY as ONE_GEOMETRY
from tests.test_repo_files import write

pytestmark = pytest.mark.timeout(240)

GEOMETRY = ONE_GEOMETRY * 3
REPORT = '''from geometry import rectangle_area, square_area


def report(sides):
    for side in sides:
        print(side, square_area(side))
''' * 3
MAX_CHILD_RSS_MB = 300  # the child's peak (VmHWM; about 40 MB); reading a 2 GB file whole would take over 2,000


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write(root, "geometry.py", GEOMETRY)
    write(root, "report.py", REPORT)
    return root


def argv(repo, out, base, *extra) -> list[str]:
    """A run bounded by one step of a small batch: what it trains never depends on the machine's speed."""
    return [str(repo), "--out", str(out), "--base", str(base), "--minutes", "5", "--steps", "1", "--seq-len", "128",
            "--batch", "4", "--replay-share", "0", "--threads", "1", *extra]


def refused(capsys, args, says: str) -> None:
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("infill adapt: ") and "\n" not in err and says in err, err


def listing(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_an_out_folder_that_adapt_did_not_write_is_refused_and_left_whole(tiny_model_dir, repo, tmp_path, capsys):
    mine = tmp_path / "mine"
    write(mine, "important.txt", "keep me\n")
    models = tmp_path / "models"
    write(models, "other/adapt.json", json.dumps({"base": "b", "config": {}, "data": {}}))
    base_before, repo_before = listing(tiny_model_dir), listing(repo)
    cases = [(mine, "is not a model folder infill adapt wrote"), (models, "is not a model folder infill adapt wrote"),
             (repo, "is the repository"), (repo / "models", "is inside the repository"),
             (tmp_path, "holds the repository"), (tiny_model_dir, "is the base model folder"),
             (tiny_model_dir / "adapted", "is inside the base model folder")]
    for out, says in cases:
        refused(capsys, argv(repo, out, tiny_model_dir), says)
    assert listing(mine) == {"important.txt": b"keep me\n"} and listing(tiny_model_dir) == base_before
    assert listing(repo) == repo_before and sorted(p.name for p in tmp_path.iterdir()) == ["mine", "models", "repo"]


def test_a_file_of_the_users_in_an_adapted_folder_keeps_it_from_being_replaced(tiny_model_dir, repo, tmp_path,
                                                                              capsys):
    out = tmp_path / "adapted"
    assert main(argv(repo, out, tiny_model_dir)) == 0
    assert "MODEL_CARD.md" in json.loads((out / "adapt.json").read_text())["files"]
    write(out, "notes.txt", "mine\n")
    refused(capsys, argv(repo, out, tiny_model_dir), "did not write there (notes.txt)")
    assert (out / "notes.txt").read_text() == "mine\n"
    (out / "notes.txt").unlink()
    assert main(argv(repo, out, tiny_model_dir, "--steps", "2")) == 0  # adapt's own folder is replaced
    assert json.loads((out / "adapt.json").read_text())["steps"] == 2


def test_out_dot_is_the_folder_it_names(tiny_model_dir, repo, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    refused(capsys, argv(repo, ".", tiny_model_dir), f"--out {repo} is the repository")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    monkeypatch.chdir(fresh)
    assert main(argv(repo, ".", tiny_model_dir)) == 0
    assert (fresh / "model.safetensors").is_file() and (tmp_path / "fresh.partial").is_dir()


def test_ctrl_c_while_saving_leaves_the_previous_model_and_no_temporary_folder(tiny_model_dir, repo, tmp_path,
                                                                              capsys, monkeypatch):
    out = tmp_path / "adapted"
    assert main(argv(repo, out, tiny_model_dir)) == 0
    previous = load_file(str(out / "model.safetensors"))

    def cut_while_saving(model, folder, dtype):
        (folder / "model.safetensors").write_bytes(b"\0" * 1_000_000)
        raise KeyboardInterrupt

    monkeypatch.setattr(adapt_module, "save_model", cut_while_saving)
    capsys.readouterr()
    assert main(argv(repo, out, tiny_model_dir, "--steps", "2")) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("infill adapt: interrupted;")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapted", "adapted.partial", "repo"]
    now = load_file(str(out / "model.safetensors"))
    assert all(torch.equal(previous[k], now[k]) for k in previous)


def project_like(root, with_git: bool):
    """A tree laid out as this project is: packages with empty `__init__.py`, tests, a virtual
    environment and a work folder that `.gitignore` leaves out, a binary `.py` and a copied module."""
    write(root, ".gitignore", ".venv/\nwork/\n__pycache__/\n")
    write(root, "pyproject.toml", "[project]\nname = 'shapes'\n")
    write(root, "shapes/__init__.py", "")
    write(root, "shapes/geometry.py", GEOMETRY)
    write(root, "shapes/report.py", REPORT)
    write(root, "shapes/vendored/__init__.py", "")
    write(root, "shapes/vendored/geometry_copy.py", GEOMETRY)
    write(root, "shapes/blob.py", b"\x89PNG\r\n\x1a\n\0\0\0" * 20)
    write(root, "tests/test_geometry.py", "from shapes.geometry import square_area\n\n\n"
                                          "def test_square():\n    assert square_area(2) == 4\n")
    write(root, ".venv/lib/site.py", GEOMETRY.replace("area", "venv"))
    write(root, "work/adapted/notes.py", REPORT.replace("report", "work"))
    if with_git:
        git(root, "init", "-q")
        git(root, "add", "shapes", "pyproject.toml", ".gitignore")


@pytest.mark.parametrize("with_git", [pytest.param(True, marks=needs_git), False], ids=["git", "walk"])
def test_a_project_with_skipped_files_adapts_and_its_card_says_what_was_skipped(tiny_model_dir, tmp_path, capsys,
                                                                               with_git):
    root = tmp_path / "project"
    project_like(root, with_git)
    out = tmp_path / "adapted"
    assert main(argv(root, out, tiny_model_dir)) == 0
    record = json.loads((out / "adapt.json").read_text())
    assert record["data"]["files"] == 3  # geometry, report, the test
    assert record["data"]["skipped"] == {"too short": 2, "binary": 1, "duplicate": 1}
    card = (out / "MODEL_CARD.md").read_text()
    assert "(skipped: 2 too short, 1 binary, 1 duplicate)" in card and "{" not in card
    assert "(skipped: 2 too short, 1 binary, 1 duplicate)" in capsys.readouterr().err


def test_loops_pipes_and_names_that_are_not_utf8_are_skipped_by_name(tiny_model_dir, repo, tmp_path, capsys):
    os.symlink("loop.py", repo / "loop.py")
    os.mkfifo(repo / "pipe.py")
    with open(os.fsencode(repo) + b"/caf\xe9.py", "w") as handle:
        handle.write(REPORT.replace("report", "cafe"))
    out = tmp_path / "adapted"
    assert main(argv(repo, out, tiny_model_dir)) == 0
    err = capsys.readouterr().err
    assert "skipped caf\\xe9.py: name not utf-8" in err and "skipped loop.py: symlink loop" in err
    assert json.loads((out / "adapt.json").read_text())["data"]["skipped"] == {
        "name not utf-8": 1, "symlink loop": 1, "not a regular file": 1}


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak memory from Linux's /proc")
def test_a_sparse_2gb_file_is_skipped_from_its_size_without_reading_it(repo):
    huge = repo / "huge.py"
    with open(huge, "wb") as handle:
        handle.truncate(2 * 1024 ** 3)  # sparse: nothing on the disk
    probe = ("import json, sys\nfrom training.repo_files import gather\n"
             "g = gather(sys.argv[1])\n"
             "peak = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
             "print(json.dumps([dict(g.skipped), int(peak.split()[1]) // 1024]))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(repo)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    skipped, peak_mb = json.loads(done.stdout)
    assert skipped == {"too large": 1} and peak_mb < MAX_CHILD_RSS_MB


@needs_git
def test_the_repositorys_fsmonitor_command_never_runs(repo, tmp_path):
    marker = tmp_path / "fsmonitor-ran"
    git(repo, "init", "-q")
    git(repo, "add", "geometry.py")
    hook = repo / ".git" / "watch.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    assert [f.path for f in gather(repo).files] == ["geometry.py", "report.py"]
    assert not marker.exists()


class Payload:
    """A pickle that makes a folder when it is loaded."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


@pytest.mark.parametrize("name", ["state.pt", "state.safetensors"])
def test_a_planted_pickle_in_the_run_folder_never_runs(tiny_model_dir, repo, tmp_path, capsys, name):
    out, marker = tmp_path / "adapted", tmp_path / "pickle-ran"
    write(tmp_path, f"adapted.partial/{name}", pickle.dumps(Payload(marker)))
    assert main(argv(repo, out, tiny_model_dir)) == 0
    assert not marker.exists()
    record = json.loads((out / "adapt.json").read_text())
    assert (record["sessions"], record["steps"]) == (1, 1)  # started over
    says = "is not resumed (it cannot be read as a state" if name == "state.safetensors" else "is never loaded"
    assert says in capsys.readouterr().err


def forged_progress(tensors, meta):
    meta["progress"] = ["one", 0.0, None, 1]


def forged_shape(tensors, meta):
    name = next(n for n in tensors if n.startswith("model/"))
    tensors[name] = torch.zeros(3, 5, dtype=tensors[name].dtype)


@pytest.mark.parametrize("forge", [forged_progress, forged_shape], ids=["progress", "shape"])
def test_a_state_that_does_not_fit_the_run_starts_it_over(tiny_model_dir, repo, tmp_path, capsys, forge):
    out = tmp_path / "adapted"
    assert main(argv(repo, out, tiny_model_dir)) == 0
    path = tmp_path / "adapted.partial" / "state.safetensors"
    with safe_open(str(path), framework="pt") as handle:
        meta = json.loads(handle.metadata()["state"])
        tensors = {name: handle.get_tensor(name) for name in handle.keys()}
    forge(tensors, meta)  # the fingerprint still matches: only the contents are wrong
    save_file(tensors, str(path), metadata={"state": json.dumps(meta)})
    capsys.readouterr()
    assert main(argv(repo, out, tiny_model_dir, "--steps", "2")) == 0
    assert "is not resumed (it does not fit this run" in capsys.readouterr().err
    record = json.loads((out / "adapt.json").read_text())
    assert (record["sessions"], record["steps"]) == (1, 2)


def test_a_run_folder_that_is_a_link_is_refused(tiny_model_dir, repo, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "adapted.partial")
    refused(capsys, argv(repo, tmp_path / "adapted", tiny_model_dir), "is a link or not a folder")
    assert not any(elsewhere.iterdir()) and not (tmp_path / "adapted").exists()


def test_the_default_out_in_infills_work_folder_may_be_inside_the_repository(tiny_model_dir, repo, capsys,
                                                                             monkeypatch):
    monkeypatch.setenv("INFILL_WORK", str(repo / "work"))  # infill's checkout adapted to itself: `infill adapt .`
    args = argv(repo, "unused", tiny_model_dir)
    del args[1:3]  # no --out
    assert main(args) == 0
    assert (repo / "work" / "adapted" / "repo" / "model.safetensors").is_file()
    refused(capsys, argv(repo, repo / "models", tiny_model_dir), "is inside the repository")
    refused(capsys, argv(repo, repo / "work", tiny_model_dir), "run folder")  # work.partial: outside the work folder
