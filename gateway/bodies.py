"""Each dialect's request body, checked and read into one `Ask`: the hole and how to answer it.

`openai_ask` reads `/v1/completions` (and `/beta/completions`, `/v1/fim/completions`): `prompt`,
`suffix` (or a FIM template in `prompt`), `max_tokens`, `stop` (a string or up to 4), `n`,
`stream`, `stream_options.include_usage`; `infill_ask` reads llama.cpp's `/infill`: `input_prefix`,
`prompt` (the cursor line's start, as llama.vscode sends it), `input_suffix`, `input_extra` (other
files, as snippets), `n_predict` (0: a warm-up, -1: the default), `t_max_predict_ms` (the
deadline), `stop`, `stream`. Sampling fields the decoder has no use for (`temperature`, `top_p`,
`seed`, `random_seed`, penalties, `min_tokens`, `cache_prompt`, ...) are accepted and ignored:
decoding commits the model's most confident tokens. `echo` and `logprobs` are refused. A wrong
type is a 422, a bad value a 400, each naming the field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from completion.fim import INVOKED_DECODERS
from completion.settings import DEFAULT_MAX_TOKENS
from engine.wire.protocol import MAX_DEADLINE_MS, MAX_SNIPPETS, MAX_TOKENS, Snippet
from gateway.errors import ApiError, bad_value, wrong_type
from gateway.templates import split_template

MAX_STOPS = 4  # as OpenAI allows
MAX_STOP_CHARS = 64
MAX_CHOICES = len(INVOKED_DECODERS)  # the distinct candidate decodings the rules ask for
INPUT_EXTRA_PRIORITY = 1  # above a definition from the text itself (0): the client chose them


@dataclass(slots=True)
class Ask:
    prefix: str
    suffix: str
    max_tokens: int = DEFAULT_MAX_TOKENS
    stop: list[str] = field(default_factory=list)
    n: int = 1
    stream: bool = False
    include_usage: bool = False
    deadline_ms: int | None = None  # None: the gateway's
    snippets: list[Snippet] = field(default_factory=list)
    model: str | None = None
    template: str | None = None  # the FIM template found in `prompt`, if any
    warm_up: bool = False  # llama.cpp's n_predict 0: answer at once, with nothing


def _get(body: dict, name: str, kinds: tuple[type, ...], wanted: str, default: Any = None) -> Any:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise wrong_type(name, wanted, value)
    return value


def _int_in(body: dict, name: str, lo: int, hi: int, default: int | None) -> int | None:
    value = _get(body, name, (int,), "an integer", default)
    if value is not None and not lo <= value <= hi:
        raise bad_value(name, f"must lie in {lo}..{hi}, got {value}")
    return value


def _stops(body: dict) -> list[str]:
    value = _get(body, "stop", (str, list), "a string or a list of strings", [])
    stops = [value] if isinstance(value, str) else value
    if len(stops) > MAX_STOPS:
        raise bad_value("stop", f"may hold at most {MAX_STOPS} sequences, got {len(stops)}")
    for stop in stops:
        if not isinstance(stop, str):
            raise wrong_type("stop", "a string or a list of strings", stop)
        if not 0 < len(stop) <= MAX_STOP_CHARS:
            raise bad_value("stop", f"sequences must have 1..{MAX_STOP_CHARS} characters")
    return list(stops)


def _refuse(body: dict, *names: str) -> None:
    for name in names:
        if body.get(name) not in (None, False, 0):
            raise bad_value(name, "is not supported by this server; leave it out")


def _include_usage(body: dict) -> bool:
    options = _get(body, "stream_options", (dict,), "an object", {})
    return bool(_get(options, "include_usage", (bool,), "a boolean", False))


def openai_ask(body: dict, max_tokens: int = MAX_TOKENS) -> Ask:
    """The Ask of an OpenAI-style completion body (see the module)."""
    prompt = _get(body, "prompt", (str, list), "a string")
    if isinstance(prompt, list):
        if len(prompt) != 1 or not isinstance(prompt[0], str):
            raise bad_value("prompt", "must be one string (a list of one string is taken too)")
        prompt = prompt[0]
    if prompt is None:
        raise ApiError(400, "'prompt' is required: the code before the cursor", "prompt", "missing")
    suffix = _get(body, "suffix", (str,), "a string", "")
    template = None
    if not suffix:
        prompt, suffix, template = split_template(prompt)
    _refuse(body, "echo", "logprobs")
    return Ask(prompt, suffix, _int_in(body, "max_tokens", 1, max_tokens, DEFAULT_MAX_TOKENS),
               _stops(body), _int_in(body, "n", 1, MAX_CHOICES, 1),
               _get(body, "stream", (bool,), "a boolean", False), _include_usage(body),
               model=_get(body, "model", (str,), "a string"), template=template)


def _input_extra(body: dict) -> list[Snippet]:
    extra = _get(body, "input_extra", (list,), "a list of {filename, text} objects", [])
    if len(extra) > MAX_SNIPPETS:
        raise bad_value("input_extra", f"may hold at most {MAX_SNIPPETS} entries, got {len(extra)}")
    snippets = []
    for index, entry in enumerate(extra):
        where = f"input_extra[{index}]"
        if not isinstance(entry, dict):
            raise wrong_type(where, "an object with filename and text", entry)
        text = _get(entry, "text", (str,), "a string", "")
        filename = _get(entry, "filename", (str,), "a string", "")
        if text:
            snippets.append(Snippet(text, filename, INPUT_EXTRA_PRIORITY))
    return snippets


def infill_ask(body: dict, max_tokens: int = MAX_TOKENS) -> Ask:
    """The Ask of a llama.cpp `/infill` body (see the module)."""
    prefix = _get(body, "input_prefix", (str,), "a string", "")
    prefix += _get(body, "prompt", (str,), "a string", "")
    suffix = _get(body, "input_suffix", (str,), "a string", "")
    n_predict = _int_in(body, "n_predict", -1, max_tokens, -1)
    deadline = _int_in(body, "t_max_predict_ms", 0, MAX_DEADLINE_MS, 0)
    return Ask(prefix, suffix, DEFAULT_MAX_TOKENS if n_predict == -1 else max(1, n_predict),
               _stops(body), 1, _get(body, "stream", (bool,), "a boolean", False),
               deadline_ms=deadline or None, snippets=_input_extra(body),
               model=_get(body, "model", (str,), "a string"), warm_up=n_predict == 0)
