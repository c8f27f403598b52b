"""The language server's command line: `infill lsp` and `python -m lsp_server`.

`build_parser` reads the flags, `main` checks them, builds the server (`lsp_server.server`) and
serves stdio, or TCP (`--tcp`) for the one editor that sends this launch's token
(`lsp_server.launch_token`, through `lsp_server.transport`). A `--host` that is not loopback is
served too, with a warning in the log (`exposure_warning`). SIGTERM stops the local worker before
the process leaves; so does the end of the connection.
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.wire.flags import add_local_worker_flags, check_local_worker_flags, local_worker_flags
from engine.wire.hosts import is_loopback
from engine.wire.keys import load_client_keys
from lsp_server import logs, transport
from lsp_server.framing import DEFAULT_MAX_BODY_BYTES
from lsp_server.launch_token import new_token, remove_token, token_path, write_token
from lsp_server.server import InfillLanguageServer, build_server
from upstream.config import add_backend_flags, backend_setting

logger = logging.getLogger(__name__)


def exposure_warning(host: str) -> str | None:
    """The warning for listening on `host`, or None for a loopback address (or `localhost`)."""
    if is_loopback(host):
        return None
    return (f"--host {host} is not a loopback address: the language server's port can be reached "
            "from other machines (only the launch token keeps them out); 127.0.0.1, the default, "
            "is reachable from this machine only")


def _terminate(server: InfillLanguageServer, stdio: bool, signum: int, frame: object) -> None:
    """SIGTERM: stop the local worker, then leave. On stdio, leave at once: a normal exit would wait
    for pygls's stdin reader thread, which returns only when the client closes the pipe. On TCP,
    raise SystemExit so that the callers' `finally` blocks run too."""
    server.session.workers.stop_local()
    if stdio:
        logging.shutdown()
        os._exit(128 + signum)
    raise SystemExit(128 + signum)


def build_parser() -> argparse.ArgumentParser:
    """The flags of `infill lsp`."""
    parser = argparse.ArgumentParser(
        prog="infill lsp", description="Serve code completions to an editor over the Language "
                                       "Server Protocol (stdio by default).")
    parser.add_argument("--tcp", type=int, metavar="PORT", default=None,
                        help="listen on TCP PORT (of --host) instead of stdio, for one editor that "
                             "sends this launch's token (see --token-file)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on with --tcp (default 127.0.0.1; any other than "
                             "loopback lets other machines reach the port, logged as a warning)")
    parser.add_argument("--worker", metavar="ADDRESS", default=None,
                        help="use the running worker at ADDRESS (e.g. tcp://127.0.0.1:5555), or "
                             "balance over several given as ADDRESS,ADDRESS,... instead of "
                             "starting one; the workerAddress setting overrides it")
    add_local_worker_flags(parser)
    add_backend_flags(parser)
    parser.add_argument("--worker-keys", metavar="DIR", type=Path, default=None,
                        help="CURVE key folder (from `infill keys`) for workers started with --keys")
    parser.add_argument("--log-file", type=Path, metavar="PATH", default=None,
                        help="write the log to PATH instead of stderr")
    parser.add_argument("--stats-log", metavar="PATH", default=None,
                        help="append the completion stats to PATH (a regular file; \"\" for none; "
                             "default ~/.local/state/infill/stats.jsonl); the statsLog setting "
                             "overrides it")
    parser.add_argument("--token-file", type=Path, metavar="PATH", default=None,
                        help="with --tcp: write this launch's token, which the editor must send, "
                             "to PATH (default: $XDG_RUNTIME_DIR/infill/lsp-PORT.token, else "
                             "~/.local/state/infill/lsp-PORT.token)")
    parser.add_argument("--max-message-bytes", type=int, metavar="N", default=DEFAULT_MAX_BODY_BYTES,
                        help="skip LSP messages larger than N bytes (default "
                             f"{DEFAULT_MAX_BODY_BYTES // 2**20} MiB)")
    return parser


def serve(server: InfillLanguageServer, args: argparse.Namespace) -> None:
    """Serve stdio, or TCP with a new launch token written to its file for the editor."""
    if args.tcp is None:
        asyncio.run(transport.serve_stdio(server, args.max_message_bytes))
        return
    token, path = new_token(), args.token_file or token_path(args.tcp)
    write_token(path, token)
    warning = exposure_warning(args.host)
    if warning is not None:
        logger.warning("%s", warning)

    def listening(port: int) -> None:
        sys.stderr.write(f"infill lsp: listening on {args.host}:{port}; the editor's token is in "
                         f"{path}\n")
        sys.stderr.flush()

    try:
        asyncio.run(transport.serve_tcp(server, args.host, args.tcp, token, args.max_message_bytes,
                                        listening))
    finally:
        remove_token(path, token)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `infill lsp` and `python -m lsp_server`; 0 after a shutdown request, else 1."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.tcp is not None and not 1 <= args.tcp <= 65535:
        parser.error(f"--tcp must be a port in 1..65535, got {args.tcp}")
    if args.max_message_bytes < 1024:
        parser.error(f"--max-message-bytes must be at least 1024, got {args.max_message_bytes}")
    check_local_worker_flags(parser, args)
    try:
        keys = None if args.worker_keys is None else load_client_keys(args.worker_keys.expanduser())
    except ValueError as exc:
        parser.error(str(exc))
    try:
        logs.configure_logging(args.log_file)
    except OSError as exc:
        parser.error(f"cannot write the log file {args.log_file}: {exc}")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # at INFO it logs every message in full
    server = build_server(args.worker, keys, args.stats_log, local_worker_flags(args),
                          args.startup_timeout, backend_setting(args))
    previous = signal.signal(signal.SIGTERM, functools.partial(_terminate, server, args.tcp is None))
    try:
        serve(server, args)
    except OSError as exc:
        logger.error("cannot serve: %s", exc)
        sys.stderr.write(f"infill lsp: {exc}\n")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.session.workers.stop_local()
    return 0 if server.shutdown_requested else 1
