"""`bench.next_edit_regions`: next edits judged region by region, in process."""
from __future__ import annotations

import json

from bench.next_edit_regions import main, region_counts
from tests.test_edit_canvas import RENAME_TASK

TASK = RENAME_TASK | {"task_id": "rename/0"}
NEGATIVE_TASK = TASK | {  # a local with no other use renamed: nothing else to change
    "task_id": "negative/0", "kind": "negative_rename",
    "original": "def f():\n    count = 1\n    return 0\n",
    "edited": "def f():\n    total = 1\n    return 0\n",
    "expected": "def f():\n    total = 1\n    return 0\n",
}


def test_regions_are_counted_as_changed_or_kept_and_right_or_not():
    currents = ["    print(count)\n", "    return count\n", "x = 1\n"]
    targets = ["    print(total)\n", "    return total\n", "x = 1\n"]
    answers = ["    print(total)\n", "    return total\n    return total\n", "x = 1\n"]
    counts = region_counts(currents, answers, targets)
    assert (counts["to_change"], counts["change_right"], counts["to_keep"], counts["keep_right"]) == (2, 1, 1, 1)
    assert counts["runs_on"] == 1 and counts["tasks_right"] == 0  # right up to its line count, then more
    assert region_counts(currents, targets, targets)["tasks_right"] == 1


def test_a_model_is_judged_on_every_region_of_each_task(tiny_model_dir, tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in (TASK, NEGATIVE_TASK)))
    main(["--tasks", str(tasks), "--model", str(tiny_model_dir), "--json", "--decoder", '{"rule": "left_to_right"}'])
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert set(result["kinds"]) == {"rename_local", "negative_rename"}
    overall = result["overall"]
    assert overall["tasks"] + overall["without_job"] == 2
    rename = result["kinds"]["rename_local"]
    assert rename["tasks"] == 1 and rename["to_change"] >= 1  # the uses of `count` lie in regions to change
    assert rename["mean_passes"] >= 1
    assert result["kinds"]["negative_rename"]["to_change"] == 0  # whatever its regions, none is to change
