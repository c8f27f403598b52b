"""The wire protocol between clients (the language server, the CLI) and the engine worker.

This module is the only place where wire shapes are defined; the worker and every client import
it. A ZeroMQ message is one frame: a one-byte type tag (`MsgType`) followed by a msgpack map whose
keys are exactly the fields of the message's dataclass. Nested records (`Snippet`, `Item`,
`Timings`) travel as maps too.

Every message validates its fields when it is constructed (`__post_init__`), so a malformed
message can neither be decoded nor built locally; `decode` additionally checks the frame, the tag
and the set of keys. Every failure is a `ProtocolError` whose `code` is one of `ErrorCode` and
whose message names the field and what to change. The module knows nothing about sockets.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, is_dataclass
from enum import IntEnum, StrEnum
from typing import Any, ClassVar

import msgpack

PROTOCOL_VERSION = 7  # 3: edit jobs (several holes), items per hole, prepare_ms; no 'auto' mode; 4: edit events;
#   5: HealthOk.in_step; 6: drafted holes (Hole.draft, Hole.slots); 7: a FIM hole's draft (draft, slots)
MAX_FRAME_BYTES = 4 * 1024 * 1024  # a large source file of context, with room to spare
MAX_ID_CHARS = 128  # request ids are client-chosen (uuid4 hex is 32)
MAX_NAME_CHARS = 256  # client, model and family names
# Caps on the context a request carries: the one definition, used by the front ends to clip what
# they send and by the worker to refuse more. A canvas keeps at most the model's context (2,048
# tokens are about 8,000 characters of code), so more text would only cost transfer and tokenizing
# time, which an anonymous client could spend on purpose.
MAX_PREFIX_CHARS = 24_000
MAX_SUFFIX_CHARS = 12_000
MAX_SNIPPET_TEXT_CHARS = 12_000  # each snippet's text
MAX_SNIPPETS_TOTAL_CHARS = 24_000  # all snippets' texts together
MAX_ITEM_CHARS = 1_000_000  # a completion's text (the worker's own output; the frame cap bounds it)
MAX_PATH_CHARS = 4096  # snippet paths and document keys (URIs)
MAX_SNIPPETS = 64
MAX_HOLES = 32  # regions of one edit job
MAX_EVENTS = 8  # the user's recent edits an edit job shows the model
MAX_EVENT_CHARS = 4_000  # each side (before, after) of one event
MAX_SLOTS = 16  # masked slots in one hole's draft
MAX_SLOT_TOKENS = 64  # each slot's length
MAX_ITEMS = 2 * MAX_HOLES  # a Result's items: one (or a few) per hole
MAX_OVERRIDES = 32
MAX_OVERRIDE_KEY_CHARS = 64
MAX_OVERRIDE_STR_CHARS = 256
MAX_ERROR_CHARS = 4096
MAX_TOKENS = 1024
MAX_DEADLINE_MS = 60_000
MAX_PRIORITY = 1000  # snippet priorities lie in [-MAX_PRIORITY, MAX_PRIORITY]; higher matters more
MAX_COUNT = 2**53  # counters (vocabulary size, context length, served requests)

KINDS = ("fim", "edit")


class Mode(StrEnum):
    """How much a completion writes: what a setting asks for (`auto`: decided at the cursor),
    what the decision gives (`none`: nothing to show) and what a request carries (one line or
    several). The only spelling of these names, for every package."""

    AUTO = "auto"
    NONE = "none"
    SINGLE_LINE = "single_line"
    MULTI_LINE = "multi_line"


MODES = (Mode.SINGLE_LINE, Mode.MULTI_LINE)  # a request's: the front end decides, the worker takes it
SETTING_MODES = (Mode.AUTO, Mode.SINGLE_LINE, Mode.MULTI_LINE)  # what a user may set
STOP_REASONS = ("done", "deadline", "cancelled")


class MsgType(IntEnum):
    """The one-byte tag that opens every frame."""

    HELLO = 1
    WELCOME = 2
    INFO_REQUEST = 3
    INFO = 4
    HEALTH = 5
    HEALTH_OK = 6
    COMPLETE_REQUEST = 7
    RESULT = 8
    CANCEL = 9
    ERROR = 10
    PARTIAL = 11


class ErrorCode(StrEnum):
    """Codes carried by `Error` replies and `ProtocolError` exceptions."""

    MALFORMED = "malformed"  # empty frame, not msgpack, not a map
    UNKNOWN_TYPE = "unknown_type"  # a tag nobody defined, or a message the receiver does not take
    INVALID_FIELD = "invalid_field"  # a missing, unknown, mistyped or out-of-range field
    TOO_LARGE = "too_large"  # a frame over MAX_FRAME_BYTES, or a context text over its cap: send less
    VERSION_MISMATCH = "version_mismatch"
    UNSUPPORTED = "unsupported"  # well formed, but this worker does not serve it yet
    SHUTTING_DOWN = "shutting_down"
    INTERNAL = "internal"  # the worker failed on this request
    OVERLOADED = "overloaded"  # the worker holds as many requests as it admits; retry later or elsewhere


class ProtocolError(Exception):
    """A frame or message that breaks the protocol; `request_id` is set when it could be read."""

    def __init__(self, code: str, message: str, request_id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id

    def __repr__(self) -> str:
        return f"ProtocolError({self.code!r}, {self.message!r}, request_id={self.request_id!r})"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _invalid(where: str, problem: str, rid: str | None) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_FIELD, f"field '{where}' {problem}", rid)


def _check_type(value: Any, where: str, types: tuple[type, ...], rid: str | None) -> None:
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise _invalid(where, f"must be {names}, got {type(value).__name__}", rid)


def _check_str(value: Any, where: str, max_chars: int, rid: str | None = None,
               min_chars: int = 0, choices: tuple[str, ...] | None = None) -> None:
    _check_type(value, where, (str,), rid)
    if choices is not None and value not in choices:
        raise _invalid(where, f"must be one of {', '.join(choices)}; got {_show(value)}", rid)
    if not min_chars <= len(value) <= max_chars:
        raise _invalid(where, f"must have {min_chars}..{max_chars} characters, got {len(value)}", rid)


def _check_text(value: Any, where: str, cap: int, cap_name: str, rid: str | None) -> None:
    """A context text: a str of at most `cap` characters, else `too_large` naming the cap."""
    _check_type(value, where, (str,), rid)
    if len(value) > cap:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"field '{where}' has {len(value)} characters, over "
                            f"the cap of {cap} ({cap_name}); send less context", rid)


def _check_snippets(snippets: list[Snippet], rid: str | None) -> None:
    _check_list(snippets, "snippets", MAX_SNIPPETS, Snippet, rid)
    for i, snippet in enumerate(snippets):
        _check_text(snippet.text, f"snippets[{i}].text", MAX_SNIPPET_TEXT_CHARS, "MAX_SNIPPET_TEXT_CHARS", rid)
        _check_str(snippet.path, f"snippets[{i}].path", MAX_PATH_CHARS, rid)
        _check_int(snippet.priority, f"snippets[{i}].priority", -MAX_PRIORITY, MAX_PRIORITY, rid)
    total = sum(len(snippet.text) for snippet in snippets)
    if total > MAX_SNIPPETS_TOTAL_CHARS:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"field 'snippets' has {total} characters of text in all, "
                            f"over the cap of {MAX_SNIPPETS_TOTAL_CHARS} (MAX_SNIPPETS_TOTAL_CHARS); "
                            "send fewer or shorter snippets", rid)


def _check_regions(request: CompleteRequest, rid: str | None) -> None:
    """An edit's holes and the pieces between them; a FIM request has neither."""
    _check_list(request.holes, "holes", MAX_HOLES, Hole, rid)
    _check_type(request.pieces, "pieces", (list,), rid)
    if request.kind == "fim":
        if request.holes or request.pieces:
            raise _invalid("holes", "must be empty for kind 'fim' (its hole is prefix|suffix); "
                                    "send several regions as kind 'edit'", rid)
        return
    if not request.holes:
        raise _invalid("holes", "must name at least one region for kind 'edit'", rid)
    if len(request.pieces) != len(request.holes) - 1:
        raise _invalid("pieces", f"must hold the {len(request.holes) - 1} texts between the "
                                 f"{len(request.holes)} holes, got {len(request.pieces)}", rid)
    for i, hole in enumerate(request.holes):
        _check_str(hole.mode, f"holes[{i}].mode", MAX_NAME_CHARS, rid, choices=MODES)
        _check_int(hole.max_tokens, f"holes[{i}].max_tokens", 1, MAX_TOKENS, rid)
        _check_text(hole.replaces, f"holes[{i}].replaces", MAX_SUFFIX_CHARS, "MAX_SUFFIX_CHARS", rid)
        _check_draft(hole, f"holes[{i}].", rid)
    for i, piece in enumerate(request.pieces):
        _check_text(piece, f"pieces[{i}]", MAX_PREFIX_CHARS, "MAX_PREFIX_CHARS", rid)
    total = len(request.prefix) + len(request.suffix) + sum(len(piece) for piece in request.pieces)
    if total > MAX_PREFIX_CHARS + MAX_SUFFIX_CHARS:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"the edit's text has {total} characters in all, over "
                            f"the cap of {MAX_PREFIX_CHARS + MAX_SUFFIX_CHARS} (MAX_PREFIX_CHARS + "
                            "MAX_SUFFIX_CHARS); send a smaller window of the file", rid)


