"""The wire protocol between clients (the language server, the CLI) and the engine worker: the
one name every end imports it by.

Its parts: `engine.wire.bounds` (the caps, `Mode`, the tags, the error codes and the one checker of
field rules), `engine.wire.messages` (each message and record declared once, with its fields'
bounds) and `engine.wire.codec` (a message as one frame: a tag byte and a msgpack map, and back).
The module knows nothing about sockets.
"""
from __future__ import annotations

from engine.wire.bounds import (CUT_SHORT, KINDS, MAX_COUNT, MAX_DEADLINE_MS, MAX_ERROR_CHARS, MAX_EVENT_CHARS,
                                MAX_EVENTS, MAX_FRAME_BYTES, MAX_HOLES, MAX_ID_CHARS, MAX_ITEM_CHARS, MAX_ITEMS,
                                MAX_NAME_CHARS, MAX_OVERRIDE_KEY_CHARS, MAX_OVERRIDE_STR_CHARS, MAX_OVERRIDES,
                                MAX_PATH_CHARS, MAX_PREFIX_CHARS, MAX_PRIORITY, MAX_SLOT_TOKENS, MAX_SLOTS,
                                MAX_SNIPPET_TEXT_CHARS, MAX_SNIPPETS, MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS,
                                MAX_TOKENS, MODES, PROTOCOL_VERSION, SETTING_MODES, STOP_REASONS, ErrorCode, Mode,
                                MsgType, ProtocolError)
from engine.wire.codec import decode, encode
from engine.wire.messages import (Cancel, CompleteRequest, Error, Event, Health, HealthOk, Hello, Hole, Info,
                                  InfoRequest, Item, Message, Partial, Result, Snippet, Timings, Welcome)

__all__ = ["CUT_SHORT", "KINDS", "MAX_COUNT", "MAX_DEADLINE_MS", "MAX_ERROR_CHARS", "MAX_EVENTS", "MAX_EVENT_CHARS",
           "MAX_FRAME_BYTES", "MAX_HOLES", "MAX_ID_CHARS", "MAX_ITEMS", "MAX_ITEM_CHARS", "MAX_NAME_CHARS",
           "MAX_OVERRIDES", "MAX_OVERRIDE_KEY_CHARS", "MAX_OVERRIDE_STR_CHARS", "MAX_PATH_CHARS", "MAX_PREFIX_CHARS",
           "MAX_PRIORITY", "MAX_SLOTS", "MAX_SLOT_TOKENS", "MAX_SNIPPETS", "MAX_SNIPPETS_TOTAL_CHARS",
           "MAX_SNIPPET_TEXT_CHARS", "MAX_SUFFIX_CHARS", "MAX_TOKENS", "MODES", "PROTOCOL_VERSION", "SETTING_MODES",
           "STOP_REASONS", "Cancel", "CompleteRequest", "Error", "ErrorCode", "Event", "Health", "HealthOk", "Hello",
           "Hole", "Info", "InfoRequest", "Item", "Message", "Mode", "MsgType", "Partial", "ProtocolError", "Result",
           "Snippet", "Timings", "Welcome", "decode", "encode"]
