"""`<|snippet|>` context for training windows, as the language server sends it
(`python -m training.snippet_data --corpus CORPUS --out FILE`).

With a completion the server sends the definitions (signature and docstring) of the names used
near the cursor, from this document outside the windows and from the other files of the
workspace, and the document's imports when the prefix window does not reach them
(`completion.fim.context_for`); the canvas lays them before the prefix
(`infill.canvas.fim_canvas`). A model uses them only if it was trained with them. This module
builds that context for windows of the corpus's training files, on the CPU before a GPU run:

- Which file each segment of `train.bin` is: the corpus's sources (this interpreter's standard
  library and the wheels in CORPUS/wheels) are read again and matched by content hash. Only
  `train.bin` is read, so the held-out files and the evaluation sets (excluded when the corpus
  was built) never enter.
- A file's package (the workspace its definitions are found in): its wheel's top-level package
  (`requests/requests/...`), the standard library's (`stdlib/email/...`), or, for a top-level
  module, its wheel (or the standard library's top level).
- Definitions and imports are the server's own (`completion.definitions`, with tree-sitter). Names
  are those near a pseudo-cursor on a random line of the window, ranked and fitted to the server's
  budget by `completion.context`, then laid out by `infill.canvas.snippet_tokens` in a quarter of
  the context.

The output (.npz) holds, per window, its offset in `train.bin` and its snippet token ids;
`infill train --snippets FILE --snippet-share S` puts them before a share of the training windows.
"""
from __future__ import annotations

import argparse
import hashlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from completion import context
from completion.definitions import DefinitionIndex, definitions, imports
from completion.positions import LINE_BREAK
from completion.settings import DEFAULT_SNIPPET_TOKENS
from completion.syntax import encode, new_parser
from infill.canvas import SNIPPET_SHARE, snippet_tokens
from infill.paths import work_dir
from infill.tokenizer import CodeTokenizer
from training.corpus import Report, is_validation, stdlib_sources, wheel_sources

WINDOWS_PER_FILE = 4  # at most; one per 1,024 tokens of the file


def package_of(name: str) -> str:
    """The workspace of a corpus file: `dist/pkg/...` -> `dist/pkg`; `dist/module.py` -> `dist`."""
    parts = name.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def ranked_snippets(names: list[str], index: DefinitionIndex, file: str, visible: range,
                    imports_text: str) -> list[str]:
    """Snippet texts, least important first, within the server's default budget: the imports (when
    given), then per name (nearest first) the server's ranking of its definitions, this file's
    above the package's, those on the window's lines left out (`completion.context`)."""
    ranked = context.rank_definitions(names, index.lookup, file, (), visible)
    candidates = context.snippet_candidates(ranked, imports_text, file)
    return [snippet.text for snippet in context.fit_snippets(candidates, DEFAULT_SNIPPET_TOKENS)]


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


def window_record(f: TrainFile, index: DefinitionIndex, imports_text: str, tok: CodeTokenizer,
                  seq_len: int, rng: np.random.Generator) -> tuple[int, list[int]]:
    """(offset in train.bin, snippet ids) of one window of the file at a random place, with a
    pseudo-cursor on a random line of the part of it that a canvas shows."""
    shown = seq_len - seq_len // SNIPPET_SHARE  # the window's tokens that follow the snippets
    at = int(rng.integers(0, max(1, len(f.ids) - shown)))
    first_line = int(np.count_nonzero(f.ids[:at] == tok.newline_id))
    window_lines = LINE_BREAK.split(tok.decode(f.ids[at:at + shown].tolist()))
    cursor = int(rng.integers(0, len(window_lines)))
    prefix, suffix = "\n".join(window_lines[:cursor + 1]), "\n".join(window_lines[cursor + 1:])
    visible = range(first_line, first_line + len(window_lines))
    texts = ranked_snippets(context.names_near(prefix, suffix), index, f.name, visible, imports_text if at else "")
    return f.start + at, snippet_tokens(tok, texts, seq_len // SNIPPET_SHARE)


def package_index(files: list[TrainFile]) -> tuple[DefinitionIndex, dict[str, str]]:
    """The definitions of one package's files by name (files in name order), and each file's
    imports, as the server finds them."""
    index, imports_of = DefinitionIndex(), {}
    parser = new_parser("python")
    for f in sorted(files, key=lambda f: f.name):
        tree = parser.parse(encode(f.text))
        index.update(f.name, definitions(tree, f.text, f.name))
        imports_of[f.name] = imports(tree, f.text)
    return index, imports_of


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
        index, imports_of = package_index(files)
        for f in files:
            imports_text = imports_of[f.name]
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