def _check_draft(hole: Hole | CompleteRequest, where: str, rid: str | None) -> None:
    """A hole's draft (an edit's region's, or a FIM request's): pieces of text (as much text in
    all as a region may hold) with one slot length between each two."""
    _check_type(hole.draft, f"{where}draft", (list,), rid)
    _check_type(hole.slots, f"{where}slots", (list,), rid)
    if len(hole.slots) > MAX_SLOTS:
        raise _invalid(f"{where}slots", f"must have at most {MAX_SLOTS} entries, got {len(hole.slots)}", rid)
    if len(hole.slots) != max(0, len(hole.draft) - 1):
        raise _invalid(f"{where}slots", f"must hold one length between each two of the "
                                        f"{len(hole.draft)} draft pieces, got {len(hole.slots)}", rid)
    for j, piece in enumerate(hole.draft):
        _check_type(piece, f"{where}draft[{j}]", (str,), rid)
    for j, slot in enumerate(hole.slots):
        _check_int(slot, f"{where}slots[{j}]", 1, MAX_SLOT_TOKENS, rid)
    total = sum(map(len, hole.draft))
    if total > MAX_SUFFIX_CHARS:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"field '{where}draft' has {total} characters, over "
                            f"the cap of {MAX_SUFFIX_CHARS} (MAX_SUFFIX_CHARS); draft a smaller region", rid)


