"""The wire's bounds and the one checker of them: every cap a message's field has, the codes of
what breaks them, and the rules a field is declared with (`checked_by`), read by `check_fields`.

A message (`engine.wire.messages`) declares each field once with its rule: `Str` (a name, maybe one
of some choices), `Text` (a context text, `too_large` over its cap), `Int`, `Float`, `Bool`,
`Strings` and `Ints` (lists), `Records` (a list of records, each checked field by field),
`Record`, `Overrides` (a request's decoder settings) and `Optional`. `check_fields` runs them in
the fields' order, then the record's own cross-field `CHECKS`; each failure is a `ProtocolError`
whose message names the field (`snippets[0].text`) and what to change.
"""
from __future__ import annotations

import abc
import math
from dataclasses import dataclass, fields
from enum import IntEnum, StrEnum
from typing import Any

PROTOCOL_VERSION = 8  # 3: edit jobs (several holes), items per hole, prepare_ms; no 'auto' mode; 4: edit events;
#   5: HealthOk.in_step; 6: drafted holes (Hole.draft, Hole.slots); 7: a FIM hole's draft (draft, slots);
#   8: the stop reason "budget" (a completion that ran its passes)
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
MAX_VERSION = 65535

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
STOP_REASONS = ("done", "deadline", "budget", "cancelled")  # budget: the decoder's passes ran out (`max_passes`)
CUT_SHORT = ("deadline", "budget")  # an answer ended before its decoding did, the first the stronger reason


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


