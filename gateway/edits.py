"""`POST /v1/edit/completions` in Inception's next-edit shape, answered by the next-edit rules.

The request is chat-shaped, `{model, messages: [{role: "user", content}]}`; the content carries
tagged sections: `<|recently_viewed_code_snippets|>`, `<|current_file_content|>` (its first line
`current_file_path: PATH`), `<|code_to_edit|>` (the region to rewrite, holding `<|cursor|>`) and
`<|edit_diff_history|>` (unified diffs, oldest first). The newest diff's last hunk, undone on the
current file, gives the edit event; the next-edit pipeline (`completion.next_edit`: `plan`, the
gate, the regions it propagates to and the job; `run`, the job within the gateway's deadline and
the edits from the worker's answer) does the rest, with the language server's failure policy: a
worker that fails or is late leaves the regions' whole drafts as the answer, never an error. The
reply's `choices[0].message.content` is the code to edit with the edits inside it applied, or null
when none falls inside it (no edit, or no event to propagate).
"""
from __future__ import annotations

import asyncio
import re
import time
import uuid

from completion import next_edit
from completion.edit_events import EditEvent, diff_span
from completion.requests import new_request_id
from completion.syntax import ParsedDocument, language_for
from engine.wire.deadline import Deadline
from gateway.errors import bad_value

SECTIONS = ("recently_viewed_code_snippets", "current_file_content", "code_to_edit",
            "edit_diff_history")
CURSOR = "<|cursor|>"
_TAG = re.compile(r"<\|/?(" + "|".join(SECTIONS) + r")\|>")
_PATH_LINE = re.compile(r"\s*current_file_path:\s*(.*)\n")


def sections(content: str) -> dict[str, str]:
    """Each tagged section's text, without the line break after its tag (a closing tag
    `<|/name|>` ends one, as does the next tag)."""
    found, marks = {}, list(_TAG.finditer(content))
    for mark, following in zip(marks, [*marks[1:], None]):
        if not mark.group(0).startswith("<|/"):
            end = following.start() if following else len(content)
            found[mark.group(1)] = content[mark.end():end].removeprefix("\n")
    return found


def user_content(body: dict) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_value("messages", "must be a list holding one user message")
    last = messages[-1]
    if not isinstance(last, dict) or not isinstance(last.get("content"), str):
        raise bad_value("messages", "must end with {\"role\": \"user\", \"content\": TEXT}")
    return last["content"]


def last_hunk(history: str) -> tuple[str, str] | None:
    """(removed, added) lines of the newest hunk of the diff history, each joined with line breaks."""
    hunks = re.split(r"^@@.*@@.*$", history, flags=re.MULTILINE)
    if len(hunks) < 2:
        return None
    lines = hunks[-1].strip("\n").split("\n")
    removed = [line[1:] for line in lines if line.startswith(("-", " ")) and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith(("+", " ")) and not line.startswith("+++")]
    return "\n".join(removed), "\n".join(added)


def event_in(text: str, uri: str, history: str) -> EditEvent | None:
    """The edit event the newest hunk made, with the text before it rebuilt; None without one."""
    hunk = last_hunk(history)
    if hunk is None or not hunk[1] or text.count(hunk[1]) != 1:
        return None
    before = text.replace(hunk[1], hunk[0], 1)
    return EditEvent(uri, before, text, diff_span(before, text), time.monotonic())


def _rewritten(text: str, edits: list[next_edit.Edit], span: tuple[int, int]) -> str | None:
    """The code to edit (`text[span[0]:span[1]]`) with the edits that fall inside it applied;
    None if none does."""
    starts = next_edit.line_starts(text)

    def offset(line: int) -> int:
        return starts[line] if line < len(starts) else len(text)

    inside = sorted(((offset(e.start_line), offset(e.end_line), e.new_text) for e in edits
                     if span[0] <= offset(e.start_line) and offset(e.end_line) <= span[1]), reverse=True)
    if not inside:
        return None
    region = text[span[0]:span[1]]
    for start, end, new_text in inside:  # from the last, so earlier offsets still hold
        region = region[:start - span[0]] + new_text + region[end - span[0]:]
    return region


async def answer_edit(state, body: dict) -> dict:
    """The reply to one next-edit request (`state`: the app's `GatewayState`)."""
    parts = sections(user_content(body))
    if "current_file_content" not in parts or "code_to_edit" not in parts:
        raise bad_value("messages", "must hold <|current_file_content|> and <|code_to_edit|> sections")
    current = parts["current_file_content"]
    path_line = _PATH_LINE.match(current)
    path = path_line.group(1).strip() if path_line else ""
    text = current[path_line.end():] if path_line else current
    text = _TAG.sub("", text).replace(CURSOR, "")
    code = parts["code_to_edit"]
    cursor_at = code.find(CURSOR)
    code = code.replace(CURSOR, "")
    start = text.find(code) if code else -1
    content = None
    if start >= 0:
        cursor_line = text.count("\n", 0, start + max(0, cursor_at))
        content = await _suggest(state, text, path, parts.get("edit_diff_history", ""), cursor_line,
                                 (start, start + len(code)))
    return {"id": f"edit-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": state.model_id, "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": content}}]}


async def _suggest(state, text: str, path: str, history: str, cursor_line: int,
                   span: tuple[int, int]) -> str | None:
    uri = f"file://{path}" if path.startswith("/") else f"gateway:{path or 'edit'}"
    language = language_for(uri) or state.completer.language
    document = await asyncio.to_thread(ParsedDocument.parse, language, text)  # a whole file: off the loop
    event = event_in(text, uri, history)
    deadline_ms = state.completer.settings.deadline_ms
    planned = next_edit.plan(next_edit.EditAsk(document, event, cursor_line, new_request_id(), deadline_ms, uri,
                                               events=[] if event is None else [event]))
    if isinstance(planned, next_edit.Refused):
        return None
    edits = await next_edit.run(planned, state.pool, Deadline.after_ms(deadline_ms))
    return _rewritten(text, edits, span)
