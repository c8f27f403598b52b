"""bench.replay on the tiny model: every keystroke after a task's first reuses the one before."""
import torch

from bench.replay import keystrokes, replay
from engine.worker.runner import ModelRunner

TASKS = [
    {"prompt": "def area(width, height):\n    ", "canonical_solution": "return width * height\n",
     "suffix": "\n\nprint(area(2, 3))\n"},
    {"prompt": "import os\n\n\ndef home():\n    ", "canonical_solution": "return os.environ['HOME']\n",
     "suffix": "\n"},
]


def test_keystrokes_type_the_middle_two_characters_at_a_time():
    steps = list(keystrokes(TASKS[0]))
    assert steps[0] == (TASKS[0]["prompt"], "\n" + TASKS[0]["suffix"], "return width * height")
    assert steps[1][0].endswith("    re") and steps[1][2] == "turn width * height"
    assert len(steps) == 11


def test_reuse_hits_every_keystroke_but_a_tasks_first(tiny_model_dir):
    torch.set_num_threads(1)
    with_reuse, without = replay(ModelRunner(tiny_model_dir), TASKS)
    requests = sum(1 for task in TASKS for _ in keystrokes(task))
    assert with_reuse["reuse"] and (with_reuse["hits"], with_reuse["misses"]) == (requests - len(TASKS), len(TASKS))
    assert (without["hits"], without["misses"], without["same_as_without"]) == (0, 0, 1.0)
    assert all(side["p90_ms"] >= side["p50_ms"] > 0 for side in (with_reuse, without))
