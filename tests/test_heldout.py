"""Held-out FIM tasks: whole lines hidden, prompt + middle + suffix give back the file's text."""
import json

from training.heldout import line_holes

TEXT = "".join(f"value_{i} = compute_something({i})\n" for i in range(30))


def test_holes_hide_whole_lines_and_keep_the_text(tmp_path):
    val = tmp_path / "val_files.jsonl"
    val.write_text(json.dumps({"path": "a.py", "text": TEXT}) + "\n")
    for lines in (1, 3):
        tasks = line_holes(val, 5, seed=0, lines_per_hole=lines)
        assert len(tasks) == 5
        for task in tasks:
            middle = task["canonical_solution"]
            assert middle.count("\n") == lines and middle.endswith("\n")
            assert task["prompt"] == "" or task["prompt"].endswith("\n")
            assert (task["prompt"] + middle + task["suffix"]) in TEXT
