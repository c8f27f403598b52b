"""A model folder's files, read without trusting them.

Every config and tokenizer file that opening a model folder reads (config.json,
generation_config.json, tokenizer_config.json, special_tokens_map.json, added_tokens.json,
decoder.json, adapter_config.json, the shard index, tokenizer.json, vocab.json, merges.txt) is
looked at before a byte of it is read: it must be a regular file (a FIFO would block the reader
for ever, a link to /dev/zero would fill its memory) no larger than its cap, and it is read
through a descriptor opened without blocking and checked again, so that a file swapped for a FIFO
in between is refused too. A safetensors file must be a regular file that its own header covers
exactly: a download cut short is refused by name before any tensor is built.
Each refusal is one ValueError naming the file and what to do.
"""
from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager
from pathlib import Path

from safetensors import SafetensorError, safe_open

# config.json, tokenizer_config.json and the other settings: a few kilobytes in every public model
# (Qwen2.5's tokenizer_config.json, chat template and 22 added tokens included, is 7 KB).
JSON_CAP_BYTES = 4 * 2**20
# tokenizer.json, vocab.json, merges.txt: Qwen2's tokenizer.json is 7 MB, LLaDA's and Llama 3's 9 MB.
TOKENIZER_CAP_BYTES = 32 * 2**20
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket"))


def is_present(path: Path) -> bool:
    """Whether the folder holds anything under this name (a dangling link too): present files are
    read, and refused when they are not fit, rather than taken as absent."""
    return os.path.lexists(path)


def regular_size(path: Path, what: str, cap_bytes: int | None) -> int:
    """The size of `path`, a regular file (after links) of at most `cap_bytes`, else a ValueError."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ValueError(f"{path} ({what}) cannot be read: {exc.strerror or exc}") from None
    _check_kind(path, what, info)
    if cap_bytes is not None and info.st_size > cap_bytes:
        raise ValueError(f"{path} ({what}) holds {info.st_size:,} bytes, more than the {cap_bytes:,} such a file "
                         "may hold in any public model: it is not the checkpoint's; download it again")
    return info.st_size


def _check_kind(path: Path, what: str, info: os.stat_result) -> None:
    if stat.S_ISREG(info.st_mode):
        return
    kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
    raise ValueError(f"{path} ({what}) is {kind}, not a regular file: put the checkpoint's own file there")


def read_bytes(path: Path, what: str, cap_bytes: int) -> bytes:
    """The bytes of a regular file of at most `cap_bytes` (see the module doc), else a ValueError."""
    regular_size(path, what, cap_bytes)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ValueError(f"{path} ({what}) cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as file:
        _check_kind(path, what, os.fstat(file.fileno()))
        data = file.read(cap_bytes + 1)
    if len(data) > cap_bytes:
        raise ValueError(f"{path} ({what}) grew past the {cap_bytes:,} bytes such a file may hold while read")
    return data


def read_text(path: Path, what: str, cap_bytes: int) -> str:
    try:
        return read_bytes(path, what, cap_bytes).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} ({what}) is not UTF-8 text ({exc.reason} at byte {exc.start}): "
                         "download it again") from None


def read_json(path: Path, what: str, cap_bytes: int = JSON_CAP_BYTES) -> dict:
    """A JSON object from a regular file under its cap, or a ValueError naming the file."""
    text = read_text(path, what, cap_bytes)
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = exc if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise ValueError(f"{path} ({what}) cannot be read as JSON: {reason}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path} ({what}) is not a JSON object")
    return raw


def optional_json(path: Path, what: str) -> dict:
    """`read_json` of a file the folder may leave out: {} when nothing is there."""
    return read_json(path, what) if is_present(path) else {}


@contextmanager
def open_safetensors(path: Path, what: str = "weights", device: str = "cpu"):
    """`safe_open` of a regular safetensors file whose header checks out; a damaged or truncated
    file is a ValueError naming it."""
    regular_size(path, what, None)
    try:
        handle = safe_open(str(path), framework="pt", device=device)
    except SafetensorError as exc:
        raise ValueError(f"{path} ({what}) is damaged ({' '.join(str(exc).split())}): the download was cut "
                         "short or the file was changed; download it again") from None
    with handle as opened:
        yield opened
