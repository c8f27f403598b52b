"""The settings the completion rules read, their defaults and limits, and their names on the wire.

Every front end completes under the same `Settings`: the language server reads them from the
client's `initializationOptions` (and configuration changes) under the camelCase names of
`Settings.OPTIONS`; `infill complete` from its flags. `from_options` takes any such object, keeps
what is valid and says what it ignored, so that a bad value never stops a front end.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.wire.protocol import MAX_DEADLINE_MS, MAX_TOKENS, SETTING_MODES, Mode

DEFAULT_DEADLINE_MS = 1500  # an inline completion later than this has usually been typed past
DEFAULT_MAX_TOKENS = 48
DEFAULT_MODE = Mode.AUTO
DEFAULT_MAX_LINES = 12  # a multi-line completion longer than a screenful is rarely taken whole
MAX_LINES = 200
# Token budgets of the context parts, before the worker cuts the canvas to its model's context
# (512 tokens for the bundled model, 2,048 or more for public checkpoints).
DEFAULT_PREFIX_TOKENS = 1024
DEFAULT_SUFFIX_TOKENS = 384
DEFAULT_SNIPPET_TOKENS = 384
MAX_BUDGET_TOKENS = 32_768

# an option's name -> (the settings field, its validity check, what a valid value is)
Options = dict[str, tuple[str, Callable[[Any], bool], str]]


@dataclass(slots=True)
class Settings:
    """How much to ask for, how long to wait, and how to shape the answer."""

    OPTIONS: ClassVar[Options]

    deadline_ms: int = DEFAULT_DEADLINE_MS
    max_tokens: int = DEFAULT_MAX_TOKENS
    mode: str = DEFAULT_MODE  # a Mode's value: auto (decided at the cursor), single_line or multi_line
    max_lines: int = DEFAULT_MAX_LINES
    prefix_tokens: int = DEFAULT_PREFIX_TOKENS
    suffix_tokens: int = DEFAULT_SUFFIX_TOKENS
    snippet_tokens: int = DEFAULT_SNIPPET_TOKENS
    drafts: bool = True  # a draft of the hole from the user's own code, checked by the model (`fim.draft_for`)

    @classmethod
    def from_options(cls, options: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
        """Settings from an options object, on top of `base` (or the defaults): a value that is
        missing or null keeps the base's. Also one line per value that was ignored because it is
        unknown or invalid."""
        settings, problems = (dataclasses.replace(base) if base is not None else cls()), []
        if options is None:
            return settings, problems
        if not isinstance(options, dict):
            return settings, [f"the settings must be an object, got {type(options).__name__}"]
        for key, value in options.items():
            if value is None:  # an editor's way of saying "not set"
                continue
            if key not in cls.OPTIONS:
                problems.append(f"unknown setting {key!r} (known: {', '.join(cls.OPTIONS)})")
                continue
            name, valid, wanted = cls.OPTIONS[key]
            if valid(value):
                setattr(settings, name, value)
            else:
                problems.append(f"setting {key!r} must be {wanted}, got {value!r}; using the default")
        return settings, problems


def int_in(lo: int, hi: int) -> Callable[[Any], bool]:
    """A check that a value is an integer (not a bool) in lo..hi."""
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


Settings.OPTIONS = {
    "deadlineMs": ("deadline_ms", int_in(1, MAX_DEADLINE_MS), f"an integer in 1..{MAX_DEADLINE_MS}"),
    "maxTokens": ("max_tokens", int_in(1, MAX_TOKENS), f"an integer in 1..{MAX_TOKENS}"),
    "mode": ("mode", lambda value: isinstance(value, str) and value in SETTING_MODES,
             f"one of {', '.join(SETTING_MODES)}"),
    "maxLines": ("max_lines", int_in(1, MAX_LINES), f"an integer in 1..{MAX_LINES}"),
    "prefixTokens": ("prefix_tokens", int_in(1, MAX_BUDGET_TOKENS),
                     f"an integer in 1..{MAX_BUDGET_TOKENS}"),
    "suffixTokens": ("suffix_tokens", int_in(0, MAX_BUDGET_TOKENS),
                     f"an integer in 0..{MAX_BUDGET_TOKENS}"),
    "snippetTokens": ("snippet_tokens", int_in(0, MAX_BUDGET_TOKENS),
                      f"an integer in 0..{MAX_BUDGET_TOKENS}"),
    "completionDrafts": ("drafts", lambda value: isinstance(value, bool), "true or false"),
}
