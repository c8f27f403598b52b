"""Signposts that name files: every module `ARCHITECTURE.md` and the packages' docstrings name
exists, so a move or a rename cannot leave a newcomer following a name to nothing."""
from __future__ import annotations

import ast
import re

from infill.paths import REPO_ROOT

PACKAGES = ("cli", "lsp_server", "gateway", "bench", "completion", "upstream", "engine", "infill", "training")
NAMED_FILE = re.compile(r"`(?:[\w./]*/)?(\w+\.(?:py|lua|ts))\b")  # `fim.py`, `lsp_server/stats.py`, `nvim_typing.lua`


def files_here() -> set[str]:
    skipped = {".venv", "node_modules", ".git", "work"}
    return {path.name for path in REPO_ROOT.rglob("*") if path.suffix in (".py", ".lua", ".ts")
            and not skipped.intersection(path.relative_to(REPO_ROOT).parts)}


def package_docstrings() -> dict[str, str]:
    texts = {}
    for package in PACKAGES:
        for init in (REPO_ROOT / package).rglob("__init__.py"):
            texts[str(init.relative_to(REPO_ROOT))] = ast.get_docstring(ast.parse(init.read_text())) or ""
    return texts


def test_every_file_the_architecture_and_package_docstrings_name_exists():
    present = files_here()
    texts = {"ARCHITECTURE.md": (REPO_ROOT / "ARCHITECTURE.md").read_text(), **package_docstrings()}
    missing = {where: sorted(set(NAMED_FILE.findall(text)) - present) for where, text in texts.items()}
    assert not {where: names for where, names in missing.items() if names}


def test_a_name_that_is_not_here_is_found():
    assert NAMED_FILE.findall("see `lsp_server/no_such_module.py` and `fim.py`") == ["no_such_module.py", "fim.py"]
    assert "no_such_module.py" not in files_here() and "fim.py" in files_here()
