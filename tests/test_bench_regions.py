"""bench.regions: the cuts it makes, and a run end to end on the tiny model."""
import json
import random

from bench.regions import CONTEXT_LINES, MIN_GAP_LINES, cut_job, cut_jobs, main

SOURCE = "".join(f"    value_{i} = compute(value_{i - 1}, {i})\n" for i in range(200))


def test_a_cut_hides_whole_lines_that_put_back_give_the_window():
    cut = cut_job("f.py", SOURCE, 4, random.Random(3))
    assert len(cut.pieces) == 5 and len(cut.targets) == 4
    rebuilt = "".join(piece + target for piece, target in zip(cut.pieces, cut.targets)) + cut.pieces[-1]
    assert rebuilt in SOURCE and rebuilt.count("\n") == CONTEXT_LINES
    assert all(piece.endswith("    ") for piece in cut.pieces[:-1])  # each hole starts after its indent
    assert all(target.startswith("value_") and "\n" not in target for target in cut.targets)
    gaps = [piece.count("\n") for piece in cut.pieces[1:-1]]
    assert all(gap > MIN_GAP_LINES for gap in gaps)


def test_files_too_short_for_the_holes_give_no_job():
    assert cut_job("f.py", "x = 1\n", 2, random.Random(0)) is None
    assert cut_jobs([("f.py", "x = 1\n")], 2, 3, 0) == []


def test_a_run_on_the_tiny_model_reports_both_sides(tmp_path, tiny_model_dir, capsys):
    source = tmp_path / "values.py"
    source.write_text(SOURCE)
    assert main(["--files", str(source), "--holes", "2", "--count", "2", "--model", str(tiny_model_dir),
                 "--weights", "fp32", "--json"]) == 0
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report["joint"]["holes"] == report["separate"]["holes"] == 4
    assert report["speedup"] > 0 and report["joint"]["forward_passes"] >= 1
