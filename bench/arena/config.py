"""The arena's TOML file: the backends that fight and how battles are run (`bench/arena/example.toml`).

    [arena]                       # every key optional
    latency = ["equal_budget"]    # and/or "wait_for_both"
    budgets_ms = [100, 200, 400, 800]
    ...
    [[backend]]                   # two or more
    name = "diffusion"
    kind = "worker"               # worker | causal | openai | fim | llama.cpp
    model = "models/infill-py-16m"

A worker backend is a worker this command starts on `model` (a path, relative to the current
folder) or one running at `address`, with decoder overrides in `decoder`; a causal backend is the
same for an autoregressive checkpoint (the worker serves it with its causal runner; no overrides);
an openai backend is any server of OpenAI's `/v1/completions` at `url` (`model` is the name sent);
a fim or llama.cpp backend is a server of `/v1/fim/completions` (Mistral's, Inception's) or
llama.cpp's `/infill` at the base `url`, asked through `upstream.backend` as the language server
asks it (`template` is for servers that take no suffix: a family's FIM sentinels, or chat).
Optional `[[pair]]` tables (`a`, `b`, `weight`) give pair probabilities; without them every pair
is drawn alike. Any mistake raises ConfigError naming the file, the line and what to write.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.wire.protocol import MODES

KINDS = ("worker", "causal", "openai", "fim", "llama.cpp")
UPSTREAM_KINDS = ("openai", "fim", "llama.cpp")  # asked over HTTP
LATENCY_MODES = ("equal_budget", "wait_for_both")
BACKEND_KEYS = {"name", "kind", "model", "address", "decoder", "url", "api_key_env", "threads", "max_context",
                "template"}


class ConfigError(ValueError):
    """A config file that cannot be used; the message says where and what to change."""


@dataclass(frozen=True, slots=True)
class BackendSpec:
    name: str
    kind: str
    model: str | None = None  # worker/causal: a model folder to start a worker on; openai: the name sent
    address: str | None = None  # worker/causal: a running worker instead
    decoder: dict[str, Any] = field(default_factory=dict)
    url: str | None = None  # openai: the /v1/completions URL
    api_key_env: str | None = None  # openai: the environment variable holding the key, if any
    threads: int = 1  # a started worker's torch threads
    max_context: int | None = None  # a started worker's context in tokens (`--max-context`); None: the model's
    template: str | None = None  # openai/fim: the FIM template for a server that takes no suffix


@dataclass(frozen=True, slots=True)
class ArenaSettings:
    latency: tuple[str, ...] = ("equal_budget",)
    budgets_ms: tuple[int, ...] = (100, 200, 400, 800)
    mode: str = "single_line"
    max_tokens: int = 32
    battles_per_task: int = 1  # battles drawn for each task under each latency condition
    seed: int = 0
    grace_ms: int = 100  # equal budget: a reply this much past the budget counts as no answer
    wait_timeout_ms: int = 15000  # wait for both: Copilot Arena's limit for the slower side
    rounds: int = 200  # bootstrap rounds of the ranking


@dataclass(frozen=True, slots=True)
class PairWeight:
    a: str
    b: str
    weight: float


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    path: Path
    settings: ArenaSettings
    backends: tuple[BackendSpec, ...]
    pairs: tuple[PairWeight, ...] = ()


def key_line(text: str, key: str) -> int:
    """The line where `key = ...` is first set."""
    return line_of(text, r"^\s*" + re.escape(key) + r"\s*=")


def line_of(text: str, pattern: str, occurrence: int = 0) -> int:
    """The 1-based line of the `occurrence`-th line matching `pattern` (1 when none does)."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]
    return found[occurrence] if occurrence < len(found) else (found[-1] if found else 1)


def backend_line(text: str, index: int, key: str | None = None) -> int:
    """The line of backend `index`'s header, or of its `key` when given."""
    header = line_of(text, r"^\s*\[\[backend\]\]", index)
    if key is None:
        return header
    lines = text.splitlines()
    for n in range(header, len(lines)):
        if re.match(r"^\s*\[", lines[n]):
            break
        if re.match(rf"^\s*{re.escape(key)}\s*=", lines[n]):
            return n + 1
    return header


