"""The custom methods' hostile params through a real `python -m lsp_server`: each request gets the
one reply it always got, each notification none, and the server completes afterwards.

The replies are written out whole, so that typing the params (`lsp_server.protocol`) is checked to
change nothing an editor sees; this file passes unchanged against the server before they were typed.
"""
from __future__ import annotations

import pytest

from lsp_procs import Replies, StdioServer, framed, notification, request

INLINE_EDIT = "textDocument/copilotInlineEdit"
DOCUMENT = {"uri": "file:///tmp/infill-hostile/shapes.py", "version": 1}
HUGE = 2**70


class Recorded(Replies):
    """Replies that also keep every frame read, to check that nothing else came."""

    def __init__(self, replies: Replies) -> None:
        super().__init__(replies._read)
        self.seen: list[dict] = []

    def _frames(self) -> list[dict]:
        found = super()._frames()
        self.seen.extend(found)
        return found


@pytest.fixture
def server(tmp_path, fake_worker_at):
    started = StdioServer(tmp_path, fake_worker_at)
    started.replies = Recorded(started.replies)
    yield started
    started.stop()


def edit_params(document=DOCUMENT, line=0, character=0) -> dict:
    return {"textDocument": document, "position": {"line": line, "character": character}}


MALFORMED_EDITS = [None, [1], {}, "x" * 100_000, edit_params(document={"uri": 5, "version": 1}),
                   edit_params(document={"uri": DOCUMENT["uri"]}), edit_params(document={**DOCUMENT, "version": True}),
                   edit_params(line="0"), edit_params(line=-1), edit_params(character=None),
                   edit_params(document={**DOCUMENT, "version": HUGE}), edit_params(line=HUGE, character=HUGE),
                   edit_params(document={"uri": "file:///never/opened.py", "version": 1})]


def test_next_edits_with_bad_params_answer_no_edits(server):
    for msg_id, params in enumerate(MALFORMED_EDITS, 10):
        server.send(framed(request(msg_id, INLINE_EDIT, params)))
        assert server.replies.wait(msg_id) == {"id": msg_id, "jsonrpc": "2.0", "result": {"edits": []}}
    assert server.completes(99)


def execute(msg_id, command: str, arguments) -> dict:
    return request(msg_id, "workspace/executeCommand", {"command": command, "arguments": arguments})


def test_events_and_commands_with_bad_params_change_nothing_and_get_their_one_reply(server):
    for method, params in [("textDocument/didShowInlineEdit", {"item": 5}),
                           ("textDocument/didShowInlineEdit", {"item": {"command": {"arguments": "x"}}}),
                           ("infill/didShowCompletion", [1, 2]), ("infill/acceptCompletion", {"requestId": {}}),
                           ("infill/rejectCompletion", "x"), ("infill/acceptCompletion", None),
                           (INLINE_EDIT, edit_params())]:  # a request sent as a notification
        server.send(framed(notification(method, params)))
    server.send(framed(request(20, "infill/didShowCompletion", {"requestId": "nope", "index": HUGE})))
    assert server.replies.wait(20) == {"id": 20, "jsonrpc": "2.0", "result": None}
    for msg_id, command, arguments in [(21, "infill.acceptCompletion", []),
                                       (22, "infill.acceptCompletion", [{"requestId": 1, "index": "0"}, 7]),
                                       (23, "infill.acceptInlineEdit", ["x"])]:
        server.send(framed(execute(msg_id, command, arguments)))
        assert server.replies.wait(msg_id) == {"id": msg_id, "jsonrpc": "2.0", "result": None}
    server.send(framed(execute(24, "infill.arenaVote", [HUGE])))
    error = server.replies.wait(24)["error"]
    assert error["code"] == -32602 and error["message"].startswith("infill.arenaVote takes [battleId")
    assert server.completes(99)
    answered = [frame.get("id") for frame in server.replies.seen if "method" not in frame]
    assert answered == [20, 21, 22, 23, 24, 99]


def test_each_feature_registers_its_own_methods_and_the_server_all_of_them():
    from lsp_server import arena, completer, inline_edit, protocol
    from lsp_server import server as server_module

    def registered(server) -> set[str]:
        return set(server.protocol.fm.features) | set(server.protocol.fm.commands)

    owners = {completer: {"textDocument/inlineCompletion", "textDocument/completion", protocol.ACCEPT_COMMAND,
                          protocol.DID_SHOW_COMPLETION, protocol.ACCEPT_COMPLETION, protocol.REJECT_COMPLETION},
              inline_edit: {INLINE_EDIT, protocol.DID_SHOW_INLINE_EDIT, protocol.ACCEPT_INLINE_EDIT},
              arena: {protocol.VOTE_COMMAND}}
    for feature, names in owners.items():
        bare = server_module.InfillLanguageServer()
        feature.register(bare)
        assert registered(bare) == names, feature.__name__
    built = registered(server_module.build_server())
    assert set().union(*owners.values()) <= built
    assert set(protocol.NAMES) - set(protocol.CLIENT_MAY_IGNORE) <= built  # the one left is the server's to send
