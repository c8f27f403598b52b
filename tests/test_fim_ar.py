"""FIM rearrangements of the autoregressive twin's windows, the prompt that matches them, and the
twin asked with it (`infill.causal`)."""
import numpy as np
import torch

from infill import causal, fim_ar
from infill.fim_ar import (MAX_LINES, N_SENTINELS, Sentinels, fim_batch, fim_context, fim_prompt, fim_window,
                           pick_cut, rearrange)
from infill.model import ModelConfig, Transformer
from infill.tokenizer import AFTER, BEFORE, EDIT, END, FILE, SPECIAL_TOKENS

ST = Sentinels(prefix=6, suffix=7, middle=5, end=2, head=3, newline=9)
CORE = np.arange(10, 20)  # prefix 10 11 12, middle 13 14 15 16, suffix 17 18 19


def test_psm_and_spm_layouts():
    assert rearrange(CORE, (3, 7), ST, spm=False).tolist() == [6, 10, 11, 12, 7, 17, 18, 19, 5, 13, 14, 15, 16, 2]
    assert rearrange(CORE, (3, 7), ST, spm=True).tolist() == [6, 7, 17, 18, 19, 5, 10, 11, 12, 13, 14, 15, 16, 2]


def test_middles_are_whole_lines_or_two_uniform_points(monkeypatch):
    rng = np.random.default_rng(0)
    core = np.array(([20, 21, 22, 9] * 12)[:-1])  # twelve lines of three tokens (the last without its newline)
    cuts = [pick_cut(core, 9, rng) for _ in range(2000)]
    on_lines = [(a, b) for a, b in cuts if a % 4 == 0 and b % 4 == 0 and 0 < a < b]
    assert all(0 <= a <= b <= len(core) for a, b in cuts) and 0.45 < len(on_lines) / len(cuts) < 0.6
    monkeypatch.setattr(fim_ar, "LINE_SHARE", 1.0)
    lines = [(b - a) // 4 for a, b in (pick_cut(core, 9, rng) for _ in range(1000))]
    assert min(lines) == 1 and max(lines) <= MAX_LINES and 0.45 < lines.count(1) / len(lines) < 0.65
    assert pick_cut(np.arange(20, 40), 9, rng)  # no lines: two uniform points


def test_the_prompt_is_the_rearrangement_up_to_its_middle():
    for spm in (False, True):
        laid = rearrange(CORE, (3, 7), ST, spm).tolist()
        prompt = fim_prompt(ST, CORE[:3].tolist(), CORE[7:].tolist(), spm)
        assert laid == prompt + CORE[3:7].tolist() + [ST.end]


def test_windows_keep_their_length_head_and_text():
    rng = np.random.default_rng(0)
    window = np.arange(100, 140)
    for _ in range(50):
        moved = fim_window(window, ST, rng, rate=1.0, keep=5)
        assert len(moved) == len(window) and moved[:5].tolist() == window[:5].tolist()
        assert sorted(moved[5:].tolist()) == sorted(window[5:-N_SENTINELS].tolist() + [2, 5, 6, 7])
        headless = fim_window(window, ST, rng, rate=1.0)
        assert len(headless) == len(window) and headless[:2].tolist() == [ST.head, ST.prefix]
        assert sorted(headless[1:].tolist()) == sorted(window[:-N_SENTINELS - 1].tolist() + [2, 5, 6, 7])
    assert fim_window(window, ST, rng, rate=0.0).tolist() == window.tolist()


def test_rate_and_spm_share_over_a_batch():
    rng = np.random.default_rng(1)
    windows = np.tile(np.arange(100, 164), (400, 1))
    moved = fim_batch(windows, ST, rng, rate=0.5, spm_share=0.25)
    rearranged = moved[:, 1] == ST.prefix  # after the head
    spm = rearranged & (moved[:, 2] == ST.suffix)
    assert moved.shape == windows.shape
    assert 0.4 < rearranged.mean() < 0.6 and 0.15 < spm.sum() / rearranged.sum() < 0.35


def test_sentinels_are_the_bundled_tokenizers_specials(tiny_tokenizer):
    st = Sentinels.of(tiny_tokenizer)
    assert [st.prefix, st.suffix, st.middle, st.end, st.head] == [SPECIAL_TOKENS.index(t)
                                                                  for t in (BEFORE, AFTER, EDIT, END, FILE)]
    assert st.newline == tiny_tokenizer.newline_id


def causal_model(tok, fim: bool) -> Transformer:
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=tok.vocab_size, hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2,
                      head_dim=8, intermediate_size=64, max_position_embeddings=128, causal=True, fim_sentinels=fim)
    return Transformer(cfg).eval()


def test_a_fim_trained_twin_is_asked_with_prefix_and_suffix(tiny_tokenizer):
    tok = tiny_tokenizer
    prefix, suffix = "def add(a, b):\n    ret", "\n\nprint(add(1, 2))\n"
    state = causal.start(causal_model(tok, fim=True), tok, prefix, "single_line", 12, suffix=suffix)
    prefix_ids, suffix_ids, healed = fim_context(tok, prefix, suffix, 128 - 12 - 1 - N_SENTINELS)
    assert healed == state.healed == "ret" and tok.decode(prefix_ids) == "def add(a, b):\n    "
    assert state.prompt == list(tok.head_ids) + fim_prompt(Sentinels.of(tok), prefix_ids, suffix_ids)
    assert Sentinels.of(tok).end in state.stop_ids
    plain = causal.start(causal_model(tok, fim=False), tok, prefix, "single_line", 12, suffix=suffix)
    assert plain.prompt == list(tok.head_ids) + tok.heal(prefix).ids  # a twin without FIM: the prefix alone
    model = causal_model(tok, fim=True)
    while not state.done:
        causal.step(model, tok, state)
    text = causal.answer(tok, state)
    assert "\n" not in text.rstrip("\n") and not any(t in text for t in ("<|", "|>"))


def test_context_keeps_the_prefix_end_and_the_suffix_start(tiny_tokenizer):
    prefix, suffix = "x = 1\n" * 50, "y = 2\n" * 50
    prefix_ids, suffix_ids, healed = fim_context(tiny_tokenizer, prefix, suffix, 40)
    assert len(prefix_ids) + len(suffix_ids) == 40 and len(suffix_ids) == 10 and healed == ""
    assert prefix.endswith(tiny_tokenizer.decode(prefix_ids)) and suffix.startswith(tiny_tokenizer.decode(suffix_ids))
