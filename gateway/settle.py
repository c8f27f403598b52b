"""How much of a streamed completion is final: the part that post-processing cannot change.

The worker streams the settled text of its hole (`engine.wire.protocol.Partial`: what its answer will
start with); the gateway shows the editor what `completion.postprocess.clean` and the stop
sequences would make of it, but only the part that no later text can change, so that the chunks
of a stream add up to the unstreamed answer. `settled` holds back:

- the last line of a multi-line text while it is being written (a later line may end the
  completion where it leaves its block, repeat the suffix, or close only brackets), except the
  first, whose rules (the mode, the brackets against the cursor's line) read it left to right;
- trailing whitespace (cut when nothing follows it);
- when text follows the cursor on its line, as many characters as that text has (a tail that
  repeats it is cut);
- a stop sequence's length less one (it may be starting), and everything from a stop sequence on.

Pure: tests feed it every prefix of a text and check each result starts the final one.
"""
from __future__ import annotations

from collections.abc import Sequence

from completion.positions import LINE_BREAK
from completion.postprocess import clean


def cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """`text` up to the first occurrence of any of `stops`, and whether one was found."""
    found = [index for index in (text.find(stop) for stop in stops if stop) if index >= 0]
    return (text[:min(found)], True) if found else (text, False)


def final_text(cleaned: str | None, stops: Sequence[str]) -> tuple[str, bool]:
    """The answer a choice gets: the cleaned text ("" for none) cut at its first stop sequence."""
    return cut_at_stop(cleaned or "", stops)


def settled(partial: str, mode: str, max_lines: int, prefix: str, suffix: str,
            language: str | None, stops: Sequence[str]) -> str:
    """The part of the cleaned `partial` that the final answer starts with, whatever the worker
    appends to `partial` (see the module)."""
    cleaned = clean(partial, mode, max_lines, prefix, suffix, language) or ""
    breaks = list(LINE_BREAK.finditer(cleaned))
    stable = cleaned[:breaks[-1].start()] if breaks else cleaned
    stable = stable.rstrip()
    right = LINE_BREAK.split(suffix, maxsplit=1)[0]
    if right.strip():
        stable = stable[:max(0, len(stable) - len(right))]
    longest = max((len(stop) for stop in stops if stop), default=1)
    limit = max(0, len(stable) - (longest - 1))
    inside, stopped = cut_at_stop(stable, stops)
    if stopped and len(inside) < limit:
        return inside
    return stable[:limit]
