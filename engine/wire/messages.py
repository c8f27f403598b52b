"""The wire's messages, each declared once with the bounds of its fields (`engine.wire.bounds`).

A message checks itself when it is built (`__post_init__`: `check_fields`), so a malformed one can
neither be decoded nor built locally; the records inside a message (`Snippet`, `Hole`, `Event`,
`Item`, `Timings`) are checked by the message that holds them, whose errors name them
(`holes[2].mode`). What no single field says (a FIM request has no holes, an edit's pieces lie
between its holes, a draft's slots between its pieces, the snippets' text in all) is in the
`CHECKS` of the record it spans.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from engine.wire.bounds import (COUNT, ID, KINDS, MAX_DEADLINE_MS, MAX_ERROR_CHARS, MAX_EVENT_CHARS, MAX_EVENTS,
                                MAX_HOLES, MAX_ITEM_CHARS, MAX_ITEMS, MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_PREFIX_CHARS,
                                MAX_PRIORITY, MAX_SLOT_TOKENS, MAX_SLOTS, MAX_SNIPPET_TEXT_CHARS, MAX_SNIPPETS,
                                MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS, MAX_TOKENS, MODES, NAME, SECONDS, SIZE,
                                STOP_REASONS, VERSION, Bool, ErrorCode, Float, Int, Ints, Mode, MsgType, Optional,
                                Overrides, ProtocolError, Record, Records, Str, Strings, Text, check_fields, checked_by,
                                invalid, too_large)

MODE = Str(MAX_NAME_CHARS, choices=MODES)
TOKENS = Int(1, MAX_TOKENS)
PATH = Str(MAX_PATH_CHARS)
SLOTS = Ints(Int(1, MAX_SLOT_TOKENS), MAX_SLOTS)
PIECE = Text(MAX_PREFIX_CHARS, "MAX_PREFIX_CHARS")


def check_draft(hole: Hole | CompleteRequest, where: str, rid: str | None) -> None:
    """A draft's slots lie between its pieces, and its pieces hold as much text as a region may."""
    if len(hole.slots) != max(0, len(hole.draft) - 1):
        raise invalid(f"{where}slots", f"must hold one length between each two of the "
                                       f"{len(hole.draft)} draft pieces, got {len(hole.slots)}", rid)
    total = sum(map(len, hole.draft))
    if total > MAX_SUFFIX_CHARS:
        raise too_large(f"{where}draft", total, MAX_SUFFIX_CHARS, "MAX_SUFFIX_CHARS", "draft a smaller region", rid)


class Checked:
    """A message: it checks its fields when it is built."""

    __slots__ = ()

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass(slots=True)
class Snippet:
    """Extra context (a definition, a recently edited range) from this or another file."""

    text: str = field(metadata=checked_by(Text(MAX_SNIPPET_TEXT_CHARS, "MAX_SNIPPET_TEXT_CHARS")))
    path: str = field(metadata=checked_by(PATH))
    priority: int = field(default=0, metadata=checked_by(Int(-MAX_PRIORITY, MAX_PRIORITY)))


@dataclass(slots=True)
class Hole:
    """One region of an edit job: its mode, its token budget, the text now in it, and maybe a
    draft of its new text: `draft` pieces with a masked slot of `slots[i]` tokens between pieces
    i and i + 1 (no draft: the region is masked whole)."""

    CHECKS: ClassVar[tuple] = (check_draft,)
    mode: str = field(metadata=checked_by(MODE))
    max_tokens: int = field(metadata=checked_by(TOKENS))
    replaces: str = field(default="", metadata=checked_by(Text(MAX_SUFFIX_CHARS, "MAX_SUFFIX_CHARS")))
    draft: list[str] = field(default_factory=list, metadata=checked_by(Strings()))
    slots: list[int] = field(default_factory=list, metadata=checked_by(SLOTS))


@dataclass(slots=True)
class Event:
    """One edit the user made: lines of the document as they were and as they are now."""

    before: str = field(metadata=checked_by(Text(MAX_EVENT_CHARS, "MAX_EVENT_CHARS")))
    after: str = field(metadata=checked_by(Text(MAX_EVENT_CHARS, "MAX_EVENT_CHARS")))


@dataclass(slots=True)
class Item:
    """One candidate text for one hole (`hole`: its index, left to right; 0 for FIM)."""

    text: str = field(metadata=checked_by(Str(MAX_ITEM_CHARS)))
    confidence: float = field(metadata=checked_by(Float(0.0, 1.0)))
    forward_passes: int = field(metadata=checked_by(COUNT))
    hole: int = field(default=0, metadata=checked_by(Int(0, MAX_HOLES - 1)))