def load_config(path: Path) -> ArenaConfig:
    """Read and check the arena config at `path`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the arena config: {exc.strerror}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(raw) - {"arena", "backend", "pair"})
    if unknown:
        raise ConfigError(f"{path}:{line_of(text, re.escape(unknown[0]))}: unknown table {unknown[0]!r}; "
                          "the file holds [arena], [[backend]] and [[pair]] tables")
    settings = arena_settings(path, text, raw.get("arena", {}))
    backends = tuple(backend_spec(path, text, i, entry) for i, entry in enumerate(raw.get("backend", [])))
    check_backends(path, text, backends)
    pairs = tuple(pair_weight(path, text, i, entry, {b.name for b in backends})
                  for i, entry in enumerate(raw.get("pair", [])))
    return ArenaConfig(path, settings, backends, pairs)


def arena_settings(path: Path, text: str, raw: dict) -> ArenaSettings:
    known = set(ArenaSettings.__slots__)
    for key in raw:
        if key not in known:
            raise ConfigError(f"{path}:{key_line(text, key)}: unknown setting "
                              f"{key!r} in [arena]; known: {', '.join(sorted(known))}")
    values = dict(raw)
    if isinstance(values.get("latency"), str):
        values["latency"] = [values["latency"]]
    for key in ("latency", "budgets_ms"):
        if key in values:
            values[key] = tuple(values[key]) if isinstance(values[key], list) else values[key]
    settings = ArenaSettings(**values)
    problem = settings_problem(settings)
    if problem is not None:
        key, message = problem
        raise ConfigError(f"{path}:{key_line(text, key)}: [arena] {key}: {message}")
    return settings


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def settings_problem(s: ArenaSettings) -> tuple[str, str] | None:
    """The first setting that is wrong and what it must be, or None."""
    if not isinstance(s.latency, tuple) or not s.latency or any(m not in LATENCY_MODES for m in s.latency):
        return "latency", f"a list of {', '.join(LATENCY_MODES)}"
    if not isinstance(s.budgets_ms, tuple) or not s.budgets_ms or not all(map(_positive_int, s.budgets_ms)):
        return "budgets_ms", "a list of positive integers (milliseconds), e.g. [100, 200, 400, 800]"
    if s.mode not in MODES:
        return "mode", f"one of {', '.join(MODES)}"
    for key in ("max_tokens", "battles_per_task", "grace_ms", "wait_timeout_ms"):
        if not _positive_int(getattr(s, key)):
            return key, "a positive integer"
    if not isinstance(s.seed, int):
        return "seed", "an integer"
    if not isinstance(s.rounds, int) or s.rounds < 100:
        return "rounds", "an integer of at least 100 (bootstrap rounds)"
    return None


def backend_spec(path: Path, text: str, index: int, raw: dict) -> BackendSpec:
    where = f"{path}:{backend_line(text, index)}"
    unknown = sorted(set(raw) - BACKEND_KEYS)
    if unknown:
        raise ConfigError(f"{path}:{backend_line(text, index, unknown[0])}: unknown key {unknown[0]!r} in "
                          f"[[backend]] {index + 1}; known: {', '.join(sorted(BACKEND_KEYS))}")
    name, kind = raw.get("name"), raw.get("kind")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: [[backend]] {index + 1} needs a name, e.g. name = \"diffusion\"")
    if kind not in KINDS:
        line = backend_line(text, index, "kind")
        raise ConfigError(f"{path}:{line}: backend {name!r} has kind {kind!r}, which is unknown; "
                          f"write kind = \"worker\", \"causal\" or \"openai\"")
    spec = BackendSpec(name, kind, raw.get("model"), raw.get("address"), dict(raw.get("decoder", {})),
                       raw.get("url"), raw.get("api_key_env"), raw.get("threads", 1), raw.get("max_context"),
                       raw.get("template"))
    problem = backend_problem(spec)
    if problem is not None:
        key, message = problem
        raise ConfigError(f"{path}:{backend_line(text, index, key)}: backend {name!r}: {message}")
    return spec


def backend_problem(spec: BackendSpec) -> tuple[str, str] | None:
    """The key that is wrong for the backend's kind and what to write, or None."""
    if spec.kind in UPSTREAM_KINDS:
        if not isinstance(spec.url, str) or not re.match(r"https?://", spec.url):
            where = "/v1/completions" if spec.kind == "openai" else ""
            return "url", f"a {spec.kind} backend needs url = \"http://HOST:PORT{where}\""
        if spec.address is not None or spec.decoder:
            return "address" if spec.address is not None else "decoder", \
                f"a {spec.kind} backend takes url, model, template and api_key_env only"
        return None
    if spec.template is not None:
        return "template", "template is for openai and fim backends"
    if (spec.model is None) == (spec.address is None):
        return "model", f"a {spec.kind} backend needs either model = \"FOLDER\" (a worker is started) " \
                        "or address = \"tcp://HOST:PORT\" (a running worker), not both"
    if spec.url is not None:
        return "url", f"url is for openai backends; a {spec.kind} backend takes model or address"
    if spec.kind == "causal" and spec.decoder:
        return "decoder", "a causal backend is decoded greedily left to right: remove decoder"
    if not _positive_int(spec.threads):
        return "threads", "a positive integer"
    if spec.max_context is not None and (spec.address is not None or not _positive_int(spec.max_context)):
        return "max_context", "a positive number of tokens, for a worker this command starts (model = ...)"
    return None


def check_backends(path: Path, text: str, backends: tuple[BackendSpec, ...]) -> None:
    if len(backends) < 2:
        raise ConfigError(f"{path}: an arena needs two or more [[backend]] tables, found {len(backends)}")
    seen: set[str] = set()
    for index, spec in enumerate(backends):
        if spec.name in seen:
            raise ConfigError(f"{path}:{backend_line(text, index, 'name')}: backend name {spec.name!r} is used "
                              "twice; give each backend its own name")
        seen.add(spec.name)


def pair_weight(path: Path, text: str, index: int, raw: dict, names: set[str]) -> PairWeight:
    line = line_of(text, r"^\s*\[\[pair\]\]", index)
    a, b, weight = raw.get("a"), raw.get("b"), raw.get("weight")
    if a not in names or b not in names or a == b:
        raise ConfigError(f"{path}:{line}: [[pair]] {index + 1} needs a and b, two different backend names "
                          f"among {', '.join(sorted(names))}")
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight <= 0:
        raise ConfigError(f"{path}:{line}: [[pair]] {index + 1} needs weight, a positive number")
    return PairWeight(a, b, float(weight))
