"""Keystroke-to-answer latency of the language server, with a real LSP client replaying typing.

    python -m bench.lsp_latency [--tasks PATH] [--limit N] [--json]
    python -m bench.lsp_latency --worker ADDRESS --backend URL [--backend-kind KIND]  # A against B

Each FIM task (FORMATS.md) becomes a document: its prompt and suffix, with the hole empty. A
pygls client, talking LSP over stdio to `python -m lsp_server` (which starts its own worker on
the bundled model, or `$INFILL_MODEL`), types the reference middle into the hole at a human pace
(8 to 12 characters a second, seeded), sending each character as an incremental `didChange` and
then an automatic `textDocument/inlineCompletion`, without waiting for the previous answer, as an
editor does. Every non-empty answer is reported with `infill/didShowCompletion`, so the server's
stats log says which answers came from its typing-through cache.

Reported, over all keystrokes of all tasks:
- p50 and p99 keystroke-to-answer latency (ms), over the answers the user would see: an answer that
  came empty after a newer keystroke had been sent was superseded and is left out;
- within deadline: the share of all requests answered within the deadline;
- cache hit rate: the share of all requests answered from the typing-through cache;
- accepted chars per shown: of the characters shown, the share that the user then typed (the
  length of the common start of the shown text and the rest of the reference middle);
- by mode: p50 and p99 of the shown answers per completion mode (single line, multi-line), as the
  server's stats log names them (the latency targets are about single lines).

A middle that ends with a line break is typed on a blank line of its own (the document holds the
break from the start), as a user writes a new line.

With `--worker ADDRESS` the server uses that running worker; with `--backend URL` an upstream
(`upstream`: an OpenAI-style server, e.g. this project's gateway over the same worker). Given
both, the same typing is replayed on each path in turn, and the table and JSON add each path's
figures, with `lost` (requests that got no reply at all), and what the upstream adds to the p50
(`p50_added_ms`).

A human table goes to stdout; with `--json` its last line is one JSON object with those figures.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.quality import load_tasks, percentile, select_tasks, set_name
from infill.paths import REPO_ROOT

logger = logging.getLogger("bench.lsp_latency")

DEFAULT_TASKS = (REPO_ROOT.parent / "shared" / "data" / "human-eval-infilling"
                 / "HumanEval-SingleLineInfilling.jsonl.gz")
CHARS_PER_SECOND = (8.0, 12.0)  # a human typing pace
WARM_UP_S = 180.0  # the worker loads its model while the CPU may be busy
URI_ROOT = "file:///tmp/infill-bench/"


@dataclass(slots=True)
class Keystroke:
    """One request: sent after a typed character, and what came back."""

    sent: float
    rest: str  # the reference middle still to type after this keystroke
    answered: float = 0.0
    text: str = ""  # the first item's text ("" for none)
    request_id: str = ""  # the server's id of the shown answer ("" for none)
    superseded: bool = False

    @property
    def latency_ms(self) -> float:
        return (self.answered - self.sent) * 1000.0


def intervals(count: int, rng: random.Random) -> list[float]:
    """Seconds between keystrokes at a human pace."""
    return [1.0 / rng.uniform(*CHARS_PER_SECOND) for _ in range(count)]


def common_start(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    size = 0
    for x, y in zip(a, b):
        if x != y:
            break
        size += 1
    return size


def by_mode(keystrokes: Sequence[Keystroke], modes: dict[str, str]) -> dict:
    """Per completion mode: how many answers were shown, and their p50 and p99 latency."""
    latencies: dict[str, list[float]] = {}
    for k in keystrokes:
        if k.text and k.request_id in modes:
            latencies.setdefault(modes[k.request_id], []).append(k.latency_ms)
    return {mode: {"answers": len(ms), "p50_ms": round(percentile(ms, 50), 1),
                   "p99_ms": round(percentile(ms, 99), 1)} for mode, ms in sorted(latencies.items())}


def summarize(keystrokes: Sequence[Keystroke], cache_hits: int, deadline_ms: int,
              modes: dict[str, str] | None = None) -> dict:
    """The benchmark's figures (see the module docstring); `modes`: request id to completion mode."""
    seen = [k.latency_ms for k in keystrokes if not k.superseded]
    shown = [k for k in keystrokes if k.text]
    shown_chars = sum(len(k.text) for k in shown)
    accepted = sum(common_start(k.text, k.rest) for k in shown)
    total = len(keystrokes)
    return {
        "p50_ms": round(percentile(seen, 50) or 0.0, 1),
        "p99_ms": round(percentile(seen, 99) or 0.0, 1),
        "within_deadline": round(sum(k.latency_ms <= deadline_ms for k in keystrokes) / total, 4)
        if total else 0.0,
        "cache_hit_rate": round(cache_hits / total, 4) if total else 0.0,
        "accepted_chars_per_shown": round(accepted / shown_chars, 4) if shown_chars else 0.0,
        "by_mode": by_mode(keystrokes, modes or {}),
    }


