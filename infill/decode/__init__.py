"""Denoising of canvas holes: one forward pass per step, a commit rule decides what freezes.

Each step scores every still-masked hole position (top-1 probability, or the top-1 minus top-2
margin) and a commit rule (`infill.commit`) picks the positions to freeze. Rules that follow the
training layout keep the answer well formed: a committed `<pad>` ends the middle (the tail after it
becomes pad), and in single-line mode a committed newline ends the line. With `end_in_run` a
`left_run` run may end on such an end token, closing the hole in the pass that commits its text.
A hole whose committed start already loops is closed after its first copy
(`stop_loops`): the answer `cut_loops` keeps, without the passes that decode the copies. At the
deadline the remaining masks are filled greedily from the last pass (`fill_rest`): the anytime
answer. A completion's budget of passes (`max_passes`) ends it otherwise: the pass that reaches it
commits as any pass does, the line it was writing is finished from that pass's guesses and nothing
after it is kept (`close_rest`): the same answer on any machine.

Decoding is step-wise so that many requests share each forward pass: `start` lays one request out
as a `DecodeState`, `step` advances any number of states by one pass each, `results` reads one
back, one `HoleAnswer` per hole. `infill.fim.run_job` is the one-job loop over the same `step`.

The modules, one job each:
- `state.py`: the decoding record (`DecodeState`, one `Hole` record per hole), its layout, `start`
  and `start_regions`, and `commit_positions`, the one write that freezes positions.
- `holes.py`: one hole's rules (`HoleRules`, `restrict`, `eligible`, `close_tail`).
- `passes.py`: the model passes (full, cached window, batched windows, the keys/values reused
  from an earlier request, `Reuse`) and the scores of their logits.
- `regions.py`: the window of several holes (`shrink`, `hole_windows`), the sliding window
  (`slide`), drafted tokens (`veto`) and the `verify` rule's guesses (`plan_drafts`,
  `confirm_drafts`).
- `stepping.py`: one step over a batch of states (`step`, `advance`), `remask`, `grow`, `fill_rest`.
- `lookup.py`: the `lookup` setting's drafts, written into the masks between passes and checked by
  the next pass (`write_lookup`, `check_lookup`), hidden from the rows that check them
  (`hiding_mask`, `forget_refused`).
- `answer.py`: reading a state back (`hole_tokens`, `best`, `committed_run`) and each hole's
  answer (`results`: the one answer record, `infill.answer.HoleAnswer`).

With `remask` set, a committed token that a later pass finds unlikely is masked again (once per
position) and the commit rule may fill it anew: a way back from an early commit (`remask`).

A multi-line hole that fills to its end with no pad wanted more room: it grows in place (more
masks after the committed tokens, the context re-encoded) up to its `grow_to` length.

Context cache: a full pass over the canvas stores the keys and values of every position outside
the active window (the hole, plus the position before it when logits are shifted); the steps in
between run the window alone against them, all cached windows of a step batched in one forward
(`infill.batch`). A state whose window moves keeps the whole canvas's keys/values instead, and its
lone window runs in place in them, its own written over its positions (no copy of the canvas).
`refresh_every=1` is a full pass every step. A request's first full pass may attend to an earlier
request's keys/values of its canvas's start and end (a `Reuse` passed to `step`) and gives back
what it encoded (`Stepped.encoded`): the worker's prefix cache keeps them.

The `verify` rule guesses the positions after the leftmost mask (`infill.drafts`) and checks them in
the next pass: its cached step also runs the window with the first guess written in, with the
first two, ... (one window each, in the same forward). The window that saw the first v guesses
predicts position v after the leftmost exactly as left-to-right decoding would once those v were
committed, so while the guesses hold each such window commits one more position
(`confirm_drafts`). The answer is the left-to-right one; the pass count falls.

With `lookup` set (rule `left_run`, no window), a one-hole state's masks after each pass start
with the tokens that followed its committed tokens elsewhere in the canvas (prompt lookup;
`infill.decode.lookup`), as far as the pass gives each at least `lookup_first`: the next pass
reads them as text, predicts the positions after them from it, and keeps them from the left while
it gives each at least `lookup_keep`. A draft that holds commits many tokens in one pass, with no
extra window. With `lookup_hide` (shifted logits) that pass runs the rows up to the draft's end
causally, each seeing the earlier pass's keys/values after it, so a drafted token is checked from
the text before it alone, not swayed by itself or the tokens after it (`hiding_mask`); with
`lookup_guess` the pass's own likely guesses are the draft where nothing is looked up.

A sliding window (`window` > 0, one hole, rules that commit from the left) runs fewer positions:
each cached pass runs the positions committed in the pass before (still encoded as masks) and
`window` positions from the leftmost mask on, and scores only those; every other position's keys
and values come from the whole canvas's, as last encoded (`slide`). Committed tokens then stay as
they were encoded, and masks far to the right as the first pass saw them: an approximation, like
the context cache itself, that `bench.decode` measures.

Several holes in one canvas (`start_regions`) decode jointly: the window is the union of the holes'
windows (gathered positions, not one slice), each pass scores all holes, each hole keeps its own
rules (first token, end tokens, tail), and one commit rule ranks the confidences of all holes
(blocks and the left-to-right rule act per hole: `infill.commit.select`). The window shrinks as
holes finish (`shrink`): a hole done in one pass runs once more, then its keys/values join the
context; with `window` > 0 each hole's part of it also slides as the one-hole sliding window
does (`hole_windows`). Such a state never grows or verifies guesses: those apply to one-hole
jobs.

This module gives the package's public names; the rules' own helpers are imported from their module.
"""
from infill.decode.answer import best, committed_run, hole_tokens, results
from infill.decode.holes import HoleRules
from infill.decode.passes import Reuse, step_tokens, window_bounds
from infill.decode.state import DecodeState, Hole, model_device, start, start_regions
from infill.decode.stepping import Stepped, fill_rest, step

__all__ = ["DecodeState", "Hole", "HoleRules", "Reuse", "Stepped", "best", "committed_run",
           "fill_rest", "hole_tokens", "model_device", "results", "start", "start_regions", "step", "step_tokens",
           "window_bounds"]
