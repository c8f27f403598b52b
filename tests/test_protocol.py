"""Tests of engine.wire.protocol: round trips, field validation, malformed frames, the size cap."""
from __future__ import annotations

import hashlib
import math
from dataclasses import fields

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.wire.protocol import (MAX_FRAME_BYTES, MAX_ITEM_CHARS, MAX_ITEMS, MAX_OVERRIDES,
                                    MAX_PREFIX_CHARS, MAX_SNIPPET_TEXT_CHARS, MAX_SNIPPETS,
                                    MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS, PROTOCOL_VERSION, Cancel,
                                    CompleteRequest, Error, ErrorCode, Health, HealthOk, Hello, Hole, Info,
                                    InfoRequest, Item, MsgType, Partial, ProtocolError, Result, Snippet,
                                    Timings, Welcome, decode, encode)
from engine.wire.bounds import rule_of
from engine.wire.messages import CLASSES, Event

REQUEST = CompleteRequest(
    id="req-1", kind="fim", prefix="def add(a, b):\n    ", suffix="\n", mode="single_line",
    snippets=[Snippet("def sub(a, b): ...", "util.py", 5)], max_tokens=32, deadline_ms=250,
    document="file:///x.py", session="inline:file:///x.py",
    decoder={"threshold": 0.9, "steps": 4, "algo": "conf", "semi_ar": True})
RESULT = Result("req-1", [Item("return a + b", 0.93, 3)], Timings(0.1, 4.0, 6.5, 11.0), "done")

SAMPLES = [
    Hello(PROTOCOL_VERSION, "test-client"),
    Welcome(PROTOCOL_VERSION, "tiny", 8192, 1024),
    InfoRequest(),
    Info("tiny", "infill", 8192, 1024, PROTOCOL_VERSION),
    Health(),
    HealthOk(12.5, 2, 40, 0.05),
    REQUEST,
    RESULT,
    Result("r", [], Timings(0, 0, 0, 0), "cancelled"),
    Cancel("req-1"),
    Partial("req-1", "return a"),
    CompleteRequest(id="req-3", kind="fim", prefix="x = ", suffix="\n", stream=True),
    Error("req-1", ErrorCode.INTERNAL, "boom"),
    Error("req-2", ErrorCode.OVERLOADED, "the worker holds 80 requests, its limit"),
    HealthOk(3.0, 4, 9, 0.01, steps=20, forward_passes=26, step_requests=61),
    Error(None, ErrorCode.MALFORMED, "empty frame"),
]


def wire(msg) -> dict:
    """The msgpack map of a valid message, ready to be broken."""
    return msgpack.unpackb(encode(msg)[1:])


def frame(tag: MsgType, payload) -> bytes:
    return bytes([tag]) + msgpack.packb(payload, use_bin_type=True)


def expect_error(raw: bytes, code: str, *fragments: str) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        decode(raw)
    assert info.value.code == code, info.value.message
    for fragment in fragments:
        assert fragment in info.value.message
    return info.value


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda m: type(m).__name__)
def test_round_trip(msg):
    raw = encode(msg)
    assert raw[0] == msg.TAG
    assert decode(raw) == msg


def test_every_type_has_a_sample():
    assert {m.TAG for m in SAMPLES} == set(MsgType)


# sha256 of the samples' frames: the same bytes on the wire, whatever declares them (protocol 7 wrote
# cf58c133c29f... before its messages were declared with their bounds, engine.wire.messages; 8 differs
# from it in the version number alone)
SAMPLE_FRAMES_SHA256 = "968676fe9e00e599ccc227dfe89f23b2e0ae9859e99f58a1d06279dfcb526742"


def test_the_samples_encode_to_the_same_bytes_as_before():
    assert hashlib.sha256(b"".join(encode(m) for m in SAMPLES)).hexdigest() == SAMPLE_FRAMES_SHA256


def test_every_field_of_every_message_and_record_is_declared_with_its_bound():
    records = (*CLASSES.values(), Snippet, Hole, Event, Item, Timings)
    assert len(records) == len(MsgType) + 5
    for record in records:
        for record_field in fields(record):
            assert rule_of(record_field) is not None, f"{record.__name__}.{record_field.name} has no bound"


