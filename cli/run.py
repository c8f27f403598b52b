"""`infill run` (what `make run` starts): a worker, a self-check, the language server on TCP, and
the HTTP gateway over the same worker on loopback (`--gateway-port`, 0 for none).

The worker runs as a child process on a private ipc:// socket, restarted if it dies; one completion
of a bundled example file goes through it as a self-check (printed), then the language server
listens on loopback TCP for one editor (which authenticates with the launch token whose file it
prints) until Ctrl-C or the editor's disconnection, and the worker is stopped on the way out.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.wire.flags import add_local_worker_flags, check_local_worker_flags, local_worker_flags
from engine.launch import start_local_workers
from infill.paths import REPO_ROOT, bundled_model_dir, example_file
from cli import complete
from lsp_server.main import main as serve_lsp
from gateway.launch import start_gateway, stop_gateway
from lsp_server.launch_token import token_path

EXAMPLE = example_file("shapes.py")
SELF_CHECK_DEADLINE_MS = 10_000  # generous: a first completion on a busy CPU may take seconds
EXAMPLE_CURSOR = (12, 28)  # 0-based line and column: the end of `return 2 * math.pi *`


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="infill run", description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=2087, help="loopback TCP port of the language server")
    p.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled model)")
    p.add_argument("--threads", type=int, default=None, help="torch threads of the worker")
    p.add_argument("--gateway-port", type=int, default=8012,
                   help="loopback port of the HTTP gateway (default 8012; 0: no gateway)")
    add_local_worker_flags(p)
    return p


def self_check(address: str) -> int:
    line, col = EXAMPLE_CURSOR
    print(f"self-check: completing {EXAMPLE.relative_to(REPO_ROOT)} at line {line}, column {col}", flush=True)
    return complete.main([str(EXAMPLE), "--line", str(line), "--col", str(col), "--worker", address,
                         "--deadline-ms", str(SELF_CHECK_DEADLINE_MS)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_local_worker_flags(parser, args)
    model = args.model or bundled_model_dir()
    print(f"starting a worker on {model} ...", flush=True)
    worker = start_local_workers(model, threads=args.threads, flags=local_worker_flags(args),
                                 startup_timeout_s=args.startup_timeout)
    address = worker.addresses[0]
    gateway = None
    try:
        print(f"worker ready on {address}", flush=True)
        if self_check(address) != 0:
            print("self-check failed: see the message above", file=sys.stderr)
            return 1
        if args.gateway_port:
            gateway, url = start_gateway([address], args.gateway_port)
            print(f"HTTP gateway on {url} (OpenAI /v1/completions, /v1/fim/completions, llama.cpp "
                  "/infill; see the README's \"Use it from other clients\")", flush=True)
        token_file = token_path(args.port)
        print(f"language server on 127.0.0.1:{args.port} for one editor, which must send the token "
              f"in {token_file} (Ctrl-C stops)", flush=True)
        return serve_lsp(["--tcp", str(args.port), "--worker", address,
                          "--token-file", str(token_file)])
    except KeyboardInterrupt:
        return 0
    finally:
        if gateway is not None:
            stop_gateway(gateway)
        worker.stop()
        print("worker stopped", flush=True)