@dataclass(slots=True)
class Timings:
    """Where a request's time went, in milliseconds since it arrived at the worker."""

    queue_ms: float = field(metadata=checked_by(SECONDS))  # waiting for room in a step
    # the first pass over the canvas (the context's keys and values)
    prefill_ms: float = field(metadata=checked_by(SECONDS))
    decode_ms: float = field(metadata=checked_by(SECONDS))  # the passes after it
    total_ms: float = field(metadata=checked_by(SECONDS))
    prepare_ms: float = field(default=0.0, metadata=checked_by(SECONDS))  # tokenizing and laying out the canvas


@dataclass(slots=True)
class Hello(Checked):
    TAG: ClassVar[MsgType] = MsgType.HELLO
    version: int = field(metadata=checked_by(VERSION))
    client_name: str = field(metadata=checked_by(NAME))


@dataclass(slots=True)
class Welcome(Checked):
    TAG: ClassVar[MsgType] = MsgType.WELCOME
    version: int = field(metadata=checked_by(VERSION))
    model: str = field(metadata=checked_by(NAME))
    vocab_size: int = field(metadata=checked_by(SIZE))
    max_context: int = field(metadata=checked_by(SIZE))


@dataclass(slots=True)
class InfoRequest(Checked):
    TAG: ClassVar[MsgType] = MsgType.INFO_REQUEST


@dataclass(slots=True)
class Info(Checked):
    TAG: ClassVar[MsgType] = MsgType.INFO
    model: str = field(metadata=checked_by(NAME))
    family: str = field(metadata=checked_by(NAME))
    vocab_size: int = field(metadata=checked_by(SIZE))
    max_context: int = field(metadata=checked_by(SIZE))
    protocol_version: int = field(metadata=checked_by(VERSION))


@dataclass(slots=True)
class Health(Checked):
    TAG: ClassVar[MsgType] = MsgType.HEALTH


@dataclass(slots=True)
class HealthOk(Checked):
    TAG: ClassVar[MsgType] = MsgType.HEALTH_OK
    uptime_s: float = field(metadata=checked_by(SECONDS))
    live_requests: int = field(metadata=checked_by(COUNT))
    served: int = field(metadata=checked_by(COUNT))
    # since the main loop's last tick: a large value means it hangs
    loop_age_s: float = field(metadata=checked_by(SECONDS))
    steps: int = field(default=0, metadata=checked_by(COUNT))  # decoding steps run since start
    forward_passes: int = field(default=0, metadata=checked_by(COUNT))  # model forward calls since start
    # requests advanced, summed over steps: mean batch = step_requests / steps
    step_requests: int = field(default=0, metadata=checked_by(COUNT))
    # requests that took over the running decoding they superseded (typing on)
    carried: int = field(default=0, metadata=checked_by(COUNT))
    # the main loop is inside a decoding step: its tick is as old as the step
    in_step: bool = field(default=False, metadata=checked_by(Bool()))


def check_snippets_total(request: CompleteRequest, where: str, rid: str | None) -> None:
    total = sum(len(snippet.text) for snippet in request.snippets)
    if total > MAX_SNIPPETS_TOTAL_CHARS:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"field 'snippets' has {total} characters of text in all, "
                            f"over the cap of {MAX_SNIPPETS_TOTAL_CHARS} (MAX_SNIPPETS_TOTAL_CHARS); "
                            "send fewer or shorter snippets", rid)


def check_regions(request: CompleteRequest, where: str, rid: str | None) -> None:
    """An edit's holes and the pieces between them; a FIM request has neither."""
    if request.kind == "fim":
        if request.holes or request.pieces:
            raise invalid("holes", "must be empty for kind 'fim' (its hole is prefix|suffix); "
                                   "send several regions as kind 'edit'", rid)
        return
    if not request.holes:
        raise invalid("holes", "must name at least one region for kind 'edit'", rid)
    if len(request.pieces) != len(request.holes) - 1:
        raise invalid("pieces", f"must hold the {len(request.holes) - 1} texts between the "
                                f"{len(request.holes)} holes, got {len(request.pieces)}", rid)
    total = len(request.prefix) + len(request.suffix) + sum(len(piece) for piece in request.pieces)
    if total > MAX_PREFIX_CHARS + MAX_SUFFIX_CHARS:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"the edit's text has {total} characters in all, over "
                            f"the cap of {MAX_PREFIX_CHARS + MAX_SUFFIX_CHARS} (MAX_PREFIX_CHARS + "
                            "MAX_SUFFIX_CHARS); send a smaller window of the file", rid)


