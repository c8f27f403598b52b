"""The arena's TOML file: the example loads, and each mistake fails at start with the line to fix."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.arena.cli import main
from bench.arena.config import ConfigError, load_config
from infill.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "bench" / "arena" / "example.toml"

TWO = """
[[backend]]
name = "one"
kind = "worker"
model = "models/infill-py-16m"

[[backend]]
name = "two"
kind = "{kind}"
model = "models/infill-py-16m-ar"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "arena.toml"
    path.write_text(text)
    return path


def test_the_example_loads_with_the_experiments_three_backends():
    config = load_config(EXAMPLE)
    assert [b.name for b in config.backends] == ["diffusion", "diffusion-1-per-pass", "autoregressive-twin"]
    assert [b.kind for b in config.backends] == ["worker", "worker", "causal"]
    assert config.backends[1].decoder == {"rule": "left_to_right"}
    assert config.settings.budgets_ms == (100, 200, 400, 800) and config.settings.latency == ("equal_budget",)


def test_an_unknown_kind_names_its_line_and_the_kinds(tmp_path):
    path = write(tmp_path, TWO.format(kind="llama"))
    with pytest.raises(ConfigError, match=rf"{path}:9: backend 'two' has kind 'llama', which is unknown; "
                                          r'write kind = "worker", "causal" or "openai"'):
        load_config(path)


def test_an_unknown_kind_stops_the_command_before_any_backend_starts(tmp_path, capsys):
    path = write(tmp_path, TWO.format(kind="llama"))
    with pytest.raises(SystemExit) as exit_info:
        main(["--config", str(path), "--tasks", str(tmp_path / "none.jsonl")])
    assert exit_info.value.code == 2
    assert f"{path}:9: backend 'two' has kind 'llama'" in capsys.readouterr().err


@pytest.mark.parametrize("text,message", [
    (TWO.format(kind="causal") + 'decoder = { rule = "threshold" }\n',
     r":11: backend 'two': a causal backend .* remove decoder"),
    (TWO.format(kind="worker") + 'address = "tcp://127.0.0.1:1"\n', r":10: backend 'two': .*either model"),
    (TWO.format(kind="openai").replace('model = "models/infill-py-16m-ar"', 'url = "ftp://x"'), r":10: .*url ="),
    (TWO.format(kind="worker").replace('name = "two"', 'name = "one"'), r":8: backend name 'one' is used twice"),
    (TWO.format(kind="worker") + 'colour = "red"\n', r":11: unknown key 'colour'"),
    ("[arena]\nbudgets_ms = [100, -5]\n" + TWO.format(kind="worker"), r":2: \[arena\] budgets_ms"),
    ("[arena]\nlatency = \"fastest\"\n" + TWO.format(kind="worker"), r":2: \[arena\] latency"),
    ("[arena]\nrounds = 10\n" + TWO.format(kind="worker"), r":2: \[arena\] rounds: .*at least 100"),
    (TWO.format(kind="worker") + '\n[[pair]]\na = "one"\nb = "nobody"\nweight = 1\n', r":12: \[\[pair\]\] 1"),
    ('[[backend]]\nname = "solo"\nkind = "worker"\nmodel = "m"\n', r"two or more \[\[backend\]\]"),
    ("[[backend]\n", r"not valid TOML"),
])
def test_each_mistake_is_named_with_its_line(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))
