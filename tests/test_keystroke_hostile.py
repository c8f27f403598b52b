"""Issue 40's bad input, through the real language server: `python -m lsp_server` on stdio with its
own local worker on the bundled model, driven byte by byte (`tests/lsp_procs.py`'s frames).

A key held down (120 keystrokes, each a `didChange` and an inline completion request, back to back),
a paste of 5,000 lines in one `didChange`, typing at the end of a 400 KB file, the worker killed
while a keystroke's request is in flight, and the held key again on one CPU shared with a busy
loop. Ghost text may be skipped, but every request gets exactly one reply (a result, or the
cancelled error), the server goes on answering, and no reply shows text that the document, as it
is once the typing stops, contradicts: an answer to an older keystroke is empty or goes on from
what was typed since. The bundled model is small, so only the answers' shape and their agreement
with the text are checked, never their quality, and nothing is timed.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from infill.paths import REPO_ROOT
from lsp_procs import Replies, did_open, framed, initialize, notification, pipe_reader, request
from test_lsp_e2e import is_running, worker_pids

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

READY_WAIT_S = 120.0  # a worker loading the model on a busy core; only a broken one takes this long
ANSWER_WAIT_S = 60.0  # every request's deadline is far below this
CANCELLED = -32800  # LSP's RequestCancelled
DEADLINE_MS = 5000
AUTOMATIC, INVOKED = 2, 1  # inline completion trigger kinds
HELD_KEYS = 120
HELD_URI = "file:///tmp/infill-keys/held.py"
HELD_TEXT = "import os\n\n\ndef join_all(parts):\n    value_"  # the key is held at the end
JOIN_TEXT = "import os\n\n\ndef join_all(parts):\n    return os.path.jo"  # the model writes `in(...)` here


class Inbox(Replies):
    """Every frame the server writes, kept: replies by id (all of them, so that a second reply to one
    id shows) and the methods of its notifications."""

    def __init__(self, pipe) -> None:
        super().__init__(pipe_reader(pipe))
        self.replies: dict[object, list[dict]] = defaultdict(list)
        self.notified: list[str] = []

    def read(self, timeout_s: float) -> None:
        """Keep the frames that come within `timeout_s`; fails when the server closes its output."""
        chunk = self._read(timeout_s)
        assert chunk != b"", "the server closed its output"
        self._buf += chunk or b""
        for frame in self._frames():
            if "method" in frame:
                self.notified.append(frame["method"])
            else:
                self.replies[frame.get("id")].append(frame)


class Editor:
    """`python -m lsp_server` on pipes with its own worker, initialized, its frames kept in `inbox`
    (`replies` by id); `preexec` runs in the child before the server starts."""

    def __init__(self, tmp_path: Path, preexec: Callable[[], None] | None = None) -> None:
        self.log = tmp_path / "lsp.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "lsp_server", "--stats-log", "", "--log-file", str(self.log)],
            cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=preexec)
        self.inbox = Inbox(self.process.stdout)
        self.replies = self.inbox.replies
        self.send(initialize({"deadlineMs": DEADLINE_MS}))
        self.until(lambda: self.replies[1], "the reply to initialize")
        self.send(notification("initialized", {}))

    def send(self, *messages: dict) -> None:
        """The messages in one write, as an editor sends what it has at once."""
        self.process.stdin.write(b"".join(framed(message) for message in messages))
        self.process.stdin.flush()

    def until(self, done: Callable[[], bool], what: str, timeout_s: float = ANSWER_WAIT_S) -> None:
        """Read frames until `done()`; fails when the server falls silent."""
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
            self.inbox.read(deadline - time.monotonic())

    def answered(self, ids: Iterable[object], timeout_s: float = ANSWER_WAIT_S) -> None:
        ids = list(ids)
        self.until(lambda: all(self.replies[msg_id] for msg_id in ids), f"reply to each of {len(ids)} requests",
                   timeout_s)

    def ready(self) -> None:
        """Returns once the local worker has loaded the model and answered (`infill/workerReady`)."""
        self.until(lambda: "infill/workerReady" in self.inbox.notified, "infill/workerReady", READY_WAIT_S)

    def ask(self, msg_id: object, uri: str, line: int, character: int, trigger: int = AUTOMATIC) -> list[str]:
        """The texts of the inline completion at (line, character), waited for."""
        self.send(inline_at(msg_id, uri, line, character, trigger))
        self.answered([msg_id])
        return texts_of(self.replies[msg_id][0])

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def inline_at(msg_id: object, uri: str, line: int, character: int, trigger: int = AUTOMATIC) -> dict:
    return request(msg_id, "textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character},
        "context": {"triggerKind": trigger}})


def insert(uri: str, version: int, line: int, character: int, text: str) -> dict:
    """The `didChange` that inserts `text` at (line, character)."""
    here = {"line": line, "character": character}
    return notification("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                   "contentChanges": [{"range": {"start": here, "end": here},
                                                                       "text": text}]})


def texts_of(reply: dict) -> list[str]:
    """The texts of an inline completion reply; fails on an error other than the cancelled one."""
    if "error" in reply:
        assert reply["error"]["code"] == CANCELLED, reply
        return []
    return [item["insertText"] for item in reply["result"]]


def end_of(text: str) -> tuple[int, int]:
    """The LSP position of the end of `text` (ASCII here: characters are UTF-16 units)."""
    lines = text.split("\n")
    return len(lines) - 1, len(lines[-1])


def type_keys(editor: Editor, uri: str, text: str, keys: str, first_version: int = 2) -> tuple[list[str], str]:
    """Type `keys` at the end of `text`, one `didChange` and one automatic inline completion request
    per key, each pair in one write, back to back; returns the request ids and the text after."""
    ids = []
    for index, key in enumerate(keys):
        line, character = end_of(text)
        msg_id = f"{uri}#{first_version + index}"
        editor.send(insert(uri, first_version + index, line, character, key),
                    inline_at(msg_id, uri, line, character + 1))
        text += key
        ids.append(msg_id)
    return ids, text


def once_each(editor: Editor, ids: Iterable[object]) -> dict[object, int]:
    """Ids that got other than exactly one reply, with their count (call once later requests are answered)."""
    return {msg_id: len(editor.replies[msg_id]) for msg_id in ids if len(editor.replies[msg_id]) != 1}


def stale_answers(editor: Editor, ids: list[str], start: str, final: str) -> dict[str, list[str]]:
    """The non-empty answers to the keystrokes `ids` (typed one character each after `start`, on its
    last line) that the final text contradicts: ghost text shown at keystroke k must go on from the
    characters typed after it (`final` past k's cursor), or be wholly typed over by them."""
    stale = {}
    for index, msg_id in enumerate(ids):
        typed_since = final[len(start) + index + 1:]
        wrong = [text for text in texts_of(editor.replies[msg_id][0])
                 if not (text.startswith(typed_since) or typed_since.startswith(text))]
        if wrong:
            stale[msg_id] = wrong
    return stale


def hold_key(editor: Editor) -> tuple[list[str], str]:
    """A key held down in HELD_URI: every keystroke's request answered once, none stale; returns the
    ids and the final text."""
    editor.send(did_open(HELD_URI, HELD_TEXT))
    ids, final = type_keys(editor, HELD_URI, HELD_TEXT, "x" * HELD_KEYS)
    editor.answered(ids)
    after = editor.ask("after the key", HELD_URI, *end_of(final))  # the pause: the one request after it
    assert once_each(editor, [*ids, "after the key"]) == {}
    assert stale_answers(editor, ids, HELD_TEXT, final) == {}
    assert isinstance(after, list) and "result" in editor.replies["after the key"][0]  # not cancelled
    return ids, final


@pytest.fixture
def editor(tmp_path):
    started = Editor(tmp_path)
    started.ready()
    yield started
    started.stop()


def test_a_held_key_gets_one_reply_per_keystroke_and_the_last_answer_is_the_final_texts(editor):
    """The final answer is the one for the final text opened whole (decoding draws nothing at
    random: one text, one answer)."""
    ids, final = hold_key(editor)
    last = texts_of(editor.replies["after the key"][0])
    fresh = "file:///tmp/infill-keys/fresh.py"  # the final text, opened as it is: the same answer
    editor.send(did_open(fresh, final))
    assert editor.ask("fresh", fresh, *end_of(final)) == last
    editor.ask("health", HELD_URI, 1, 0, INVOKED)  # answered: the server goes on


def test_a_key_pressed_while_its_request_is_in_flight_makes_its_answer_empty_or_fitting(editor):
    """The editor's next request waits (a debounce): only the `didChange` comes while the answer for
    the text before it is computed. That answer is for text that changed: it is empty, or goes on
    from the key typed. A request outside another document, answered without the worker, comes back
    once the server has cut the first request's hole and sent it to the worker."""
    uri, other = "file:///tmp/infill-keys/join.py", "file:///tmp/infill-keys/other.py"
    editor.send(did_open(uri, JOIN_TEXT), did_open(other, "x = 1\n"))
    line, character = end_of(JOIN_TEXT)
    editor.send(inline_at("in flight", uri, line, character, INVOKED), inline_at("outside", other, 9, 0))
    editor.answered(["outside"])
    if editor.replies["in flight"] != []:  # a machine fast enough to answer first has no race to check
        pytest.skip("the worker answered before the key could come while it computed")
    editor.send(insert(uri, 2, line, character, "x"))
    editor.answered(["in flight"])
    assert [text for text in texts_of(editor.replies["in flight"][0]) if not text.startswith("x")] == []
    editor.ask("at the key", uri, line, character + 1, INVOKED)
    assert once_each(editor, ["in flight", "outside", "at the key"]) == {}


PASTE_LINES = 5000


def pasted_code() -> str:
    """5,000 lines of code, the last one without its line break."""
    return "".join(f"def scale_{n}(x):\n    return x * {n}\n" for n in range(PASTE_LINES // 2)).rstrip("\n")


def test_a_paste_of_5000_lines_is_held_whole_and_the_server_goes_on(editor):
    uri, paste = "file:///tmp/infill-keys/paste.py", pasted_code()
    start = "import os\n\n"
    editor.send(did_open(uri, start), insert(uri, 2, 2, 0, paste))
    final = start + paste
    line, character = end_of(final)
    outside = editor.log.read_text().count("outside the document")
    answer = editor.ask("paste", uri, line, character, INVOKED)
    assert editor.ask("past its end", uri, line, character + 1, INVOKED) == []
    assert editor.ask("below it", uri, line + 1, 0, INVOKED) == []
    # the last line ends where the paste's does, and the text is the pasted one: the answer there is
    # the one in the same text opened whole
    assert editor.log.read_text().count("outside the document") == outside + 2
    fresh = "file:///tmp/infill-keys/pasted.py"
    editor.send(did_open(fresh, final))
    assert editor.ask("fresh", fresh, line, character, INVOKED) == answer
    editor.ask("health", fresh, 1, 0)
    assert once_each(editor, ["paste", "past its end", "below it", "fresh", "health"]) == {}


def large_file(chars: int = 400 * 1024) -> str:
    unit = "def area_{}(r):\n    return 3.14 * r * r\n\n\n"
    tail = "\n\ndef total(parts):\n    sum_"  # typed on from here
    text = "".join(unit.format(n) for n in range(chars // len(unit.format(0)) + 1))
    return text[:chars - len(tail)] + tail


def test_typing_at_the_end_of_a_400_kb_file_answers_every_keystroke(editor):
    uri, text = "file:///tmp/infill-keys/large.py", large_file()
    assert len(text) == 400 * 1024
    editor.send(did_open(uri, text))
    ids, final = type_keys(editor, uri, text, "of_all_parts_here_ok")
    editor.answered(ids)
    after = editor.ask("after", uri, *end_of(final))
    assert once_each(editor, [*ids, "after"]) == {}
    assert stale_answers(editor, ids, text, final) == {}
    assert isinstance(after, list)


def test_the_worker_killed_mid_keystroke_loses_no_request_and_comes_back(editor):
    uri = HELD_URI
    editor.send(did_open(uri, HELD_TEXT))
    [worker] = worker_pids(str(editor.log))
    first, text = type_keys(editor, uri, HELD_TEXT, "x")
    os.kill(worker, signal.SIGKILL)  # at once: the keystroke's request is still in flight
    more, _ = type_keys(editor, uri, text, "y" * 10, first_version=3)
    editor.answered([*first, *more])
    assert once_each(editor, [*first, *more]) == {}
    join = "file:///tmp/infill-keys/join.py"  # never asked before: the cache cannot answer it
    editor.send(did_open(join, JOIN_TEXT))
    deadline, attempt = time.monotonic() + READY_WAIT_S, 0
    while not editor.ask(f"restarted {attempt}", join, *end_of(JOIN_TEXT), INVOKED):
        assert time.monotonic() < deadline, "no answer after the worker was killed"
        attempt += 1
    assert once_each(editor, [f"restarted {n}" for n in range(attempt + 1)]) == {}
    restarted = worker_pids(str(editor.log))
    assert not is_running(worker) and restarted and worker not in restarted


def busy_loop(cpu: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))


def test_a_held_key_on_one_core_shared_with_a_busy_loop_loses_no_request(tmp_path):
    cpu = min(os.sched_getaffinity(0))
    loop = busy_loop(cpu)
    editor = Editor(tmp_path, preexec=lambda: os.sched_setaffinity(0, {cpu}))  # the worker inherits it
    try:
        editor.ready()
        hold_key(editor)
    finally:
        editor.stop()
        loop.kill()
        loop.wait()
