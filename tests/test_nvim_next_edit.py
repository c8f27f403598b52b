"""Next edits in the Neovim plugin (editors/nvim), end to end in a real, headless Neovim:
tests/nvim/test_next_edit.lua renames a variable at its definition, and takes the edits the server
proposes with <Tab> (after dismissing them once with <Esc>), ending with every use renamed; edits
for a buffer changed since are refused, and typing drops them. The server is the real `infill lsp`
on a scripted worker (tests/fake_worker.py) that renames as the file's first line says, noting
each line it renamed (`fake_worker.WORKER_NOTE`, which no draft writes), since the bundled model is
not trained for edits: what this proves is the plumbing from the editor through LSP to the worker
and back, the buffer ending as the worker's answer, not the drafts, makes it. On each Neovim
`run_nvim` finds (0.7 on PATH, the dev extra's 0.12); a missing one is skipped."""
from __future__ import annotations

import json

import pytest

import fake_worker
from completion.edit_regions import MAX_REGIONS
from infill.paths import REPO_ROOT
from test_lsp_inline_edit import SOURCE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_next_edit.lua"
_marker, _newline, CODE = SOURCE.partition("\n")  # the fake worker's rename line, the code it renames in
MARKER = _marker + _newline


def test_neovim_plugin_proposes_a_rename_at_the_other_uses_and_takes_it_with_tab(tmp_path, run_nvim, fake_worker_at):
    files = {name: tmp_path / f"{name}.py" for name in ("tally", "stale", "typed")}
    for file in files.values():
        file.write_text(MARKER + CODE)
    expected, stats = tmp_path / "expected.py", tmp_path / "stats.jsonl"
    expected.write_text(MARKER + fake_worker.renamed(CODE.replace("    count = 0", "    total = 0"), "count", "total"))
    outcome = run_nvim(SCRIPT, INFILL_PLUGIN=str(REPO_ROOT / "editors" / "nvim"), INFILL_WORKER=fake_worker_at,
                       INFILL_FILE=str(files["tally"]), INFILL_STALE_FILE=str(files["stale"]),
                       INFILL_TYPED_FILE=str(files["typed"]), INFILL_EXPECTED=str(expected),
                       INFILL_STATS=str(stats))
    assert outcome["final"] == expected.read_text().splitlines()
    assert len(outcome["shown"]) >= 2
    events = [json.loads(line) for line in stats.read_text().splitlines()]
    accepted = sorted(e["index"] for e in events if e["event"] == "accept")
    assert accepted == list(range(len(outcome["shown"]))), events  # every edit taken, each reported once
    assert all(e["mode"] == "next_edit" for e in events)


AT_THE_CAP = '''\
# fake-rename: count total
import os


def tally(items):
    count = 0
    print(count)
    a = 1
    b = 2
    c = 3
    d = 4
    e = 5
''' + "".join(f"    x{i} = count + {i}\n    pass\n" for i in range(MAX_REGIONS - 3)) + "    return count\n"


def test_neovim_plugin_shows_and_takes_a_suggestion_at_the_cap_of_regions(tmp_path, run_nvim, fake_worker_at):
    """The cap of one job (`completion.edit_regions.MAX_REGIONS`): the cursor's lines above the
    edit (unchanged), those below it with a use, and one use a region of its own for each region
    left; every edit (all regions but the first) shown and taken with <Tab>."""
    files = {name: tmp_path / f"{name}.py" for name in ("tally", "stale", "typed")}
    for file in files.values():
        file.write_text(AT_THE_CAP)
    marker, _, code = AT_THE_CAP.partition("\n")
    expected = tmp_path / "expected.py"
    expected.write_text(marker + "\n" + fake_worker.renamed(code.replace("    count = 0", "    total = 0"),
                                                             "count", "total"))
    outcome = run_nvim(SCRIPT, INFILL_PLUGIN=str(REPO_ROOT / "editors" / "nvim"), INFILL_WORKER=fake_worker_at,
                       INFILL_FILE=str(files["tally"]), INFILL_STALE_FILE=str(files["stale"]),
                       INFILL_TYPED_FILE=str(files["typed"]), INFILL_EXPECTED=str(expected),
                       INFILL_STATS=str(tmp_path / "stats.jsonl"))
    assert outcome["final"] == expected.read_text().splitlines()
    assert len(outcome["shown"]) == MAX_REGIONS - 1
