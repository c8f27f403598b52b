"""Left-to-right decoding of an autoregressive (causal) checkpoint, with a key/value cache.

The autoregressive twin of the bundled model was trained on next-token prediction of whole files
(`<|file|>` then the file's tokens), never on a suffix: it continues the prefix alone. (A twin
trained with FIM rearrangements, `fim_sentinels` in its config, gets the prefix and the suffix in
its FIM prompt instead, `infill.fim_ar`.) A request is
laid out as `[head] [prefix tokens]` (the prefix's last piece re-opened, as the diffusion canvas
does, so that the first token may finish a word the user is typing), the first pass encodes it
and keeps every layer's keys and values, and each later pass encodes the one token chosen last
against that cache: a step costs one position, not the file. Greedy: the likeliest token each
time, under the same rules as a diffusion hole (`infill.fim.hole_rules`: no special token, the
re-opened text first, no empty start).

A decoding ends at an end token (pad, eos, the next file's head), at a line's end in single-line
mode, at a blank line in multi-line mode, at its token budget, or at its deadline, where it stops
where it is: what it has written is its answer (the "anytime" answer of a causal model).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import torch

from infill.decode.holes import HoleRules, restrict
from infill.fim import hole_rules, hole_text
from infill.fim_ar import N_SENTINELS, Sentinels, fim_context, fim_prompt
from infill.model import KV, Transformer
from infill.tokenizer import ModelTokenizer

BLANK_LINE = re.compile(r"\n[ \t]*\n")
BLANK_LINE_TOKENS = 4  # a blank line is found among the last few tokens written
ARMED = torch.tensor([True])  # the first-token rules bind the next token while nothing is written


@dataclass(slots=True, eq=False)
class CausalState:
    """One request being written left to right."""

    prompt: list[int]  # head + healed prefix tokens
    rules: HoleRules
    stop_ids: frozenset[int]  # tokens that end the answer (not part of it)
    max_tokens: int
    deadline: float | None  # time.monotonic() after which no further pass runs
    healed: str  # re-opened prefix text the answer's first token starts with (dropped from the answer)
    tokens: list[int] = field(default_factory=list)  # written so far
    confidences: list[float] = field(default_factory=list)  # top-1 probability of each written token
    cache: list[KV] | None = None
    passes: int = 0
    done: bool = False
    stop_reason: str = "done"  # "done" or "deadline"


def stop_ids(tok: ModelTokenizer) -> frozenset[int]:
    """Tokens a causal model writes when the text is over: the ends, the next file's head, and
    the tokenizer's `<|end|>` where it has one."""
    ends = set(tok.end_ids) | set(tok.head_ids)
    end_id = getattr(tok, "end_id", None)
    return frozenset(ends if end_id is None else ends | {end_id})


def prompt_of(model: Transformer, tok: ModelTokenizer, prefix: str, suffix: str, room: int) -> tuple[list[int], str]:
    """(prompt ids, healed text) in `room` tokens after the head: the healed prefix cut from the
    left, or, for a model trained to fill in the middle, its FIM prompt of the prefix and suffix."""
    if model.cfg.fim_sentinels:
        prefix_ids, suffix_ids, healed = fim_context(tok, prefix, suffix, max(1, room - N_SENTINELS))
        return list(tok.head_ids) + fim_prompt(Sentinels.of(tok), prefix_ids, suffix_ids), healed
    healed = tok.heal(prefix)
    return list(tok.head_ids) + healed.ids[-room:], healed.text


def start(model: Transformer, tok: ModelTokenizer, prefix: str, mode: str, max_tokens: int,
          deadline: float | None = None, suffix: str = "") -> CausalState:
    """Lay out a request (no forward pass): the prefix cut from the left to fit the context (and
    the suffix, for a model trained to fill in the middle)."""
    room = max(1, model.cfg.max_position_embeddings - max_tokens - len(tok.head_ids))
    prompt, healed_text = prompt_of(model, tok, prefix, suffix, room)
    rules = hole_rules(tok, healed_text, prefix, mode)
    ends = stop_ids(tok)
    banned = [i for i in rules.banned_ids if i not in ends]
    rules = HoleRules(rules.pad_id, rules.newline_id, banned, rules.first_allowed,
                      sorted(set(rules.first_banned) | ends), rules.single_line)
    return CausalState(prompt, rules, ends, max_tokens, deadline, healed_text)


def next_logits(model: Transformer, state: CausalState) -> torch.Tensor:
    """Logits (V,) of the next token: the whole prompt on the first pass, else the last token
    against the cache; the cache grows by what was encoded."""
    device = model.model.embed_tokens.weight.device
    fresh = state.prompt if state.cache is None else state.tokens[-1:]
    ids = torch.tensor([fresh], device=device)  # (1, T)
    logits, kv = model(ids, cache=state.cache)  # (1, T, V); positions follow the cache
    if state.cache is None:
        state.cache = kv
    else:
        state.cache = [(torch.cat([k0, k1], dim=2), torch.cat([v0, v1], dim=2))
                       for (k0, v0), (k1, v1) in zip(state.cache, kv)]  # (1, nkv, S+1, hd)
    return logits[0, -1].float()


def choose(logits: torch.Tensor, state: CausalState) -> tuple[int, float]:
    """The likeliest allowed token and its probability."""
    armed = ARMED if not state.tokens else ~ARMED
    restricted = restrict(logits[None].clone(), armed, state.rules)[0]
    probs = torch.softmax(restricted, dim=-1)
    best = int(torch.argmax(probs))
    return best, float(probs[best])


def ends_answer(state: CausalState, token: int, tok: ModelTokenizer) -> bool:
    """Whether `token`, just written, ends the answer (single line: a newline; multi-line: a
    blank line)."""
    if state.rules.single_line:
        return "\n" in tok.token_texts[token]
    return BLANK_LINE.search(tok.decode(state.tokens[-BLANK_LINE_TOKENS:])) is not None


@torch.inference_mode()
def step(model: Transformer, tok: ModelTokenizer, state: CausalState) -> int:
    """Write one token (one forward pass); returns the passes run (0 for a state that was done
    or whose deadline had passed)."""
    if state.done:
        return 0
    if state.deadline is not None and state.passes > 0 and time.monotonic() >= state.deadline:
        state.done, state.stop_reason = True, "deadline"
        return 0
    token, confidence = choose(next_logits(model, state), state)
    state.passes += 1
    if token in state.stop_ids:
        state.done = True
        return 1
    state.tokens.append(token)
    state.confidences.append(confidence)
    state.done = len(state.tokens) >= state.max_tokens or ends_answer(state, token, tok)
    return 1


def fill_rest(state: CausalState) -> None:
    """Stop where it is: past its deadline, what is written is the answer."""
    if not state.done:
        state.done, state.stop_reason = True, "deadline"


def answer(tok: ModelTokenizer, state: CausalState) -> str:
    """The answer's text: written tokens, healed text dropped, cut after a newline in single-line mode."""
    return hole_text(tok, state.tokens, state.healed, state.rules.single_line)


def confidence(state: CausalState) -> float:
    """Mean top-1 probability of the written tokens (0 for none)."""
    return sum(state.confidences) / len(state.confidences) if state.confidences else 0.0
