"""Next-edit tasks replayed from the commits of a git history (the shared next-edit format, FORMATS.md).

    python -m training.commit_tasks --git-dir DIR [--rev REV] [--max-commits N] [--out PATH] [--name NAME]

For each non-merge commit and each Python file it modifies (the file is in the commit and in its
first parent), the file's changes are read as the user's edits: difflib's line hunks of the file
before -> after, a hunk that replaces n lines by n lines counted as n changes of one line each (a
user fixing line after line). The first change is the user's edit (`original` -> `edited`, the
cursor at its end) and the file after the commit is `expected`: the follow-ups are the rest of
that commit's changes to the file. A commit whose only change is one change to one file is a
negative (`expected` is `edited`); a file with one change in a commit that changes more is left
out (its follow-ups lie in other files). Files over `--max-file-chars`, files with more than
`--max-changes` changes or `--max-changed-lines` changed lines, a first change over
`MAX_EDIT_LINES` lines and texts that are not UTF-8 are skipped and counted.

Each task's `kind`, by transparent rules on the changes' tokens (`kind_of`):
- `negative`: no follow-up;
- `rename`: the user's change replaces one word by another (an identifier, or a word of a string
  or a comment) and every follow-up is that replacement, word for word, on its lines;
- `literal`: the same with one whole string or number literal;
- `call_sites`: the user's change is on a `def NAME(` line and every follow-up's lines before
  held `NAME(`;
- `repeated_pattern`: every follow-up removes and inserts the same tokens as the user's change
  (the tokens they share at both ends left out);
- `signature`: the user's change is on a `def` line, the follow-ups anything else;
- `other`: the rest (follow-ups no rule could know).

git runs as a subprocess with `core.fsmonitor` off, no external diff and no text conversion, and
reads objects only: no repository code runs and no work tree is needed (a bare mirror does).
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

GIT = ("git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")
GIT_TIMEOUT_S = 120
MAX_FILE_CHARS = 200_000
MAX_CHANGES = 12
MAX_CHANGED_LINES = 60
MAX_EDIT_LINES = 12  # the user's own change: a burst of typing, not a pasted block
NEGATIVE, RENAME, LITERAL, CALL_SITES = "negative", "rename", "literal", "call_sites"
REPEATED, SIGNATURE, OTHER = "repeated_pattern", "signature", "other"
_TOKEN = re.compile(r"""[^\W\d]\w*|\d[\w.]*|"[^"\n]*"|'[^'\n]*'|\S""")  # a string is one token
_WORD_TOKEN = re.compile(r"[^\W\d]\w*|\d[\w.]*|\S")  # words inside strings and comments too
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_LITERAL = re.compile(r"""\d[\w.]*|"[^"\n]*"|'[^'\n]*'""")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")


class GitError(RuntimeError):
    """git failed or is missing: one line saying which command and why."""


@dataclass(frozen=True, slots=True)
class Change:
    """Lines `start .. end - 1` of the text before became `new` (whole lines, breaks included)."""

    start: int
    end: int
    old: tuple[str, ...]
    new: tuple[str, ...]


