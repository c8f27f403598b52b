"""The workspace's source files, read once for the definitions index.

`scan_workspace(root)` walks the folder the editor opened, skipping hidden and generated folders,
and returns the definitions (`completion.definitions`) of each source file in a language we parse.
Only regular files inside the resolved folder are read, up to a size cap: a symlink that leads
out, a FIFO, a device or a socket is never read, nor waited on.
"""
from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from completion.definitions import Definition, definitions
from completion.syntax import EXTENSIONS, encode, new_parser

logger = logging.getLogger(__name__)

WORKSPACE_MAX_FILES = 2000
WORKSPACE_MAX_FILE_BYTES = 512 * 1024
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "target", "build", "dist", "venv"})


def source_files(root: Path, max_files: int = WORKSPACE_MAX_FILES) -> Iterator[Path]:
    """Files under `root` in a language we parse, skipping hidden and generated folders."""
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(folder, name)
            if path.suffix.lower() in EXTENSIONS:
                yield path
                count += 1
                if count >= max_files:
                    return


def read_source(path: Path, root: Path, max_bytes: int = WORKSPACE_MAX_FILE_BYTES) -> str | None:
    """The UTF-8 text of a workspace file, or None unless it is a regular file of at most
    `max_bytes` inside the resolved folder `root` (a symlink that leads out is not followed;
    a FIFO, device or socket is never read, nor waited on)."""
    try:
        real = path.resolve(strict=True)
        if not real.is_relative_to(root):
            return None
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        data = os.read(fd, max_bytes + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8") if len(data) <= max_bytes else None
    except UnicodeDecodeError:
        return None


def scan_workspace(root: Path) -> list[tuple[str, list[Definition]]]:
    """(uri, definitions) of the workspace's source files; blocking, run it in a thread."""
    root = root.resolve()
    scanned = []
    for path in source_files(root):
        text = read_source(path, root)
        if text is None:
            continue
        uri = path.resolve().as_uri()
        tree = new_parser(EXTENSIONS[path.suffix.lower()]).parse(encode(text))
        scanned.append((uri, definitions(tree, text, uri)))
    logger.info("indexed %d workspace files under %s", len(scanned), root)
    return scanned
