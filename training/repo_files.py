"""The source files of a user's repository, as `infill adapt` and `bench.repo` read them.

Which files: `git ls-files` (tracked, and untracked ones that `.gitignore` does not ignore) when
the folder is inside a git checkout and git lists any; otherwise a walk that honours every `.gitignore` on the way
(pathspec's gitignore rules) and never enters version-control, virtual-environment or cache
folders. Only files of the wanted languages (by extension, as the language server tells them) are
read. A file is skipped, and counted by reason, when it is a symlink that leads out of the
repository, excluded by a `--exclude` glob, binary, not UTF-8, over the corpus builder's size cap,
generated or minified (`training.corpus.drop_reason`), a duplicate of one already kept, over the
repository's total cap, or (with a guard) overlapping the evaluation sets.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from completion.syntax import language_for
from training.corpus import drop_reason
from training.evalguard import EvalGuard

MAX_REPO_BYTES = 64_000_000  # more text than ten minutes of CPU training can use many times over
BINARY_PROBE_BYTES = 8192  # a NUL byte in a file's first bytes marks it binary
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                          ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs"})


class RepoError(ValueError):
    """A repository that cannot be read: not a folder, or no source file in it."""


@dataclass(frozen=True, slots=True)
class RepoFile:
    path: str  # POSIX, relative to the repository's root
    text: str


@dataclass(slots=True)
class Gathered:
    files: list[RepoFile] = field(default_factory=list)  # in path order
    skipped: Counter = field(default_factory=Counter)  # reason -> files

    @property
    def bytes(self) -> int:
        return sum(len(f.text.encode()) for f in self.files)


def git_paths(root: Path) -> list[str] | None:
    """The files `git ls-files` lists under `root` (tracked, and untracked ones not ignored), or
    None when `root` is not inside a git checkout or git is not installed."""
    command = ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        listed = subprocess.run(command, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return sorted({p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p})


def walked_paths(root: Path) -> list[str]:
    """Every file under `root` that the `.gitignore` files on its way do not ignore."""
    found: list[str] = []
    rules: list[tuple[str, pathspec.PathSpec]] = []  # (folder relative to root, its .gitignore)
    for folder, dirs, files in os.walk(root):
        relative = Path(folder).relative_to(root).as_posix()
        base = "" if relative == "." else relative + "/"
        ignore = Path(folder) / ".gitignore"
        if ignore.is_file():
            rules.append((base, pathspec.GitIgnoreSpec.from_lines(ignore.read_text("utf-8", "replace").splitlines())))
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not ignored(rules, base + d + "/"))
        found += [base + name for name in sorted(files) if not ignored(rules, base + name)]
    return found


def ignored(rules: Sequence[tuple[str, pathspec.PathSpec]], path: str) -> bool:
    """Whether a `.gitignore` of a folder above `path` ignores it (paths relative to the root)."""
    return any(path.startswith(base) and spec.match_file(path[len(base):]) for base, spec in rules)


def candidate_paths(root: Path) -> list[str]:
    """git's list, or the walk's where git lists nothing (not a checkout, or a folder it ignores)."""
    return git_paths(root) or walked_paths(root)


def skip_reason(raw: bytes | None) -> str | None:
    """Why a listed file is not read as source, or None to keep it; `raw` None: not a regular
    file inside the repository."""
    if raw is None:
        return "symlink out of the repository or not a file"
    if b"\0" in raw[:BINARY_PROBE_BYTES]:
        return "binary"
    return drop_reason(raw)


def read_inside(root: Path, path: str) -> bytes | None:
    """A listed file's bytes, or None when it is not a regular file or resolves out of `root`."""
    full = root / path
    try:
        resolved = full.resolve(strict=True)
        if not resolved.is_file() or not resolved.is_relative_to(root.resolve()):
            return None
        return resolved.read_bytes()
    except OSError:
        return None


def source_paths(root: Path, languages: Collection[str] | None, exclude: Sequence[str],
                 skipped: Counter) -> Iterator[str]:
    """The listed paths of the wanted languages that no `exclude` glob matches."""
    excluded = pathspec.GitIgnoreSpec.from_lines(exclude)
    for path in candidate_paths(root):
        language = language_for(path)
        if language is None or (languages is not None and language not in languages):
            continue
        if excluded.match_file(path):
            skipped["excluded"] += 1
            continue
        yield path


def gather(root: Path, exclude: Sequence[str] = (), languages: Collection[str] | None = None,
           guard: EvalGuard | None = None, max_bytes: int = MAX_REPO_BYTES) -> Gathered:
    """The repository's source files (of `languages`; None: every language the server knows),
    with what was skipped counted by reason. Raises RepoError when `root` is not a folder or
    holds no source file."""
    root = Path(root)
    if not root.is_dir():
        raise RepoError(f"{root} is not a folder: give the repository's root folder")
    gathered, seen, total = Gathered(), set(), 0
    for path in source_paths(root, languages, exclude, gathered.skipped):
        raw = read_inside(root, path)
        reason = skip_reason(raw)
        if reason is None:
            reason = kept_or_why(raw, seen, total, max_bytes, guard)
        if reason:
            gathered.skipped[reason] += 1
            continue
        total += len(raw)
        gathered.files.append(RepoFile(path, raw.decode("utf-8")))
    if not gathered.files:
        raise RepoError(f"{root} holds no source file to learn from{said(gathered.skipped)}")
    return gathered


def kept_or_why(raw: bytes, seen: set[str], total: int, max_bytes: int, guard: EvalGuard | None) -> str | None:
    """Why a readable source file is still skipped (a duplicate, over the total cap, overlapping
    the evaluation sets), or None to keep it; records its hash as seen."""
    digest = hashlib.sha256(raw).hexdigest()
    if digest in seen:
        return "duplicate"
    seen.add(digest)
    if total + len(raw) > max_bytes:
        return "over the repository's size cap"
    if guard is not None and guard.overlaps(raw.decode("utf-8")):
        return "overlaps evaluation sets"
    return None


def said(skipped: Counter) -> str:
    """`skipped` as the tail of a message: ' (skipped: 3 binary, 1 not utf-8)', or nothing."""
    if not skipped:
        return ""
    return " (skipped: " + ", ".join(f"{n} {reason}" for reason, n in skipped.most_common()) + ")"
