"""One hole's rules: what its positions may hold and when an end token may commit (pure functions).

`HoleRules` says what a hole may hold (no special token; token healing's first token; no empty
start; one line in single-line mode); `restrict` applies them to a pass's logits, `eligible` keeps
an end token waiting until it is the leftmost mask, `close_tail` turns everything after a
committed end into pad, and `close_loop` closes a hole whose committed start already loops.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from infill.repetition import MIN_LOOP_TOKENS, loop_start


@dataclass(frozen=True, slots=True)
class HoleRules:
    pad_id: int
    newline_id: int
    banned_ids: list[int]  # never proposed (mask and other special tokens)
    first_allowed: list[int] | None  # token healing: the hole's first token must be one of these
    first_banned: list[int]  # never the hole's first token (pad; newline or blanks in single-line mode)
    single_line: bool
    stop_ids: tuple[int, ...] = ()  # other tokens that end a middle (a family's eos, end-of-turn)
    line_ids: tuple[int, ...] = ()  # tokens that end a line (every newline-bearing one); () is the newline alone
    drafted: bool = False  # the hole holds a draft: an end token in its slots is an empty position

    @property
    def line_ends(self) -> tuple[int, ...]:
        """The tokens that end a line: every newline-bearing one, else the newline alone."""
        return self.line_ids or (self.newline_id,)

    @property
    def end_ids(self) -> torch.Tensor:
        """The tokens that end a middle: pad and the stop ids, and in single-line mode a line's end."""
        line = self.line_ends if self.single_line else ()
        return torch.tensor(list(dict.fromkeys([self.pad_id, *self.stop_ids, *line])))


def restrict(logits: torch.Tensor, still_masked: torch.Tensor, rules: HoleRules, first: int = 0) -> torch.Tensor:
    """Apply the hole rules in place to logits (S, V) of hole positions `first`, `first` + 1, ...
    (`still_masked` (S,) their flags) and return them: the first token's rules bind only row 0 of
    hole position 0."""
    logits[:, rules.banned_ids] = float("-inf")
    if first == 0 and still_masked[0]:
        if rules.first_allowed is not None:
            keep = logits[0, rules.first_allowed].clone()
            logits[0] = float("-inf")
            logits[0, rules.first_allowed] = keep
        logits[0, rules.first_banned] = float("-inf")  # an empty answer is never the best one
    return logits


def close_tail(hole: torch.Tensor, masked: torch.Tensor, rules: HoleRules) -> None:
    """After a committed pad (or newline in single-line mode), everything later is pad (tensor
    ops only: no sync with a GPU); not in a drafted hole, whose text goes on after a slot."""
    if rules.drafted:
        return
    ends = torch.isin(hole, rules.end_ids.to(hole.device)) & ~masked
    tail = (ends.cumsum(0) - ends.long()) > 0  # (L,) after the first committed end
    hole.copy_(torch.where(tail & masked, rules.pad_id, hole))
    masked &= ~tail


def eligible(best: torch.Tensor, masked: torch.Tensor, rules: HoleRules) -> torch.Tensor:
    """Masked positions that may commit now: end tokens wait their turn.

    A position whose best guess ends the middle (pad; a newline in single-line mode) commits only
    when it is the leftmost masked position. Otherwise a small model's confident pads eat the hole
    from its tail backwards (each pad makes the one before it likelier) and the answer comes back
    empty; content is decided first, and the end is placed once everything before it stands.
    """
    if rules.drafted:  # an end leaves one slot position empty, whenever it comes
        return masked.clone()
    ends = torch.isin(best, rules.end_ids.to(best.device))
    leftmost = masked & (masked.cumsum(0) == 1)  # none in a finished hole of a multi-hole canvas
    return masked & (~ends | leftmost)


def close_loop(hole: torch.Tensor, masked: torch.Tensor, rules: HoleRules) -> bool:
    """Close a hole (L,) whose committed start (up to its first mask) already loops: every mask
    after the loop's first copy becomes pad, in place. The answer is the one `cut_loop` would cut
    the finished hole to, without the passes that decode the copies it drops, unless a longer loop
    starting earlier would have formed later (on 200 HumanEval lines no answer changed: the model
    card). True when it closed the hole."""
    if rules.drafted:
        return False
    open_at = torch.nonzero(masked)
    if not len(open_at):  # finished: nothing left to close
        return False
    settled = int(open_at[0])
    if settled < MIN_LOOP_TOKENS:
        return False
    end = loop_start(hole[:settled].tolist())
    if end is None:
        return False
    after = torch.arange(len(hole), device=hole.device) >= end
    hole[after & masked] = rules.pad_id
    masked &= ~after
    return True
