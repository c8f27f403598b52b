"""Tests of lsp_server.workspace: which files of the workspace are read for the index."""
from __future__ import annotations

import os

from lsp_server.workspace import WORKSPACE_MAX_FILE_BYTES, scan_workspace


def test_scan_workspace_skips_hidden_and_generated_folders(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("def alpha():\n    pass\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "b.js").write_text("function beta() {}\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "c.py").write_text("def gamma(): pass\n")
    (tmp_path / "notes.txt").write_text("def delta(): pass\n")
    (tmp_path / "latin1.py").write_bytes(b"x = '\xe9'\n")
    scanned = scan_workspace(tmp_path)
    assert [(uri.rsplit("/", 1)[-1], [d.name for d in found]) for uri, found in scanned] == [("a.py", ["alpha"])]


def test_scan_workspace_reads_regular_files_inside_the_workspace_only(tmp_path):
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.py").write_text("def secret():\n    pass\n")
    (workspace / "a.py").write_text("def alpha():\n    pass\n")
    (workspace / "inner.py").symlink_to(workspace / "a.py")  # a link that stays inside is read
    (workspace / "leak.py").symlink_to(outside / "secret.py")
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    os.mkfifo(workspace / "fifo.py")  # reading it would wait for a writer forever
    (workspace / "zero.py").symlink_to("/dev/zero")
    (workspace / "big.py").write_text("def big():\n    pass\n" + "#" * WORKSPACE_MAX_FILE_BYTES)
    scanned = scan_workspace(workspace)
    names = sorted(d.name for _, found in scanned for d in found)
    assert names == ["alpha", "alpha"]
