"""The English words that tell a word put for another in prose from a misspelling mended
(`completion.english`), and their writer (`training.english_words`) on a small standard library."""
import pytest

from completion import english as english_module
from completion.english import english
from training.english_words import main, prose_of, word_counts


def test_words_of_english_in_any_case_and_no_misspelling():
    assert english("later") and english("Latter") and english("decoder") and english("encoder")
    assert not english("perfomed") and not english("appying") and not english("")


def test_without_the_list_no_word_is_english(tmp_path, monkeypatch):
    monkeypatch.setattr(english_module, "WORDS_PATH", tmp_path / "missing.txt")
    english_module._words.cache_clear()
    try:
        assert not english("later")  # every word spelled alike is then a typo, as before the list
    finally:
        monkeypatch.undo()
        english_module._words.cache_clear()
    assert english("later")


def test_the_words_come_from_comments_and_strings_only():
    source = b'# Read the value later.\nvalue_later = "a later value"  # later\nlater.attr = 1\n'
    assert list(prose_of(source)) == ["# Read the value later.", '"a later value"', "# later"]
    assert list(prose_of(b'x = "unclosed\n')) == []  # a file that does not tokenize gives nothing


def test_the_list_keeps_words_seen_often_and_leaves_tests_out(tmp_path):
    stdlib = tmp_path / "lib"
    (stdlib / "test").mkdir(parents=True)
    (stdlib / "mod.py").write_text('"""A word, a word and a wrod."""\n# word.attr is no word here\n')
    (stdlib / "test" / "t.py").write_text('"""wrod wrod wrod"""\n')
    counts = word_counts(stdlib)
    assert counts["word"] == 3 and counts["wrod"] == 1 and "attr" not in counts
    out = tmp_path / "words.txt"
    assert main(["--out", str(out), "--stdlib", str(stdlib), "--min-count", "2"]) == 0
    assert out.read_text() == "word\n"


def test_the_writer_overwrites_only_a_word_list(tmp_path, capsys):
    stdlib = tmp_path / "lib"
    stdlib.mkdir()
    (stdlib / "mod.py").write_text('"""word word"""\n')
    notes = tmp_path / "notes.txt"
    notes.write_text("Keep me.\n")
    with pytest.raises(SystemExit) as stopped:
        main(["--out", str(notes), "--stdlib", str(stdlib), "--min-count", "2"])
    assert stopped.value.code == 2
    assert notes.read_text() == "Keep me.\n" and "refusing" in capsys.readouterr().err
    words = tmp_path / "words.txt"
    words.write_text("old\nlist\n")
    assert main(["--out", str(words), "--stdlib", str(stdlib), "--min-count", "2"]) == 0
    assert words.read_text() == "word\n"
