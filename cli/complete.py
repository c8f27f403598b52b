"""`infill complete FILE --line N --col M`: one completion from the command line, as an editor shows it.

It completes the file as the language server completes a document that an editor has just opened
on its own, with the pipeline they share (`completion.fim`'s `plan` and `finish`): the decision at
the cursor from the file's tree (for an automatic trigger, or with `--invoked` for the user's
request), the windows and the definitions of the same file as snippets, one request per
candidate, and the same post-processing and ranking. Where the decision is "no completion" no
worker is asked. Otherwise the requests go through `engine.client.sync_client.WorkerClient` to
the worker given by `--worker`, or to a local worker on the bundled model that it starts and
stops itself, or with `--backend URL` (and its `--backend-*` flags) to that model server
(`upstream`), and it prints the completion with its timings: a short human report, or with `--json` one JSON
object. Exit codes: 0 answered (possibly with no completion), 1 the worker or upstream failed, 2 bad input
(a file that is not UTF-8, a position outside it, bad flags).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import zmq

from completion import fim
from completion.positions import split_at, split_lines
from completion.requests import new_request_id
from completion.settings import DEFAULT_DEADLINE_MS, DEFAULT_MAX_TOKENS, DEFAULT_MODE, Settings
from engine.client.calls import WorkerError, WorkerTimeout
from engine.launch import WorkerStartError, spawn_local_worker, stop_worker
from engine.wire.protocol import MAX_DEADLINE_MS, MAX_TOKENS, SETTING_MODES, CompleteRequest, Result
from engine.client.sync_client import WorkerClient
from lsp_server import logs
from upstream.backend import HttpBackend
from upstream.config import BackendSettingError, add_backend_flags, backend_setting, upstream_of
from upstream.dialects import printable

EXIT_WORKER_FAILED = 1
EXIT_BAD_INPUT = 2


class InputError(Exception):
    """The file or the position cannot be completed; the message says why."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="infill complete", description="Complete FILE at one position and print the "
                                            "completion with its timings.")
    parser.add_argument("file", type=Path, metavar="FILE", help="a UTF-8 text file")
    parser.add_argument("--line", type=int, required=True, metavar="N",
                        help="the cursor's line, 0-based as in LSP")
    parser.add_argument("--col", type=int, required=True, metavar="M",
                        help="the cursor's column, 0-based as in LSP, in UTF-16 code units "
                             "(the character index, except after characters outside the BMP)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (completion, completions, mode, confidence, "
                             "forward_passes, stop_reason, timings) instead of the human report")
    parser.add_argument("--worker", metavar="ADDRESS", default=None,
                        help="use the running worker at ADDRESS (e.g. tcp://127.0.0.1:5555) "
                             "instead of starting a local one on the bundled model")
    parser.add_argument("--mode", choices=SETTING_MODES, default=DEFAULT_MODE,
                        help="auto: decided at the cursor as the language server decides (no "
                             "completion, single line or multi-line); single_line or multi_line "
                             f"replace that shape, never a \"no completion\" (default {DEFAULT_MODE})")
    parser.add_argument("--invoked", action="store_true",
                        help="complete as when the user asks for a completion (an editor's Invoked "
                             "trigger): also inside strings, comments and mid-line, with every "
                             "candidate the language server asks for (under completions, best "
                             "first); without it, as an editor completes while the user types")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, metavar="N",
                        help=f"most tokens to write, 1..{MAX_TOKENS} (default {DEFAULT_MAX_TOKENS})")
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS, metavar="N",
                        help=f"time budget at the worker, 1..{MAX_DEADLINE_MS} ms; at the deadline "
                             f"the worker answers with what it has (default {DEFAULT_DEADLINE_MS})")
    add_backend_flags(parser)
    return parser


