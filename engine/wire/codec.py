"""The wire's frames: a message as bytes and back.

A ZeroMQ message is one frame: a one-byte type tag (`MsgType`) followed by a msgpack map whose
keys are exactly the fields of the message's dataclass (`engine.wire.messages`), in their order;
nested records (`Snippet`, `Hole`, `Event`, `Item`, `Timings`) travel as maps too. `decode` checks
the frame, the tag and the set of keys, then builds the message, which checks its fields. Every
failure is a `ProtocolError` whose `code` is one of `ErrorCode`.
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

import msgpack

from engine.wire.bounds import (MAX_FRAME_BYTES, MAX_ID_CHARS, ErrorCode, MsgType, ProtocolError, Record, Records,
                                invalid, rule_of, show)
from engine.wire.messages import CLASSES, Message


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
    """Construct `cls` from a decoded map whose keys must be exactly the fields of `cls`; the maps
    of its records (a `Record` or `Records` field) are built the same way."""
    names = [f.name for f in fields(cls)]
    unknown = [k for k in payload if k not in names]
    if unknown:
        key = unknown[0] if isinstance(unknown[0], str) and len(unknown[0]) <= 40 else show(unknown[0])
        raise invalid(f"{where}{key}", f"is not a field of {cls.__name__}", rid)
    missing = [n for n in names if n not in payload]
    if missing:
        raise invalid(f"{where}{missing[0]}", "is missing", rid)
    values = dict(payload)  # records arrive as maps; a value of another type is left to the checks
    for record_field in fields(cls):
        rule, name = rule_of(record_field), record_field.name
        if isinstance(rule, Record) and isinstance(values[name], dict):
            values[name] = _build(rule.record, values[name], f"{where}{name}.", rid)
        elif isinstance(rule, Records) and isinstance(values[name], list):
            values[name] = [_build(rule.record, v, f"{where}{name}[{i}].", rid) if isinstance(v, dict) else v
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
    return _build(CLASSES[tag], payload, "", rid)
