"""The tests' own reader of a server's replies (`tests.lsp_procs.Replies`): what the hostile and
end-to-end tests conclude about lost answers is only as good as it."""
from __future__ import annotations

import pytest

from lsp_procs import Replies, framed


def reply(msg_id: int) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "result": {"edits": []}}


def reader_of(*chunks: bytes):
    queue = list(chunks)
    return lambda timeout_s: queue.pop(0) if queue else None


def test_replies_that_come_in_one_read_are_each_found():
    # a server that answers three requests at once writes them before the client reads once
    replies = Replies(reader_of(framed(reply(3)) + framed(reply(4)) + framed(reply(5))))
    assert [replies.wait(msg_id)["id"] for msg_id in (3, 4, 5)] == [3, 4, 5]


def test_replies_asked_for_out_of_order_and_split_across_reads():
    data = framed({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}}) + framed(reply(7)) \
        + framed(reply(6))
    replies = Replies(reader_of(data[:50], data[50:]))
    assert replies.wait(6)["id"] == 6
    assert replies.wait(7)["id"] == 7


def test_a_reply_that_never_comes_fails_the_wait():
    replies = Replies(reader_of(framed(reply(1))))
    with pytest.raises(AssertionError, match="no reply to 2"):
        replies.wait(2, timeout_s=0.1)