def show(value: Any) -> str:
    """`value` as an error message quotes it: at most 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def invalid(where: str, problem: str, rid: str | None) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_FIELD, f"field '{where}' {problem}", rid)


def too_large(where: str, size: int, cap: int, cap_name: str, advice: str, rid: str | None) -> ProtocolError:
    return ProtocolError(ErrorCode.TOO_LARGE, f"field '{where}' has {size} characters, over the cap of "
                         f"{cap} ({cap_name}); {advice}", rid)


def check_type(value: Any, where: str, types: tuple[type, ...], rid: str | None) -> None:
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise invalid(where, f"must be {names}, got {type(value).__name__}", rid)


def check_count(value: list | dict, where: str, max_len: int, rid: str | None) -> None:
    if len(value) > max_len:
        raise invalid(where, f"must have at most {max_len} entries, got {len(value)}", rid)


class Rule(abc.ABC):
    """How one field is checked: `check(value, where, rid)` raises a ProtocolError or returns."""

    @abc.abstractmethod
    def check(self, value: Any, where: str, rid: str | None) -> None: ...


@dataclass(frozen=True)
class Str(Rule):
    max_chars: int
    min_chars: int = 0
    choices: tuple[str, ...] | None = None

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (str,), rid)
        if self.choices is not None and value not in self.choices:
            raise invalid(where, f"must be one of {', '.join(self.choices)}; got {show(value)}", rid)
        if not self.min_chars <= len(value) <= self.max_chars:
            raise invalid(where, f"must have {self.min_chars}..{self.max_chars} characters, got {len(value)}", rid)


@dataclass(frozen=True)
class Text(Rule):
    """A context text: a str of at most `cap` characters, else `too_large` naming the cap."""

    cap: int
    cap_name: str

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (str,), rid)
        if len(value) > self.cap:
            raise too_large(where, len(value), self.cap, self.cap_name, "send less context", rid)


@dataclass(frozen=True)
class Int(Rule):
    lo: int
    hi: int

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (int,), rid)
        if not self.lo <= value <= self.hi:
            raise invalid(where, f"must lie in {self.lo}..{self.hi}, got {value}", rid)


@dataclass(frozen=True)
class Float(Rule):
    lo: float
    hi: float

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (float, int), rid)
        if not (math.isfinite(value) and self.lo <= value <= self.hi):
            raise invalid(where, f"must be a finite number in {self.lo}..{self.hi}, got {value}", rid)


class Bool(Rule):
    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (bool,), rid)


@dataclass(frozen=True)
class Strings(Rule):
    """A list of str, each under `each` (None: any str)."""

    each: Rule | None = None

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (list,), rid)
        for i, entry in enumerate(value):
            if self.each is None:
                check_type(entry, f"{where}[{i}]", (str,), rid)
            else:
                self.each.check(entry, f"{where}[{i}]", rid)


@dataclass(frozen=True)
class Ints(Rule):
    """A list of at most `max_len` ints, each under `each`."""

    each: Int
    max_len: int

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (list,), rid)
        check_count(value, where, self.max_len, rid)
        for i, entry in enumerate(value):
            self.each.check(entry, f"{where}[{i}]", rid)


@dataclass(frozen=True)
class Record(Rule):
    """One nested record, checked field by field (`where.name`)."""

    record: type

    def check(self, value: Any, where: str, rid: str | None) -> None:
        if not isinstance(value, self.record):
            raise invalid(where, f"must be a {self.record.__name__} map, got {type(value).__name__}", rid)
        check_fields(value, f"{where}.", rid)


@dataclass(frozen=True)
class Records(Rule):
    """A list of at most `max_len` records, each checked field by field (`where[i].name`)."""

    record: type
    max_len: int

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (list,), rid)
        check_count(value, where, self.max_len, rid)
        for i, entry in enumerate(value):
            if not isinstance(entry, self.record):
                raise invalid(f"{where}[{i}]", f"must be a {self.record.__name__} map, got "
                              f"{type(entry).__name__}", rid)
        for i, entry in enumerate(value):
            check_fields(entry, f"{where}[{i}].", rid)


class Overrides(Rule):
    """A request's decoder settings: a few short keys, each a str, int, float or bool."""

    def check(self, value: Any, where: str, rid: str | None) -> None:
        check_type(value, where, (dict,), rid)
        check_count(value, where, MAX_OVERRIDES, rid)
        for key, setting in value.items():
            Str(MAX_OVERRIDE_KEY_CHARS, min_chars=1).check(key, f"{where} key", rid)
            check_type(setting, f"{where}.{key}", (str, int, float, bool), rid)
            if isinstance(setting, str):
                Str(MAX_OVERRIDE_STR_CHARS).check(setting, f"{where}.{key}", rid)
            elif isinstance(setting, float) and not math.isfinite(setting):
                raise invalid(f"{where}.{key}", f"must be finite, got {setting}", rid)


@dataclass(frozen=True)
class Optional(Rule):
    """None, or a value under `rule`."""

    rule: Rule

    def check(self, value: Any, where: str, rid: str | None) -> None:
        if value is not None:
            self.rule.check(value, where, rid)


ID = Str(MAX_ID_CHARS, min_chars=1)
NAME = Str(MAX_NAME_CHARS)
VERSION = Int(0, MAX_VERSION)
COUNT = Int(0, MAX_COUNT)
SIZE = Int(1, MAX_COUNT)
SECONDS = Float(0.0, math.inf)


def checked_by(rule: Rule) -> dict[str, Rule]:
    """A dataclass field's metadata that `check_fields` reads: `field(metadata=checked_by(rule))`."""
    return {"rule": rule}


def rule_of(record_field: Any) -> Rule | None:
    """The rule a dataclass field was declared with (`checked_by`), if any."""
    return record_field.metadata.get("rule")


def check_fields(record: Any, where: str = "", rid: str | None = None) -> None:
    """Check each field of `record` by its rule, in order, then the record's `CHECKS`; a message's
    valid `id` is the request id its later errors carry."""
    for record_field in fields(record):
        rule = rule_of(record_field)
        if rule is not None:
            rule.check(getattr(record, record_field.name), where + record_field.name, rid)
        if record_field.name == "id" and not where:
            rid = record.id
    for check in getattr(record, "CHECKS", ()):
        check(record, where, rid)
