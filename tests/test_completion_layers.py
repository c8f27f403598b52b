"""Imports point one way: the completion rules need no LSP session, no model and only the engine's
wire types; infill (what serves the model) imports no engine, front end or training code; training
(how models are made) builds on infill, the completion rules and the engine, never a front end."""
from __future__ import annotations

import ast
from pathlib import Path

import completion

ALLOWED_ENGINE = {"engine.protocol"}
FORBIDDEN_ROOTS = {"lsp_server", "lsprotocol", "pygls", "infill", "torch", "zmq", "training"}


def imported_modules(path: Path) -> set[str]:
    """Every module that `path` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_completion_imports_no_front_end_no_model_and_only_the_engines_wire_types():
    files = sorted(Path(completion.__file__).parent.glob("*.py"))
    assert len(files) >= 10
    for path in files:
        for module in imported_modules(path):
            root = module.split(".")[0]
            assert root not in FORBIDDEN_ROOTS, f"{path.name} imports {module}"
            assert root != "engine" or module in ALLOWED_ENGINE, f"{path.name} imports {module}"


def test_the_layers_below_point_one_way():
    """infill (model, checkpoints, canvas, decoder) imports no engine, no front end and no training
    code; engine imports no front end."""
    import engine
    import infill

    for package, forbidden in ((infill, {"engine", "lsp_server", "gateway", "completion", "bench", "training"}),
                               (engine, {"lsp_server", "gateway", "completion", "bench", "training"})):
        files = sorted(Path(package.__file__).parent.rglob("*.py"))
        assert len(files) >= 10
        for path in files:
            for module in imported_modules(path):
                assert module.split(".")[0] not in forbidden, f"{path} imports {module}"


def test_training_builds_on_infill_completion_and_engine_but_no_front_end():
    import training

    files = sorted(Path(training.__file__).parent.rglob("*.py"))
    assert len(files) >= 10
    for path in files:
        for module in imported_modules(path):
            forbidden = {"lsp_server", "gateway", "bench", "pygls", "lsprotocol"}
            assert module.split(".")[0] not in forbidden, f"{path} imports {module}"
