"""The `lookup` setting: drafts written into a hole's masks between passes, and their check.

After each pass of a one-hole state, the tokens that followed the committed tokens before the
leftmost mask elsewhere in the canvas (`infill.drafts.lookup_draft`) are written into the next masks
(`write_lookup`), as far as that pass, which saw masks there, gives each at least `lookup_first`.
The next pass reads them as committed text, so it predicts the positions after them as if they
stood, and checks them first (`check_lookup`): each keeps its place where the model gives it at
least `lookup_keep` (`lookup_keep_before` for a draft found before the hole: code the user wrote
earlier, repeated, is right more often than the model's top-1 there, while a continuation found
after the hole mostly repeats the line that follows it); from the first that falls short on, the
draft is masked again. The positions after a refused token were predicted from it: only the refused
position commits in that pass, and only to another token as sure as `threshold` (`commit_refused`).
Prompt-lookup decoding without the `verify` rule's extra windows. A sliding window (`window`) is
laid out after the draft is written: it scores from the draft on and runs `window` positions past it
(`infill.decode.regions.slide`). The model sees a draft's own tokens as it checks them, so that
check alone is loose (it keeps about half of random tokens as its top-1); the earlier pass's bound
is the one they cannot sway.

With `lookup_hide` (a model with shifted logits: the row before a position predicts it) the pass
that checks a draft runs its rows up to the last drafted token causally (`hiding_mask`): each sees
the window's tokens up to its own and, after it, the keys/values the pass before gave those
positions, when they were masks. The row before a drafted token then predicts it from the text
before it alone, as left to right would once that text stood, and the token stands where it is that
row's top-1 or gets at least its bound (`lookup_keep`, or `lookup_keep_before`). At the first that
does not, the row's top-1 commits instead (left to right's token); the positions after it were
predicted from the refused draft and are masked again, and from the refused position on the
keys/values kept for the next check are the ones this check saw there (`forget_refused`). With
`lookup_guess`, where the canvas has no continuation to look up, the draft is the pass's own top-1
guesses for the masks from the leftmost on, as far as each is as likely as `lookup_guess`
(`guess_draft`): the hidden check keeps those left to right would write, so a pass commits every
guess that holds and one token more, in one window (the `verify` rule's answer in its fewer passes,
without its extra windows).
"""
from __future__ import annotations

import torch

from infill.commit import DecoderConfig
from infill.decode.holes import close_tail
from infill.decode.state import DecodeState
from infill.drafts import lookup_draft


def write_lookup(state: DecodeState, logits: torch.Tensor, lse: torch.Tensor) -> None:
    """Write a one-hole state's lookup draft into its masks from the leftmost on (none at the
    hole's first position, whose rules a draft would skip), up to its first token to which this
    pass's restricted logits (S, V) of the positions it scored (`state.scored`; log-sum-exp `lse`
    (S,)) give less than `lookup_first`. Before a sliding window's next layout: it runs the draft."""
    if not state.cfg.looks_up or len(state.holes) != 1 or not state.masked.any():
        return
    if state.hides_lookups and state.passes % state.cfg.refresh_every == 0:
        return  # the next pass is a full one, which cannot hide a draft
    masked, rules = state.masked, state.rules
    first = int(torch.nonzero(masked)[0])
    if first == 0:
        return
    gap = torch.nonzero(~masked[first:]).flatten()
    run = int(gap[0]) if len(gap) else len(masked) - first  # masks from `first` on, without a gap
    device = state.ids.device
    count, ends = min(state.cfg.lookup, run), rules.end_ids.to(device)
    tokens, before = lookup_draft(state.ids[0], state.span, first, count, state.cfg.lookup_key,
                                  torch.tensor(rules.banned_ids, device=device), ends)
    state.looked_keep = keep_bound(state.cfg, before)
    if not len(tokens) and state.cfg.lookup_guess and state.hides_lookups:
        at = slice(first, first + count)
        tokens = guess_draft(state.last_best[at], state.last_prob[at], ends, state.cfg.lookup_guess)
    if state.cfg.lookup_first:  # bounded by this pass's scores (rows from `scored.start`), as far as it scored
        tokens = tokens[:max(0, state.scored.stop - first)]
        rows = slice(first - state.scored.start, first - state.scored.start + len(tokens))
        tokens = likely_start(tokens, logits[rows], lse[rows], state.cfg.lookup_first)
    if not len(tokens):
        return
    if state.looked is None:
        state.looked = torch.zeros_like(masked)
    at = slice(first, first + len(tokens))
    state.ids[0, state.span.start + at.start:state.span.start + at.stop] = tokens
    masked[at] = False
    state.looked[at] = True


def keep_bound(cfg: DecoderConfig, before: bool) -> float:
    """The probability a looked-up draft's tokens need to stand: `lookup_keep_before` for a draft
    found before the hole (where it is set), else `lookup_keep`."""
    return cfg.lookup_keep_before if before and cfg.lookup_keep_before else cfg.lookup_keep


