"""The `backend` setting: which upstream answers, where, and with which key.

`{kind, url, model, apiKeyFile, template, maxContextTokens, deadlineMs, allowInsecureHttp, stream}`,
from
the editor's settings or `--backend URL` and its sibling flags (`add_backend_flags`). `kind` is
`worker` (the ZeroMQ workers, the default), `openai`, `fim`, `llama.cpp` or `edit` (`dialects`).
The key is read from a file that only its owner can read (`read_key`); it never comes from the
settings themselves and is never logged (`Upstream`'s repr leaves it out). Plain http:// to a host
that is not loopback is refused unless `allowInsecureHttp` says so: the key and the code would
cross the network in the clear.
"""
from __future__ import annotations

import argparse
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from engine.client.hosts import is_loopback
from upstream.templates import NAMES

KINDS = ("worker", "openai", "fim", "llama.cpp", "edit")
MAX_CONTEXT_TOKENS = 1_048_576
MAX_DEADLINE_MS = 60_000
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


def upstream_of(setting: dict) -> Upstream | None:
    """The upstream a `backend` setting names; None for the workers. Raises BackendSettingError."""
    kind = kind_of(setting)
    if kind not in KINDS:
        raise BackendSettingError(f"backend kind {kind!r} is none of {', '.join(KINDS)}")
    if kind == "worker":
        return None
    url = (setting.get("url") or "").rstrip("/")
    check_url(url, bool(setting.get("allowInsecureHttp")))
    template = setting.get("template") or ""
    if template and template not in NAMES:
        raise BackendSettingError(f"backend template {template!r} is none of {', '.join(NAMES)}")
    context, deadline = setting.get("maxContextTokens") or 0, setting.get("deadlineMs") or 0
    if not 0 <= context <= MAX_CONTEXT_TOKENS or not 0 <= deadline <= MAX_DEADLINE_MS:
        raise BackendSettingError(f"backend maxContextTokens must lie in 0..{MAX_CONTEXT_TOKENS} and "
                                  f"deadlineMs in 0..{MAX_DEADLINE_MS}")
    key_file = setting.get("apiKeyFile")
    key = read_key(Path(key_file).expanduser()) if key_file else ""
    return Upstream(kind, url, setting.get("model") or "", template, context, deadline,
                    setting.get("stream") is not False, key)


def check_url(url: str, allow_insecure: bool) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendSettingError(f"backend url {url!r} must be http(s)://HOST[:PORT][/PATH]")
    if parts.scheme == "http" and not is_loopback(parts.hostname) and not allow_insecure:
        raise BackendSettingError(
            f"backend url {url!r} is plain http to a host that is not loopback: use https, or set "
            "allowInsecureHttp (--backend-allow-insecure-http) if the network is yours")


def read_key(path: Path) -> str:
    """The API key in `path`, a regular file that no one but its owner may read or write."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise BackendSettingError(f"the key file {path} is not a regular file")
        if info.st_mode & 0o077 or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
            raise BackendSettingError(f"the key file {path} must be yours and private: chmod 600 {path}")
        key = path.read_text().strip()
    except OSError as exc:
        raise BackendSettingError(f"cannot read the key file {path}: {exc.strerror}") from None
    if not key or any(c.isspace() for c in key):
        raise BackendSettingError(f"the key file {path} must hold one key on one line")
    return key


def add_backend_flags(parser: argparse.ArgumentParser) -> None:
    """`--backend URL` and its siblings, for a front end's command line."""
    parser.add_argument("--backend", metavar="URL", default=None,
                        help="complete with the model server at URL (an OpenAI-style /v1/completions "
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


def backend_setting(args: argparse.Namespace) -> dict | None:
    """The `backend` setting the flags of `add_backend_flags` give; None without --backend."""
    if args.backend is None:
        return None
    found = {"kind": args.backend_kind or "openai", "url": args.backend, "model": args.backend_model,
             "apiKeyFile": args.backend_key_file, "template": args.backend_template,
             "maxContextTokens": args.backend_max_context,
             "allowInsecureHttp": args.backend_allow_insecure_http or None}
    return {k: v for k, v in found.items() if v is not None}
