"""FIM rearrangements of the autoregressive twin's windows, and the prompt that matches them."""
import numpy as np

from infill.fim_ar import N_SENTINELS, Sentinels, fim_batch, fim_prompt, fim_window, rearrange
from infill.tokenizer import AFTER, BEFORE, EDIT, END, SPECIAL_TOKENS

ST = Sentinels(prefix=6, suffix=7, middle=5, end=2)
CORE = np.arange(10, 20)  # prefix 10 11 12, middle 13 14 15 16, suffix 17 18 19


def test_psm_and_spm_layouts():
    assert rearrange(CORE, (3, 7), ST, spm=False).tolist() == [6, 10, 11, 12, 7, 17, 18, 19, 5, 13, 14, 15, 16, 2]
    assert rearrange(CORE, (3, 7), ST, spm=True).tolist() == [6, 7, 17, 18, 19, 5, 10, 11, 12, 13, 14, 15, 16, 2]


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
    assert fim_window(window, ST, rng, rate=0.0).tolist() == window.tolist()


def test_rate_and_spm_share_over_a_batch():
    rng = np.random.default_rng(1)
    windows = np.tile(np.arange(100, 164), (400, 1))
    moved = fim_batch(windows, ST, rng, rate=0.5, spm_share=0.25)
    rearranged = moved[:, 0] == ST.prefix
    spm = rearranged & (moved[:, 1] == ST.suffix)
    assert moved.shape == windows.shape
    assert 0.4 < rearranged.mean() < 0.6 and 0.15 < spm.sum() / rearranged.sum() < 0.35


def test_sentinels_are_the_bundled_tokenizers_specials(tiny_tokenizer):
    st = Sentinels.of(tiny_tokenizer)
    assert [st.prefix, st.suffix, st.middle, st.end] == [SPECIAL_TOKENS.index(t) for t in (BEFORE, AFTER, EDIT, END)]
