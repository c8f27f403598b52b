"""ZeroMQ CURVE keys: the key files, `infill keys`, and the socket options of both ends.

A key folder holds two key pairs and an allow-list, one Z85 key per file:

    server.public  server.secret    the worker's pair
    client.public  client.secret    a client's pair
    authorized/*.public             the client keys the worker admits (client.public to begin)

The worker reads `server.secret`, `server.public` and `authorized/`; a client reads
`server.public` and its own pair. To admit another client, copy its `client.public` into the
worker's `authorized/` under any name ending in `.public`: the folder is read at each handshake,
so no restart is needed, and each client it refuses is logged (its key and address, a few lines a
second at most). `infill keys` makes the folders 0700 and the secrets 0600 whatever the umask;
loading refuses a folder, `authorized/` or secret that another user owns or could write (or read,
for a secret), and the allow-list skips key files others could write, as it skips malformed ones.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import zmq
from zmq.auth.thread import ThreadAuthenticator

from engine.wire.private import SECRET_MODE, check_private, make_private_dir, make_private_dirs
from engine.wire.ratelimit import RateLimitedLog

logger = logging.getLogger(__name__)

DEFAULT_DIR = Path("~/.config/infill/keys")
AUTHORIZED = "authorized"
_Z85_KEY_CHARS = 40  # a 32-byte CURVE key in Z85
_PUBLIC_MODE = 0o644
_REFUSALS_PER_WINDOW = 5  # logged refused handshakes per window; the rest are counted
_REFUSAL_WINDOW_S = 1.0


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
    """Create `path` with `mode` from the start (never readable by others, even briefly), and
    chmod it so that the umask changes nothing."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), mode)
        handle.write(key + b"\n")


def _read_key(path: Path, secret: bool = False) -> bytes:
    """The Z85 key in `path`; a `secret` must be this user's alone (else ValueError)."""
    try:
        if secret:
            check_private(path, secret=True)
        key = path.read_bytes().strip()
    except OSError as exc:
        raise ValueError(f"cannot read the CURVE key {path}: {exc.strerror}; create keys with "
                         f"`infill keys --dir {path.parent}`") from None
    if len(key) != _Z85_KEY_CHARS:
        raise ValueError(f"{path} does not hold a Z85 CURVE key ({_Z85_KEY_CHARS} characters); "
                         "create keys with `infill keys`")
    return key


def _check_key_folder(folder: Path) -> None:
    """ValueError saying what to do unless `folder` exists and only this user can change it."""
    try:
        check_private(folder)
    except OSError as exc:
        raise ValueError(f"cannot read the key folder {folder}: {exc.strerror}; create keys with "
                         f"`infill keys --dir {folder}`") from None


def _write_pair(folder: Path, name: str) -> bytes:
    public, secret = zmq.curve_keypair()
    _write_key(folder / f"{name}.secret", secret, SECRET_MODE)
    _write_key(folder / f"{name}.public", public, _PUBLIC_MODE)
    return public


def create_keys(folder: Path) -> None:
    """Write a server pair, a client pair and an allow-list holding the client; never overwrites.
    The folders it makes are 0700 (an existing one must pass the loading checks), secrets 0600."""
    existing = [p.name for p in (folder / "server.secret", folder / "client.secret") if p.exists()]
    if existing:
        raise FileExistsError(f"{folder} already holds {', '.join(existing)}; pick another --dir "
                              "or remove the old keys first")
    make_private_dirs(folder)
    make_private_dir(folder / AUTHORIZED)
    _write_pair(folder, "server")
    client_public = _write_pair(folder, "client")
    _write_key(folder / AUTHORIZED / "client.public", client_public, _PUBLIC_MODE)


def load_server_keys(folder: Path) -> ServerKeys:
    authorized = folder / AUTHORIZED
    if not authorized.is_dir():
        raise ValueError(f"{authorized} is missing: create keys with `infill keys --dir {folder}`")
    _check_key_folder(folder)
    _check_key_folder(authorized)
    return ServerKeys(_read_key(folder / "server.public"),
                      _read_key(folder / "server.secret", secret=True), authorized)


def load_client_keys(folder: Path) -> ClientKeys:
    _check_key_folder(folder)
    return ClientKeys(_read_key(folder / "client.public"),
                      _read_key(folder / "client.secret", secret=True),
                      _read_key(folder / "server.public"))


def authorized_keys(folder: Path) -> set[bytes]:
    """The Z85 public keys in the allow-list folder, which only this user may change (else
    ValueError); unreadable or malformed files, and files others could write, are skipped."""
    _check_key_folder(folder)
    keys = set()
    for path in folder.glob("*.public"):
        try:
            check_private(path)
            keys.add(_read_key(path))
        except (OSError, ValueError):
            continue
    return keys


class _AllowListAuthenticator(ThreadAuthenticator):
    """A ZAP handler that admits the CURVE clients whose keys are in `folder` (re-read at each
    handshake) and logs each one it refuses, with its key and address, rate-limited."""

    def __init__(self, ctx: zmq.Context, folder: Path) -> None:
        super().__init__(ctx)
        self._folder = folder
        self._peer_address = ""  # of the handshake being checked; one at a time, in ZAP's thread
        self._refusals = RateLimitedLog(logger, logging.WARNING, _REFUSALS_PER_WINDOW,
                                        _REFUSAL_WINDOW_S)

    async def handle_zap_message(self, msg: list[bytes]) -> None:
        # A ZAP request's frames: version, request id, domain, address, identity, mechanism, ...
        self._peer_address = msg[3].decode(errors="replace") if len(msg) > 3 else ""
        await super().handle_zap_message(msg)

    def callback(self, domain: str, key: bytes) -> bool:
        """The credentials provider's check (`key` in Z85): True admits the client."""
        peer = self._peer_address or "an unknown address"
        try:
            admitted = key in authorized_keys(self._folder)
        except ValueError as exc:
            self._refusals.log("refused the CURVE client %s from %s: %s", key.decode(), peer, exc)
            return False
        if not admitted:
            self._refusals.log("refused the CURVE client %s from %s: its key is not in %s (copy its "
                               "client.public there to admit it)", key.decode(), peer, self._folder)
        return admitted


def start_authenticator(ctx: zmq.Context, keys: ServerKeys) -> ThreadAuthenticator:
    """A ZAP handler on `ctx` that admits CURVE clients whose keys are in the allow-list."""
    auth = _AllowListAuthenticator(ctx, keys.authorized)
    auth.start()
    auth.configure_curve_callback(domain="*", credentials_provider=auth)
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
    except (OSError, ValueError) as exc:  # FileExistsError too; ValueError: an unsafe folder
        sys.stderr.write(f"infill keys: {exc}\n")
        return 1
    print(f"keys written to {folder}: start the worker with `infill serve --keys {folder} --bind "
          f"tcp://HOST:PORT`; clients need server.public, client.public and client.secret")
    return 0