def _check_fim_draft(request: CompleteRequest, rid: str | None) -> None:
    """A FIM request's draft of its hole's start; an edit drafts each region in its `holes`."""
    _check_draft(request, "", rid)
    if request.kind == "edit" and request.draft:
        raise _invalid("draft", "must be empty for kind 'edit'; draft each region in its hole", rid)


def _check_events(request: CompleteRequest, rid: str | None) -> None:
    """An edit's events, oldest first; only an edit job has them."""
    _check_list(request.events, "events", MAX_EVENTS, Event, rid)
    if request.kind == "fim" and request.events:
        raise _invalid("events", "must be empty for kind 'fim'; edit events go with kind 'edit'", rid)
    for i, event in enumerate(request.events):
        _check_text(event.before, f"events[{i}].before", MAX_EVENT_CHARS, "MAX_EVENT_CHARS", rid)
        _check_text(event.after, f"events[{i}].after", MAX_EVENT_CHARS, "MAX_EVENT_CHARS", rid)


def _check_int(value: Any, where: str, lo: int, hi: int, rid: str | None = None) -> None:
    _check_type(value, where, (int,), rid)
    if not lo <= value <= hi:
        raise _invalid(where, f"must lie in {lo}..{hi}, got {value}", rid)


def _check_float(value: Any, where: str, lo: float, hi: float, rid: str | None = None) -> None:
    _check_type(value, where, (float, int), rid)
    if not (math.isfinite(value) and lo <= value <= hi):
        raise _invalid(where, f"must be a finite number in {lo}..{hi}, got {value}", rid)


