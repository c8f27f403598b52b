"""`<|snippet|>` context for training windows, as the language server sends it
(`python -m infill.snippet_data --corpus CORPUS --out FILE`).

With a completion the server sends the definitions (signature and docstring) of the names used
near the cursor, from this document outside the windows and from the other files of the
workspace, and the document's imports when the prefix window does not reach them
(`completion.pipeline.context_for`); the canvas lays them before the prefix
(`infill.canvas.fim_canvas`). A model uses them only if it was trained with them. This module
builds that context for windows of the corpus's training files, on the CPU before a GPU run:

- Which file each segment of `train.bin` is: the corpus's sources (this interpreter's standard
  library and the wheels in CORPUS/wheels) are read again and matched by content hash. Only
  `train.bin` is read, so the held-out files and the evaluation sets (excluded when the corpus
  was built) never enter.
- A file's package (the workspace its definitions are found in): its wheel's top-level package
  (`requests/requests/...`), the standard library's (`stdlib/email/...`), or, for a top-level
  module, its wheel (or the standard library's top level).
- Definitions come from Python's `ast`, laid out as `completion.definitions` lays them with
  tree-sitter (infill does not import the front ends; `tests/test_snippet_data.py` checks that
  the two agree). Names are those near a pseudo-cursor on a random line of the window, ranked and
  fitted to the server's budget as `completion.context` does, then laid out by
  `infill.canvas.snippet_tokens` in a quarter of the context.

The output (.npz) holds, per window, its offset in `train.bin` and its snippet token ids;
`infill train --snippets FILE --snippet-share S` puts them before a share of the training windows.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import io
import math
import re
import tokenize
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from infill.canvas import SNIPPET_SHARE, snippet_tokens
from infill.corpus import Report, is_validation, stdlib_sources, wheel_sources
from infill.noising import Special, noise_window
from infill.paths import work_dir
from infill.tokenizer import CodeTokenizer

# The server's rules (completion.context, completion.definitions, completion.settings), mirrored.
NEAR_LINES_BEFORE, NEAR_LINES_AFTER, MAX_NAMES = 30, 10, 40
MAX_DEFINITIONS_PER_NAME = 3
PRIORITY_IMPORTS, PRIORITY_SAME_DOCUMENT, PRIORITY_WORKSPACE = 900, 600, 200
SNIPPET_BUDGET_TOKENS, CHARS_PER_TOKEN = 384, 3.2
MAX_SNIPPET_CHARS, MAX_IMPORT_CHARS = 600, 2000
WINDOWS_PER_FILE = 4  # at most; one per 1,024 tokens of the file
FULL_SHARE = 0.5  # training rows that keep every snippet of their record; the others keep the most important few
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    text: str  # signature and docstring, or the comment above
    line: int  # 0-based line of the `def` / `class` keyword


def _offsets(data: bytes) -> list[int]:
    """Byte offset of each line's start (ast columns count UTF-8 bytes, as tree-sitter's do)."""
    starts = [0]
    starts += [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    return starts


def _at(starts: list[int], line: int, col: int) -> int:
    return starts[line - 1] + col


def _comments(text: str) -> dict[int, str]:
    """The comment on each line that has one (1-based line -> text from `#`)."""
    try:
        return {t.start[0]: t.string.rstrip() for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type == tokenize.COMMENT}
    except (tokenize.TokenError, SyntaxError):
        return {}


def _comment_owners(tree: ast.Module, comments: dict[int, str], lines: list[bytes]) -> dict[int, str]:
    """id of each statement -> the comment that tree-sitter makes its previous sibling: one on the
    line right above it, in the same block (not the first statement of a nested block, whose
    comment above goes to the compound statement), and a trailing one only after a simple statement."""
    owners = {}
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if not isinstance(block, list):
                continue
            for i, node in enumerate(block):
                text = comments.get(node.lineno - 1)
                if text is None or (i == 0 and not isinstance(parent, ast.Module)):
                    continue
                before = block[i - 1] if i else None
                trailing = not lines[node.lineno - 2].lstrip().startswith(b"#")
                if trailing and (before is None or hasattr(before, "body") or before.end_lineno != node.lineno - 1):
                    continue
                owners[id(node)] = text
    return owners


def _body_start(first: ast.stmt, starts: list[int]) -> int:
    """Byte offset where a body begins: its first statement, or that statement's first decorator."""
    decorators = getattr(first, "decorator_list", None)
    line = decorators[0].lineno if decorators else first.lineno
    return _at(starts, line, first.col_offset)


