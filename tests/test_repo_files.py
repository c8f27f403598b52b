"""Which files of a repository `infill adapt` learns from, and what it skips (training.repo_files)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from training.repo_files import RepoError, gather

CODE = "import os\n\n\ndef area(width, height):\n    return width * height\n"


def write(root, path, content):
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write(root, "pkg/geometry.py", CODE)
    write(root, "pkg/shapes.py", CODE.replace("area", "perimeter").replace("*", "+"))
    write(root, "pkg/notes.txt", "not source\n" * 5)
    write(root, "build/out.py", CODE.replace("area", "built"))
    write(root, ".gitignore", "build/\n*_pb2.py\n")
    write(root, "pkg/api_pb2.py", CODE.replace("area", "generated_area"))
    return root


def paths(gathered):
    return [f.path for f in gathered.files]


def test_a_walk_honours_gitignore_and_reads_only_source(repo):
    gathered = gather(repo)
    assert paths(gathered) == ["pkg/geometry.py", "pkg/shapes.py"]
    assert gathered.files[0].text == CODE


def test_languages_and_exclude_globs_narrow_the_files(repo):
    write(repo, "web/app.js", "function area(w, h) {\n  return w * h;\n}\n")
    assert "web/app.js" in paths(gather(repo))
    assert "web/app.js" not in paths(gather(repo, languages=("python",)))
    gathered = gather(repo, exclude=["pkg/shapes.py"], languages=("python",))
    assert paths(gathered) == ["pkg/geometry.py"] and gathered.skipped["excluded"] == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_checkout_is_read_through_git_ls_files(repo):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "pkg/geometry.py"], check=True)
    write(repo, "pkg/new.py", CODE.replace("area", "volume"))  # untracked, not ignored: listed
    assert paths(gather(repo)) == ["pkg/geometry.py", "pkg/new.py", "pkg/shapes.py"]


def test_bad_files_are_skipped_and_counted(repo, tmp_path):
    write(repo, "pkg/blob.py", b"\x00\x01\x02\n" * 10)
    write(repo, "pkg/latin.py", "name = 'caf\xe9'\nx = 1\ny = 2\n".encode("latin-1"))
    write(repo, "pkg/huge.py", "x = 1\n" * 60_000)
    write(repo, "pkg/zz_copy.py", CODE)
    outside = tmp_path / "secret.py"
    outside.write_text(CODE.replace("area", "secret"))
    os.symlink(outside, repo / "pkg" / "link.py")
    gathered = gather(repo)
    assert paths(gathered) == ["pkg/geometry.py", "pkg/shapes.py"]
    assert gathered.skipped == {"binary": 1, "not utf-8": 1, "too large": 1, "duplicate": 1,
                                "symlink out of the repository": 1}


def test_the_total_cap_keeps_what_fits(repo):
    gathered = gather(repo, max_bytes=len(CODE) + 10)
    assert len(gathered.files) == 1 and gathered.skipped["over the repository's size cap"] == 1


def test_a_path_that_is_not_a_folder_or_holds_no_source_is_refused(repo, tmp_path):
    with pytest.raises(RepoError, match="is not a folder"):
        gather(repo / "pkg" / "geometry.py")
    with pytest.raises(RepoError, match="is not a folder"):
        gather(tmp_path / "missing")
    empty = tmp_path / "empty"
    write(empty, "README.md", "# nothing here\n")
    write(empty, "blob.py", b"\x00" * 100)
    with pytest.raises(RepoError, match=r"holds no source file.*1 binary"):
        gather(empty)
