"""`infill gateway`: the HTTP gateway over workers it is given, or over a local one it starts.

`--worker ADDR[,ADDR...]` balances over running workers (`engine.client.pool`, `--worker-keys` for
CURVE); without it a local worker on the bundled model (or `--model`) is started and restarted if
it dies, as the language server does (`engine.launch`). It listens on `--bind HOST:PORT`
(default 127.0.0.1:8012, llama.vscode's default endpoint); a bind off loopback refuses to start
without `--api-keys FILE` (one bearer key a line, read again when it changes). Web pages are
refused (`gateway.guard`) unless `--allow-origin` names theirs; a gateway without keys caps a
request's deadline at `KEYLESS_MAX_DEADLINE_MS`, so that no page or local process can hold its
worker for long. Connections are limited in number and in how long their headers may take
(`gateway.connections`). Once listening it writes `infill gateway: listening on
http://HOST:PORT` to stderr, where its log goes too.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import re
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from completion.settings import DEFAULT_DEADLINE_MS, Settings
from engine.client.calls import REPLY_SLACK_S
from engine.client.connect import addresses_of, connect
from engine.wire.flags import add_local_worker_flags, check_local_worker_flags, local_worker_flags
from engine.wire.hosts import is_loopback
from engine.wire.keys import ClientKeys, load_client_keys
from engine.launch import WorkerGroup, WorkerStartError, start_local_workers
from engine.wire.protocol import MAX_DEADLINE_MS, MAX_TOKENS
from gateway.api_keys import KeyFile
from gateway.app import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_STREAMS, GatewayState, build_app
from gateway.completer import Completer
from gateway.connections import DEFAULT_HEADER_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS, guarded_protocol
from gateway.edits import answer_edit
from gateway.guard import Rules

logger = logging.getLogger(__name__)

DEFAULT_BIND = "127.0.0.1:8012"
# A reply may come this long after its deadline: twice an editor's slack, since an HTTP caller
# waits for its answer where an editor would rather show nothing than a late one.
GATEWAY_REPLY_SLACK_S = 2 * REPLY_SLACK_S
KEYLESS_MAX_DEADLINE_MS = 5_000  # an editor's completion needs under 2 s; with no keys anyone local
#   could ask, so no request may hold the worker longer than this


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="infill gateway", description="Serve completions over HTTP in "
                                "the OpenAI, Mistral/Inception FIM and llama.cpp dialects.")
    p.add_argument("--bind", default=DEFAULT_BIND, metavar="HOST:PORT",
                   help=f"address to listen on (default {DEFAULT_BIND}; port 0 picks a free one); "
                        "off loopback it needs --api-keys")
    p.add_argument("--worker", metavar="ADDR[,ADDR...]", default=None,
                   help="running workers to balance over, instead of starting a local one")
    p.add_argument("--worker-keys", metavar="DIR", type=Path, default=None,
                   help="CURVE key folder (from `infill keys`) for workers started with --keys")
    p.add_argument("--api-keys", metavar="FILE", type=Path, default=None,
                   help="bearer keys the clients must send, one a line (read again when it changes)")
    p.add_argument("--model", type=Path, default=None, help="the local worker's model folder")
    p.add_argument("--threads", type=int, default=None, help="the local worker's torch threads")
    add_local_worker_flags(p)
    p.add_argument("--language", default="python",
                   help="the language of the code clients send (a tree-sitter grammar's name; "
                        "default python, the bundled model's)")
    p.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS, metavar="N",
                   help=f"time budget of a completion at the worker (default {DEFAULT_DEADLINE_MS})")
    p.add_argument("--max-tokens", type=int, default=MAX_TOKENS, metavar="N",
                   help=f"the largest max_tokens a request may ask for (default {MAX_TOKENS})")
    p.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, metavar="N",
                   help=f"the largest request body (default {DEFAULT_MAX_BODY_BYTES})")
    p.add_argument("--max-streams", type=int, default=DEFAULT_MAX_STREAMS, metavar="N",
                   help=f"event streams open at once; one more is a 429 (default {DEFAULT_MAX_STREAMS})")
    p.add_argument("--max-deadline-ms", type=int, default=None, metavar="N",
                   help="the longest deadline a request may ask for (t_max_predict_ms); default "
                        f"{KEYLESS_MAX_DEADLINE_MS} without --api-keys, {MAX_DEADLINE_MS} with")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a browser origin (e.g. http://localhost:3000) whose pages may call the "
                        "gateway, with CORS headers; repeat for more. Others are refused (403)")
    p.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS, metavar="N",
                   help=f"HTTP connections open at once; more are closed (default {DEFAULT_MAX_CONNECTIONS})")
    p.add_argument("--header-timeout", type=float, default=DEFAULT_HEADER_TIMEOUT_S, metavar="S",
                   help="seconds a connection has to send a request's headers "
                        f"(default {DEFAULT_HEADER_TIMEOUT_S:.0f})")
    return p


def parse_bind(bind: str) -> tuple[str, int]:
    """(host, port) of HOST:PORT ([v6]:PORT too); ValueError saying what is wrong."""
    host, sep, port = bind.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--bind must be HOST:PORT, got {bind!r}")
    return host, int(port)


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[str, int]:
    check_local_worker_flags(parser, args)
    try:
        host, port = parse_bind(args.bind)
    except ValueError as exc:
        parser.error(str(exc))
    if not is_loopback(host) and args.api_keys is None:
        parser.error(f"refusing to listen on {host} without API keys: anyone who reaches it could "
                     "use the workers; pass --api-keys FILE, or bind 127.0.0.1")
    if args.max_deadline_ms is None:
        args.max_deadline_ms = KEYLESS_MAX_DEADLINE_MS if args.api_keys is None else MAX_DEADLINE_MS
    for name in ("max_tokens", "deadline_ms", "max_body_bytes", "max_streams", "max_deadline_ms",
                 "max_connections", "header_timeout"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be above 0")
    if args.max_tokens > MAX_TOKENS or max(args.deadline_ms, args.max_deadline_ms) > MAX_DEADLINE_MS:
        parser.error(f"--max-tokens is at most {MAX_TOKENS}, --deadline-ms and --max-deadline-ms "
                     f"at most {MAX_DEADLINE_MS}")
    for origin in args.allow_origin:
        if not re.fullmatch(r"https?://[^/\s]+", origin):
            parser.error(f"--allow-origin takes an origin like http://localhost:3000 (scheme, host "
                         f"and port, no path), got {origin!r}")
    return host, port


def model_id(name: str) -> str:
    """The id clients see: never one that starts like OpenAI's chat models ("gpt", "o")."""
    return name if not name.lower().startswith(("gpt", "o")) else f"infill-{name}"


