"""The wheel's build hook: every package of the repository installed under one name, `infill`.

The repository keeps its folders at the top (`cli/`, `engine/`, `completion/`, ... beside the model
package `infill/`), but a wheel that installed them so would put nine generic names into a
user's site-packages. So, when a wheel is built (never for an editable install, which keeps
the checkout's names), `NamespacedBuildPy` writes each other package under `infill/` (`engine`
becomes `infill.engine`) and rewrites its absolute imports, the way pip's `vendoring` tool
rewrites a vendored library's (`import six` -> `from pip._vendor import six`, `from six.moves
import x` -> `from pip._vendor.six.moves import x`), but from the positions Python's own parser
gives (`ast` for the statements and string literals, `tokenize` for a `from` statement's module
name) instead of regular expressions over the text, so nothing outside an import or a module
name is touched and every line keeps its number:

- `from engine.wire import x` -> `from infill.engine.wire import x`;
- `import engine.wire.protocol as p` -> `import infill.engine.wire.protocol as p`;
  `import engine` -> `from infill import engine`; `import engine.wire.protocol` (which binds
  `engine`) -> `engine = __import__("infill.engine.wire.protocol").engine`;
- a string literal that names a module of the wheel (`"cli.run"`, what `infill`'s dispatcher
  imports) or follows `"-m"` (`[sys.executable, "-m", "lsp_server"]`) -> `"infill.cli.run"`.
  A word such as `"completion"` elsewhere is data and stays.

The wheel also carries the repository files that pyproject.toml's `[tool.infill.wheel] bundle`
names (the bundled model, the self-check's example) under `infill/_bundled/`, where
`infill/paths.py` finds them, and `NamespacedWheel` points its metadata at the new names (the
console script `infill.cli.main:main`, `top_level.txt`).
"""
from __future__ import annotations

import ast
import io
import os
import shutil
import tokenize
import tomllib
from pathlib import Path

from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

BUNDLE_FOLDER = "_bundled"  # infill/_bundled/<the file's path in the repository>


def qualify(name: str, moved: frozenset[str], namespace: str) -> str:
    """`name` (a dotted module name) as installed: under `namespace` when its package moved."""
    return f"{namespace}.{name}" if name.split(".")[0] in moved else name


class _Source:
    """A module's text with ast's (line, UTF-8 byte column) positions turned into text offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, byte_col: int) -> int:
        line = self.lines[lineno - 1] if lineno <= len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode()[:byte_col].decode())

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))


def _import_statement(node: ast.Import, moved: frozenset[str], namespace: str) -> str:
    """An `import` statement's text with its moved packages under `namespace`, on one line."""
    parts = []
    for alias in node.names:
        top = alias.name.split(".")[0]
        if top not in moved:
            parts.append(f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
        elif alias.asname:
            parts.append(f"import {namespace}.{alias.name} as {alias.asname}")
        elif top == alias.name:
            parts.append(f"from {namespace} import {top}")
        else:  # binds the top package with the submodule loaded, and no other name
            parts.append(f'{top} = __import__("{namespace}.{alias.name}").{top}')
    return "; ".join(parts)


def _string_edit(source: _Source, node: ast.Constant, namespace: str) -> tuple[int, int, str]:
    """The edit that puts `namespace.` in front of the module name a plain string literal holds."""
    start, end = source.span(node)
    literal = source.text[start:end]
    opening = len(literal) - len(literal.lstrip("rRuU"))
    quote = literal[opening:opening + 3] if literal[opening:opening + 3] in ('"""', "'''") else literal[opening]
    if literal != literal[:opening] + quote + node.value + quote:
        raise SetupError(f"line {node.lineno}: the module name {node.value!r} is not a plain string literal "
                         f"({literal}), so it cannot be rewritten for the wheel")
    at = start + opening + len(quote)
    return at, at, namespace + "."


def _module_strings(tree: ast.Module, modules: frozenset[str], moved: frozenset[str]) -> list[ast.Constant]:
    """String literals that name a module of a moved package: a dotted name of one of `modules`,
    or any of them right after a `"-m"` in a list, tuple or call."""
    def names_module(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in modules and node.value.split(".")[0] in moved

    in_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    found = {}
    for node in ast.walk(tree):
        if names_module(node) and "." in node.value and id(node) not in in_fstrings:
            found[id(node)] = node
        if isinstance(node, (ast.List, ast.Tuple, ast.Call)):
            items = node.args if isinstance(node, ast.Call) else node.elts
            for flag, name in zip(items, items[1:]):
                if isinstance(flag, ast.Constant) and flag.value == "-m" and names_module(name):
                    found[id(name)] = name
    return list(found.values())


def rewrite_source(text: str, moved: frozenset[str], namespace: str, modules: frozenset[str]) -> str:
    """`text` with its absolute imports of the `moved` packages, and the string literals naming
    their modules (`modules`: every dotted module name of the build), under `namespace`; each line
    keeps its number."""
    tree = ast.parse(text)
    source = _Source(text)
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    after = {tok.start: tokens[i + 1] for i, tok in enumerate(tokens[:-1]) if tok.type == tokenize.NAME}
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] in moved:
            keyword_at = (node.lineno, source.offset(node.lineno, node.col_offset) - source.starts[node.lineno - 1])
            row, col = after[keyword_at].start  # the module name's first token, after `from`
            edits.append((source.starts[row - 1] + col, source.starts[row - 1] + col, namespace + "."))
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] in moved for a in node.names):
            start, end = source.span(node)
            edits.append((start, end, _import_statement(node, moved, namespace)
                          + " \\\n" * (node.end_lineno - node.lineno)))
    edits += [_string_edit(source, node, namespace) for node in _module_strings(tree, modules, moved)]
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    ast.parse(out)  # a rewrite that breaks the module fails the build here, not at the user's import
    return out


