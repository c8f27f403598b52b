"""What `pip wheel .` builds (scripts/namespaced_wheel.py): one top-level package, `infill`, with
the others under it and their imports rewritten, the bundled model and the self-check's example
inside it, and a console script that points there; and where `infill.paths` finds the model and
the work folder in an installed copy. The wheel is built once (no dependencies, no torch
installed) from a copy of this tree and read, never installed."""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from infill import paths
from infill.paths import BUNDLED_MODEL_NAME, REPO_ROOT
from scripts.namespaced_wheel import check_no_collision, rewrite_source

MOVED = frozenset({"bench", "cli", "completion", "engine", "gateway", "lsp_server", "training", "upstream"})
LEFT_OUT = {".git", ".venv", "work", "node_modules", "editors", "tests", "build", "dist", "__pycache__",
            ".pytest_cache", ".hypothesis"}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # pip builds the wheel in a process


def _left_out(folder: str, names: list[str]) -> set[str]:
    """What the copy of the tree skips: what no wheel carries, and the models not bundled."""
    skipped = {n for n in names if n in LEFT_OUT or n.endswith(".egg-info")}
    if Path(folder) == REPO_ROOT / "models":
        skipped |= {n for n in names if n != BUNDLED_MODEL_NAME}
    return skipped


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A copy of the tree to build from (the build folder pip makes stays out of the checkout)."""
    copy = tmp_path_factory.mktemp("src") / "infill"
    shutil.copytree(REPO_ROOT, copy, ignore=_left_out)
    return copy


@pytest.fixture(scope="module")
def wheel(source, tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           str(source), "-w", str(out)], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    [built] = out.glob("infill-*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


def wheel_modules(wheel: zipfile.ZipFile) -> dict[str, str]:
    """Each module of the wheel's packages (dotted name) and its path in the wheel."""
    modules = {}
    for name in wheel.namelist():
        if name.endswith(".py") and not name.startswith("infill/_bundled/"):
            dotted = name[:-3].replace("/", ".")
            modules[dotted.removesuffix(".__init__")] = name
    return modules


def source_of(source: Path, wheel_path: str) -> Path:
    """The file of the tree that `wheel_path` was built from."""
    parts = wheel_path.split("/")
    return source.joinpath(*(parts[1:] if parts[1] in MOVED else parts))


