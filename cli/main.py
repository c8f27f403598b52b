"""The `infill` command: one entry point whose subcommands hand their arguments to a module's `main`.

Each subcommand imports its module only when chosen, so `infill lsp` never imports torch and
`infill --help` answers at once.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Command:
    module: str  # imported when the command runs
    summary: str  # the one line `infill --help` shows
    prog: str | None = None  # passed to main() as `prog` by modules that take it


COMMANDS = {
    "run": Command("cli.run", "start a worker and the language server on TCP, with a self-check"),
    "serve": Command("engine.worker.cli", "run an engine worker that serves completions over ZeroMQ",
                     prog="infill serve"),
    "keys": Command("engine.wire.keys", "create CURVE keys for a remote worker and its clients",
                    prog="infill keys"),
    "lsp": Command("lsp_server.main", "run the language server for editors (stdio or TCP)"),
    "gateway": Command("gateway.main", "serve completions over HTTP: OpenAI, FIM and llama.cpp "
                                       "dialects, with streaming and API keys"),
    "doctor": Command("cli.doctor", "check that a model folder will serve, and say what to do if not",
                      prog="infill doctor"),
    "complete": Command("cli.complete", "complete one file at one position and print the "
                                              "completion with its timings"),
    "corpus": Command("training.corpus", "corpus build: fetch Python code, train the tokenizer, "
                                       "write token shards"),
    "adapt": Command("training.adapt", "fine-tune a model on a repository's code, in minutes on the CPU",
                     prog="infill adapt"),
    "train": Command("training.train", "train or resume training the bundled model"),
    "distill": Command("training.distill", "decode holes of training files with the model, for "
                                         "`infill train --phase distill`"),
}
SUBCOMMANDS = {"corpus": ("build",)}  # commands whose first argument must name a subcommand


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="infill", description="Code completion with a masked diffusion language model.",
        epilog="Run `infill COMMAND --help` for a command's own options.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        if name in SUBCOMMANDS:
            sub = commands.add_parser(name, help=command.summary)
            sub.add_argument("subcommand", choices=SUBCOMMANDS[name])
        else:  # the command's own parser answers --help
            commands.add_parser(name, help=command.summary, add_help=False)
    return parser


def _entry_point(command: Command) -> Callable[..., int | None]:
    entry = importlib.import_module(command.module).main
    if command.prog is None:
        return entry
    return lambda argv: entry(argv, prog=command.prog)


def main(argv: Sequence[str] | None = None) -> int | None:
    """Entry point of the `infill` console script; returns the chosen command's exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    split = 2 if argv and argv[0] in SUBCOMMANDS else 1  # what names the command; the rest is its own
    args = build_parser().parse_args(argv[:split])
    return _entry_point(COMMANDS[args.command])(argv[split:])
