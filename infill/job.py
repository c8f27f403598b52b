"""A job: what one request asks the model to decode (pure data; no torch, no tokenizer).

Text pieces with holes between them, `pieces[0] hole[0] pieces[1] ... hole[H-1] pieces[H]`:
plain fill-in-the-middle is one hole between a prefix and a suffix, a next edit is several
regions of one file. Each hole has its mode and token budget, and for an edit the text it
replaces and maybe a draft of its new text (pieces of known text with masked slots between them,
which the model fills, checking the known tokens as it goes), and the job carries the user's edits that call for it (`events`, each the lines as they
were and as they are now). Snippets are context from elsewhere (definitions, imports, recent
edits), laid into the canvas when the model was trained with them. Decoder overrides apply on top of the model's
defaults. The mode is decided by the front end (`completion`), never here.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

MODES = ("single_line", "multi_line")


@dataclass(frozen=True, slots=True)
class Hole:
    mode: str  # "single_line" or "multi_line"
    max_tokens: int  # its budget: the hole's length before any growth
    replaces: str = ""  # an edit's region as it is now ("" for a completion)
    draft: tuple[str, ...] = ()  # the region's drafted new text, cut where `slots` open (() : none)
    slots: tuple[int, ...] = ()  # tokens of each masked slot between draft pieces i and i + 1

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"a hole's mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"a hole's max_tokens must be a positive integer, got {self.max_tokens!r}")
        if len(self.slots) != max(0, len(self.draft) - 1) or any(n < 1 for n in self.slots):
            raise ValueError(f"a hole's draft of {len(self.draft)} pieces needs {max(0, len(self.draft) - 1)} "
                             f"positive slot lengths between them, got {list(self.slots)}")

    @property
    def drafted(self) -> bool:
        return bool(self.draft)


@dataclass(frozen=True, slots=True)
class Job:
    pieces: tuple[str, ...]  # one more than holes
    holes: tuple[Hole, ...]
    snippets: tuple[str, ...] = ()  # least important first: a full canvas keeps the last ones
    decoder: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    events: tuple[tuple[str, str], ...] = ()  # an edit's cause: (before, after) of the user's edits, oldest first

    def __post_init__(self) -> None:
        if not self.holes:
            raise ValueError("a job needs at least one hole")
        if len(self.pieces) != len(self.holes) + 1:
            raise ValueError(f"a job with {len(self.holes)} holes needs {len(self.holes) + 1} text "
                             f"pieces around them, got {len(self.pieces)}")

    @classmethod
    def fim(cls, prefix: str, suffix: str, mode: str, max_tokens: int, snippets: tuple[str, ...] = (),
            decoder: Mapping[str, Any] | None = None) -> Job:
        """The one-hole job of plain fill-in-the-middle."""
        return cls((prefix, suffix), (Hole(mode, max_tokens),), tuple(snippets),
                   MappingProxyType(dict(decoder or {})))

    @property
    def prefix(self) -> str:
        """The text before the first hole."""
        return self.pieces[0]

    @property
    def suffix(self) -> str:
        """The text after the last hole."""
        return self.pieces[-1]

    @property
    def one_hole(self) -> bool:
        """One hole with no draft: decoded as plain fill-in-the-middle (one canvas per length tried)."""
        return len(self.holes) == 1 and not self.drafted

    @property
    def drafted(self) -> bool:
        """Some hole carries a draft: the job decodes as a canvas of regions, even with one hole."""
        return any(hole.drafted for hole in self.holes)

    @property
    def budget(self) -> int:
        """Tokens the holes take together."""
        return sum(hole.max_tokens for hole in self.holes)