def test_the_wheel_installs_one_package_of_the_projects_name(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    dist_info = {top for top in tops if top.endswith(".dist-info")}
    assert tops - dist_info == {"infill"}
    [dist_info] = dist_info
    assert wheel.read(f"{dist_info}/top_level.txt").decode().split() == ["infill"]
    packages = {name.split("/")[1] for name in wheel.namelist() if name.startswith("infill/") and name.count("/") > 1}
    assert MOVED <= packages  # every package of the tree, under infill/


def test_the_console_script_points_into_the_namespace(wheel):
    [entry_points] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "infill = infill.cli.main:main" in wheel.read(entry_points).decode().splitlines()
    assert "infill/cli/main.py" in wheel.namelist()


def test_the_bundled_model_and_the_example_are_inside(wheel):
    model = REPO_ROOT / "models" / BUNDLED_MODEL_NAME
    files = sorted(p for p in model.iterdir() if p.is_file())
    assert {"config.json", "tokenizer.json", "model.safetensors"} <= {p.name for p in files}
    for path in files:
        info = wheel.getinfo(f"infill/_bundled/models/{BUNDLED_MODEL_NAME}/{path.name}")
        assert info.file_size == path.stat().st_size, path.name
    example = wheel.read("infill/_bundled/examples/shapes.py").decode()
    assert example == (REPO_ROOT / "examples" / "shapes.py").read_text()
    assert "infill/training/corpus_packages.txt" in wheel.namelist()  # package data moves with its package
    assert "infill/completion/site_judge.json" in wheel.namelist()
    assert "infill/completion/english_words.txt" in wheel.namelist()  # else every word spelled alike is a typo


def test_every_import_resolves_inside_the_namespace(wheel):
    modules = wheel_modules(wheel)
    assert len(modules) > 150
    for dotted, path in modules.items():
        for node in ast.walk(ast.parse(wheel.read(path).decode(), path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                assert name.split(".")[0] not in MOVED, f"{path} imports {name}"
                assert not name.startswith("infill.") or name in modules, f"{path} imports {name}, not in the wheel"


def test_module_names_in_strings_name_the_installed_modules(wheel):
    """`infill`'s dispatcher imports modules by name and the launchers run `python -m` ones: each
    such string names a module of the wheel, none the checkout's name."""
    modules = wheel_modules(wheel)
    old_names = {name.removeprefix("infill.") for name in modules if name.split(".")[1:2] and
                 name.split(".")[1] in MOVED and "." in name.removeprefix("infill.")}
    commands = ast.parse(wheel.read("infill/cli/main.py").decode())
    targets = [node.args[0].value for node in ast.walk(commands)
               if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Command"]
    assert len(targets) >= 8 and all(target in modules for target in targets), targets
    for path in modules.values():
        for node in ast.walk(ast.parse(wheel.read(path).decode(), path)):
            assert not (isinstance(node, ast.Constant) and node.value in old_names), f"{path}: {node.value!r}"
    launcher = wheel.read("infill/engine/launch.py").decode()
    assert '"-m", "engine"' not in launcher and '"-m", "gateway"' not in wheel.read("infill/gateway/launch.py").decode()


def test_each_module_keeps_its_lines(wheel, source):
    """Line numbers in a traceback from an installed copy are the checkout's."""
    changed = 0
    for path in wheel_modules(wheel).values():
        built, original = wheel.read(path).decode(), source_of(source, path).read_text()
        assert built.count("\n") == original.count("\n"), path
        changed += built != original
    assert changed > 50


SNIPPET = '''import os, engine
import engine.wire.protocol
import engine.wire.protocol as protocol
from completion.fim import plan  # "cli.run" in a comment stays
from infill.paths import work_dir
COMMANDS = {"complete": "cli.complete", "completion": "a word", "engine": 1}
argv = [sys.executable, "-m", "lsp_server", "--stdio"]
logger = logging.getLogger(f"cli.run")
'''
REWRITTEN = '''import os; from infill import engine
engine = __import__("infill.engine.wire.protocol").engine
import infill.engine.wire.protocol as protocol
from infill.completion.fim import plan  # "cli.run" in a comment stays
from infill.paths import work_dir
COMMANDS = {"complete": "infill.cli.complete", "completion": "a word", "engine": 1}
argv = [sys.executable, "-m", "infill.lsp_server", "--stdio"]
logger = logging.getLogger(f"cli.run")
'''


def test_rewrite_source_moves_imports_and_module_names_and_nothing_else():
    modules = frozenset({"engine", "engine.wire", "engine.wire.protocol", "completion", "completion.fim",
                         "cli", "cli.complete", "cli.run", "lsp_server", "infill", "infill.paths"})
    moved = frozenset({"engine", "completion", "cli", "lsp_server"})
    assert rewrite_source(SNIPPET, moved, "infill", modules) == REWRITTEN
    assert rewrite_source(REWRITTEN, moved, "infill", modules) == REWRITTEN  # a second build changes nothing


def test_a_dotted_import_binds_its_top_package_as_before(tmp_path):
    """`import engine.wire.protocol` binds `engine` with the submodule loaded; so does its rewrite."""
    for folder in ("ns", "ns/engine", "ns/engine/wire"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "ns/engine/wire/protocol.py").write_text("VERSION = 7\n")
    code = rewrite_source("import engine.wire.protocol\nprint(engine.wire.protocol.VERSION, engine.__name__)\n",
                          frozenset({"engine"}), "ns", frozenset({"engine", "engine.wire", "engine.wire.protocol"}))
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.split()) == (0, ["7", "ns.engine"]), done.stderr


def test_a_package_that_would_collide_inside_the_namespace_is_refused(tmp_path):
    (tmp_path / "engine.py").write_text("")
    check_no_collision(tmp_path, frozenset({"completion"}))  # no clash: passes
    with pytest.raises(Exception, match="engine.py exists"):
        check_no_collision(tmp_path, frozenset({"completion", "engine"}))


def test_the_checkout_keeps_its_own_folders(monkeypatch):
    monkeypatch.delenv("INFILL_MODEL", raising=False)
    monkeypatch.delenv("INFILL_WORK", raising=False)
    assert not paths.installed()
    assert paths.bundled_model_dir() == REPO_ROOT / "models" / BUNDLED_MODEL_NAME
    assert paths.work_dir() == REPO_ROOT / "work"
    assert paths.example_file("shapes.py").is_file()


def installed_paths(site: Path, **env: str) -> dict:
    """infill.paths's answers in a copy unpacked at `site`, with only `env` set (no site-packages)."""
    probe = ("import json; from infill import paths; print(json.dumps({'installed': paths.installed(), "
             "'model': str(paths.bundled_model_dir()), 'work': str(paths.work_dir()), "
             "'example': str(paths.example_file('shapes.py'))}))")
    done = subprocess.run([sys.executable, "-S", "-c", probe], cwd=site, capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(site), **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_installed_copy_finds_its_model_and_works_in_the_users_data_folder(wheel, tmp_path):
    site, home = tmp_path / "site-packages", tmp_path / "home"
    wheel.extractall(site, [n for n in wheel.namelist() if n.startswith("infill/_bundled/")
                            or n in ("infill/__init__.py", "infill/paths.py")])
    found = installed_paths(site, HOME=str(home))
    model = site / "infill" / "_bundled" / "models" / BUNDLED_MODEL_NAME
    assert found == {"installed": True, "model": str(model), "work": str(home / ".local/share/infill"),
                     "example": str(site / "infill/_bundled/examples/shapes.py")}
    assert (model / "model.safetensors").is_file() and Path(found["example"]).is_file()
    data = tmp_path / "data"
    assert installed_paths(site, HOME=str(home), XDG_DATA_HOME=str(data))["work"] == str(data / "infill")
    relative = installed_paths(site, HOME=str(home), XDG_DATA_HOME="data")  # relative: ignored, as XDG says
    assert relative["work"] == str(home / ".local/share/infill")
    chosen = installed_paths(site, HOME=str(home), INFILL_MODEL=str(tmp_path / "m"), INFILL_WORK=str(tmp_path / "w"))
    assert (chosen["model"], chosen["work"]) == (str(tmp_path / "m"), str(tmp_path / "w"))
