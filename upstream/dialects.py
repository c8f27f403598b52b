"""Each upstream kind's HTTP body for a `CompleteRequest`, and its answer back as texts. Pure.

    openai     POST /v1/completions {model, prompt, suffix, max_tokens, stream, temperature 0}; with a family
               `template`, the prompt holds the sentinels and no suffix goes; with `chat`,
               POST /v1/chat/completions with one user turn (`templates.chat_prompt`)
    fim        POST /v1/fim/completions (Mistral's, Inception's): text- or message-shaped choices
    llama.cpp  POST /infill {input_prefix, input_suffix, input_extra: the snippets, n_predict}
    edit       POST /v1/edit/completions (Inception's next edits): the request's regions as the
               code to edit inside the current file, its events as the edit diff history; the
               rewritten code is split back into one item per region; its inline completions
               go to /v1/fim/completions as `fim`'s (Inception serves both). Only `edit` answers
               next edits: the other kinds' servers have no such endpoint (the drafts stand)

An answer that is not what the kind promises (no choices, a choice without text, an error object
in a 200) raises `BadAnswer`, which the backend turns into an empty answer. What an upstream wrote
reaches an editor or a terminal only through `printable` (text) or `one_line` (a message).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.wire.protocol import CompleteRequest, Item
from upstream.config import Upstream
from upstream.templates import CHAT, chat_prompt, render, unfence

CURSOR = "<|cursor|>"
# C0 and C1 controls but tab and line feed, a carriage return but before a line feed, DEL, lone surrogates
UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]|\r(?!\n)")


class BadAnswer(Exception):
    """An answer the upstream's kind does not allow; the message says what was wrong."""


@dataclass(frozen=True, slots=True)
class Call:
    path: str
    body: dict
    chat: bool = False  # the answer is a chat message (maybe fenced)


def printable(text: str, kept: str = "") -> str:
    """An upstream's `text` as it may reach an editor or a terminal: no control character (terminal
    escapes included) but tab, line feed and CRLF's carriage return, and no lone surrogate, except
    the characters of `kept` (those of the code it was sent, which an edit gives back)."""
    if not kept:
        return UNPRINTABLE.sub("", text)
    return UNPRINTABLE.sub(lambda found: found.group() if found.group() in kept else "", text)


def one_line(text: str) -> str:
    """`printable(text)` on one line, for a message."""
    return re.sub(r"[\t\r\n]+", " ", printable(text))


# A completion is the model's most likely text, as the worker's decoder gives it: engines sample at
# temperature 1 unless told otherwise (vLLM and SGLang do, from a model's generation_config).
GREEDY = {"temperature": 0}


def call_for(upstream: Upstream, request: CompleteRequest) -> Call:
    if request.kind == "edit":
        return _edit_call(upstream, request)
    model = {"model": upstream.model} if upstream.model else {}
    if upstream.kind == "llama.cpp":
        extra = [{"filename": s.path, "text": s.text} for s in request.snippets]
        return Call("/infill", {"input_prefix": request.prefix, "input_suffix": request.suffix,
                                "input_extra": extra, "n_predict": request.max_tokens,
                                "stream": upstream.stream, "cache_prompt": True, **GREEDY})
    if upstream.template == CHAT:
        messages = [{"role": "user", "content": chat_prompt(request.prefix, request.suffix)}]
        return Call("/v1/chat/completions", {**model, "messages": messages, "stream": upstream.stream,
                                             "max_tokens": request.max_tokens, **GREEDY}, chat=True)
    body = {**model, "prompt": request.prefix, "suffix": request.suffix,
            "max_tokens": request.max_tokens, "stream": upstream.stream, **GREEDY}
    if upstream.template:
        body["prompt"] = render(upstream.template, request.prefix, request.suffix)
        del body["suffix"]
    path = "/v1/completions" if upstream.kind == "openai" else "/v1/fim/completions"  # fim, edit
    return Call(path, body)


