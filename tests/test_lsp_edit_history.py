"""Tests of the edit history: bursts merge, pauses and other places split, the cap, closed and
unknown documents; the line spans under it (`completion.edit_events`)."""
from __future__ import annotations

import asyncio

from lsprotocol import types

from completion.edit_events import LineSpan, diff_span
from lsp_server import server as server_module
from lsp_server.edit_history import MERGE_PAUSE_S, EditHistory, step_span
from lsp_server.settings import ServerSettings

URI = "file:///w/m.py"
TEXT = "".join(f"line{i}\n" for i in range(40))


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def replace(line: int, character: int, end_line: int, end_character: int,
            text: str) -> types.TextDocumentContentChangePartial:
    where = types.Range(start=types.Position(line=line, character=character),
                        end=types.Position(line=end_line, character=end_character))
    return types.TextDocumentContentChangePartial(range=where, text=text)


class Editor:
    """Applies changes to its own text, as an editor would, and feeds them to a history."""

    def __init__(self, history: EditHistory, text: str = TEXT, uri: str = URI) -> None:
        self.history, self.uri = history, uri
        self.lines = text.split("\n")
        history.open(uri, text)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def type(self, line: int, character: int, typed: str) -> None:
        self.edit(line, character, line, character, typed)

    def edit(self, line: int, character: int, end_line: int, end_character: int, new: str) -> None:
        head, tail = self.lines[line][:character], self.lines[end_line][end_character:]
        self.lines[line:end_line + 1] = (head + new + tail).split("\n")
        self.history.change(self.uri, [replace(line, character, end_line, end_character, new)],
                            self.text)


def typing(clock: Clock, limit: int = 8) -> tuple[EditHistory, Editor]:
    history = EditHistory(limit, clock)
    return history, Editor(history)


def test_a_burst_of_typing_at_one_place_is_one_event():
    clock = Clock()
    history, editor = typing(clock)
    for index, char in enumerate("x = 1"):
        editor.type(5, index, char)
        clock.now += 0.2
    editor.type(5, 5, "\n")  # a new line, then the next one
    editor.type(6, 0, "y = 2")
    [event] = history.events(URI)
    assert event.before == TEXT and event.after == editor.text
    assert (event.start_line, event.before_end, event.after_end) == (5, 6, 7)
    assert event.removed == "line5"
    assert event.inserted == "x = 1\ny = 2line5"


def test_a_pause_starts_a_new_event():
    clock = Clock()
    history, editor = typing(clock)
    editor.type(5, 0, "a")
    clock.now += MERGE_PAUSE_S + 0.1
    editor.type(5, 1, "b")
    first, second = history.events(URI)
    assert first.after == second.before  # the same text, and the same string
    assert first.after is second.before
    assert (first.inserted, second.removed, second.inserted) == ("aline5", "aline5", "abline5")


def test_a_change_elsewhere_starts_a_new_event_and_a_nearby_one_does_not():
    clock = Clock()
    history, editor = typing(clock)
    editor.type(5, 0, "a")
    editor.type(8, 0, "b")  # three lines below: the same place
    editor.type(30, 0, "c")  # far below: another place
    first, second = history.events(URI)
    assert (first.start_line, first.before_end, first.after_end) == (5, 9, 9)
    assert first.inserted.split("\n") == ["aline5", "line6", "line7", "bline8"]
    assert (second.start_line, second.removed, second.inserted) == (30, "line30", "cline30")


def test_deleting_lines_gives_a_span_shorter_after_than_before():
    clock = Clock()
    history, editor = typing(clock)
    editor.edit(10, 0, 13, 0, "")  # delete lines 10..12
    [event] = history.events(URI)
    assert (event.start_line, event.before_end, event.after_end) == (10, 14, 11)
    assert event.removed == "line10\nline11\nline12\nline13"
    assert event.inserted == "line13"
    assert event.after.split("\n")[10] == "line13"


def test_only_the_newest_events_are_kept_and_a_smaller_setting_drops_more():
    clock = Clock()
    history, editor = typing(clock, limit=3)
    for line in range(0, 40, 8):  # five places
        editor.type(line, 0, "#")
    assert [event.start_line for event in history.events(URI)] == [16, 24, 32]
    history.resize(1)
    assert [event.start_line for event in history.events(URI)] == [32]
    history.resize(0)
    editor.type(1, 0, "#")
    assert history.events(URI) == [] and history.latest(URI) is None


