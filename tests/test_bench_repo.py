"""bench.repo: the split by file, the holes, the cross-file subset, the snippet index that never
holds another held-out file, and whole runs on a tiny repository written into tmp_path (a tiny
random model for the fast ones, the bundled model for the slow one)."""
from __future__ import annotations

import json
import random
import shutil
import uuid

import pytest

from bench import repo
from completion import fim
from infill.paths import bundled_model_dir
from training.repo_files import RepoFile

SHAPES = '''\
"""Shapes and their areas."""


class Rectangle:
    def __init__(self, width, height):
        self.width = width
        self.height = height

    def area(self):
        return self.width * self.height


def scaled_rectangle(rect, factor):
    """A rectangle `factor` times as large on each side."""
    return Rectangle(rect.width * factor, rect.height * factor)
'''
REPORT = '''\
from shapes import scaled_rectangle


def local_helper(rect):
    return rect.width + rect.height + 1


def describe_rectangle(rect):
    bigger = scaled_rectangle(rect, 2)
    padded_total = local_helper(rect) * 2
    return f"{rect.width}x{rect.height} -> {bigger.area()} ({padded_total})"
'''
UTIL = '''\
def clamp_value(value, lowest, highest):
    """The value, no lower than lowest and no higher than highest."""
    return max(lowest, min(highest, value))


def mean_of_values(values):
    return sum(values) / len(values)
'''
CLI = '''\
import sys

from report import describe_rectangle
from shapes import Rectangle


def main(argv):
    rects = [Rectangle(int(a), int(b)) for a, b in zip(argv[::2], argv[1::2])]
    print("\\n".join(describe_rectangle(rect) for rect in rects))
    return 0
'''
SHORT_LINES = "".join(f"v{i} = {i}\n" for i in range(60))  # a file with no line worth predicting
FILES = {"shapes.py": SHAPES, "report.py": REPORT, "util.py": UTIL, "cli.py": CLI}


def write_repo(root, files=FILES):
    root.mkdir(exist_ok=True)
    for path, text in files.items():
        (root / path).write_text(text)
    return root


def repo_files(count: int) -> list[RepoFile]:
    return [RepoFile(f"pkg/module_{i}.py", f"value_{i} = {i}\n") for i in range(count)]


def test_the_split_is_by_file_deterministic_and_blind_to_the_order_files_come_in():
    files = repo_files(20)
    split = repo.split_files(files, 0.25, seed=7)
    shuffled = random.Random(1).sample(files, len(files))
    assert repo.split_files(shuffled, 0.25, seed=7) == split
    assert len(split.held_out) == 5 and len(split.train) == 15
    assert {f.path for f in split.held_out}.isdisjoint(f.path for f in split.train)
    assert sorted(split.held_out + split.train, key=repo.path_of) == sorted(files, key=repo.path_of)
    others = {tuple(f.path for f in repo.split_files(files, 0.25, seed).held_out) for seed in range(5)}
    assert len(others) > 1, "the seed chooses the held-out files"


def test_a_hole_hides_whole_lines_and_leaves_the_rest_of_the_file_around_an_empty_line():
    file = RepoFile("report.py", REPORT)
    line = REPORT.splitlines().index("    bigger = scaled_rectangle(rect, 2)")
    hole = repo.hole_at(file, line, 3)
    assert hole.prefix + hole.expected + hole.suffix == REPORT
    assert hole.expected.splitlines()[0] == "    bigger = scaled_rectangle(rect, 2)"
    assert len(hole.expected.splitlines()) == 3 and hole.suffix.startswith("\n")
    assert hole.prefix.endswith("def describe_rectangle(rect):\n")


def test_holes_are_half_lines_half_blocks_distinct_and_seeded():
    files = [RepoFile(path, text) for path, text in FILES.items()]
    holes = repo.cut_holes(files, 6, seed=3)
    assert [h.lines for h in holes].count(1) == 3 and [h.lines for h in holes].count(3) == 3
    assert len({(h.path, h.line, h.lines) for h in holes}) == 6
    assert all(len(h.expected.splitlines()[0].strip()) >= repo.MIN_LINE_CHARS for h in holes)
    assert [(h.path, h.line) for h in repo.cut_holes(files, 6, seed=3)] == [(h.path, h.line) for h in holes]
    assert repo.cut_holes([RepoFile("x.py", "a = 1\n")], 4, seed=0) == []


