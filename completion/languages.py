"""What the completion rules know of each language's surface syntax, in one table.

`rules_for(language)` gives a language's `LanguageRules`: what ends a line that opens a block
(`completion.decide`), the marker of a comment that runs to the end of the line (the bracket
scanner of `completion.postprocess` skips it) and the starts of a line that holds only a comment
(the decision looks past such lines). Python has its own row; every other language gets the
C family's (`{` blocks, `//` comments, `/* ... */` blocks whose lines start with `*`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LanguageRules:
    block_openers: tuple[str, ...]  # a line ending with one opens a block
    line_comment: str  # starts a comment that runs to the end of its line
    comment_lines: tuple[str, ...]  # a line starting with one holds only a comment


C_FAMILY = LanguageRules(block_openers=("{",), line_comment="//", comment_lines=("//", "/*", "*"))
RULES = {"python": LanguageRules(block_openers=(":",), line_comment="#", comment_lines=("#",))}


def rules_for(language: str | None) -> LanguageRules:
    return RULES.get(language or "", C_FAMILY)
