"""ZeroMQ CURVE keys: the key files, `infill keys`, and the socket options of both ends.

A key folder holds two key pairs and an allow-list, one Z85 key per file:

    server.public  server.secret    the worker's pair
    client.public  client.secret    a client's pair
    authorized/*.public             the client keys the worker admits (client.public to begin)

The worker reads `server.secret`, `server.public` and `authorized/`; a client reads
`server.public` and its own pair. To admit another client, copy its `client.public` into the
worker's `authorized/` under any name ending in `.public`: the folder is read at each handshake,
so no restart is needed. Secret files are created with mode 0600.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import zmq
from zmq.auth.thread import ThreadAuthenticator

DEFAULT_DIR = Path("~/.config/infill/keys")
AUTHORIZED = "authorized"
_Z85_KEY_CHARS = 40  # a 32-byte CURVE key in Z85


@dataclass(frozen=True, slots=True)
class ServerKeys:
    """What a worker needs to be a CURVE server that admits only listed clients."""

    public: bytes
    secret: bytes
    authorized: Path  # the folder of admitted client public keys


@dataclass(frozen=True, slots=True)
class ClientKeys:
    """What a client needs to reach a CURVE worker: its own pair and the worker's public key."""

    public: bytes
    secret: bytes
    server_public: bytes


def _write_key(path: Path, key: bytes, mode: int) -> None:
    """Create `path` with `mode` from the start (never readable by others, even briefly)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key + b"\n")


def _read_key(path: Path) -> bytes:
    try:
        key = path.read_bytes().strip()
    except OSError as exc:
        raise ValueError(f"cannot read the CURVE key {path}: {exc.strerror}; create keys with "
                         f"`infill keys --dir {path.parent}`") from None
    if len(key) != _Z85_KEY_CHARS:
        raise ValueError(f"{path} does not hold a Z85 CURVE key ({_Z85_KEY_CHARS} characters); "
                         "create keys with `infill keys`")
    return key


def _write_pair(folder: Path, name: str) -> bytes:
    public, secret = zmq.curve_keypair()
    _write_key(folder / f"{name}.secret", secret, 0o600)
    _write_key(folder / f"{name}.public", public, 0o644)
    return public


def create_keys(folder: Path) -> None:
    """Write a server pair, a client pair and an allow-list holding the client; never overwrites."""
    existing = [p.name for p in (folder / "server.secret", folder / "client.secret") if p.exists()]
    if existing:
        raise FileExistsError(f"{folder} already holds {', '.join(existing)}; pick another --dir "
                              "or remove the old keys first")
    (folder / AUTHORIZED).mkdir(parents=True, exist_ok=True)
    _write_pair(folder, "server")
    client_public = _write_pair(folder, "client")
    _write_key(folder / AUTHORIZED / "client.public", client_public, 0o644)


def load_server_keys(folder: Path) -> ServerKeys:
    authorized = folder / AUTHORIZED
    if not authorized.is_dir():
        raise ValueError(f"{authorized} is missing: create keys with `infill keys --dir {folder}`")
    return ServerKeys(_read_key(folder / "server.public"), _read_key(folder / "server.secret"),
                      authorized)


def load_client_keys(folder: Path) -> ClientKeys:
    return ClientKeys(_read_key(folder / "client.public"), _read_key(folder / "client.secret"),
                      _read_key(folder / "server.public"))


def authorized_keys(folder: Path) -> set[bytes]:
    """The Z85 public keys in the allow-list folder; unreadable or malformed files are skipped."""
    keys = set()
    for path in folder.glob("*.public"):
        try:
            keys.add(_read_key(path))
        except ValueError:
            continue
    return keys


class _AllowList:
    """The authenticator's credentials provider: re-reads the folder at each handshake."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def callback(self, domain: str, key: bytes) -> bool:
        return key in authorized_keys(self._folder)


def start_authenticator(ctx: zmq.Context, keys: ServerKeys) -> ThreadAuthenticator:
    """A ZAP handler on `ctx` that admits CURVE clients whose keys are in the allow-list."""
    auth = ThreadAuthenticator(ctx)
    auth.start()
    auth.configure_curve_callback(domain="*", credentials_provider=_AllowList(keys.authorized))
    return auth


def make_curve_server(sock: zmq.Socket, keys: ServerKeys) -> None:
    """Before bind: the socket takes only CURVE peers, checked by the context's authenticator."""
    sock.curve_secretkey = keys.secret
    sock.curve_publickey = keys.public
    sock.curve_server = True


def make_curve_client(sock: zmq.Socket, keys: ClientKeys) -> None:
    """Before connect: the socket encrypts to, and authenticates itself with, the worker."""
    sock.curve_secretkey = keys.secret
    sock.curve_publickey = keys.public
    sock.curve_serverkey = keys.server_public


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Create CURVE keys for a remote worker and its clients.")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR,
                        help=f"folder to create the keys in (default {DEFAULT_DIR})")
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Entry point of `infill keys`."""
    folder = build_parser(prog).parse_args(argv).dir.expanduser()
    try:
        create_keys(folder)
    except OSError as exc:  # FileExistsError too
        sys.stderr.write(f"infill keys: {exc}\n")
        return 1
    print(f"keys written to {folder}: start the worker with `infill serve --keys {folder} --bind "
          f"tcp://HOST:PORT`; clients need server.public, client.public and client.secret")
    return 0