def test_a_hole_is_cross_file_when_its_answer_uses_a_name_only_another_file_defines():
    index = repo.train_index([RepoFile("shapes.py", SHAPES), RepoFile("util.py", UTIL)])
    report = RepoFile("report.py", REPORT)
    lines = REPORT.splitlines()
    uses_shapes = repo.hole_at(report, lines.index("    bigger = scaled_rectangle(rect, 2)"), 1)
    uses_local = repo.hole_at(report, lines.index("    padded_total = local_helper(rect) * 2"), 1)
    repo.mark_cross_file([uses_shapes, uses_local], [report], index)
    assert uses_shapes.cross_file and not uses_local.cross_file


def test_a_name_the_holes_own_file_defines_too_is_not_cross_file():
    index = repo.train_index([RepoFile("util.py", UTIL)])
    mine = RepoFile("mine.py", UTIL.replace("max(lowest", "clamp_value(0, 0, 0) or max(lowest"))
    hole = repo.hole_at(mine, 2, 1)
    repo.mark_cross_file([hole], [mine], index)
    assert "clamp_value" in hole.expected and not hole.cross_file


def test_snippets_come_from_the_train_split_and_the_open_file_never_another_held_out_one():
    """`util.py` and `report.py` held out: report's hole may see shapes.py's definitions and its
    own, never util.py's (the index and the draft corpus are the train split's), and its own
    leave the index after."""
    workspace = repo.train_sources([RepoFile("shapes.py", SHAPES)])
    index = workspace.index
    assert repo.uri_of("shapes.py") in workspace.corpus and repo.uri_of("util.py") not in workspace.corpus
    text = REPORT.replace("local_helper(rect) * 2", "clamp_value(local_helper(rect), 0, 9)")
    line = text.splitlines().index("    bigger = scaled_rectangle(rect, 2)")
    hole = repo.hole_at(RepoFile("report.py", text), line, 1)
    asked = fim.hole_in_text(repo.uri_of(hole.path), hole.prefix, hole.suffix)
    with repo.opened(workspace, asked) as sources:
        planned = fim.plan(asked, repo.settings_for(1, True), sources, uuid.uuid4().hex, invoked=True)
        assert set(index.by_uri) == {repo.uri_of("shapes.py"), repo.uri_of("report.py")}
    snippets = " ".join(s.text for s in planned.window.snippets)
    assert "def scaled_rectangle(rect, factor)" in snippets and "def clamp_value" not in snippets
    assert set(index.by_uri) == {repo.uri_of("shapes.py")}
    bare = fim.plan(asked, repo.settings_for(1, False), sources, uuid.uuid4().hex, invoked=True)
    assert bare.window.snippets == []