def check_kind_fields(request: CompleteRequest, where: str, rid: str | None) -> None:
    """A FIM request's draft of its hole's start; only an edit job has events."""
    check_draft(request, "", rid)
    if request.kind == "edit" and request.draft:
        raise invalid("draft", "must be empty for kind 'edit'; draft each region in its hole", rid)
    if request.kind == "fim" and request.events:
        raise invalid("events", "must be empty for kind 'fim'; edit events go with kind 'edit'", rid)


@dataclass(slots=True)
class CompleteRequest(Checked):
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
    CHECKS: ClassVar[tuple] = (check_snippets_total, check_regions, check_kind_fields)
    id: str = field(metadata=checked_by(ID))
    kind: str = field(metadata=checked_by(Str(MAX_NAME_CHARS, choices=KINDS)))
    prefix: str = field(metadata=checked_by(Text(MAX_PREFIX_CHARS, "MAX_PREFIX_CHARS")))
    suffix: str = field(metadata=checked_by(Text(MAX_SUFFIX_CHARS, "MAX_SUFFIX_CHARS")))
    snippets: list[Snippet] = field(default_factory=list, metadata=checked_by(Records(Snippet, MAX_SNIPPETS)))
    mode: str = field(default=Mode.SINGLE_LINE, metadata=checked_by(MODE))
    max_tokens: int = field(default=64, metadata=checked_by(TOKENS))
    # a budget counted from the request's arrival
    deadline_ms: int = field(default=1000, metadata=checked_by(Int(1, MAX_DEADLINE_MS)))
    document: str = field(default="", metadata=checked_by(PATH))  # the document key (URI), for logs
    decoder: dict[str, str | int | float | bool] = field(default_factory=dict, metadata=checked_by(Overrides()))
    # A newer request with the same non-empty session cancels the older one, whichever connection
    # each came on (a client sends each call in flight on a socket of its own): start it with a
    # random id of the client, so that no other client's requests share it.
    session: str = field(default="", metadata=checked_by(PATH))
    # an edit's regions, left to right
    holes: list[Hole] = field(default_factory=list, metadata=checked_by(Records(Hole, MAX_HOLES)))
    # between them
    pieces: list[str] = field(default_factory=list, metadata=checked_by(Strings(PIECE)))
    # an edit's cause, oldest first
    events: list[Event] = field(default_factory=list, metadata=checked_by(Records(Event, MAX_EVENTS)))
    # also send `Partial` replies with the hole's settled text as it grows
    stream: bool = field(default=False, metadata=checked_by(Bool()))
    # FIM: a draft of the hole's start, cut where `slots` open
    draft: list[str] = field(default_factory=list, metadata=checked_by(Strings()))
    # FIM: masked tokens between draft pieces i and i + 1
    slots: list[int] = field(default_factory=list, metadata=checked_by(SLOTS))


@dataclass(slots=True)
class Result(Checked):
    TAG: ClassVar[MsgType] = MsgType.RESULT
    id: str = field(metadata=checked_by(ID))
    items: list[Item] = field(metadata=checked_by(Records(Item, MAX_ITEMS)))
    timings: Timings = field(metadata=checked_by(Record(Timings)))
    stop_reason: str = field(metadata=checked_by(Str(MAX_NAME_CHARS, choices=STOP_REASONS)))


@dataclass(slots=True)
class Partial(Checked):
    """Before the `Result` of a streamed request: the text of its hole from the start that no
    later step can change, longer than the previous Partial's; the Result's text starts with it."""

    TAG: ClassVar[MsgType] = MsgType.PARTIAL
    id: str = field(metadata=checked_by(ID))
    text: str = field(metadata=checked_by(Str(MAX_ITEM_CHARS)))


@dataclass(slots=True)
class Cancel(Checked):
    """Drop the sender's request `id` if it has not started; its one reply still comes."""

    TAG: ClassVar[MsgType] = MsgType.CANCEL
    id: str = field(metadata=checked_by(ID))


@dataclass(slots=True)
class Error(Checked):
    TAG: ClassVar[MsgType] = MsgType.ERROR
    id: str | None = field(metadata=checked_by(Optional(ID)))
    code: str = field(metadata=checked_by(Str(MAX_NAME_CHARS, min_chars=1)))
    message: str = field(metadata=checked_by(Str(MAX_ERROR_CHARS)))


Message = (Hello | Welcome | InfoRequest | Info | Health | HealthOk | CompleteRequest | Result | Cancel
           | Error | Partial)
CLASSES: dict[MsgType, type[Any]] = {
    cls.TAG: cls
    for cls in (Hello, Welcome, InfoRequest, Info, Health, HealthOk, CompleteRequest, Result, Cancel,
                Error, Partial)
}