BAD_REQUEST_FIELDS = [
    ("id", 5, "must be str"),
    ("id", "", "1..128"),
    ("id", "x" * 129, "1..128"),
    ("kind", "patch", "must be one of fim, edit"),
    ("kind", 1, "must be str"),
    ("prefix", None, "must be str"),
    ("suffix", b"bytes", "must be str, got bytes"),
    ("snippets", "text", "must be list"),
    ("snippets", [1], "snippets[0]' must be a Snippet map"),
    ("snippets", [{"text": "a", "path": "p"}], "snippets[0].priority' is missing"),
    ("snippets", [{"text": "a", "path": "p", "priority": 0, "x": 1}], "snippets[0].x"),
    ("snippets", [{"text": 1, "path": "p", "priority": 0}], "snippets[0].text"),
    ("snippets", [{"text": "a", "path": "p" * 5000, "priority": 0}], "snippets[0].path"),
    ("snippets", [{"text": "a", "path": "p", "priority": 5000}], "snippets[0].priority"),
    ("snippets", [{"text": "a", "path": "p", "priority": True}], "got bool"),
    ("snippets", [{"text": "", "path": "", "priority": 0}] * (MAX_SNIPPETS + 1), "at most"),
    ("mode", "line", "must be one of single_line, multi_line;"),
    ("max_tokens", 0, "1..1024"),
    ("max_tokens", 1025, "1..1024"),
    ("max_tokens", 1.5, "must be int, got float"),
    ("max_tokens", True, "must be int, got bool"),
    ("max_tokens", "10", "must be int, got str"),
    ("deadline_ms", 0, "1..60000"),
    ("deadline_ms", 60001, "1..60000"),
    ("deadline_ms", None, "must be int"),
    ("document", 3, "must be str"),
    ("document", "d" * 4097, "characters"),
    ("session", 7, "must be str"),
    ("session", "s" * 4097, "characters"),
    ("decoder", [], "must be dict"),
    ("decoder", {"": 1}, "decoder key"),
    ("decoder", {"k": None}, "decoder.k' must be str or int or float or bool"),
    ("decoder", {"k": [1]}, "decoder.k"),
    ("decoder", {"k": math.nan}, "finite"),
    ("decoder", {"k": "v" * 257}, "decoder.k"),
    ("decoder", {f"k{i}": i for i in range(MAX_OVERRIDES + 1)}, "at most"),
]


@pytest.mark.parametrize("name, value, fragment", BAD_REQUEST_FIELDS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_REQUEST_FIELDS)])
def test_complete_request_field_errors(name, value, fragment):
    payload = wire(REQUEST) | {name: value}
    error = expect_error(frame(MsgType.COMPLETE_REQUEST, payload), ErrorCode.INVALID_FIELD, fragment)
    assert error.request_id == (None if name == "id" else "req-1")


@pytest.mark.parametrize("name", list(wire(REQUEST)))
def test_complete_request_missing_field(name):
    payload = wire(REQUEST)
    del payload[name]
    expect_error(frame(MsgType.COMPLETE_REQUEST, payload), ErrorCode.INVALID_FIELD,
                 f"'{name}' is missing")


TEXTS_OVER_THEIR_CAPS = [
    ("prefix", "p" * (MAX_PREFIX_CHARS + 1), "'prefix'", "MAX_PREFIX_CHARS", "send less"),
    ("suffix", "s" * (MAX_SUFFIX_CHARS + 1), "'suffix'", "MAX_SUFFIX_CHARS", "send less"),
    ("snippets", [{"text": "t" * (MAX_SNIPPET_TEXT_CHARS + 1), "path": "a.py", "priority": 0}],
     "'snippets[0].text'", "MAX_SNIPPET_TEXT_CHARS", "send less"),
    ("snippets", [{"text": "t" * MAX_SNIPPET_TEXT_CHARS, "path": "a.py", "priority": 0}] * 2
     + [{"text": "t", "path": "b.py", "priority": 0}], "'snippets'", "MAX_SNIPPETS_TOTAL_CHARS", "send fewer"),
]


@pytest.mark.parametrize("name, value, field_named, cap_named, advice", TEXTS_OVER_THEIR_CAPS,
                         ids=[cap for *_, cap, _ in TEXTS_OVER_THEIR_CAPS])
def test_context_over_its_cap_is_too_large_naming_the_field_and_the_cap(name, value, field_named, cap_named,
                                                                        advice):
    payload = wire(REQUEST) | {name: value}
    error = expect_error(frame(MsgType.COMPLETE_REQUEST, payload), ErrorCode.TOO_LARGE, field_named, cap_named,
                         advice)
    assert error.request_id == "req-1"


