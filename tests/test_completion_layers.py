"""Imports point one way: the completion rules need no LSP session, no model and only the engine's
wire types; infill (what serves the model) imports no engine, front end or training code; training
(how models are made) builds on infill, the completion rules and the engine, never a front end.
The engine is three rooms: `engine.wire` (what both ends of the socket speak, nothing that runs),
`engine.worker` (one end) and `engine.client` (the other, for front ends), with `engine.launch`
beside them; the wire imports neither end, the launcher only the wire, the client never the
worker, the worker never the client, not even through the launcher; `completion` and `upstream`
reach the engine only through the wire."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import completion

ALLOWED_ENGINE = {"engine.wire.protocol", "engine.wire.deadline"}  # the wire types and the Deadline value
FORBIDDEN_ROOTS = {"lsp_server", "lsprotocol", "pygls", "infill", "torch", "zmq", "training"}
# Benchmarks that run the model runner in this process (no worker, no socket) to measure it alone.
IN_PROCESS_BENCHES = {"replay.py", "next_edit_regions.py", "next_edit_drafts.py", "repo.py",
                      "keystroke_order.py", "worker_threads.py"}


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


def submodules_imported(path: Path) -> set[str]:
    """`imported_modules(path)`, with `from engine.wire import transport` read as the module
    `engine.wire.transport` rather than the package."""
    found = imported_modules(path)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and is_package(node.module)):
            continue
        for alias in node.names:
            if importlib.util.find_spec(f"{node.module}.{alias.name}") is not None:
                found.discard(node.module)
                found.add(f"{node.module}.{alias.name}")
    return found


def is_package(module: str | None) -> bool:
    spec = importlib.util.find_spec(module) if module and module.split(".")[0] == "engine" else None
    return spec is not None and spec.submodule_search_locations is not None


def package_imports(name: str) -> list[tuple[Path, str]]:
    """(file, module) for every import in every file of the package `name`."""
    folder = Path(importlib.import_module(name).__file__).parent
    files = sorted(folder.rglob("*.py"))
    assert files, f"no files in {folder}"
    return [(path, module) for path in files for module in submodules_imported(path)]


def test_the_client_package_imports_no_worker_no_model_and_no_torch():
    found = package_imports("engine.client")
    assert len({path for path, _ in found}) >= 5
    for path, module in found:
        assert not module.startswith("engine.worker"), f"{path} imports {module}"
        assert module.split(".")[0] not in {"infill", "torch", "numba", "safetensors", "tokenizers"}, \
            f"{path} imports {module}"


def test_the_worker_never_imports_the_client():
    """The worker may import infill, torch and the wire; only its command line takes the launcher
    too (`--workers N` supervises worker children)."""
    for path, module in package_imports("engine.worker"):
        assert not module.startswith("engine.client"), f"{path} imports {module}"
        if module == "engine.launch":
            assert path.name == "cli.py", f"{path} imports {module}"


def test_the_launcher_imports_only_the_wire():
    """`engine.launch` greets and probes workers with the wire's `Probe`, so the worker's command
    line, which imports it, reaches no client through it."""
    import engine.launch

    found = submodules_imported(Path(engine.launch.__file__))
    assert "engine.wire.probe" in found  # the walk reads its imports
    for module in found:
        assert module.split(".")[0] != "engine" or module.startswith("engine.wire."), f"launch imports {module}"


def modules_loaded_by(*names: str) -> set[str]:
    """The house's modules that importing `names` loads, in a fresh interpreter (every import,
    however indirect: through `engine.launch`, a package's `__init__`, ...)."""
    root = Path(completion.__file__).parent.parent
    code = "import sys\n" + "".join(f"import {name}\n" for name in names) + "print(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    return {module for module in out.stdout.split() if module.split(".")[0] in HOUSE}


def package_modules(name: str) -> list[str]:
    """The dotted names of every module in the package `name`."""
    folder = Path(importlib.import_module(name).__file__).parent
    return [".".join((name, *path.relative_to(folder).with_suffix("").parts)) for path in sorted(folder.rglob("*.py"))
            if path.name != "__init__.py"]


def test_the_worker_and_the_client_never_load_each_other_even_through_the_launcher():
    worker = modules_loaded_by(*package_modules("engine.worker"))
    assert {"engine.launch", "engine.worker.cli", "engine.wire.protocol"} <= worker
    assert not [m for m in worker if m.startswith("engine.client")], "the worker loads the client"
    client = modules_loaded_by(*package_modules("engine.client"))
    assert {"engine.client.sync_client", "engine.wire.protocol"} <= client
    assert not [m for m in client if m.startswith("engine.worker")], "the client loads the worker"


