"""The tokenizer keeps cursor positions on token boundaries, or heals them."""
from tests.conftest import SAMPLE_CODE


def pieces(tok, text):
    return [tok.token_texts[i] for i in tok.encode(text)]


def test_round_trip(tiny_tokenizer):
    assert tiny_tokenizer.decode(tiny_tokenizer.encode(SAMPLE_CODE)) == SAMPLE_CODE


def test_special_tokens_come_first(tiny_tokenizer):
    tok = tiny_tokenizer
    assert (tok.mask_id, tok.pad_id, tok.end_id, tok.file_id) == (0, 1, 2, 3)


def test_newline_and_indentation_are_their_own_tokens(tiny_tokenizer):
    toks = pieces(tiny_tokenizer, "    if x:\n        return self.value\n")
    assert "\n" in toks and toks.count("\n") == 2
    assert toks[0].isspace() and toks[0] == "    "  # indentation never merges with the word after it
    assert "        " in toks and all(t == "\n" or "\n" not in t for t in toks)


def test_indentation_run_is_compact(tiny_tokenizer):
    assert len(tiny_tokenizer.encode("        ")) == 1


def test_no_healing_at_line_start_or_after_indentation(tiny_tokenizer):
    for prefix in ("def f():\n", "def f():\n    "):
        healed = tiny_tokenizer.heal(prefix)
        assert healed.text == "" and healed.ids == tiny_tokenizer.encode(prefix)


def test_mid_identifier_reopens_the_word(tiny_tokenizer):
    healed = tiny_tokenizer.heal("        return self.val")
    assert healed.text == "val"
    assert tiny_tokenizer.decode(healed.ids) == "        return self."
    allowed = tiny_tokenizer.tokens_starting_with(healed.text)
    assert allowed and all(tiny_tokenizer.token_texts[i].startswith("val") for i in allowed)


def test_trailing_space_is_healed(tiny_tokenizer):
    healed = tiny_tokenizer.heal("    x =")
    assert healed.text == " ="
    assert tiny_tokenizer.heal("x = ").text == " "


def test_unknown_word_falls_back_to_last_token(tiny_tokenizer):
    healed = tiny_tokenizer.heal("x = qzqzqzqz")
    assert healed.text and "qzqzqzqz".endswith(healed.text)
    assert tiny_tokenizer.decode(healed.ids) + healed.text == "x = qzqzqzqz"


def test_empty_prefix(tiny_tokenizer):
    assert tiny_tokenizer.heal("").ids == []


def test_tokens_starting_with_matches_a_scan_of_the_vocabulary(tiny_tokenizer):
    texts = tiny_tokenizer.token_texts
    for prefix in ["se", " s", "\n", "    ", "re", "", "zzq", "("]:
        scan = [i for i, t in enumerate(texts) if t and t.startswith(prefix)]
        assert tiny_tokenizer.tokens_starting_with(prefix) == scan


class CountingTokenizer:
    """A `tokenizers.Tokenizer` stand-in that counts the characters it is given to encode."""

    def __init__(self, tok):
        self.tok, self.chars = tok, 0

    def encode(self, text, **kwargs):
        self.chars += len(text)
        return self.tok.encode(text, **kwargs)

    def __getattr__(self, name):
        return getattr(self.tok, name)


def test_line_by_line_ids_are_the_whole_text_s(tiny_tokenizer):
    texts = [SAMPLE_CODE, "\n\nx = 1\r\n\n  y\t= 'é'\n", "no newline", "", "\n", "a\n\n\nb <|mask|>\n  "]
    for text in texts:
        assert tiny_tokenizer.encode(text) == tiny_tokenizer.tok.encode(text, add_special_tokens=False).ids


def test_a_keystroke_tokenizes_the_line_it_changed(tiny_tokenizer, monkeypatch):
    counting = CountingTokenizer(tiny_tokenizer.tok)
    monkeypatch.setattr(tiny_tokenizer, "tok", counting)
    monkeypatch.setattr(tiny_tokenizer, "_line_ids", {})
    text = SAMPLE_CODE * 3 + "    return sel"
    tiny_tokenizer.encode(text)
    whole = counting.chars
    ids = tiny_tokenizer.encode(text + "f")
    assert counting.chars - whole == len("    return self")  # the one line typed on
    assert ids == counting.tok.encode(text + "f", add_special_tokens=False).ids


def test_healing_reads_the_last_line_alone(tiny_tokenizer):
    for prefix in ("x = 1\n    return self.val", "a\n", "a\n    ", "a\nb =", "one line"):
        healed = tiny_tokenizer.heal(prefix)
        assert tiny_tokenizer.decode(healed.ids) + healed.text == prefix
        assert healed.ids == tiny_tokenizer.tok.encode(prefix[:len(prefix) - len(healed.text)],
                                                        add_special_tokens=False).ids