def run_main(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = repo.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_scores_every_side_and_ends_with_one_json_line(tmp_path, tiny_model_dir, capsys, monkeypatch):
    adapted = shutil.copytree(tiny_model_dir, tmp_path / "adapted")
    root = write_repo(tmp_path / "repo")
    indexed, train_index = [], repo.train_index

    def recording_index(files):
        indexed.extend(f.path for f in files)
        return train_index(files)

    monkeypatch.setattr(repo, "train_index", recording_index)
    code, out, _ = run_main(capsys, "--repo", root, "--tasks", 4, "--seed", 1, "--base", tiny_model_dir,
                            "--adapted", adapted, "--threads", 1, "--json")
    assert code == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert set(summary["sides"]) == {*(model + side for model in ("base", "adapted")
                                       for side in ("", "+snippets", "+snippets+drafts")), "drafts"}
    assert summary["tasks"] == 4 and summary["single_line_tasks"] == summary["three_line_tasks"] == 2
    assert summary["split"]["held_out_count"] == 1 and summary["split"]["train_count"] == 3
    assert len(indexed) == 3 and not set(indexed) & set(summary["split"]["held_out_files"])
    assert summary["models"]["adapted"] == {"path": str(adapted), "trained_with_snippets": False,
                                            "snippets_in_canvas": True, "adapted_here": False,
                                            "adapt_minutes": None}
    assert summary["pass_at_1"] is None and summary["pass_at_1_reason"]
    for side, figures in summary["sides"].items():
        assert set(figures) == {*repo.GROUPS, "verify"}
        assert figures["overall"]["tasks"] == 4 and (figures["overall"]["forward_passes"] > 0) == (side != "drafts")
        assert (figures["verify"] is not None) == side.endswith(repo.WITH_SNIPPETS)
        assert {"answered", "drafted_share", "drafted_exact_match", "passes_per_answer"} <= set(figures["overall"])
    assert "base+snippets" in out and not (adapted / "adapt.json").exists(), "a plain model folder keeps its card"


@pytest.mark.parametrize("files, flags, said", [
    ({}, (), "holds no source file"),
    ({"notes.txt": "just text\n"}, (), "holds no source file"),
    ({"only.py": UTIL}, (), "leaves 1 held out and 0 to train on"),
    (FILES, ("--held-out", "1.5"), "--held-out must lie in (0, 1)"),
    ({"a.py": SHORT_LINES, "b.py": SHORT_LINES + "z = 0\n"}, ("--held-out", "0.5"), "no line of 12+ characters"),
])
def test_bad_input_exits_2_with_a_message(tmp_path, tiny_model_dir, capsys, files, flags, said):
    root = write_repo(tmp_path / "repo", files)
    code, _, err = run_main(capsys, "--repo", root, "--base", tiny_model_dir, "--adapted", tiny_model_dir, *flags)
    assert code == 2 and said in err and "Traceback" not in err


def test_a_folder_that_is_no_model_or_no_repository_exits_2(tmp_path, capsys):
    root = write_repo(tmp_path / "repo")
    code, _, err = run_main(capsys, "--repo", root, "--adapted", tmp_path)
    assert code == 2 and "is not a model folder" in err
    code, _, err = run_main(capsys, "--repo", tmp_path / "missing", "--adapted", bundled_model_dir())
    assert code == 2 and "is not a folder" in err


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_bundled_model_against_its_copy_on_cross_file_holes(tmp_path, capsys):
    adapted = shutil.copytree(bundled_model_dir(), tmp_path / "adapted")
    root = write_repo(tmp_path / "repo")
    code, out, _ = run_main(capsys, "--repo", root, "--tasks", 2, "--seed", 1, "--adapted", adapted, "--json")
    summary = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and summary["tasks"] == 2 and summary["split"]["held_out_files"] == ["cli.py"]
    assert summary["cross_file_tasks"] == 2, "cli.py's lines use the names report.py and shapes.py define"
    base, copy = summary["sides"]["base"], summary["sides"]["adapted"]
    assert base["overall"]["exact_match"] == copy["overall"]["exact_match"], "the same weights, the same answers"
    assert base["overall"]["tokens_per_pass"] == copy["overall"]["tokens_per_pass"]
    assert summary["sides"]["base+snippets"]["verify"]["forward_passes"] > 0


def test_a_run_that_adapts_records_its_figures_in_the_adapted_models_card(tmp_path, tiny_model_dir, capsys):
    root = write_repo(tmp_path / "repo")
    out = tmp_path / "adapted"
    code, out_text, err = run_main(capsys, "--repo", root, "--tasks", 2, "--base", tiny_model_dir, "--out", out,
                                   "--minutes", 0.1, "--steps", 2, "--threads", 1, "--json")
    assert code == 0, err
    summary = json.loads(out_text.strip().splitlines()[-1])
    assert summary["models"]["adapted"]["adapted_here"] and summary["models"]["adapted"]["path"] == str(out)
    record = json.loads((out / "adapt.json").read_text())
    assert record["data"]["files"] == summary["split"]["train_count"]
    assert record["held_out"]["held_out_files"] == summary["split"]["held_out_files"]
    assert "Held-out figures" in (out / "MODEL_CARD.md").read_text()
