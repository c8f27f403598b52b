"""Files and folders that only this user may change: made so whatever the umask, checked before use.

The key folders (`engine.wire.keys`) and the folders of local workers' ipc:// sockets
(`engine.launch`) are trusted only if no other user can write them: otherwise a local user
could plant a client key in `authorized/`, or a socket where a worker is expected.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
SECRET_MODE = 0o600
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
_OTHERS_ANY = stat.S_IRWXG | stat.S_IRWXO


def make_private_dir(path: Path) -> None:
    """Create `path` mode 0700 (chmod after mkdir: exact whatever the umask); one that exists
    already is kept if it passes `check_private`, else ValueError."""
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE)
    except FileExistsError:
        check_private(path)
        return
    os.chmod(path, PRIVATE_DIR_MODE)


def make_private_dirs(path: Path) -> None:
    """`make_private_dir` for `path` and each missing folder above it, outermost first."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing or [path]):
        make_private_dir(folder)


def check_private(path: Path, secret: bool = False) -> None:
    """Raise ValueError saying what to run unless `path` is this user's and no other user can
    write it (nor, with `secret`, read it)."""
    info = path.stat()
    if info.st_uid != os.getuid():
        raise ValueError(f"{path} belongs to user id {info.st_uid}, not to you (id {os.getuid()}); "
                         f"run `chown {os.getuid()} {path}` or use a folder of your own")
    if secret and info.st_mode & _OTHERS_ANY:
        raise ValueError(f"{path} is a secret other users can reach (mode "
                         f"{stat.S_IMODE(info.st_mode):o}); run `chmod {SECRET_MODE:o} {path}`")
    if info.st_mode & _OTHERS_WRITE:
        fix = f"chmod {PRIVATE_DIR_MODE:o}" if stat.S_ISDIR(info.st_mode) else "chmod go-w"
        raise ValueError(f"{path} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}); "
                         f"run `{fix} {path}`")