def _is_docstring(statement: ast.stmt) -> bool:
    """A string statement (tree-sitter's `string`: plain, bytes or f-string)."""
    if not isinstance(statement, ast.Expr):
        return False
    value = statement.value
    return isinstance(value, ast.JoinedStr) or (isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes)))


def _snippet(node: ast.AST, data: bytes, starts: list[int], above: str) -> str:
    """Signature (up to the body) and docstring, else the comment above (`completion.definitions`)."""
    first = node.body[0]
    start = _at(starts, node.lineno, node.col_offset)
    signature = data[start:_body_start(first, starts)].decode("utf-8", "replace").rstrip()
    if _is_docstring(first):
        end = _at(starts, first.end_lineno, first.end_col_offset)
        doc = data[_at(starts, first.lineno, first.col_offset):end].decode("utf-8", "replace")
        return (signature + "\n" + " " * first.col_offset + doc)[:MAX_SNIPPET_CHARS]
    return ((above + "\n" if above else "") + signature)[:MAX_SNIPPET_CHARS]


def python_definitions(text: str) -> list[Definition]:
    """Functions, methods and classes a Python file defines (nested ones too), in file order."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    data = text.encode("utf-8")
    starts = _offsets(data)
    owners = _comment_owners(tree, _comments(text), data.split(b"\n"))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    found = sorted((node for node in ast.walk(tree) if isinstance(node, kinds)),
                   key=lambda node: (node.lineno, node.col_offset))
    definitions = []
    for node in found:
        above = "" if node.decorator_list else owners.get(id(node), "")
        definitions.append(Definition(node.name, _snippet(node, data, starts, above), node.lineno - 1))
    return definitions


def python_imports(text: str) -> str:
    """The file's top-level import lines, joined (at most MAX_IMPORT_CHARS), as `completion.definitions.imports`."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ""
    data = text.encode("utf-8")
    starts = _offsets(data)
    lines = [data[_at(starts, node.lineno, node.col_offset):_at(starts, node.end_lineno, node.end_col_offset)]
             .decode("utf-8", "replace").rstrip() for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(lines)[:MAX_IMPORT_CHARS]


def package_of(name: str) -> str:
    """The workspace of a corpus file: `dist/pkg/...` -> `dist/pkg`; `dist/module.py` -> `dist`."""
    parts = name.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def names_near(prefix: str, suffix: str) -> list[str]:
    """Identifiers around the cursor, nearest first, each once (`completion.context.names_near`)."""
    found: list[str] = []
    for line in reversed(_LINE_BREAK.split(prefix)[-NEAR_LINES_BEFORE:]):
        found.extend(reversed(_IDENTIFIER.findall(line)))
    for line in _LINE_BREAK.split(suffix)[:NEAR_LINES_AFTER]:
        found.extend(_IDENTIFIER.findall(line))
    return list(dict.fromkeys(found))[:MAX_NAMES]


Indexed = tuple[str, Definition]  # (file name, definition)


def ranked_snippets(names: list[str], index: dict[str, list[Indexed]], file: str, visible: range,
                    imports_text: str) -> list[str]:
    """Snippet texts, least important first, within the server's budget: the imports (when given),
    then per name (nearest first) up to three definitions, this file's above the package's, those
    on the window's lines left out (`completion.context.rank_definitions`, `fit_snippets`)."""
    ranked = [(PRIORITY_IMPORTS, imports_text)] if imports_text else []
    seen = set()
    for rank, name in enumerate(names):
        for where, definition in index.get(name, [])[:MAX_DEFINITIONS_PER_NAME]:
            key = (where, definition.line, definition.name)
            if key in seen or (where == file and definition.line in visible):
                continue
            seen.add(key)
            base = PRIORITY_SAME_DOCUMENT if where == file else PRIORITY_WORKSPACE
            ranked.append((base - rank, definition.text))
    ranked.sort(key=lambda pair: -pair[0])
    chosen, used = [], 0
    for priority, text in ranked:
        cost = math.ceil(len(text) / CHARS_PER_TOKEN)
        if used + cost <= SNIPPET_BUDGET_TOKENS:
            chosen.append((priority, text))
            used += cost
    return [text for _, text in sorted(chosen, key=lambda pair: pair[0])]


def source_names(wheels: Path) -> dict[str, str]:
    """Content hash -> corpus name of every source the corpus may hold (the first of duplicates, as the build kept)."""
    names: dict[str, str] = {}
    report = Report()
    sources = [stdlib_sources(report)] + [wheel_sources(w, report) for w in sorted(wheels.glob("*.whl"))]
    for source in sources:
        for name, raw in source:
            names.setdefault(hashlib.sha256(raw).hexdigest(), name)
    return names


@dataclass(frozen=True, slots=True)
class TrainFile:
    name: str
    text: str
    start: int  # offset in train.bin of the file's first token (after its <|file|>)
    ids: np.ndarray  # (N,) its tokens


def train_files(train_bin: Path, tok: CodeTokenizer, names: dict[str, str]) -> Iterator[TrainFile]:
    """The files of train.bin that a source is known for (matched by the hash of their decoded text)."""
    ids = np.memmap(train_bin, dtype=np.uint16, mode="r")
    bounds = np.append(np.flatnonzero(ids == tok.file_id), len(ids))
    for begin, end in zip(bounds[:-1], bounds[1:]):
        file_ids = np.asarray(ids[begin + 1:end])
        text = tok.decode(file_ids.tolist())
        name = names.get(hashlib.sha256(text.encode("utf-8")).hexdigest())
        if name is not None:
            yield TrainFile(name, text, int(begin) + 1, file_ids)


def window_record(f: TrainFile, index: dict[str, list[Indexed]], imports_text: str, tok: CodeTokenizer,
                  seq_len: int, rng: np.random.Generator) -> tuple[int, list[int]]:
    """(offset in train.bin, snippet ids) of one window of the file at a random place, with a
    pseudo-cursor on a random line of the part of it that a canvas shows."""
    shown = seq_len - seq_len // SNIPPET_SHARE  # the window's tokens that follow the snippets
    at = int(rng.integers(0, max(1, len(f.ids) - shown)))
    first_line = int(np.count_nonzero(f.ids[:at] == tok.newline_id))
    window_lines = _LINE_BREAK.split(tok.decode(f.ids[at:at + shown].tolist()))
    cursor = int(rng.integers(0, len(window_lines)))
    prefix, suffix = "\n".join(window_lines[:cursor + 1]), "\n".join(window_lines[cursor + 1:])
    visible = range(first_line, first_line + len(window_lines))
    texts = ranked_snippets(names_near(prefix, suffix), index, f.name, visible, imports_text if at else "")
    return f.start + at, snippet_tokens(tok, texts, seq_len // SNIPPET_SHARE)


def package_index(files: list[TrainFile]) -> dict[str, list[Indexed]]:
    """Name -> (file, definition) over the files of one package, in file-name order."""
    index: dict[str, list[Indexed]] = defaultdict(list)
    for f in sorted(files, key=lambda f: f.name):
        for definition in python_definitions(f.text):
            index[definition.name].append((f.name, definition))
    return index


def build(corpus: Path, wheels: Path, seq_len: int, seed: int) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays of the snippet file and a report of what went in."""
    tok = CodeTokenizer(corpus / "tokenizer.json")
    by_package: dict[str, list[TrainFile]] = defaultdict(list)
    for f in train_files(corpus / "train.bin", tok, source_names(wheels)):
        if is_validation(f.name, 1.0):
            raise ValueError(f"{f.name} is a held-out file but train.bin holds it: rebuild the corpus")
        by_package[package_of(f.name)].append(f)
    rng = np.random.default_rng(seed)
    starts, snippets = [], []
    for package in sorted(by_package):
        files = by_package[package]
        index = package_index(files)
        for f in files:
            imports_text = python_imports(f.text)
            for _ in range(min(WINDOWS_PER_FILE, -(-len(f.ids) // seq_len))):
                start, ids = window_record(f, index, imports_text, tok, seq_len, rng)
                if ids:
                    starts.append(start)
                    snippets.append(ids)
    offsets = np.cumsum([0] + [len(s) for s in snippets])
    arrays = {"starts": np.asarray(starts, np.int64), "offsets": offsets.astype(np.int64),
              "ids": np.asarray([i for s in snippets for i in s], np.uint16), "seq_len": np.asarray(seq_len)}
    segments = int(np.count_nonzero(np.memmap(corpus / "train.bin", dtype=np.uint16, mode="r") == tok.file_id))
    report = {"files": sum(map(len, by_package.values())), "of_files": segments, "packages": len(by_package),
              "windows": len(starts),
              "snippet_tokens_mean": round(float(np.diff(offsets).mean()), 1) if starts else 0.0}
    return arrays, report


class SnippetWindows:
    """Training rows `[<|file|>] [snippets] [window]` from a file written by this module."""

    def __init__(self, path: Path, file_id: int, snippet_id: int):
        data = np.load(path)
        self.starts, self.offsets, self.ids = data["starts"], data["offsets"], data["ids"].astype(np.int64)
        self.file_id, self.snippet_id = file_id, snippet_id
        if len(self.starts) == 0:
            raise ValueError(f"{path} holds no windows: build it again with `python -m infill.snippet_data`")

    def snippets(self, i: int, rng: np.random.Generator, room: int) -> np.ndarray:
        """Record i's snippet ids, or at 1 - FULL_SHARE only its last (most important) few,
        cut at a snippet's start so that they fit `room`."""
        ids = self.ids[self.offsets[i]:self.offsets[i + 1]]
        cuts = np.flatnonzero(ids == self.snippet_id)
        cuts = cuts[len(ids) - cuts <= room]
        if len(cuts) == 0:
            return ids[:0]
        keep_from = cuts[0] if rng.random() < FULL_SHARE else rng.choice(cuts)
        return ids[keep_from:]

    def row(self, train: np.ndarray, rng: np.random.Generator, length: int) -> tuple[np.ndarray, int]:
        """One row (length,) of a random record over the token file `train`, and how many of its
        leading positions (head and snippets) are context, never holes."""
        i = int(rng.integers(0, len(self.starts)))
        snippets = self.snippets(i, rng, length // SNIPPET_SHARE)
        keep = 1 + len(snippets)
        start = min(int(self.starts[i]), len(train) - (length - keep))
        window = np.asarray(train[start:start + length - keep], dtype=np.int64)
        return np.concatenate([[self.file_id], snippets, window]), keep


def noised_row(row: np.ndarray, keep: int, sp: Special, rng: np.random.Generator):
    """(input ids, target ids, loss weights) of a row (L,) whose first `keep` positions are
    context: the rest is noised as a corpus window (`infill.noising.noise_window`)."""
    inputs, targets, weights = noise_window(row[keep:], sp, rng, len(row) - keep)
    return (np.concatenate([row[:keep], inputs]), np.concatenate([row[:keep], targets]),
            np.concatenate([np.zeros(keep, np.float32), weights]))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=work_dir() / "corpus", help="folder made by `infill corpus build`")
    p.add_argument("--wheels", type=Path, help="the wheels the corpus was built from (default CORPUS/wheels)")
    p.add_argument("--seq-len", type=int, default=1024, help="training window: snippets take a quarter of it")
    p.add_argument("--seed", type=int, default=0, help="seed of the window and cursor choice")
    p.add_argument("--out", type=Path, required=True, help=".npz file to write")
    args = p.parse_args(argv)
    arrays, report = build(args.corpus, args.wheels or args.corpus / "wheels", args.seq_len, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("wb") as out:
        np.savez_compressed(out, **arrays)
    print(f"{args.out}: {report} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
