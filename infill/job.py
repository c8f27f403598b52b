"""A job: what one request asks the model to decode (pure data; no torch, no tokenizer).

Text pieces with holes between them, `pieces[0] hole[0] pieces[1] ... hole[H-1] pieces[H]`:
plain fill-in-the-middle is one hole between a prefix and a suffix, a next edit is several
regions of one file. Each hole has its mode and token budget, and for an edit the text it
replaces and maybe a draft of its new text (pieces of known text with masked slots between them,
which the model fills, checking the known tokens as it goes), and the job carries the user's
edits that call for it (`events`, each the lines as they were and as they are now). Snippets are
context from elsewhere (definitions, imports, recent edits), laid into the canvas when the model
was trained with them. Decoder overrides apply on top of the model's defaults. The mode is
decided by the front end (`completion`), never here. A completion's (`kind="fim"`) hole may
carry a draft too: a guess at the hole's start, found in the user's own code, which the model
checks and goes on from.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

MODES = ("single_line", "multi_line")
KINDS = ("fim", "edit")


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
    kind: str = "edit"  # "fim": a completion's one hole, whose draft is a guess at its start (masks follow it)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a job's kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind == "fim" and len(self.holes) != 1:
            raise ValueError(f"a fim job has one hole, got {len(self.holes)}")
        if not self.holes:
            raise ValueError("a job needs at least one hole")
        if len(self.pieces) != len(self.holes) + 1:
            raise ValueError(f"a job with {len(self.holes)} holes needs {len(self.holes) + 1} text "
                             f"pieces around them, got {len(self.pieces)}")

    @classmethod
    def fim(cls, prefix: str, suffix: str, mode: str, max_tokens: int, snippets: tuple[str, ...] = (),
            decoder: Mapping[str, Any] | None = None, draft: tuple[str, ...] = (),
            slots: tuple[int, ...] = ()) -> Job:
        """The one-hole job of fill-in-the-middle, maybe with a draft of the hole's start (pieces
        with `slots` masks between them) for the model to check."""
        return cls((prefix, suffix), (Hole(mode, max_tokens, "", tuple(draft), tuple(slots)),), tuple(snippets),
                   MappingProxyType(dict(decoder or {})), kind="fim")

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
        """One hole decoded as fill-in-the-middle: with no draft (one canvas per length tried), or
        a completion's hole whose draft is laid into its start (`infill.fim.start_drafted`)."""
        return len(self.holes) == 1 and (not self.drafted or self.kind == "fim")

    @property
    def drafted(self) -> bool:
        """Some hole carries a draft: an edit job decodes as a canvas of regions, even with one hole."""
        return any(hole.drafted for hole in self.holes)

    @property
    def budget(self) -> int:
        """Tokens the holes take together."""
        return sum(hole.max_tokens for hole in self.holes)
