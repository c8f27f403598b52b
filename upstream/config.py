"""The `backend` setting: which upstream answers, where, and with which key.

`{kind, url, model, apiKeyFile, template, maxContextTokens, deadlineMs, allowInsecureHttp, stream}`,
from
the editor's settings or `--backend URL` and its sibling flags (`add_backend_flags`). `kind` is
`worker` (the ZeroMQ workers, the default), `openai`, `fim`, `llama.cpp` or `edit` (`dialects`).
The key is read from a file that only its owner can read and that holds one line of printable ASCII
(`read_key`); it never comes from the settings themselves and is never logged (`Upstream`'s repr
leaves it out). A key file is taken only from a setting that a workspace cannot write (the command
line, the `backend` setting an editor sends from its user's machine settings): a setting that a
workspace may write, such as an arena backend, names none (`trusted=False`) and borrows the trusted
backend's key only for that backend's own origin (`with_key_of`), so a workspace cannot send a key,
or any other file of the user's, to a URL it chooses. Plain http:// to a host that is not loopback
is refused unless `allowInsecureHttp` says so: the key and the code would cross the network in the
clear.

The url is the server's base as users write it, with or without a trailing `/v1` (the OpenAI SDK's
`base_url`): `http://host:8000`, `http://host:8000/v1/` and `https://host/prefix/v1` all reach the
kind's endpoints (`base_url`). A url that names an endpoint (`/v1/completions`, `/infill`) or
holds a query, a fragment or a password is refused with the form to use.
"""
from __future__ import annotations

import argparse
import codecs
import dataclasses
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from engine.wire.hosts import is_loopback
from upstream.templates import NAMES

KINDS = ("worker", "openai", "fim", "llama.cpp", "edit")
MAX_CONTEXT_TOKENS = 1_048_576
MAX_DEADLINE_MS = 60_000
MAX_KEY_FILE_BYTES = 4096  # a key is a line; a bigger file is not a key file
ENDPOINT_NAMES = ("completions", "completion", "infill", "chat", "fim", "edit")  # a path's last part
# option name -> (field, the type it must have)
OPTIONS = {"kind": ("kind", str), "url": ("url", str), "model": ("model", str),
           "apiKeyFile": ("api_key_file", str), "template": ("template", str),
           "maxContextTokens": ("max_context_tokens", int), "deadlineMs": ("deadline_ms", int),
           "allowInsecureHttp": ("allow_insecure_http", bool), "stream": ("stream", bool)}


class BackendSettingError(ValueError):
    """A `backend` setting that cannot be used; its message says what to change."""


@dataclass(frozen=True, slots=True)
class Upstream:
    kind: str
    url: str
    model: str = ""
    template: str = ""  # "" (the server takes `suffix`), a family of `templates.NAMES`, or "chat"
    max_context_tokens: int = 0  # 0: unknown; the request is sent as planned
    deadline_ms: int = 0  # 0: the request's own deadline
    stream: bool = True  # ask for an event stream (read to its end: the settled answer is shown)
    api_key: str = field(default="", repr=False)  # never in a log line


def valid(value: Any) -> bool:
    """Whether `value` has the shape of a `backend` setting (its values are checked by `upstream_of`)."""
    return (isinstance(value, dict) and set(value) <= set(OPTIONS)
            and all(v is None or (isinstance(v, OPTIONS[k][1]) and (OPTIONS[k][1] is bool or not isinstance(v, bool)))
                    for k, v in value.items()))


def kind_of(setting: dict | None) -> str:
    return (setting or {}).get("kind") or ("openai" if (setting or {}).get("url") else "worker")


def upstream_of(setting: dict, trusted: bool = True) -> Upstream | None:
    """The upstream a `backend` setting names; None for the workers. Raises BackendSettingError.
    A setting that a workspace may write (`trusted` False) may name no key file."""
    kind = kind_of(setting)
    if kind not in KINDS:
        raise BackendSettingError(f"backend kind {kind!r} is none of {', '.join(KINDS)}")
    if kind == "worker":
        return None
    url = base_url(setting.get("url") or "")
    check_url(url, bool(setting.get("allowInsecureHttp")))
    template = setting.get("template") or ""
    if template and template not in NAMES:
        raise BackendSettingError(f"backend template {template!r} is none of {', '.join(NAMES)}")
    context, deadline = setting.get("maxContextTokens") or 0, setting.get("deadlineMs") or 0
    if not 0 <= context <= MAX_CONTEXT_TOKENS or not 0 <= deadline <= MAX_DEADLINE_MS:
        raise BackendSettingError(f"backend maxContextTokens must lie in 0..{MAX_CONTEXT_TOKENS} and "
                                  f"deadlineMs in 0..{MAX_DEADLINE_MS}")
    key = _key_of(setting.get("apiKeyFile"), trusted)
    return Upstream(kind, url, setting.get("model") or "", template, context, deadline,
                    setting.get("stream") is not False, key)


def _key_of(key_file: str | None, trusted: bool) -> str:
    if not key_file:
        return ""
    if not trusted:
        raise BackendSettingError("an arena backend may not name an apiKeyFile (a workspace can set it): "
                                  "a key comes from --backend-key-file or the machine's backend setting, "
                                  "and goes only to that backend's own url")
    return read_key(Path(key_file).expanduser())


def with_key_of(upstream: Upstream, trusted: dict | None) -> Upstream:
    """`upstream` with the key of the trusted `backend` setting `trusted` where both name the same
    origin (scheme, host and port), else as it is. Raises BackendSettingError for the key file."""
    owner = upstream_of(trusted) if trusted else None
    if owner is None or not owner.api_key or _origin(owner.url) != _origin(upstream.url):
        return upstream
    return dataclasses.replace(upstream, api_key=owner.api_key)


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or (443 if parts.scheme == "https" else 80)


