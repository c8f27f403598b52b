"""A stdio <-> TCP bridge for editors whose LSP client can only start a process (Neovim before
0.8): `python -m lsp_server.bridge HOST:PORT` connects to a running `infill lsp --tcp PORT` and
copies its stdin to the socket and the socket to its stdout, byte for byte, until either side
closes. It reads no message and adds no trust of its own: the server still checks the token that
the editor puts in `initialize`. Errors go to stderr. Only the standard library, so it also runs
as a plain script (`python3 lsp_server/bridge.py HOST:PORT`) outside the project's environment.
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
from collections.abc import Sequence

CHUNK_BYTES = 65536
LINGER_S = 5.0  # after stdin ends, how long the server may take to close its side


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (an IPv6 host in brackets, `[::1]:2087`) as (host, port); ValueError otherwise."""
    host, colon, port = text.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not (colon and host and port.isdigit() and 1 <= int(port) <= 65535):
        raise ValueError(f"expected HOST:PORT (e.g. 127.0.0.1:2087), got {text!r}")
    return host, int(port)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def stdin_to_socket(stdin: int, sock: socket.socket, server_closed: threading.Event) -> None:
    """Copy stdin to the socket; at its end, tell the server (half-close) and give it a moment to
    close its side before closing both, which ends the other direction's copy."""
    try:
        while chunk := os.read(stdin, CHUNK_BYTES):
            sock.sendall(chunk)
        sock.shutdown(socket.SHUT_WR)
        server_closed.wait(LINGER_S)
    except OSError as exc:
        if not server_closed.is_set():
            print(f"infill bridge: writing to the server failed: {exc}", file=sys.stderr)
    finally:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # already closed by the server
            pass


def socket_to_stdout(sock: socket.socket, stdout: int) -> None:
    """Copy the socket to stdout until the server closes the connection or stdout is gone."""
    try:
        while chunk := sock.recv(CHUNK_BYTES):
            write_all(stdout, chunk)
    except BrokenPipeError:  # the editor is gone
        pass
    except OSError as exc:
        print(f"infill bridge: reading from the server failed: {exc}", file=sys.stderr)


def bridge(sock: socket.socket, stdin: int, stdout: int) -> None:
    """Copy both ways until either side closes."""
    server_closed = threading.Event()
    threading.Thread(target=stdin_to_socket, args=(stdin, sock, server_closed), daemon=True).start()
    socket_to_stdout(sock, stdout)
    server_closed.set()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lsp_server.bridge",
        description="Connect stdin and stdout to a running `infill lsp --tcp PORT`, byte for byte.")
    parser.add_argument("address", metavar="HOST:PORT", help="the server's address, e.g. 127.0.0.1:2087")
    args = parser.parse_args(argv)
    try:
        host, port = parse_address(args.address)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        sock = socket.create_connection((host, port))
    except OSError as exc:
        print(f"infill bridge: cannot connect to {args.address}: {exc}; start the server with "
              "`infill run` or `infill lsp --tcp PORT`", file=sys.stderr)
        return 1
    with sock:
        bridge(sock, sys.stdin.fileno(), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