def git(git_dir: Path, *arguments: str) -> bytes:
    """The output of one read-only git command on `git_dir` (GitError when it fails)."""
    command = [*GIT, f"--git-dir={git_dir}", *arguments]
    try:
        done = subprocess.run(command, capture_output=True, timeout=GIT_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {arguments[0]}: {exc}") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise GitError(f"git {' '.join(arguments[:2])}: {reason[0] if reason else done.returncode}")
    return done.stdout


def commits(git_dir: Path, rev: str, count: int) -> list[str]:
    """The newest `count` non-merge commits reachable from `rev` that have a parent."""
    listed = git(git_dir, "rev-list", "--no-merges", "--min-parents=1", f"--max-count={count}", rev, "--")
    return listed.decode("ascii").split()


def changed_files(git_dir: Path, commit: str) -> list[str]:
    """The paths `commit` modifies, added or removed (against its first parent), without renames."""
    raw = git(git_dir, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
              "--name-only", "--no-commit-id", commit)
    return [name.decode("utf-8", "surrogateescape") for name in raw.split(b"\0") if name]


def blob_text(git_dir: Path, rev: str, path: str, max_chars: int) -> str | None:
    """The file at `rev:path` as text, or None when it is absent, too big or not UTF-8."""
    try:
        size = int(git(git_dir, "cat-file", "-s", f"{rev}:{path}"))
        if size > max_chars * 4:
            return None
        text = git(git_dir, "cat-file", "blob", f"{rev}:{path}").decode("utf-8")
    except (GitError, ValueError, UnicodeDecodeError):
        return None
    return text if len(text) <= max_chars else None


def line_changes(before: str, after: str) -> list[Change]:
    """The changes of `before` -> `after` in line order (see the module: one-for-one replacements
    count a change per line)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    found = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            found += [Change(i1 + k, i1 + k + 1, (old[i1 + k],), (new[j1 + k],)) for k in range(i2 - i1)]
        else:
            found.append(Change(i1, i2, tuple(old[i1:i2]), tuple(new[j1:j2])))
    return found


def applied_first(before: str, change: Change) -> tuple[str, int]:
    """(the text with only `change` made, the cursor: the end of its last new line's text, or
    where its lines were for a deletion)."""
    lines = before.splitlines(keepends=True)
    head = "".join(lines[:change.start])
    new = "".join(change.new)
    cursor = len(head) + len(new.rstrip("\r\n")) if new else len(head)
    return head + new + "".join(lines[change.end:]), cursor


def token_change(change: Change, tokens: re.Pattern = _WORD_TOKEN) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(removed tokens, inserted tokens) of a change: its tokens (words, or with `_TOKEN` strings
    whole) less those both sides share at their start and their end."""
    old, new = tokens.findall("".join(change.old)), tokens.findall("".join(change.new))
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return tuple(old[head:len(old) - tail]), tuple(new[head:len(new) - tail])


def _replaces_word(change: Change, old: str, new: str) -> bool:
    """True when the change's new lines are its old lines with every whole `old` made `new` (as
    it is: a backslash in `new` is no escape)."""
    before = "".join(change.old)
    return old in before and re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", lambda _: new, before) == "".join(change.new)


def kind_of(first: Change, follow_ups: Sequence[Change]) -> str:
    """The task's kind (see the module), from the user's change and the follow-ups."""
    if not follow_ups:
        return NEGATIVE
    removed, inserted = token_change(first)
    for (old, new), pattern, kind in ((token_change(first), _IDENTIFIER, RENAME),
                                      (token_change(first, _TOKEN), _LITERAL, LITERAL)):
        if len(old) == len(new) == 1 and pattern.fullmatch(old[0]) and pattern.fullmatch(new[0]) \
                and all(_replaces_word(c, old[0], new[0]) for c in follow_ups):
            return kind
    defined = next((m.group(1) for line in first.old + first.new if (m := _DEF.match(line))), None)
    if defined is not None and all(f"{defined}(" in "".join(c.old) for c in follow_ups):
        return CALL_SITES
    if (removed or inserted) and all(token_change(c) == (removed, inserted) for c in follow_ups):
        return REPEATED
    return SIGNATURE if defined is not None else OTHER


@dataclass(frozen=True, slots=True)
class Limits:
    """What a file's changes may be to make a task."""

    max_file_chars: int = MAX_FILE_CHARS
    max_changes: int = MAX_CHANGES
    max_changed_lines: int = MAX_CHANGED_LINES


def task_of(before: str, after: str, alone: bool, limits: Limits) -> tuple[dict | None, str]:
    """(the task's texts and kind, '') or (None, why it was skipped); `alone` when this file's
    changes are all its commit's."""
    changes = line_changes(before, after)
    lines = sum(max(c.end - c.start, len(c.new)) for c in changes)
    if not changes:
        return None, "no change"
    if len(changes) > limits.max_changes or lines > limits.max_changed_lines:
        return None, "diff too big"
    first = changes[0]
    if max(len(first.old), len(first.new)) > MAX_EDIT_LINES:
        return None, "first change too big"
    if len(changes) == 1 and not alone:
        return None, "one change, others in other files"
    edited, cursor = applied_first(before, first)
    expected = edited if len(changes) == 1 else after
    return {"original": before, "edited": edited, "cursor": cursor, "expected": expected,
            "kind": kind_of(first, changes[1:])}, ""


def commit_tasks(git_dir: Path, commit: str, name: str, limits: Limits, skipped: Counter) -> Iterator[dict]:
    """The tasks of one commit's Python files (skips counted in `skipped`)."""
    paths = changed_files(git_dir, commit)
    for path in (p for p in paths if p.endswith(".py")):
        before = blob_text(git_dir, f"{commit}^", path, limits.max_file_chars)
        after = blob_text(git_dir, commit, path, limits.max_file_chars)
        if before is None or after is None:
            skipped["added, removed, too big or not UTF-8"] += 1
            continue
        task, why = task_of(before, after, len(paths) == 1, limits)
        if task is None:
            skipped[why] += 1
            continue
        yield {"task_id": f"{name}/{commit[:12]}/{path}", "path": path, **task}


def per_kind(tasks: Sequence[dict], cap: int | None) -> list[dict]:
    """The first `cap` tasks of each kind, in their order (all when `cap` is None)."""
    seen: Counter = Counter()
    kept = []
    for task in tasks:
        seen[task["kind"]] += 1
        if cap is None or seen[task["kind"]] <= cap:
            kept.append(task)
    return kept


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training.commit_tasks", description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="a git directory (a bare mirror will do)")
    parser.add_argument("--rev", default="HEAD", help="the history to replay (default HEAD)")
    parser.add_argument("--max-commits", type=int, default=400, help="newest non-merge commits read (default 400)")
    parser.add_argument("--max-file-chars", type=int, default=MAX_FILE_CHARS)
    parser.add_argument("--max-changes", type=int, default=MAX_CHANGES, help="changes per file and commit")
    parser.add_argument("--max-changed-lines", type=int, default=MAX_CHANGED_LINES)
    parser.add_argument("--max-per-kind", type=int, default=None,
                        help="keep the newest N tasks of each kind (default all)")
    parser.add_argument("--name", default=None, help="the task ids' prefix (default: the git dir's name)")
    parser.add_argument("--out", type=Path, default=None, help="the .jsonl to write (default stdout)")
    return parser


def set_name_of(git_dir: Path) -> str:
    """A short name for a git dir: `owner+name/repo` mirrors give `owner+name`, `x/.git` gives `x`."""
    resolved = git_dir.resolve()
    return resolved.parent.name if resolved.name in ("repo", ".git") else resolved.name.removesuffix(".git")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.max_commits < 1:
        parser.error("--max-commits is at least 1")
    limits = Limits(args.max_file_chars, args.max_changes, args.max_changed_lines)
    name, skipped, tasks = args.name or set_name_of(args.git_dir), Counter(), []
    try:
        for commit in commits(args.git_dir, args.rev, args.max_commits):
            tasks += commit_tasks(args.git_dir, commit, name, limits, skipped)
    except GitError as exc:
        parser.exit(2, f"commit_tasks: {exc}\n")
    tasks = per_kind(tasks, args.max_per_kind)
    lines = "".join(json.dumps(task) + "\n" for task in tasks)
    if args.out is None:
        sys.stdout.write(lines)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(lines, encoding="utf-8")
    kinds = Counter(task["kind"] for task in tasks)
    print(f"{len(tasks)} tasks ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}); skipped: "
          f"{', '.join(f'{why} {n}' for why, n in sorted(skipped.items())) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