def guess_draft(guesses: torch.Tensor, prob: torch.Tensor, end_ids: torch.Tensor, bound: float) -> torch.Tensor:
    """A pass's top-1 guesses (D,) for the masks from the leftmost on, with their probabilities
    (D,), as a draft: up to the first less likely than `bound`, and up to and with the first that
    ends the hole (its middle, its line)."""
    low = torch.nonzero(prob < bound).flatten()
    guesses = guesses[:int(low[0])] if len(low) else guesses
    end = torch.nonzero(torch.isin(guesses, end_ids)).flatten()
    return guesses[:int(end[0]) + 1] if len(end) else guesses


def likely_start(tokens: torch.Tensor, logits: torch.Tensor, lse: torch.Tensor, bound: float) -> torch.Tensor:
    """The draft `tokens` (D,) up to the first to which the pass before it, logits (D, V) of its
    positions (log-sum-exp `lse` (D,)), gives less than `bound`: a check the draft's own tokens do not
    sway (the pass saw masks there)."""
    prob = (logits.gather(1, tokens[:, None])[:, 0] - lse).exp()
    low = torch.nonzero(prob < bound).flatten()
    return tokens[:int(low[0])] if len(low) else tokens


def check_lookup(state: DecodeState, logits: torch.Tensor, lse: torch.Tensor) -> tuple[int, int] | None:
    """Check the looked-up tokens against this pass's restricted logits (S, V) of the positions it
    scored (`state.scored`, the draft among them; log-sum-exp `lse` (S,)): they stand from the left
    while each has probability `state.looked_keep` or more; the rest are masked again. An end token that
    stands closes the hole after it. The first position masked again and the token it held; None if
    all stood."""
    looked = state.looked
    if looked is None or not looked.any():
        return None
    hole = state.ids[0, state.span]
    prob = torch.zeros_like(state.committed_prob)  # (L,) of each scored position's token
    prob[state.scored] = (logits.gather(1, hole[state.scored][:, None])[:, 0] - lse).exp()
    wrong = prob < state.looked_keep
    if state.hides_lookups:  # left to right's token stands too
        wrong &= hole != state.last_best
    short = torch.nonzero(looked & wrong).flatten()
    cut, refused = torch.zeros_like(looked), None
    if len(short):
        at = int(short[0])
        cut[at:] = looked[at:]
        refused = at, int(hole[at])
    state.committed_prob[looked & ~cut] = prob[looked & ~cut]
    hole[cut] = state.mask_id
    state.masked |= cut
    state.committed_prob[cut] = 0.0
    looked[:] = False
    close_tail(hole, state.masked, state.rules)
    return refused


def commit_refused(state: DecodeState, refused: tuple[int, int]) -> torch.Tensor:
    """After a check masked a draft again from hole position `at` (which held `token`): that
    position alone (L,) if this pass's top-1 there is another token as sure as `threshold`, or any
    other token when the draft was hidden from it (`lookup_hide`: left to right's token)."""
    at, token = refused
    commit = torch.zeros_like(state.masked)
    sure = state.hides_lookups or float(state.last_prob[at]) >= state.cfg.threshold
    if int(state.last_best[at]) != token and sure:
        commit[at] = True
    return commit


def hiding_mask(state: DecodeState, context: int) -> torch.Tensor:
    """Which keys each row of a pass that checks a hidden lookup draft attends to (W, C + 2W), the
    keys laid out as the `context` (C) cached ones, the window's W from the pass before, then this
    pass's W: a row at or before the last drafted token sees this pass's rows up to its own position
    and the earlier pass's after it; every later row sees this pass's window alone (and all cached)."""
    positions = state.positions  # (W,) canvas positions, ascending
    last = state.span.start + int(torch.nonzero(state.looked)[-1])
    causal = (positions <= last)[:, None]  # (W, 1)
    later = positions[None, :] > positions[:, None]  # (W, W): the key's position is after the row's
    cached = torch.ones(len(positions), context, dtype=torch.bool, device=positions.device)
    return torch.cat([cached, causal & later, ~(causal & later)], dim=1)


def forget_refused(state: DecodeState, at: int) -> None:
    """After a hidden check refused the draft from hole position `at`: the window's keys/values
    kept for the next check (`window_kv`) take back, from that position on, those the check saw
    there (masks, as the pass before encoded them), for this pass encoded the refused tokens; so
    do a sliding window's keys/values of the whole canvas (`kv`), which its next layout reads."""
    if state.masks_kv is None:
        return
    row = int(torch.searchsorted(state.positions, torch.tensor(state.span.start + at, device=state.positions.device)))
    state.window_kv = [(torch.cat([k[:, :, :row], old_k[:, :, row:]], dim=2),
                        torch.cat([v[:, :, :row], old_v[:, :, row:]], dim=2))
                       for (k, v), (old_k, old_v) in zip(state.window_kv, state.masks_kv)]
    if state.slides:
        refused = state.positions[row:]
        for (k, v), (old_k, old_v) in zip(state.kv, state.masks_kv):
            k[:, :, refused], v[:, :, refused] = old_k[:, :, row:], old_v[:, :, row:]
    state.masks_kv = None