def moved_packages(packages: list[str], namespace: str) -> frozenset[str]:
    """The top-level packages the wheel puts under `namespace`."""
    return frozenset(p.split(".")[0] for p in packages) - {namespace}


def check_no_collision(namespace_dir: Path, moved: frozenset[str]) -> None:
    """Refuses a moved package or the bundle whose name the namespace package already uses."""
    for name in sorted(moved | {BUNDLE_FOLDER}):
        for taken in (namespace_dir / f"{name}.py", namespace_dir / name):
            if taken.exists():
                raise SetupError(f"{taken} exists: the wheel cannot also put {name!r} under "
                                 f"{namespace_dir.name!r}; rename one of them")


class NamespacedBuildPy(build_py):
    """`build_py` that lays the packages out under the distribution's name and rewrites their
    imports (see the module's docstring); an editable install builds nothing here, as before."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.namespace = self.distribution.get_name()
        self.moved = moved_packages(self.packages or [], self.namespace)
        self.root = Path(self.distribution.src_root or os.curdir)

    def run(self) -> None:
        if self.editable_mode:
            return super().run()
        check_no_collision(Path(self.get_package_dir(self.namespace)), self.moved)
        for name in (self.namespace, *self.moved):  # what an earlier build left in the build folder
            shutil.rmtree(Path(self.build_lib, name), ignore_errors=True)
        self.modules = frozenset(self._module_names())
        super().run()
        for relative in self.bundle():
            target = self._bundled_path(relative)
            self.mkpath(str(target.parent))
            self.copy_file(str(self.root / relative), str(target))

    def _module_names(self) -> set[str]:
        names = set()
        for package, module, _file in self.find_all_modules():
            names.add(package)
            names.add(package if module == "__init__" else f"{package}.{module}")
        return names

    def bundle(self) -> list[str]:
        """The repository files pyproject.toml's `[tool.infill.wheel] bundle` names (a folder: its
        files), as paths relative to the repository."""
        settings = tomllib.loads((self.root / "pyproject.toml").read_text())
        files = []
        for entry in settings["tool"]["infill"]["wheel"]["bundle"]:
            path = self.root / entry
            if not path.exists():
                raise SetupError(f"pyproject.toml bundles {entry}, which does not exist")
            found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            files += [p.relative_to(self.root).as_posix() for p in found]
        return files

    def _bundled_path(self, relative: str) -> Path:
        return Path(self.build_lib, self.namespace, BUNDLE_FOLDER, relative)

    def get_module_outfile(self, build_dir, package, module):
        if not self.editable_mode and package and package[0] in self.moved:
            package = [self.namespace, *package]
        return super().get_module_outfile(build_dir, package, module)

    def _get_pkg_data_files(self, package: str) -> tuple[str, str, str, list[str]]:
        package_, src_dir, build_dir, filenames = super()._get_pkg_data_files(package)
        if not self.editable_mode and package.split(".")[0] in self.moved:
            build_dir = os.path.join(self.build_lib, self.namespace, *package.split("."))
        return package_, src_dir, build_dir, filenames

    def build_module(self, module, module_file, package):
        outfile, copied = super().build_module(module, module_file, package)
        if not self.editable_mode:
            path = Path(outfile)
            try:
                text = rewrite_source(path.read_text(encoding="utf-8"), self.moved, self.namespace, self.modules)
            except (SyntaxError, SetupError) as err:
                raise SetupError(f"{module_file}: {err}") from err
            path.write_text(text, encoding="utf-8")
        return outfile, copied

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        bundled = [] if self.editable_mode else [str(self._bundled_path(f)) for f in self.bundle()]
        return super().get_outputs(include_bytecode) + bundled

    def get_source_files(self) -> list[str]:
        """What an sdist needs to build this wheel: the packages, the bundle and this hook."""
        hook = Path(__file__).resolve().relative_to(self.root.resolve()).as_posix()
        return super().get_source_files() + self.bundle() + [hook]


class NamespacedWheel(bdist_wheel):
    """`bdist_wheel` whose metadata names the namespaced modules: the console scripts' targets and
    `top_level.txt`. An editable install also writes its metadata through this command, but
    without running it, and keeps the checkout's names."""

    building = False

    def run(self) -> None:
        self.building = True
        super().run()

    def write_wheelfile(self, wheelfile_base, *args, **kwargs):
        if self.building:
            namespace = self.distribution.get_name()
            moved = moved_packages(self.distribution.packages or [], namespace)
            rewrite_entry_points(Path(wheelfile_base) / "entry_points.txt", moved, namespace)
            (Path(wheelfile_base) / "top_level.txt").write_text(namespace + "\n")
        super().write_wheelfile(wheelfile_base, *args, **kwargs)


def rewrite_entry_points(path: Path, moved: frozenset[str], namespace: str) -> None:
    """entry_points.txt with each `name = module:attr` pointing at the installed module."""
    if not path.exists():
        return
    lines = []
    for line in path.read_text().splitlines():
        name, equals, target = line.partition("=")
        if equals and not line.lstrip().startswith(("[", "#")):
            line = f"{name.strip()} = {qualify(target.strip(), moved, namespace)}"
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