def format_table(figures: dict, keystrokes: Sequence[Keystroke], tasks: int, name: str) -> str:
    superseded = sum(k.superseded for k in keystrokes)
    shown = sum(bool(k.text) for k in keystrokes)
    rows = [("set", name), ("tasks", tasks), ("keystrokes", len(keystrokes)),
            ("answers shown", shown), ("superseded", superseded),
            ("p50 ms", figures["p50_ms"]), ("p99 ms", figures["p99_ms"]),
            ("within deadline", figures["within_deadline"]),
            ("cache hit rate", figures["cache_hit_rate"]),
            ("accepted chars / shown", figures["accepted_chars_per_shown"])]
    rows += [(f"{mode} p50/p99", f"{row['p50_ms']} / {row['p99_ms']} ({row['answers']} shown)")
             for mode, row in figures["by_mode"].items()]
    return "\n".join(f"{label:<24}{value}" for label, value in rows)


def advance(position: types.Position, char: str) -> types.Position:
    """The cursor after typing `char` at `position` (columns in UTF-16 code units)."""
    if char == "\n":
        return types.Position(line=position.line + 1, character=0)
    units = len(char.encode("utf-16-le")) // 2
    return types.Position(line=position.line, character=position.character + units)


def typed_middle(middle: str) -> tuple[str, str]:
    """(what the user types, the line break already in the document): a middle that ends a line
    is typed on a line of its own, as a user writes a new line, not before the next line's text."""
    if middle.endswith("\n"):
        return middle[:-1], "\n"
    return middle, ""


def position_of(text: str) -> types.Position:
    """The LSP position of the end of `text`."""
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)


def mark_superseded(keystrokes: Sequence[Keystroke]) -> None:
    """An empty answer that came after the next keystroke was sent was superseded by it."""
    for keystroke, following in zip(keystrokes, keystrokes[1:]):
        keystroke.superseded = not keystroke.text and following.sent < keystroke.answered


class Replay:
    """A client session against `python -m lsp_server` that replays typing."""

    def __init__(self, client: LanguageClient, rng: random.Random) -> None:
        self.client, self.rng = client, rng

    async def inline(self, uri: str, position: types.Position) -> list[types.InlineCompletionItem]:
        context = types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic)
        result = await self.client.text_document_inline_completion_async(types.InlineCompletionParams(
            context=context, text_document=types.TextDocumentIdentifier(uri), position=position))
        return list(result or [])

    async def ask(self, uri: str, position: types.Position, keystroke: Keystroke) -> None:
        items = await self.inline(uri, position)
        keystroke.answered = time.monotonic()
        keystroke.text = items[0].insert_text if items else ""
        if items and items[0].command is not None:
            keystroke.request_id = items[0].command.arguments[0]["requestId"]
            self.client.protocol.notify("infill/didShowCompletion", items[0].command.arguments[0])

    def open(self, uri: str, text: str, language_id: str = "python") -> None:
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=uri, language_id=language_id, version=1, text=text)))

    def change(self, uri: str, version: int, where: types.Range, text: str) -> None:
        """One incremental `didChange`: `where` becomes `text`."""
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=where, text=text)]))

    def insert(self, uri: str, version: int, position: types.Position, text: str) -> None:
        self.change(uri, version, types.Range(start=position, end=position), text)

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri)))

    async def type_task(self, number: int, task: dict, max_chars: int) -> list[Keystroke]:
        """Open the task's document, type its middle into the hole at a human pace, close it."""
        uri = f"{URI_ROOT}task{number}.py"
        typed, line_end = typed_middle(task["canonical_solution"])
        self.open(uri, task["prompt"] + line_end + task["suffix"])
        position, keystrokes, asked = position_of(task["prompt"]), [], []
        for index, (char, pause) in enumerate(zip(typed[:max_chars], intervals(len(typed), self.rng))):
            await asyncio.sleep(pause)
            self.insert(uri, index + 2, position, char)
            position = advance(position, char)
            keystroke = Keystroke(time.monotonic(), typed[index + 1:])
            keystrokes.append(keystroke)
            asked.append(asyncio.ensure_future(self.ask(uri, position, keystroke)))
        await asyncio.gather(*asked)
        mark_superseded(keystrokes)
        self.close(uri)
        return keystrokes

    async def warm_up(self) -> bool:
        """Wait until the server's worker answers (it loads the model first)."""
        uri = f"{URI_ROOT}warm-up.py"
        self.open(uri, "import o\n")
        deadline = time.monotonic() + WARM_UP_S
        answered = False
        while not answered and time.monotonic() < deadline:
            answered = bool(await self.inline(uri, types.Position(line=0, character=8)))
        self.close(uri)
        return answered


def shown_events(stats_log: Path) -> list[dict]:
    """The `show` lines of the server's stats log."""
    if not stats_log.exists():
        return []
    lines = [json.loads(line) for line in stats_log.read_text().splitlines() if line.strip()]
    return [line for line in lines if line["event"] == "show"]