def _check_list(value: Any, where: str, max_len: int, record: type, rid: str | None) -> None:
    _check_type(value, where, (list,), rid)
    if len(value) > max_len:
        raise _invalid(where, f"must have at most {max_len} entries, got {len(value)}", rid)
    for i, entry in enumerate(value):
        if not isinstance(entry, record):
            raise _invalid(f"{where}[{i}]", f"must be a {record.__name__} map, got "
                           f"{type(entry).__name__}", rid)


def _check_overrides(value: Any, rid: str | None) -> None:
    _check_type(value, "decoder", (dict,), rid)
    if len(value) > MAX_OVERRIDES:
        raise _invalid("decoder", f"must have at most {MAX_OVERRIDES} entries, got {len(value)}", rid)
    for key, setting in value.items():
        _check_str(key, "decoder key", MAX_OVERRIDE_KEY_CHARS, rid, min_chars=1)
        where = f"decoder.{key}"
        _check_type(setting, where, (str, int, float, bool), rid)
        if isinstance(setting, str):
            _check_str(setting, where, MAX_OVERRIDE_STR_CHARS, rid)
        elif isinstance(setting, float) and not math.isfinite(setting):
            raise _invalid(where, f"must be finite, got {setting}", rid)


@dataclass(slots=True)
class Snippet:
    """Extra context (a definition, a recently edited range) from this or another file."""

    text: str
    path: str
    priority: int = 0


@dataclass(slots=True)
class Hole:
    """One region of an edit job: its mode, its token budget, the text now in it, and maybe a
    draft of its new text: `draft` pieces with a masked slot of `slots[i]` tokens between pieces
    i and i + 1 (no draft: the region is masked whole)."""

    mode: str
    max_tokens: int
    replaces: str = ""
    draft: list[str] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Event:
    """One edit the user made: lines of the document as they were and as they are now."""

    before: str
    after: str


@dataclass(slots=True)
class Item:
    """One candidate text for one hole (`hole`: its index, left to right; 0 for FIM)."""

    text: str
    confidence: float
    forward_passes: int
    hole: int = 0


@dataclass(slots=True)
class Timings:
    """Where a request's time went, in milliseconds since it arrived at the worker."""

    queue_ms: float  # waiting for room in a step
    prefill_ms: float  # the first pass over the canvas (the context's keys and values)
    decode_ms: float  # the passes after it
    total_ms: float
    prepare_ms: float = 0.0  # tokenizing and laying out the canvas


@dataclass(slots=True)
class Hello:
    TAG: ClassVar[MsgType] = MsgType.HELLO
    version: int
    client_name: str

    def __post_init__(self) -> None:
        _check_int(self.version, "version", 0, 65535)
        _check_str(self.client_name, "client_name", MAX_NAME_CHARS)


@dataclass(slots=True)
class Welcome:
    TAG: ClassVar[MsgType] = MsgType.WELCOME
    version: int
    model: str
    vocab_size: int
    max_context: int

    def __post_init__(self) -> None:
        _check_int(self.version, "version", 0, 65535)
        _check_str(self.model, "model", MAX_NAME_CHARS)
        _check_int(self.vocab_size, "vocab_size", 1, MAX_COUNT)
        _check_int(self.max_context, "max_context", 1, MAX_COUNT)


@dataclass(slots=True)
class InfoRequest:
    TAG: ClassVar[MsgType] = MsgType.INFO_REQUEST