def _check(answer: Any) -> dict:
    if not isinstance(answer, dict):
        raise BadAnswer(f"the answer is not a JSON object but {type(answer).__name__}")
    if answer.get("error") is not None:
        error = answer["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise BadAnswer(f"the answer is an error: {str(message)[:200]}")
    return answer


def text_of(answer: Any, chunk: bool = False) -> str | None:
    """The text of an answer (or a stream's chunk): the first choice's text, message content or
    delta content, or llama.cpp's content; None for a chunk that carries none (a usage chunk)."""
    answer = _check(answer)
    if "content" in answer and "choices" not in answer:  # llama.cpp
        content = answer["content"]
        if not isinstance(content, str):
            raise BadAnswer("the answer's content is not text")
        return content
    choices = answer.get("choices")
    if not isinstance(choices, list) or (not choices and not chunk):
        raise BadAnswer("the answer has no choices")
    if not choices:
        return None
    choice = choices[0]
    if not isinstance(choice, dict):
        raise BadAnswer("the answer's choice is not an object")
    for found in (choice.get("text"), _content(choice.get("message")), _content(choice.get("delta"))):
        if isinstance(found, str):
            return found
    if chunk:
        return None
    raise BadAnswer("the answer's choice has no text")


def _content(message: Any) -> Any:
    return message.get("content") if isinstance(message, dict) else None


def chunk_ends(chunk: dict) -> bool:
    """Whether a stream's chunk is its last (llama.cpp's `stop`)."""
    return chunk.get("stop") is True


# Next edits: the job's regions as Inception's code to edit.

def _edit_call(upstream: Upstream, request: CompleteRequest) -> Call:
    code = region_text(request)
    current = request.prefix + CURSOR + code + request.suffix
    path = request.document.removeprefix("file://") or "edit"
    history = "\n".join(_diff(e.before, e.after) for e in request.events)
    snippets = "\n".join(f"code_snippet_file_path: {s.path}\n{s.text}" for s in request.snippets)
    content = (f"<|recently_viewed_code_snippets|>\n{snippets}\n<|/recently_viewed_code_snippets|>\n"
               f"<|current_file_content|>\ncurrent_file_path: {path}\n{current}\n"
               f"<|/current_file_content|>\n<|code_to_edit|>\n{CURSOR}{code}\n<|/code_to_edit|>\n"
               f"<|edit_diff_history|>\n{history}\n<|/edit_diff_history|>")
    model = {"model": upstream.model} if upstream.model else {}
    return Call("/v1/edit/completions", {**model, "messages": [{"role": "user", "content": content}]},
                chat=True)


def region_text(request: CompleteRequest) -> str:
    """The text from the first region's start to the last one's end, as it is now."""
    parts = []
    for index, hole in enumerate(request.holes):
        parts.append(hole.replaces)
        if index < len(request.pieces):
            parts.append(request.pieces[index])
    return "".join(parts)


def _diff(before: str, after: str) -> str:
    removed = "".join(f"-{line}\n" for line in before.splitlines())
    added = "".join(f"+{line}\n" for line in after.splitlines())
    return f"--- a\n+++ b\n@@ -1 +1 @@\n{removed}{added}".rstrip("\n")


def edit_items(request: CompleteRequest, content: str | None) -> list[Item]:
    """One item per region from the rewritten code to edit: the text between the pieces that stand
    between the regions, found in order. No content (no edit): each region as it is. A rewrite that
    moved or dropped a piece cannot be split: BadAnswer."""
    if content is None:
        return [Item(h.replaces, 1.0, 0, i) for i, h in enumerate(request.holes)]
    rewritten = unfence(content).replace(CURSOR, "")
    if region_text(request).endswith("\n") and not rewritten.endswith("\n"):
        rewritten += "\n"  # a fence or a chat answer drops the last line break
    items, start = [], 0
    for index, piece in enumerate(request.pieces[:len(request.holes) - 1]):
        found = rewritten.find(piece, start) if piece else start
        if found < 0:
            raise BadAnswer("the rewritten code lost the text between its regions")
        items.append(Item(rewritten[start:found], 1.0, 0, index))
        start = found + len(piece)
    items.append(Item(rewritten[start:], 1.0, 0, len(request.holes) - 1))
    return items