async def serve(args: argparse.Namespace, sock: socket.socket, addresses: list[str],
                keys: ClientKeys | None, api_keys: KeyFile | None) -> None:
    connected = await connect(addresses, "infill-gateway", GATEWAY_REPLY_SLACK_S, keys)
    pool, name = connected.pool, connected.model or "infill"  # a worker that refused: served anyway
    try:
        settings = Settings(deadline_ms=min(args.deadline_ms, args.max_deadline_ms))
        host, port = sock.getsockname()[:2]
        rules = Rules(host, frozenset(args.allow_origin), api_keys)
        state = GatewayState(Completer(pool, settings, args.language), pool, model_id(name), rules,
                             aliases=(name,), max_body_bytes=args.max_body_bytes,
                             max_deadline_ms=args.max_deadline_ms, max_tokens=args.max_tokens,
                             max_streams=args.max_streams)
        state.edits = answer_edit
        config = uvicorn.Config(build_app(state), log_level="warning", access_log=False,
                                lifespan="off",
                                http=guarded_protocol(args.max_connections, args.header_timeout))
        sys.stderr.write(f"infill gateway: listening on http://{host}:{port} (model {state.model_id})\n")
        sys.stderr.flush()
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        pool.close()


LISTEN_BACKLOG = 2048  # uvicorn's own default


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Inherited by each connection: an answer's headers and body leave at once, not 40 ms apart
    # (Nagle's algorithm waiting for the client's delayed ACK of the headers).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(LISTEN_BACKLOG)  # from here on connections wait in the backlog until the app serves them
    return sock


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `infill gateway` and `python -m gateway`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    host, port = _check(parser, args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        api_keys = None if args.api_keys is None else KeyFile(args.api_keys.expanduser())
        keys = None if args.worker_keys is None else load_client_keys(args.worker_keys.expanduser())
        sock = _listen(host, port)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    group: WorkerGroup | None = None
    try:
        if args.worker is None:
            group = start_local_workers(args.model, threads=args.threads,
                                        flags=local_worker_flags(args),
                                        startup_timeout_s=args.startup_timeout)
        addresses = group.addresses if group else addresses_of(args.worker)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(args, sock, addresses, None if group else keys, api_keys))
        return 0
    except WorkerStartError as exc:
        sys.stderr.write(f"infill gateway: the local worker did not start: {exc}\n")
        return 1
    finally:
        sock.close()
        if group is not None:
            group.stop()