@dataclass(slots=True)
class Info:
    TAG: ClassVar[MsgType] = MsgType.INFO
    model: str
    family: str
    vocab_size: int
    max_context: int
    protocol_version: int

    def __post_init__(self) -> None:
        _check_str(self.model, "model", MAX_NAME_CHARS)
        _check_str(self.family, "family", MAX_NAME_CHARS)
        _check_int(self.vocab_size, "vocab_size", 1, MAX_COUNT)
        _check_int(self.max_context, "max_context", 1, MAX_COUNT)
        _check_int(self.protocol_version, "protocol_version", 0, 65535)


@dataclass(slots=True)
class Health:
    TAG: ClassVar[MsgType] = MsgType.HEALTH


@dataclass(slots=True)
class HealthOk:
    TAG: ClassVar[MsgType] = MsgType.HEALTH_OK
    uptime_s: float
    live_requests: int
    served: int
    loop_age_s: float  # since the main loop's last tick: a large value means it hangs
    steps: int = 0  # decoding steps run since start
    forward_passes: int = 0  # model forward calls since start
    step_requests: int = 0  # requests advanced, summed over steps: mean batch size = step_requests / steps
    carried: int = 0  # requests that took over the running decoding they superseded (typing on)
    in_step: bool = False  # the main loop is inside a decoding step: its tick is as old as the step

    def __post_init__(self) -> None:
        _check_float(self.uptime_s, "uptime_s", 0.0, math.inf)
        _check_int(self.live_requests, "live_requests", 0, MAX_COUNT)
        _check_int(self.served, "served", 0, MAX_COUNT)
        _check_float(self.loop_age_s, "loop_age_s", 0.0, math.inf)
        for name in ("steps", "forward_passes", "step_requests", "carried"):
            _check_int(getattr(self, name), name, 0, MAX_COUNT)
        _check_type(self.in_step, "in_step", (bool,), None)


@dataclass(slots=True)
class CompleteRequest:
    """A job for the worker; answered by one `Result` or one `Error`.

    `kind="fim"`: fill the one hole between `prefix` and `suffix` (in `mode`, `max_tokens` at
    most); `holes` and `pieces` stay empty. `kind="edit"`: the regions `holes` (each with its own
    mode and budget, and maybe a draft of its new text that the model checks and completes) in
    `prefix hole[0] pieces[0] hole[1] ... pieces[H-2] hole[H-1] suffix`, decoded jointly, `events`
    the user's edits that call for them; `mode` and `max_tokens` are unused. A FIM request may
    carry a draft of its hole's start (`draft` pieces with `slots` masks between them, as a
    `Hole`'s): the worker lays it in, cut to the hole's budget, the model checks it in one pass
    and fills what follows; empty for an edit.
    """

    TAG: ClassVar[MsgType] = MsgType.COMPLETE_REQUEST
    RECORD_LISTS: ClassVar[dict[str, type]] = {"snippets": Snippet, "holes": Hole, "events": Event}
    id: str
    kind: str
    prefix: str
    suffix: str
    snippets: list[Snippet] = field(default_factory=list)
    mode: str = Mode.SINGLE_LINE
    max_tokens: int = 64
    deadline_ms: int = 1000  # a budget counted from the request's arrival at the worker
    document: str = ""  # the document key (URI), for logs
    decoder: dict[str, str | int | float | bool] = field(default_factory=dict)
    # A newer request with the same non-empty session cancels the older one, whichever connection
    # each came on (a client sends each call in flight on a socket of its own): start it with a
    # random id of the client, so that no other client's requests share it.
    session: str = ""
    holes: list[Hole] = field(default_factory=list)  # an edit's regions, left to right
    pieces: list[str] = field(default_factory=list)  # an edit's text between its regions
    events: list[Event] = field(default_factory=list)  # an edit's cause: the user's recent edits, oldest first
    stream: bool = False  # also send `Partial` replies with the hole's settled text as it grows (FIM)
    draft: list[str] = field(default_factory=list)  # FIM: a draft of the hole's start, cut where `slots` open
    slots: list[int] = field(default_factory=list)  # FIM: masked tokens between draft pieces i and i + 1

    def __post_init__(self) -> None:
        _check_str(self.id, "id", MAX_ID_CHARS, min_chars=1)
        rid = self.id
        _check_str(self.kind, "kind", MAX_NAME_CHARS, rid, choices=KINDS)
        _check_text(self.prefix, "prefix", MAX_PREFIX_CHARS, "MAX_PREFIX_CHARS", rid)
        _check_text(self.suffix, "suffix", MAX_SUFFIX_CHARS, "MAX_SUFFIX_CHARS", rid)
        _check_snippets(self.snippets, rid)
        _check_str(self.mode, "mode", MAX_NAME_CHARS, rid, choices=MODES)
        _check_int(self.max_tokens, "max_tokens", 1, MAX_TOKENS, rid)
        _check_regions(self, rid)
        _check_fim_draft(self, rid)
        _check_events(self, rid)
        _check_int(self.deadline_ms, "deadline_ms", 1, MAX_DEADLINE_MS, rid)
        _check_type(self.stream, "stream", (bool,), rid)
        _check_str(self.document, "document", MAX_PATH_CHARS, rid)
        _check_str(self.session, "session", MAX_PATH_CHARS, rid)
        _check_overrides(self.decoder, rid)


