"""Every method, notification and command of the server beyond the LSP itself, with its typed
params and results, in one place.

The editors mirror these names: `editors/vscode/src/protocol.ts` (with the arena's in
`arena.ts`) and `editors/nvim/lua/infill/protocol.lua`; a test checks each mirror against this
module. The params and results are attrs classes, as lsprotocol declares its own: pygls structures
a custom method's params with `converter()` (its own converter and this module's readers) and
unstructures results through it, field names in camelCase. A reader never raises: params that do
not fit give None (or an event naming no request), which each feature answers as it always did.

Completions:
- inline items carry the command `ACCEPT_COMMAND` with `[AnswerRef]`; completion items carry the
  same `AnswerRef` (`{"requestId", "index"}`) as `data`;
- the client reports what became of a suggestion with `DID_SHOW_COMPLETION`,
  `ACCEPT_COMPLETION` and `REJECT_COMPLETION`, params `CompletionEvent`
  (`{"requestId", "index", "acceptedChars"?}`);
- the server tells the client its worker is up with `WORKER_READY`, `WorkerReadyParams`
  (`{"model", "address"}`).
Next edits, in the shape of Copilot's language server:
- `INLINE_EDIT` (request), `InlineEditParams` (`{"textDocument": {"uri", "version"}, "position"}`)
  -> `InlineEditResult` (`{"edits": [...]}`, each `InlineEdit`: `{"text", "textDocument", "range",
  "command"}`);
- `DID_SHOW_INLINE_EDIT` (notification), `DidShowInlineEditParams` (`{"item": {"command"}}`);
- `ACCEPT_INLINE_EDIT` (the edit's command), `[AnswerRef]`.
The arena: each battle's inline items carry `VOTE_COMMAND` with `[battleId, "top" | "bottom"]`;
the client sends `[battleId, "neither"]` when the user types on; the reply is a `VoteResult`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, _dict_to_object, default_converter

ACCEPT_COMMAND = "infill.acceptCompletion"
DID_SHOW_COMPLETION = "infill/didShowCompletion"
ACCEPT_COMPLETION = "infill/acceptCompletion"
REJECT_COMPLETION = "infill/rejectCompletion"
WORKER_READY = "infill/workerReady"
INLINE_EDIT = "textDocument/copilotInlineEdit"
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"
ACCEPT_INLINE_EDIT = "infill.acceptInlineEdit"
VOTE_COMMAND = "infill.arenaVote"

CLIENT_MAY_IGNORE = (WORKER_READY,)  # news for the client's status bar; an editor may not show it
NAMES = (ACCEPT_COMMAND, DID_SHOW_COMPLETION, ACCEPT_COMPLETION, REJECT_COMPLETION, WORKER_READY,
         INLINE_EDIT, DID_SHOW_INLINE_EDIT, ACCEPT_INLINE_EDIT, VOTE_COMMAND)


@attrs.define(frozen=True)
class AnswerRef:
    """One text of one answer: the accept commands' argument and a completion item's `data`."""

    request_id: str
    index: int


@attrs.define(frozen=True)
class CompletionEvent:
    """What the client says became of a suggestion; `request_id` is None when it sent no string,
    `index` is 0 when it sent no int, `accepted_chars` None when it sent no int."""

    request_id: str | None
    index: int = 0
    accepted_chars: int | None = None


@attrs.define(frozen=True)
class WorkerReadyParams:
    model: str
    address: str


@attrs.define(frozen=True)
class EditedDocument:
    """A document at the version the editor has (LSP's VersionedTextDocumentIdentifier, unbounded)."""

    uri: str
    version: int


@attrs.define(frozen=True)
class Cursor:
    """A position in a document (LSP's Position, unbounded: a reader checks only that it is >= 0)."""

    line: int
    character: int


@attrs.define(frozen=True)
class InlineEditParams:
    text_document: EditedDocument
    position: Cursor


@attrs.define(frozen=True)
class InlineEdit:
    """One proposed edit: `text` replaces `range` (whole lines); its command accepts it."""

    text: str
    text_document: EditedDocument
    range: types.Range
    command: types.Command


@attrs.define(frozen=True)
class InlineEditResult:
    edits: list[InlineEdit]


NO_EDITS = InlineEditResult([])


@attrs.define(frozen=True)
class DidShowInlineEditParams:
    """`{"item": {"command": {"arguments": [event, ...]}}}`: only the shown edit's first argument
    is read, as the event it names."""

    event: CompletionEvent


@attrs.define(frozen=True)
class VoteResult:
    """Where an arena vote went."""

    battle_id: str
    pick: str
    store: str


def _member(value: Any, name: str) -> Any:
    """A member of a JSON object; None for a missing one or a value that is no object."""
    return value.get(name) if isinstance(value, dict) else None


def _natural(value: Any) -> bool:
    return type(value) is int and value >= 0


def inline_edit_params(value: Any) -> InlineEditParams | None:
    """`INLINE_EDIT`'s params, or None unless the uri is a string and the version, line and
    character are ints >= 0 (a bool is no int here)."""
    document, position = _member(value, "textDocument"), _member(value, "position")
    uri, version = _member(document, "uri"), _member(document, "version")
    line, character = _member(position, "line"), _member(position, "character")
    if not isinstance(uri, str) or not all(_natural(n) for n in (version, line, character)):
        return None
    return InlineEditParams(EditedDocument(uri, version), Cursor(line, character))


def completion_event(value: Any) -> CompletionEvent:
    """A suggestion's event from `{"requestId", "index", "acceptedChars"}`, each member read on its
    own (see `CompletionEvent`)."""
    request_id, index, accepted = _member(value, "requestId"), _member(value, "index") or 0, \
        _member(value, "acceptedChars")
    return CompletionEvent(request_id if isinstance(request_id, str) else None,
                           index if isinstance(index, int) else 0,
                           accepted if isinstance(accepted, int) else None)


def did_show_inline_edit_params(value: Any) -> DidShowInlineEditParams:
    arguments = _member(_member(_member(value, "item"), "command"), "arguments")
    return DidShowInlineEditParams(event_of(arguments if isinstance(arguments, list) else ()))


def event_of(arguments: Sequence[Any]) -> CompletionEvent:
    """The event an accept command's arguments name: its first argument's."""
    return completion_event(arguments[0] if arguments else None)


READERS = {InlineEditParams: inline_edit_params, DidShowInlineEditParams: did_show_inline_edit_params,
           CompletionEvent: completion_event}
PARAMS = {INLINE_EDIT: InlineEditParams, DID_SHOW_INLINE_EDIT: DidShowInlineEditParams,
          DID_SHOW_COMPLETION: CompletionEvent, ACCEPT_COMPLETION: CompletionEvent,
          REJECT_COMPLETION: CompletionEvent}  # each custom method the client sends, by name


def converter() -> cattrs.Converter:
    """pygls's converter, reading each custom method's params as its `PARAMS` class (those of
    methods this module does not name stay as pygls gives them)."""
    made = default_converter()
    for cls, read in READERS.items():
        made.register_structure_hook(cls, lambda value, _, read=read: read(value))

    def with_typed_params(message: dict[str, Any], cls: type) -> Any:
        if "params" in message:
            params_type = PARAMS.get(message.get("method"))
            message["params"] = (_dict_to_object(message["params"]) if params_type is None
                                 else made.structure(message["params"], params_type))
        return cls(**message)

    for message_type in (JsonRPCRequestMessage, JsonRPCNotification):
        made.register_structure_hook(message_type, with_typed_params)
    return made
