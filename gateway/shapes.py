"""The JSON answers and stream chunks of each dialect, in their published shapes.

OpenAI text completions (`text_completion`: `choices[i].text`); the FIM dialect, whose choices
carry both `text` (Inception, DeepSeek) and `message.content` (Mistral), or `text` and
`delta.content` when streaming; llama.cpp's `/infill` (`content`, `stop`, `stop_type`,
`timings`). Streams are server-sent events: `data: JSON` lines, ended by `data: [DONE]` in the
OpenAI dialects (llama.cpp's end with the chunk whose `stop` is true). Usage counts are estimates
(`completion.context.approx_tokens`): the gateway does not tokenize, the worker owns the tokenizer.
"""
from __future__ import annotations

import json
import time
from collections.abc import Sequence

from completion.context import approx_tokens as tokens
from gateway.completer import Choice

DONE = b"data: [DONE]\n\n"


def event(payload: dict) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


def usage(prompt: str, texts: Sequence[str]) -> dict:
    prompt_tokens, completion_tokens = tokens(prompt), sum(tokens(text) for text in texts)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def _head(rid: str, model: str, obj: str) -> dict:
    return {"id": rid, "object": obj, "created": int(time.time()), "model": model}


def _choice(index: int, text: str, finish: str | None, chat: str | None) -> dict:
    choice = {"index": index, "text": text, "logprobs": None, "finish_reason": finish}
    if chat == "message":
        choice["message"] = {"role": "assistant", "content": text}
    elif chat == "delta":
        choice["delta"] = {"content": text}
    return choice


def completion_json(rid: str, model: str, choices: Sequence[Choice], prompt: str, fim: bool) -> dict:
    """A whole answer; `fim` adds each choice's `message.content`."""
    body = _head(rid, model, "text_completion")
    body["choices"] = [_choice(i, c.text, c.finish_reason, "message" if fim else None)
                       for i, c in enumerate(choices)]
    body["usage"] = usage(prompt, [c.text for c in choices])
    return body


def completion_chunk(rid: str, model: str, index: int, text: str, finish: str | None, fim: bool,
                     with_usage: bool) -> bytes:
    """One stream chunk; with `with_usage` it has `usage: null`, as OpenAI's do when asked for it."""
    body = _head(rid, model, "text_completion")
    body["choices"] = [_choice(index, text, finish, "delta" if fim else None)]
    if with_usage:
        body["usage"] = None
    return event(body)


def usage_chunk(rid: str, model: str, prompt: str, texts: Sequence[str]) -> bytes:
    """The last chunk before [DONE] when `stream_options.include_usage` is set: no choices."""
    body = _head(rid, model, "text_completion")
    body["choices"], body["usage"] = [], usage(prompt, texts)
    return event(body)


def error_event(error: dict) -> bytes:
    return event(error)


def infill_json(model: str, choice: Choice, prompt: str, elapsed_ms: float) -> dict:
    """llama.cpp's `/infill` answer; `stop_type` is "limit" when the worker answered at its
    deadline, else "eos"."""
    predicted = tokens(choice.text)
    stop_type = "limit" if choice.finish_reason == "length" else "eos"
    return {"content": choice.text, "stop": True, "stop_type": stop_type, "stopping_word": "",
            "model": model, "tokens_predicted": predicted,
            "tokens_evaluated": tokens(prompt), "tokens_cached": 0, "truncated": False,
            "timings": {"prompt_n": tokens(prompt), "predicted_n": predicted,
                        "predicted_ms": elapsed_ms}}


def infill_chunk(content: str, stop: bool) -> bytes:
    return event({"content": content, "stop": stop})