@dataclass(slots=True)
class Result:
    TAG: ClassVar[MsgType] = MsgType.RESULT
    RECORD_LISTS: ClassVar[dict[str, type]] = {"items": Item}
    RECORDS: ClassVar[dict[str, type]] = {"timings": Timings}
    id: str
    items: list[Item]
    timings: Timings
    stop_reason: str

    def __post_init__(self) -> None:
        _check_str(self.id, "id", MAX_ID_CHARS, min_chars=1)
        rid = self.id
        _check_list(self.items, "items", MAX_ITEMS, Item, rid)
        for i, item in enumerate(self.items):
            _check_str(item.text, f"items[{i}].text", MAX_ITEM_CHARS, rid)
            _check_float(item.confidence, f"items[{i}].confidence", 0.0, 1.0, rid)
            _check_int(item.forward_passes, f"items[{i}].forward_passes", 0, MAX_COUNT, rid)
            _check_int(item.hole, f"items[{i}].hole", 0, MAX_HOLES - 1, rid)
        if not isinstance(self.timings, Timings):
            raise _invalid("timings", f"must be a Timings map, got {type(self.timings).__name__}", rid)
        for name in ("queue_ms", "prefill_ms", "decode_ms", "total_ms", "prepare_ms"):
            _check_float(getattr(self.timings, name), f"timings.{name}", 0.0, math.inf, rid)
        _check_str(self.stop_reason, "stop_reason", MAX_NAME_CHARS, rid, choices=STOP_REASONS)


@dataclass(slots=True)
class Partial:
    """Before the `Result` of a streamed request: the text of its hole from the start that no
    later step can change, longer than the previous Partial's; the Result's text starts with it."""

    TAG: ClassVar[MsgType] = MsgType.PARTIAL
    id: str
    text: str

    def __post_init__(self) -> None:
        _check_str(self.id, "id", MAX_ID_CHARS, min_chars=1)
        _check_str(self.text, "text", MAX_ITEM_CHARS, self.id)


@dataclass(slots=True)
class Cancel:
    """Drop the sender's request `id` if it has not started; its one reply still comes."""

    TAG: ClassVar[MsgType] = MsgType.CANCEL
    id: str

    def __post_init__(self) -> None:
        _check_str(self.id, "id", MAX_ID_CHARS, min_chars=1)


@dataclass(slots=True)
class Error:
    TAG: ClassVar[MsgType] = MsgType.ERROR
    id: str | None
    code: str
    message: str

    def __post_init__(self) -> None:
        if self.id is not None:
            _check_str(self.id, "id", MAX_ID_CHARS, min_chars=1)
        _check_str(self.code, "code", MAX_NAME_CHARS, self.id, min_chars=1)
        _check_str(self.message, "message", MAX_ERROR_CHARS, self.id)


