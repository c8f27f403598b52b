"""The source files of a user's repository, as `infill adapt` and `bench.repo` read them.

Which files: `git ls-files` (tracked, and untracked ones that `.gitignore` does not ignore) when
the folder is inside a git checkout and git lists any; otherwise a walk that honours every `.gitignore` on the way
(pathspec's gitignore rules) and never enters version-control, virtual-environment or cache
folders. Only files of the wanted languages (by extension, as the language server tells them) are
read, and each is stat'ed before it is opened: one that is not a regular file or is over the
corpus builder's size cap is skipped without reading it, and no more than the cap is ever read. A
file is skipped, and counted by reason, when its name is not UTF-8, it is a symlink that leads out of
the repository or round in a loop, it cannot be read, it is excluded by a `--exclude` glob, binary,
not UTF-8, over the size cap, generated or minified (`training.corpus.drop_reason`), a duplicate of
one already kept, over the repository's total cap, or (with a guard) overlapping the evaluation sets.
The skips worth a look (a name, a loop, an unreadable file) are also listed by name.

git runs with its file-system monitor and untracked cache off: a repository's own `core.fsmonitor`
is a command, and reading a folder must never run what the folder says.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from completion.syntax import language_for
from training.corpus import MAX_FILE_BYTES, drop_reason
from training.evalguard import EvalGuard

MAX_REPO_BYTES = 64_000_000  # more text than ten minutes of CPU training can use many times over
BINARY_PROBE_BYTES = 8192  # a NUL byte in a file's first bytes marks it binary
MAX_GITIGNORE_BYTES = 1_000_000  # a .gitignore larger than this is not read (its rules are left out)
GIT_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")  # no command from the repository's config
NAMED_REASONS = frozenset({"name not utf-8", "symlink loop", "unreadable"})  # skips also listed by name
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                          ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs"})


class RepoError(ValueError):
    """A repository that cannot be read: not a folder, or no source file in it."""


class Skipped(Exception):
    """A listed file that is not read as source; the argument says why."""


@dataclass(frozen=True, slots=True)
class RepoFile:
    path: str  # POSIX, relative to the repository's root
    text: str


@dataclass(slots=True)
class Gathered:
    files: list[RepoFile] = field(default_factory=list)  # in path order
    skipped: Counter = field(default_factory=Counter)  # reason -> files
    named: list[str] = field(default_factory=list)  # "path: reason" of the skips in NAMED_REASONS, escaped

    @property
    def bytes(self) -> int:
        return sum(len(f.text.encode()) for f in self.files)


def git_paths(root: Path) -> list[str] | None:
    """The files `git ls-files` lists under `root` (tracked, and untracked ones not ignored), or
    None when `root` is not inside a git checkout or git is not installed."""
    command = ["git", *GIT_SAFE, "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
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
            rules.append((base, pathspec.GitIgnoreSpec.from_lines(gitignore_lines(ignore))))
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not ignored(rules, base + d + "/"))
        found += [base + name for name in sorted(files) if not ignored(rules, base + name)]
    return found


def ignored(rules: Sequence[tuple[str, pathspec.PathSpec]], path: str) -> bool:
    """Whether a `.gitignore` of a folder above `path` ignores it (paths relative to the root)."""
    return any(path.startswith(base) and spec.match_file(path[len(base):]) for base, spec in rules)


def candidate_paths(root: Path) -> list[str]:
    """git's list, or the walk's where git lists nothing (not a checkout, or a folder it ignores)."""
    return git_paths(root) or walked_paths(root)


def gitignore_lines(path: Path) -> list[str]:
    """A `.gitignore`'s lines; none when it is not a regular file, is too large or cannot be read."""
    try:
        return capped_read(str(path), MAX_GITIGNORE_BYTES).decode("utf-8", "replace").splitlines()
    except (Skipped, OSError):
        return []


def skip_reason(raw: bytes) -> str | None:
    """Why a regular file's bytes are not read as source, or None to keep them."""
    if b"\0" in raw[:BINARY_PROBE_BYTES]:
        return "binary"
    return drop_reason(raw)


def read_inside(root: Path, path: str) -> bytes:
    """A listed file's bytes, stat'ed before it is opened; `root` is resolved. Raises Skipped when
    it leads out of `root`, is not a regular file, is over the size cap (never read) or cannot be
    read (a symlink loop among them)."""
    full = os.path.realpath(root / path)
    if not Path(full).is_relative_to(root):
        raise Skipped("symlink out of the repository")
    try:
        return capped_read(full, MAX_FILE_BYTES)
    except OSError as error:
        raise Skipped("symlink loop" if error.errno == errno.ELOOP else "unreadable") from None


def capped_read(path: str, cap: int) -> bytes:
    """The bytes of the regular file `path` of at most `cap` bytes, checked by stat before it is
    opened (without following a link or waiting on a pipe) and again once open; raises Skipped
    for anything else, OSError when it cannot be read."""
    checked_size(os.stat(path), cap)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        checked_size(os.fstat(fd), cap)
        raw = handle.read(cap + 1)
    if len(raw) > cap:  # it grew after the stat
        raise Skipped("too large")
    return raw


def checked_size(info: os.stat_result, cap: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise Skipped("not a regular file")
    if info.st_size > cap:
        raise Skipped("too large")


def shown(path: str) -> str:
    """A listed path as text that prints: bytes that are not UTF-8 as `\\xNN` escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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
    root = root.resolve()
    gathered, seen, total = Gathered(), set(), 0
    for path in source_paths(root, languages, exclude, gathered.skipped):
        try:
            raw = source_bytes(root, path)
            reason = skip_reason(raw) or kept_or_why(raw, seen, total, max_bytes, guard)
        except Skipped as skip:
            reason = str(skip)
        if reason:
            gathered.skipped[reason] += 1
            gathered.named += [f"{shown(path)}: {reason}"] if reason in NAMED_REASONS else []
            continue
        total += len(raw)
        gathered.files.append(RepoFile(path, raw.decode("utf-8")))
    if not gathered.files:
        raise RepoError(f"{root} holds no source file to learn from{said(gathered.skipped)}")
    return gathered


def source_bytes(root: Path, path: str) -> bytes:
    """`read_inside`, for a path whose name is UTF-8 (the name is learnt from and recorded)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise Skipped("name not utf-8") from None
    return read_inside(root, path)


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


def counts_text(skipped: Mapping[str, int]) -> str:
    """Counts by reason as text, the largest first: '3 binary, 1 not utf-8' ('none' when empty)."""
    ordered = sorted(skipped.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n} {reason}" for reason, n in ordered) or "none"


def said(skipped: Mapping[str, int]) -> str:
    """`skipped` as the tail of a message: ' (skipped: 3 binary, 1 not utf-8)', or nothing."""
    return f" (skipped: {counts_text(skipped)})" if skipped else ""