def base_url(url: str) -> str:
    """The server's base in a url as users write it, without a trailing `/` or `/v1` (or `/v1/`).
    A url that names an endpoint or holds a query, a fragment or a password: BackendSettingError."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        raise BackendSettingError(f"backend url {url!r} must be http(s)://HOST[:PORT][/PREFIX][/v1]") from None
    root = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    if parts.username is not None:
        raise BackendSettingError(f"backend url {root}... holds a user or password: give the key in a key file "
                                  f"and the url as {root} or {root}/v1")
    if parts.query or parts.fragment:
        raise BackendSettingError(f"backend url {url!r} must be the server's base, with no query or fragment: "
                                  f"{root} or {root}/v1")
    segments = parts.path.rstrip("/").split("/")
    if segments[-1] == "v1":
        segments.pop()
    named = "v1" in segments or segments[-1].lower() in ENDPOINT_NAMES
    if named:
        prefix = "/".join(segments[:segments.index("v1") if "v1" in segments else -1])
        raise BackendSettingError(f"backend url {url!r} names an endpoint ({parts.path}): give the server's "
                                  f"base, {root}{prefix} or {root}{prefix}/v1")
    return urlunsplit((parts.scheme, parts.netloc, "/".join(segments), "", ""))


def check_url(url: str, allow_insecure: bool) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendSettingError(f"backend url {url!r} must be http(s)://HOST[:PORT][/PATH]")
    if parts.scheme == "http" and not is_loopback(parts.hostname) and not allow_insecure:
        raise BackendSettingError(
            f"backend url {url!r} is plain http to a host that is not loopback: use https, or set "
            "allowInsecureHttp (--backend-allow-insecure-http) if the network is yours")


def read_key(path: Path) -> str:
    """The API key in `path`: a regular file that no one but its owner may read or write, holding
    one line of printable ASCII (no byte order mark, no space or control character, no other line)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise BackendSettingError(f"the key file {path} is not a regular file")
        if info.st_mode & 0o077 or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
            raise BackendSettingError(f"the key file {path} must be yours and private: chmod 600 {path}")
        if info.st_size > MAX_KEY_FILE_BYTES:
            raise BackendSettingError(f"the key file {path} holds {info.st_size} bytes: a key file is one line")
        with path.open("rb") as file:
            data = file.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise BackendSettingError(f"cannot read the key file {path}: {exc.strerror}") from None
    line = data.rstrip(b"\r\n")
    problem = _key_problem(line)
    if problem:
        raise BackendSettingError(f"the key file {path} must hold one key on one line of printable ASCII, "
                                  f"but it {problem}")
    return line.decode("ascii")


def _key_problem(line: bytes) -> str | None:
    """What makes `line` (a key file's bytes, its last line breaks off) no key; None for a key."""
    if not line:
        return "is empty"
    if line.startswith(codecs.BOM_UTF8):
        return "starts with a byte order mark (save it without one)"
    breaks = line.count(b"\n")
    if breaks:
        return f"holds {breaks + 1} lines"
    for offset, byte in enumerate(line):
        if byte >= 0x80:
            return f"holds a byte that is not ASCII (0x{byte:02x}) at offset {offset}"
        if byte <= 0x20 or byte == 0x7F:
            return f"holds a space or a control character (0x{byte:02x}) at offset {offset}"
    return None


def add_backend_flags(parser: argparse.ArgumentParser) -> None:
    """`--backend URL` and its siblings, for a front end's command line."""
    parser.add_argument("--backend", metavar="URL", default=None, type=checked_url,
                        help="complete with the model server at URL, its base with or without /v1 "
                             "(http://HOST:PORT or http://HOST:PORT/v1; an OpenAI-style /v1/completions "
                             "unless --backend-kind says otherwise) instead of the workers")
    parser.add_argument("--backend-kind", choices=KINDS[1:], default=None,
                        help="the upstream's dialect: openai (default), fim (/v1/fim/completions), "
                             "llama.cpp (/infill) or edit (/v1/edit/completions, next edits)")
    parser.add_argument("--backend-model", metavar="NAME", default=None, help="the model to ask for")
    parser.add_argument("--backend-key-file", metavar="PATH", default=None,
                        help="a file (chmod 600) holding the upstream's API key")
    parser.add_argument("--backend-template", choices=NAMES, default=None,
                        help="for servers that take no suffix: the model family's FIM sentinels, "
                             "or chat for instruct-only models")
    parser.add_argument("--backend-max-context", type=int, metavar="TOKENS", default=None,
                        help="the upstream model's context; prompts are cut to fit")
    parser.add_argument("--backend-allow-insecure-http", action="store_true",
                        help="allow plain http:// to a host that is not loopback")


def checked_url(url: str) -> str:
    """`--backend`'s value, refused at start (with the form to use) where `base_url` refuses it."""
    try:
        base_url(url)
    except BackendSettingError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return url


def backend_setting(args: argparse.Namespace) -> dict | None:
    """The `backend` setting the flags of `add_backend_flags` give; None without --backend."""
    if args.backend is None:
        return None
    found = {"kind": args.backend_kind or "openai", "url": args.backend, "model": args.backend_model,
             "apiKeyFile": args.backend_key_file, "template": args.backend_template,
             "maxContextTokens": args.backend_max_context,
             "allowInsecureHttp": args.backend_allow_insecure_http or None}
    return {k: v for k, v in found.items() if v is not None}