def count_cache_hits(stats_log: Path) -> int:
    """Shown answers that the server's stats log marks as typed through from its cache."""
    return sum(1 for line in shown_events(stats_log) if line["cache_hit"])


async def start_server(folder: Path, options: dict, *flags: str) -> LanguageClient:
    """`python -m lsp_server FLAGS` on stdio, its log in `folder/lsp.log`, initialized with
    `options` as its settings."""
    client = LanguageClient("infill-bench", "0")
    await client.start_io(sys.executable, "-m", "lsp_server", "--log-file", str(folder / "lsp.log"),
                          *flags, cwd=REPO_ROOT)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), initialization_options=options))
    client.initialized(types.InitializedParams())
    return client


async def stop_server(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def replay(tasks: Sequence[dict], args: argparse.Namespace, folder: Path,
                 flags: Sequence[str] = ()) -> list[Keystroke]:
    """Start the server (with `flags`), warm it up, type every task, stop it."""
    options = {"deadlineMs": args.deadline_ms, "statsLog": str(folder / "stats.jsonl")}
    client = await start_server(folder, options, *flags)
    session = Replay(client, random.Random(args.seed))
    try:
        if not await session.warm_up():
            raise RuntimeError(f"the server's worker gave no completion within {WARM_UP_S:.0f} s; "
                               f"see {folder / 'lsp.log'}")
        keystrokes = []
        for number, task in enumerate(tasks):
            keystrokes += await session.type_task(number, task, args.max_chars)
            logger.info("task %d of %d: %d keystrokes", number + 1, len(tasks), len(keystrokes))
    finally:
        await stop_server(client)
    return keystrokes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.lsp_latency",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS,
                        help=f"FIM tasks, .jsonl or .jsonl.gz (default {DEFAULT_TASKS})")
    parser.add_argument("--limit", type=int, default=10, help="type the first N tasks (default 10)")
    parser.add_argument("--max-chars", type=int, default=60,
                        help="type at most this many characters per task (default 60)")
    parser.add_argument("--deadline-ms", type=int, default=1500,
                        help="the server's deadline setting (default 1500)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the typing pace (default 0)")
    parser.add_argument("--worker", metavar="ADDRESS", default=None,
                        help="the running worker the server uses (default: it starts its own)")
    parser.add_argument("--backend", metavar="URL", default=None,
                        help="an upstream for the server (`infill lsp --backend`); with --worker, "
                             "both paths are replayed and compared")
    parser.add_argument("--backend-kind", default="openai", choices=("openai", "fim", "llama.cpp"),
                        help="the upstream's dialect (default openai)")
    parser.add_argument("--json", action="store_true",
                        help="end with one JSON line: p50_ms, p99_ms, within_deadline, "
                             "cache_hit_rate, accepted_chars_per_shown, by_mode, lost (and with "
                             "--worker and --backend: worker, backend, p50_added_ms)")
    return parser


def paths_of(args: argparse.Namespace) -> dict[str, list[str]]:
    """The server's flags for each path to replay, by name."""
    paths = {}
    if args.worker is not None or args.backend is None:
        paths["worker"] = ["--worker", args.worker] if args.worker else []
    if args.backend is not None:
        paths["backend"] = ["--backend", args.backend, "--backend-kind", args.backend_kind]
    return paths


def measure(tasks: Sequence[dict], args: argparse.Namespace, flags: Sequence[str]) -> tuple[dict, list[Keystroke]]:
    with tempfile.TemporaryDirectory(prefix="infill-lsp-bench-") as folder:
        keystrokes = asyncio.run(replay(tasks, args, Path(folder), flags))
        hits = count_cache_hits(Path(folder) / "stats.jsonl")
        modes = {line["request_id"]: line["mode"] for line in shown_events(Path(folder) / "stats.jsonl")}
    return summarize(keystrokes, hits, args.deadline_ms, modes), keystrokes


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # at INFO it logs every message
    if not args.tasks.is_file():
        build_parser().error(f"--tasks {args.tasks} is not a file")
    tasks = select_tasks(load_tasks(args.tasks), limit=args.limit)
    results, paths = {}, paths_of(args)
    for name, flags in paths.items():
        figures, keystrokes = measure(tasks, args, flags)
        table = format_table(figures, keystrokes, len(tasks), set_name(args.tasks))
        if len(paths) == 2:
            figures = {**figures, "lost": sum(k.answered == 0.0 for k in keystrokes)}
            table = f"-- {name} path\n{table}\n{'lost':<24}{figures['lost']}"
        results[name] = figures
        print(table)
    if len(results) == 2:
        added = round(results["backend"]["p50_ms"] - results["worker"]["p50_ms"], 1)
        print(f"{'p50 added by backend':<24}{added} ms")
        figures = {**results["backend"], "worker": results["worker"], "backend": results["backend"],
                   "p50_added_ms": added}
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