def test_context_exactly_at_its_caps_is_accepted():
    request = CompleteRequest("edge", "fim", "p" * MAX_PREFIX_CHARS, "s" * MAX_SUFFIX_CHARS,
                              snippets=[Snippet("t" * MAX_SNIPPET_TEXT_CHARS, f"{i}.py", 0)
                                        for i in range(MAX_SNIPPETS_TOTAL_CHARS // MAX_SNIPPET_TEXT_CHARS)])
    assert decode(encode(request)) == request


def test_unknown_field_is_refused():
    payload = wire(REQUEST) | {"temperature": 0.2}
    expect_error(frame(MsgType.COMPLETE_REQUEST, payload), ErrorCode.INVALID_FIELD,
                 "'temperature' is not a field of CompleteRequest")


BAD_OTHER_FIELDS = [
    (Hello(1, "c"), "version", "1", "must be int"),
    (Hello(1, "c"), "version", -1, "0..65535"),
    (Hello(1, "c"), "client_name", 7, "must be str"),
    (Welcome(1, "m", 8, 8), "vocab_size", 0, "vocab_size"),
    (Welcome(1, "m", 8, 8), "model", None, "must be str"),
    (Info("m", "f", 8, 8, 1), "family", 1, "must be str"),
    (Info("m", "f", 8, 8, 1), "max_context", -5, "max_context"),
    (HealthOk(1.0, 0, 0, 0.0), "uptime_s", -1.0, "uptime_s"),
    (HealthOk(1.0, 0, 0, 0.0), "uptime_s", math.inf, "finite"),
    (HealthOk(1.0, 0, 0, 0.0), "served", 0.5, "must be int"),
    (HealthOk(1.0, 0, 0, 0.0), "loop_age_s", -0.5, "loop_age_s"),
    (HealthOk(1.0, 0, 0, 0.0), "steps", -1, "steps"),
    (HealthOk(1.0, 0, 0, 0.0), "forward_passes", 1.5, "must be int"),
    (HealthOk(1.0, 0, 0, 0.0), "step_requests", None, "must be int"),
    (RESULT, "stop_reason", "timeout", "done, deadline, budget, cancelled"),
    (RESULT, "items", {"text": "x"}, "must be list"),
    (RESULT, "items", [{"text": "x", "confidence": 1.5, "forward_passes": 1, "hole": 0}], "items[0].confidence"),
    (RESULT, "items", [{"text": "x", "confidence": 0.5, "forward_passes": -1, "hole": 0}], "forward_passes"),
    (RESULT, "items", [{"text": "x", "confidence": 0.5, "hole": 0}], "items[0].forward_passes' is missing"),
    (RESULT, "items", [{"text": "x", "confidence": 0.5, "forward_passes": 1, "hole": 32}], "items[0].hole"),
    (RESULT, "timings", "fast", "timings' must be a Timings map"),
    (RESULT, "timings", {"queue_ms": 1, "prefill_ms": 1, "decode_ms": 1, "prepare_ms": 1}, "timings.total_ms"),
    (RESULT, "timings", {"queue_ms": -1, "prefill_ms": 1, "decode_ms": 1, "total_ms": 1, "prepare_ms": 0},
     "queue_ms"),
    (Cancel("a"), "id", "", "1..128"),
    (Cancel("a"), "id", None, "must be str"),
    (Error(None, "c", "m"), "id", 5, "must be str"),
    (Error(None, "c", "m"), "code", "", "code"),
    (Error(None, "c", "m"), "message", "m" * 5000, "message"),
]


@pytest.mark.parametrize("msg, name, value, fragment", BAD_OTHER_FIELDS,
                         ids=[f"{type(m).__name__}.{n}-{i}"
                              for i, (m, n, _, _) in enumerate(BAD_OTHER_FIELDS)])
def test_other_message_field_errors(msg, name, value, fragment):
    payload = wire(msg) | {name: value}
    expect_error(frame(msg.TAG, payload), ErrorCode.INVALID_FIELD, name, fragment)


def test_error_messages_stay_short_whatever_the_input():
    payload = wire(REQUEST) | {"k" * 100_000: 1}
    error = expect_error(frame(MsgType.COMPLETE_REQUEST, payload), ErrorCode.INVALID_FIELD, "kkk...")
    assert len(error.message) < 200
    Error(error.request_id, error.code, error.message)  # fits in an Error reply


def test_empty_messages_take_no_fields():
    expect_error(frame(MsgType.HEALTH, {"verbose": True}), ErrorCode.INVALID_FIELD, "verbose")


def test_local_construction_is_validated():
    with pytest.raises(ProtocolError, match="max_tokens"):
        CompleteRequest("a", "fim", "", "", max_tokens=0)
    with pytest.raises(ProtocolError, match="snippets"):
        CompleteRequest("a", "fim", "", "", snippets=[{"text": "", "path": "", "priority": 0}])


@pytest.mark.parametrize("raw, fragment", [
    (b"", "empty frame"),
    (bytes([MsgType.HEALTH]), "not valid msgpack"),
    (bytes([MsgType.HEALTH]) + b"\xc1", "not valid msgpack"),
    (bytes([MsgType.HEALTH]) + b"\x92\x01", "incomplete"),
    (bytes([MsgType.HEALTH]) + msgpack.packb({}) + b"\x00", "extra data"),
    (bytes([MsgType.HELLO]) + b"\xa2\xff\xfe", "not valid msgpack"),
    (frame(MsgType.HEALTH, [1, 2]), "must be a msgpack map, got list"),
    (frame(MsgType.HEALTH, "hi"), "got str"),
])
def test_malformed_frames(raw, fragment):
    expect_error(raw, ErrorCode.MALFORMED, fragment)


@pytest.mark.parametrize("tag", [0, 12, 99, 255])
def test_unknown_type_tag(tag):
    expect_error(bytes([tag]) + msgpack.packb({}), ErrorCode.UNKNOWN_TYPE, f"tag {tag}")


def test_decode_refuses_frames_over_the_cap():
    raw = frame(MsgType.HEALTH, {}) + b"\x00" * MAX_FRAME_BYTES
    expect_error(raw, ErrorCode.TOO_LARGE, str(MAX_FRAME_BYTES))


def test_encode_refuses_messages_over_the_cap():
    big = "\u20ac" * MAX_ITEM_CHARS  # 3 bytes each in UTF-8: two of them pass 4 MiB
    result = Result("big", [Item(big, 0.5, 1), Item(big, 0.5, 1)], Timings(0, 0, 0, 0), "done")
    with pytest.raises(ProtocolError) as info:
        encode(result)
    assert info.value.code == ErrorCode.TOO_LARGE
    assert info.value.request_id == "big"


def test_a_frame_exactly_at_the_cap_is_accepted():
    text = "a" * MAX_ITEM_CHARS
    assert MAX_ITEMS >= 5
    result = Result("edge", [Item(text, 0.5, 1) for _ in range(4)] + [Item("c" * 100_000, 0.5, 1)],
                    Timings(0, 0, 0, 0), "done")
    overshoot = len(encode(result)) - MAX_FRAME_BYTES  # negative: the last item grows to fit
    result.items[-1].text = "c" * (100_000 - overshoot)
    raw = encode(result)
    assert len(raw) == MAX_FRAME_BYTES
    assert decode(raw) == result


texts = st.text(max_size=50)
snippets = st.builds(Snippet, texts, texts, st.integers(-1000, 1000))
overrides = st.dictionaries(st.text(min_size=1, max_size=10),
                            st.one_of(st.booleans(), st.integers(-10, 10),
                                      st.floats(allow_nan=False, allow_infinity=False), texts),
                            max_size=4)
modes = st.sampled_from(["single_line", "multi_line"])
holes = st.lists(st.builds(Hole, modes, st.integers(1, 1024), texts), min_size=1, max_size=4)
fim_requests = st.builds(CompleteRequest, st.text(min_size=1, max_size=32), st.just("fim"),
                         texts, texts, st.lists(snippets, max_size=3), modes, st.integers(1, 1024),
                         st.integers(1, 60000), texts, overrides)


@st.composite
def edit_requests(draw) -> CompleteRequest:
    regions = draw(holes)
    return CompleteRequest(draw(st.text(min_size=1, max_size=32)), "edit", draw(texts), draw(texts),
                           draw(st.lists(snippets, max_size=3)), deadline_ms=draw(st.integers(1, 60000)),
                           decoder=draw(overrides), holes=regions,
                           pieces=draw(st.lists(texts, min_size=len(regions) - 1, max_size=len(regions) - 1)))


requests = st.one_of(fim_requests, edit_requests())


@settings(max_examples=60, deadline=None)
@given(requests)
def test_any_valid_request_round_trips(request):
    assert decode(encode(request)) == request


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_raise_only_protocol_errors(raw):
    try:
        decode(raw)
    except ProtocolError as exc:
        assert exc.code in set(ErrorCode)
