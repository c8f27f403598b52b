"""`infill complete FILE --line N --col M`: one completion from the command line.

It cuts the file at the position with the language server's own rules (`completion.requests`),
sends one `CompleteRequest` through `engine.client.WorkerClient` to the worker given by
`--worker`, or to a local worker on the bundled model that it starts and stops itself, and prints
the post-processed completion with its timings: a short human report, or with `--json` one JSON
object. Exit codes: 0 answered (possibly with an empty completion), 1 the worker failed, 2 bad
input (a file that is not UTF-8, a position outside it, bad flags).
"""
from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import zmq

from infill.modes import resolve_mode
from engine.client import (WorkerClient, WorkerError, WorkerStartError, WorkerTimeout,
                           spawn_local_worker, stop_worker)
from engine.protocol import MAX_DEADLINE_MS, MAX_TOKENS, MODES, CompleteRequest, Result
from lsp_server import logs
from completion.positions import split_at, split_lines
from completion.requests import build_request, new_request_id, postprocess
from completion.settings import DEFAULT_DEADLINE_MS, DEFAULT_MAX_TOKENS, DEFAULT_MODE

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
                        help="print one JSON object (completion, confidence, forward_passes, "
                             "stop_reason, timings) instead of the human report")
    parser.add_argument("--worker", metavar="ADDRESS", default=None,
                        help="use the running worker at ADDRESS (e.g. tcp://127.0.0.1:5555) "
                             "instead of starting a local one on the bundled model")
    parser.add_argument("--mode", choices=MODES, default=DEFAULT_MODE,
                        help="single_line, multi_line, or auto: single line when the cursor's "
                             f"line already has text (default {DEFAULT_MODE})")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, metavar="N",
                        help=f"most tokens to write, 1..{MAX_TOKENS} (default {DEFAULT_MAX_TOKENS})")
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS, metavar="N",
                        help=f"time budget at the worker, 1..{MAX_DEADLINE_MS} ms; at the deadline "
                             f"the worker answers with what it has (default {DEFAULT_DEADLINE_MS})")
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


def ask_worker(address: str | None, request: CompleteRequest) -> Result:
    """Send `request` to the worker at `address`, or to a local worker started (and stopped) here."""
    process: subprocess.Popen | None = None
    if address is None:
        process, address = spawn_local_worker()
    try:
        with WorkerClient(address, client_name="infill-complete") as client:
            return client.complete(request)
    finally:
        if process is not None:
            stop_worker(process)


def summary(result: Result, mode: str) -> dict:
    """The answer as the JSON object that `--json` prints."""
    item = result.items[0] if result.items else None
    text = postprocess(item.text, mode) if item is not None else None
    return {"completion": text or "", "mode": mode,
            "confidence": item.confidence if item is not None else 0.0,
            "forward_passes": item.forward_passes if item is not None else 0,
            "stop_reason": result.stop_reason, "timings": asdict(result.timings)}


def human_report(answer: dict) -> str:
    t = answer["timings"]
    return (f"{answer['completion'] or '(no completion)'}\n"
            f"-- {answer['mode']}, {answer['stop_reason']}: {answer['forward_passes']} forward "
            f"passes, confidence {answer['confidence']:.2f}\n"
            f"-- queue {t['queue_ms']:.1f} ms, prefill {t['prefill_ms']:.1f} ms, "
            f"decode {t['decode_ms']:.1f} ms, total {t['total_ms']:.1f} ms\n")


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
    mode = resolve_mode(args.mode, prefix)
    request = build_request(new_request_id(), prefix, suffix, mode, args.max_tokens,
                            args.deadline_ms, args.file.resolve().as_uri())
    try:
        result = ask_worker(args.worker, request)
    except (WorkerStartError, WorkerError, WorkerTimeout, zmq.ZMQError) as exc:
        sys.stderr.write(f"infill complete: the worker failed: {exc}\n")
        return EXIT_WORKER_FAILED
    answer = summary(result, mode)
    sys.stdout.write(json.dumps(answer) + "\n" if args.json else human_report(answer))
    return 0
