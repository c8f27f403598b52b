"""The TCP language server's launch token: a random secret in a file only this user can read.

`infill lsp --tcp PORT` (and `infill run`) make a new token at each launch and write it, with a
line break, to `--token-file` or by default `token_path(PORT)`:
`$XDG_RUNTIME_DIR/infill/lsp-PORT.token`, or `$XDG_STATE_HOME/infill/lsp-PORT.token` without a
runtime folder (`~/.local/state` without either). The folder is made 0700 and the file 0600
whatever the umask; the file is removed when the server stops. The editor clients read it and send
the token in `initializationOptions.token` (`lsp_server.transport`).
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

TOKEN_BYTES = 32  # 64 hex characters


def token_path(port: int, env: dict[str, str] | None = None) -> Path:
    """The default token file of a server on TCP `port`."""
    env = dict(os.environ) if env is None else env
    folder = env.get("XDG_RUNTIME_DIR") or env.get("XDG_STATE_HOME") \
        or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(folder) / "infill" / f"lsp-{port}.token"


def new_token() -> str:
    return secrets.token_hex(TOKEN_BYTES)


def write_token(path: Path, token: str) -> None:
    """Write `token` to `path` readable by this user alone; raises OSError when it cannot (a
    symlink or anything but a regular file in its place is refused, not followed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.name == "infill":  # our own folder; a folder named by the user keeps its mode
        os.chmod(path.parent, 0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file; remove it or pass another --token-file")
        os.fchmod(fd, 0o600)
        os.write(fd, (token + "\n").encode("ascii"))
    finally:
        os.close(fd)


def remove_token(path: Path, token: str) -> None:
    """Remove the token file if it still holds `token` (a newer launch may have replaced it)."""
    try:
        if path.read_text(encoding="ascii").strip() == token:
            path.unlink()
    except (OSError, UnicodeDecodeError):
        pass