def test_closing_a_document_drops_its_events_and_later_changes_are_ignored():
    clock = Clock()
    history, editor = typing(clock)
    other = Editor(history, "a\nb\n", "file:///w/other.py")
    editor.type(1, 0, "x")
    other.type(0, 0, "y")
    history.close(URI)
    assert history.events(URI) == []
    editor.type(2, 0, "z")  # a change of a closed document: ignored
    assert history.events(URI) == []
    assert [event.inserted for event in history.events(other.uri)] == ["ya"]


def test_unknown_documents_are_ignored():
    history = EditHistory(clock=Clock())
    history.change("file:///never/opened.py", [replace(0, 0, 0, 0, "x")], "x")
    history.close("file:///never/opened.py")
    assert history.events("file:///never/opened.py") == []
    assert history.latest("file:///never/opened.py") is None


def test_a_whole_text_sync_is_diffed_and_an_unchanged_one_is_no_event():
    history = EditHistory(clock=Clock())
    history.open(URI, TEXT)
    history.change(URI, [types.TextDocumentContentChangeWholeDocument(text=TEXT)], TEXT)
    assert history.events(URI) == []
    after = TEXT.replace("line20\n", "renamed20\nadded\n")
    history.change(URI, [types.TextDocumentContentChangeWholeDocument(text=after)], after)
    [event] = history.events(URI)
    assert (event.start_line, event.before_end, event.after_end) == (20, 21, 22)


def test_changes_that_do_not_fit_the_text_fall_back_to_a_diff():
    before, after = "a\nb\nc\n", "a\nB\nc\n"
    wrong = [replace(7, 0, 9, 0, "")]  # lines the text does not have
    assert step_span(before, after, wrong) == LineSpan(1, 2, 2)


def test_spans_compose_like_the_texts():
    """Two changes, folded: the lines outside the span are the same in the first and last texts,
    and the span holds the one a diff finds."""
    first = "\n".join(f"l{i}" for i in range(10))
    middle = first.replace("l3", "l3\nnew")  # line 3 becomes two lines
    last = middle.replace("l6", "L6")  # line 7 of the middle text
    folded = LineSpan.of_change(3, 3, "l3\nnew").then(LineSpan.of_change(7, 7, "L6"))
    assert folded == LineSpan(3, 7, 8) and folded.fits(first, last)
    old, new = first.split("\n"), last.split("\n")
    assert old[:3] == new[:3] and old[7:] == new[8:]
    assert diff_span(first, last) == LineSpan(4, 7, 8)  # l3 itself is unchanged


def test_the_edit_history_setting():
    settings, problems = ServerSettings.from_options({"editHistory": 3})
    assert settings.edit_history == 3 and problems == []
    settings, problems = ServerSettings.from_options({"editHistory": -1})
    assert settings.edit_history == 8 and "editHistory" in problems[0]


async def test_the_servers_did_open_and_did_change_feed_the_history(monkeypatch):
    """The real server's protocol, in process (no worker): the server's document sync, its handlers,
    the history."""
    monkeypatch.setattr(server_module.InfillLanguageServer, "connect_worker", lambda ls: None)
    ls = server_module.build_server()
    clock = Clock()
    ls.session.documents.history.clock = clock

    def notify(message) -> None:
        ls.protocol.handle_message(message)

    ls.protocol.handle_message(types.InitializeRequest(id=1, params=types.InitializeParams(
        capabilities=types.ClientCapabilities(), initialization_options={"editHistory": 2})))
    await asyncio.sleep(0)  # the initialize handler is a coroutine
    document = types.TextDocumentItem(uri=URI, language_id="python", version=1, text=TEXT)
    notify(types.DidOpenTextDocumentNotification(params=types.DidOpenTextDocumentParams(document)))
    for version, (line, typed) in enumerate([(3, "a"), (3, "b"), (20, "c"), (30, "d")], start=2):
        clock.now += 0.1
        notify(types.DidChangeTextDocumentNotification(params=types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            [replace(line, 0, line, 0, typed)])))
    events = ls.session.documents.history.events(URI)
    assert [(event.start_line, event.inserted) for event in events] == [(20, "cline20"), (30, "dline30")]
    assert events[-1].after == ls.session.documents.opened(URI)[0]
    notify(types.DidCloseTextDocumentNotification(params=types.DidCloseTextDocumentParams(
        types.TextDocumentIdentifier(uri=URI))))
    assert ls.session.documents.history.events(URI) == []
