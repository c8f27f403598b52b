"""Decode parity with transformers: our one-token-per-step decoder on tiny Dream-style (Qwen2,
shifted logits) and LLaDA checkpoints commits the same tokens, in the same order, as a reference
loop written here on transformers' forward pass (the whole canvas each step, no cache)."""
from __future__ import annotations

import pytest
import torch

from infill import decode
from infill.checkpoint import load_model
from infill.commit import DecoderConfig
from infill.decode.holes import HoleRules
from infill.decode.state import new_state
from test_families import EOS, MASK, VOCAB, write_llada, write_qwen2

HOLE = slice(5, 13)
# one commit a pass (the most confident; a threshold no probability reaches), a full pass each step
ONE_A_STEP = DecoderConfig(rule="threshold", threshold=1.0, refresh_every=1)
RULES = HoleRules(pad_id=EOS, newline_id=EOS, banned_ids=[MASK], first_allowed=None, first_banned=[],
                  single_line=False)


def canvas() -> list[int]:
    ids = torch.randint(0, VOCAB - 2, (20,), generator=torch.Generator().manual_seed(4)).tolist()
    ids[HOLE] = [MASK] * (HOLE.stop - HOLE.start)
    return ids


def reference_decode(reference: torch.nn.Module, ids: list[int], shifted: bool) -> list[int]:
    """Each step: transformers' logits for the whole canvas, bidirectional; the mask token banned;
    of the masked positions that may commit (an end token only at the leftmost one), the most
    confident commits; a committed end makes the rest of the hole end tokens."""
    ids, masked = torch.tensor(ids)[None], list(range(HOLE.start, HOLE.stop))
    see_everything = torch.zeros(1, 1, ids.shape[1], ids.shape[1])
    while masked:
        with torch.no_grad():
            logits = reference(ids, attention_mask=see_everything).logits[0].float()  # (N, V)
        if shifted:
            logits = torch.cat([logits[:1], logits[:-1]])
        logits[:, MASK] = float("-inf")
        probs = logits.softmax(-1)
        best, conf = probs.argmax(-1), probs.max(-1).values
        allowed = [p for p in masked if int(best[p]) != EOS or p == masked[0]]
        chosen = max(allowed, key=lambda p: float(conf[p]))
        ids[0, chosen] = best[chosen]
        masked.remove(chosen)
        if int(best[chosen]) == EOS:
            for p in [p for p in masked if p > chosen]:
                ids[0, p] = EOS
                masked.remove(p)
    return ids[0, HOLE].tolist()


@pytest.mark.parametrize("writer, shifted", [(write_qwen2, True), (write_llada, False)], ids=["dream", "llada"])
def test_one_token_a_step_matches_a_reference_loop_on_transformers(tmp_path, writer, shifted):
    reference = writer(tmp_path)
    model = load_model(tmp_path)
    model.cfg.logits_shift = shifted  # the family's convention (Dream shifts, LLaDA does not)
    state = new_state(model, canvas(), [HOLE], [RULES], ONE_A_STEP, None, grow_to=0)
    while not state.done:
        decode.step(model, [state])
    assert decode.hole_tokens(state)[0] == reference_decode(reference, canvas(), shifted)
    assert state.passes <= HOLE.stop - HOLE.start