def test_completion_and_upstream_load_no_engine_module_but_the_wire():
    loaded = modules_loaded_by(*package_modules("completion"), *package_modules("upstream"))
    assert {"completion.fim", "upstream.backend", "engine.wire.protocol"} <= loaded
    engine_modules = {m for m in loaded if m.split(".")[0] == "engine"}
    assert engine_modules - {"engine", "engine.wire"} and all(
        m in ("engine", "engine.wire") or m.startswith("engine.wire.") for m in engine_modules), engine_modules


def test_the_wire_imports_neither_end_nor_anything_that_runs_a_model():
    found = package_imports("engine.wire")
    assert len({path for path, _ in found}) >= 5
    for path, module in found:
        assert module.split(".")[0] not in {"infill", "torch", "numba", "lsp_server", "gateway"}, \
            f"{path} imports {module}"
        assert module.split(".")[0] != "engine" or module.startswith("engine.wire"), f"{path} imports {module}"


def test_front_ends_reach_workers_only_through_the_client_package():
    """The language server and the gateway never import the worker side; a benchmark does only
    when it runs the model runner in process (`IN_PROCESS_BENCHES`)."""
    for package in ("lsp_server", "gateway", "bench"):
        for path, module in package_imports(package):
            if module.startswith("engine.worker"):
                assert package == "bench" and path.name in IN_PROCESS_BENCHES, f"{path} imports {module}"


def test_nothing_imports_the_command_line_package():
    """`cli` sits above every front end: it composes them, none of them reaches up to it."""
    import cli

    root = Path(cli.__file__).parent.parent
    for package in ("infill", "engine", "completion", "lsp_server", "gateway", "bench", "training",
                    "upstream"):
        for path in sorted((root / package).rglob("*.py")):
            for module in imported_modules(path):
                assert module.split(".")[0] != "cli", f"{path} imports {module}"


# What the upstream clients may build on: the completion rules, the engine's wire types and its
# one rule about hosts, and an HTTP client; never a front end, the workers' sockets or a model.
UPSTREAM_ENGINE = {"engine.wire.protocol", "engine.wire.hosts"}


def test_the_upstream_package_sits_beside_the_client_package_below_the_front_ends():
    found = package_imports("upstream")
    assert len({path for path, _ in found}) >= 5
    for path, module in found:
        root = module.split(".")[0]
        assert root not in {"lsp_server", "gateway", "bench", "cli", "training", "infill", "torch", "zmq",
                            "pygls", "lsprotocol", "fastapi"}, f"{path} imports {module}"
        assert root != "engine" or module in UPSTREAM_ENGINE, f"{path} imports {module}"


def test_the_layers_below_the_front_ends_never_import_the_upstream_package():
    """The completion rules, the engine and the model package know nothing of HTTP upstreams."""
    import upstream

    root = Path(upstream.__file__).parent.parent
    for package in ("infill", "engine", "completion", "training"):
        for path in sorted((root / package).rglob("*.py")):
            for module in imported_modules(path):
                assert module.split(".")[0] != "upstream", f"{path} imports {module}"


# Every package of the house; an import circle among their modules is refused.
HOUSE = ("lsp_server", "completion", "engine", "gateway", "upstream", "infill", "training", "cli")


def house_modules(root: Path) -> dict[str, Path]:
    """Each module of the house by its dotted name (a package by its own name), with its file."""
    modules = {}
    for package in HOUSE:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def house_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The house's modules that module `name` imports (at any depth of its code, those only a type
    checker reads too; relative imports resolved, `from a import b` read as the module `a.b` where
    there is one)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parents + ([node.module] if node.module else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return {module for module in found if module in modules and module != name}


def a_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `graph` (its modules in order, the first repeated last), or None."""
    state: dict[str, str] = {}  # "open" while on the path walked, "done" after
    path: list[str] = []

    def walk(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state and (circle := walk(imported)) is not None:
                return circle
        state[module] = "done"
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (circle := walk(module)) is not None:
            return circle
    return None


def test_a_circle_is_found_where_there_is_one():
    assert a_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert a_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_module_of_the_house_imports_itself_through_others():
    """No import circle among the modules of `HOUSE`, counting imports inside functions and those
    under `TYPE_CHECKING` (a reader follows them as well): `Session` holds the arena's state
    (`lsp_server.arena_state`), not the arena feature that receives the session."""
    root = Path(completion.__file__).parent.parent
    modules = house_modules(root)
    assert len(modules) >= 150
    graph = {name: house_imports(name, path, modules) for name, path in modules.items()}
    assert "lsp_server.settings" in graph["lsp_server.session"]  # the walk reads imports
    circle = a_circle(graph)
    assert circle is None, "import circle: " + " -> ".join(circle or [])