def read_hole(path: Path, line: int, col: int) -> tuple[str, str]:
    """(prefix, suffix) of the UTF-8 file at `path` around an LSP position; InputError if none."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start}); infill complete reads UTF-8 files only") from None
    hole = split_at(text, line, col)
    if hole is None:
        raise InputError(f"position {line}:{col} is outside {path}: {_bounds(text, line)}")
    return hole


def _bounds(text: str, line: int) -> str:
    lines = split_lines(text)
    if not 0 <= line < len(lines):
        return f"its lines are 0..{len(lines) - 1}"
    units = len(lines[line].encode("utf-16-le")) // 2
    return f"the columns of line {line} are 0..{units} (UTF-16 code units)"


def ask_worker(address: str | None, requests: Sequence[CompleteRequest]) -> list[Result]:
    """Send `requests`, one after another, to the worker at `address`, or to a local worker
    started (and stopped) here."""
    process: subprocess.Popen | None = None
    if address is None:
        process, address = spawn_local_worker()
    try:
        with WorkerClient(address, client_name="infill-complete") as client:
            return [client.complete(request) for request in requests]
    finally:
        if process is not None:
            stop_worker(process)


def ask_upstream(setting: dict, requests: Sequence[CompleteRequest]) -> tuple[list[Result], list[str]]:
    """Send `requests` to the upstream `setting` names (`--backend`), with the messages it gave."""
    upstream, messages = upstream_of(setting), []

    async def ask() -> list[Result]:
        backend = HttpBackend(upstream, messages.append)
        try:
            return await fim.ask(backend, requests)
        finally:
            await backend.aclose()
    return asyncio.run(ask()), messages


def summary(results: Sequence[Result], texts: Sequence[str], mode: str) -> dict:
    """The answer as the JSON object that `--json` prints: the texts an editor would show, best
    first, and the figures of the first candidate's reply (none when no worker was asked)."""
    first = results[0] if results else None
    item = first.items[0] if first is not None and first.items else None
    return {"completion": texts[0] if texts else "", "completions": list(texts), "mode": mode,
            "confidence": item.confidence if item is not None else 0.0,
            "forward_passes": item.forward_passes if item is not None else 0,
            "stop_reason": first.stop_reason if first is not None else None,
            "timings": asdict(first.timings) if first is not None else None}


def human_report(answer: dict) -> str:
    """The answer for a terminal: the completion without control characters (terminal escapes) or
    lone surrogates (`upstream.dialects.printable`), then its figures."""
    t = answer["timings"]
    if t is None:
        return ("(no completion)\n-- none: an editor completes nothing here while the user types "
                "(--invoked asks anyway); no worker asked\n")
    return (f"{printable(answer['completion']) or '(no completion)'}\n"
            f"-- {answer['mode']}, {answer['stop_reason']}: {answer['forward_passes']} forward "
            f"passes, confidence {answer['confidence']:.2f}\n"
            f"-- queue {t['queue_ms']:.1f} ms, layout {t['prepare_ms']:.1f} ms, first pass "
            f"{t['prefill_ms']:.1f} ms, decode {t['decode_ms']:.1f} ms, total {t['total_ms']:.1f} ms\n")


def _check_limits(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if not 1 <= args.max_tokens <= MAX_TOKENS:
        parser.error(f"--max-tokens must lie in 1..{MAX_TOKENS}, got {args.max_tokens}")
    if not 1 <= args.deadline_ms <= MAX_DEADLINE_MS:
        parser.error(f"--deadline-ms must lie in 1..{MAX_DEADLINE_MS}, got {args.deadline_ms}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `infill complete`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_limits(parser, args)
    logs.configure_logging(level=logging.WARNING)
    try:
        prefix, suffix = read_hole(args.file, args.line, args.col)
    except InputError as exc:
        sys.stderr.write(f"infill complete: {exc}\n")
        return EXIT_BAD_INPUT
    settings = Settings(deadline_ms=args.deadline_ms, max_tokens=args.max_tokens, mode=args.mode)
    hole = fim.hole_in_text(args.file.resolve().as_uri(), prefix, suffix)
    planned = fim.plan(hole, settings, None, new_request_id(), invoked=args.invoked,
                       candidates=len(fim.INVOKED_DECODERS))
    setting = backend_setting(args)
    try:
        if setting is not None and planned.requests:
            results, messages = ask_upstream(setting, planned.requests)
            if messages:
                sys.stderr.write(f"{messages[0]}\n")
                return EXIT_WORKER_FAILED
        else:
            results = ask_worker(args.worker, planned.requests) if planned.requests else []
    except BackendSettingError as exc:
        sys.stderr.write(f"infill complete: {exc}\n")
        return EXIT_BAD_INPUT
    except (WorkerStartError, WorkerError, WorkerTimeout, zmq.ZMQError) as exc:
        sys.stderr.write(f"infill complete: the worker failed: {exc}\n")
        return EXIT_WORKER_FAILED
    answer = summary(results, fim.finish(planned, results, settings), planned.mode)
    sys.stdout.write(json.dumps(answer) + "\n" if args.json else human_report(answer))
    return 0
