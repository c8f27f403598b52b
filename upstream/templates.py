"""FIM templates of model families and the chat template of instruct-only models. Pure.

Servers that take no `suffix` get the prefix and suffix between a family's sentinels (`render`);
the gateway reads the same table to split such prompts (`gateway.templates`). Instruct-only
diffusion models (LLaDA 2.x) get a chat turn asking for the missing code (`chat_prompt`), and their
answer may come wrapped in a Markdown fence (`unfence`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    prefix: str  # the sentinel before the prefix
    suffix: str  # before the suffix
    middle: str  # after both: where the model writes


TEMPLATES = (
    Template("starcoder", "<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
    Template("qwen", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
    Template("codellama", "<PRE>", "<SUF>", "<MID>"),
    Template("deepseek", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
)
BY_NAME = {t.name: t for t in TEMPLATES}
CHAT = "chat"  # the template name of instruct-only models
NAMES = (*BY_NAME, CHAT)

CHAT_INSTRUCTION = ("Fill in the code at <HOLE>. Answer with the missing code only, without "
                    "explanations and without repeating the code around it.")
_FENCE = re.compile(r"\A\s*```[\w+#.-]*[ \t]*\n(.*?)\n?```\s*\Z", re.DOTALL)


def render(name: str, prefix: str, suffix: str) -> str:
    """The prompt of family `name` (prefix, suffix, middle order; CodeLlama's spaces)."""
    t = BY_NAME[name]
    if name == "codellama":
        return f"{t.prefix} {prefix} {t.suffix}{suffix} {t.middle}"
    return f"{t.prefix}{prefix}{t.suffix}{suffix}{t.middle}"


def chat_prompt(prefix: str, suffix: str) -> str:
    """The user turn asking an instruct model for the code between `prefix` and `suffix`."""
    return f"{CHAT_INSTRUCTION}\n\n```\n{prefix}<HOLE>{suffix}\n```"


def unfence(text: str) -> str:
    """The text inside one Markdown code fence that wraps all of it; else the text as it is."""
    found = _FENCE.match(text)
    return found.group(1) if found else text