Message = (Hello | Welcome | InfoRequest | Info | Health | HealthOk | CompleteRequest | Result | Cancel
           | Error | Partial)
_CLASSES: dict[MsgType, type] = {
    cls.TAG: cls
    for cls in (Hello, Welcome, InfoRequest, Info, Health, HealthOk, CompleteRequest, Result, Cancel,
                Error, Partial)
}


def _to_wire(value: Any) -> Any:
    if is_dataclass(value):
        return {f.name: _to_wire(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list):
        return [_to_wire(v) for v in value]
    return value


def encode(msg: Message) -> bytes:
    """One frame for `msg`: its tag byte and its fields as a msgpack map."""
    frame = bytes([msg.TAG]) + msgpack.packb(_to_wire(msg), use_bin_type=True)
    if len(frame) > MAX_FRAME_BYTES:
        raise ProtocolError(ErrorCode.TOO_LARGE,
                            f"{type(msg).__name__} encodes to {len(frame)} bytes, over the "
                            f"{MAX_FRAME_BYTES}-byte frame cap; send less context",
                            getattr(msg, "id", None))
    return frame


def _build(cls: type, payload: dict, where: str, rid: str | None) -> Any:
    """Construct `cls` from a decoded map whose keys must be exactly the fields of `cls`."""
    names = [f.name for f in fields(cls)]
    unknown = [k for k in payload if k not in names]
    if unknown:
        key = unknown[0] if isinstance(unknown[0], str) and len(unknown[0]) <= 40 else _show(unknown[0])
        raise _invalid(f"{where}{key}", f"is not a field of {cls.__name__}", rid)
    missing = [n for n in names if n not in payload]
    if missing:
        raise _invalid(f"{where}{missing[0]}", "is missing", rid)
    values = dict(payload)  # records arrive as maps; a value of another type is left to __post_init__
    for name, record in getattr(cls, "RECORDS", {}).items():
        if isinstance(values[name], dict):
            values[name] = _build(record, values[name], f"{where}{name}.", rid)
    for name, record in getattr(cls, "RECORD_LISTS", {}).items():
        if isinstance(values[name], list):
            values[name] = [_build(record, v, f"{where}{name}[{i}].", rid) if isinstance(v, dict) else v
                            for i, v in enumerate(values[name])]
    return cls(**values)


def _unpack(body: bytes) -> dict:
    try:
        payload = msgpack.unpackb(body, raw=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        detail = f"{type(exc).__name__}: {exc}".rstrip(": ")
        raise ProtocolError(ErrorCode.MALFORMED, f"the payload is not valid msgpack ({detail})") from None
    if not isinstance(payload, dict):
        raise ProtocolError(ErrorCode.MALFORMED,
                            f"the payload must be a msgpack map, got {type(payload).__name__}")
    return payload


def decode(frame: bytes) -> Message:
    """Parse and validate one frame; raises `ProtocolError` saying what is wrong."""
    if len(frame) == 0:
        raise ProtocolError(ErrorCode.MALFORMED,
                            "empty frame: expected a one-byte type tag followed by a msgpack map")
    if len(frame) > MAX_FRAME_BYTES:
        raise ProtocolError(ErrorCode.TOO_LARGE,
                            f"frame of {len(frame)} bytes is over the {MAX_FRAME_BYTES}-byte cap")
    try:
        tag = MsgType(frame[0])
    except ValueError:
        known = ", ".join(f"{t.value} ({t.name})" for t in MsgType)
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE,
                            f"unknown message type tag {frame[0]}; known tags: {known}") from None
    payload = _unpack(memoryview(frame)[1:])
    rid = payload.get("id")
    if not (isinstance(rid, str) and 0 < len(rid) <= MAX_ID_CHARS):
        rid = None
    return _build(_CLASSES[tag], payload, "", rid)
