"""Snippet context for training: the server's definitions and ranking, built from training files
only, and laid into training rows."""
from pathlib import Path

import numpy as np
import pytest

from completion import context
from completion.fim import context_for, hole_in_text
from completion.settings import Settings
from completion.sources import TextSources
from training.noising import Special
from training.snippet_data import TrainFile, build, package_index, package_of, ranked_snippets
from training.snippet_windows import SnippetWindows, noised_row
from tests.package_corpus import write_corpus

TRICKY = '''"""Module docstring."""
import os
from typing import (Any,
                    List)


# A helper with a comment above.
def helper(a, b=1):  # trailing
    return a + b


@decorator
def decorated():
    """Docstring after a decorator."""


class Box:
    # first in the block: this comment goes to the class
    def open(self):
        x = 1  # after a simple statement
        def inner(): return x
        return inner

    @property
    def size(self) -> int:
        # a comment in the body
        return 3

    async def fetch(self, url: str,
                    timeout: float = 1.0) -> bytes:
        f"""An f-string docstring {url}."""


if os.name == "nt":
    # first in an if block
    def windows_only():
        pass
'''


USER = '''import os
from pkg.tricky import Box, helper


def local_total(boxes):
    """The sum of the boxes' sizes."""
    return sum(box.size for box in boxes)


''' + "\n".join(f"total_{i} = helper({i}, Box().size)" for i in range(12)) + "\n"


def test_training_snippets_are_what_the_server_sends():
    """At a cursor, a training window's snippets are those the server sends for the same windows:
    the imports, this file's definitions and the package's, ranked and cut to the same budget."""
    files = [TrainFile(name, text, 0, np.zeros(0, np.uint16))
             for name, text in (("pkg/tricky.py", TRICKY), ("pkg/user.py", USER))]
    index, imports_of = package_index(files)
    suffix = "print(local_total([Box()]), decorated(), windows_only(), Box().open())\n"
    hole = hole_in_text("pkg/user.py", USER, suffix)
    sources = TextSources("pkg/user.py", USER + suffix, index)
    window = context_for(hole, Settings(prefix_tokens=60, suffix_tokens=30), sources)
    assert window.prefix != USER  # cut: the imports and the definitions are out of the window
    visible = context.visible_lines(USER, window.prefix, window.suffix)
    mine = ranked_snippets(context.names_near(window.prefix, window.suffix), index, "pkg/user.py", visible,
                           imports_of["pkg/user.py"])
    assert mine == [snippet.text for snippet in window.snippets]
    assert mine[-1] == "import os\nfrom pkg.tricky import Box, helper"  # the most important, next to the prefix
    assert 'def local_total(boxes):\n    """The sum of the boxes\' sizes."""' in mine
    assert "# A helper with a comment above.\ndef helper(a, b=1):  # trailing" in mine  # from the package
    assert "async def fetch" not in "".join(mine)  # a name not near the cursor


def test_packages():
    assert package_of("requests/requests/models.py") == "requests/requests"
    assert package_of("stdlib/email/mime/text.py") == "stdlib/email"
    assert package_of("six/six.py") == "six" and package_of("stdlib/os.py") == "stdlib"


@pytest.fixture
def corpus(tmp_path, tiny_tokenizer) -> Path:
    return write_corpus(tmp_path / "corpus", tiny_tokenizer)


def test_build_takes_definitions_from_training_files_of_the_package(corpus, tiny_tokenizer):
    arrays, report = build(corpus, corpus / "wheels", seq_len=1024, seed=0)
    assert report["files"] == report["of_files"] == 12 and report["packages"] == 1
    assert report["windows"] == len(arrays["starts"]) > 0
    bounds = list(zip(arrays["offsets"][:-1], arrays["offsets"][1:]))
    assert all(arrays["ids"][a] == tiny_tokenizer.snippet_id and b - a <= 1024 // 4 for a, b in bounds)
    joined = "\n".join(tiny_tokenizer.decode(arrays["ids"][a:b].tolist()) for a, b in bounds)
    assert "# The area of any shape with a radius.\ndef area(shape):" in joined  # found in shapes.py for use.py
    assert 'class Circle:\n    """A circle of a given radius."""' in joined
    assert "secret_helper():" not in joined  # defined only in a held-out file
    assert arrays["starts"].max() < len(np.fromfile(corpus / "train.bin", dtype=np.uint16))


def test_snippets_fit_a_quarter_of_a_short_window(corpus):
    arrays, _ = build(corpus, corpus / "wheels", seq_len=64, seed=0)
    assert len(arrays["starts"]) > 0 and np.diff(arrays["offsets"]).max() <= 64 // 4


def test_rows_put_snippets_before_a_window_and_never_noise_them(corpus, tiny_tokenizer, tmp_path):
    arrays, _ = build(corpus, corpus / "wheels", seq_len=64, seed=0)
    np.savez(tmp_path / "s.npz", **arrays)
    windows = SnippetWindows(tmp_path / "s.npz", tiny_tokenizer.file_id, tiny_tokenizer.snippet_id)
    train = np.fromfile(corpus / "train.bin", dtype=np.uint16)
    sp = Special(tiny_tokenizer.mask_id, tiny_tokenizer.pad_id, tiny_tokenizer.newline_id)
    rng = np.random.default_rng(0)
    for _ in range(30):
        row, keep = windows.row(train, rng, 64)
        assert row.shape == (64,) and row[0] == tiny_tokenizer.file_id and 1 <= keep <= 1 + 16
        assert keep == 1 or row[1] == tiny_tokenizer.snippet_id
        inputs, targets, weights = noised_row(row, keep, sp, rng)
        assert targets[:keep].tolist() == inputs[:keep].tolist() == row[:keep].tolist()
        assert not weights[:keep].any() and weights.any() and (inputs[weights > 0] == sp.mask).all()


def test_a_token_file_cut_short_gives_rows_of_the_records_it_holds_only():
    # records at tokens 0, 100 and 500 of the corpus; the GPU session sent its first 300 tokens
    snippet = [7, 8, 9]
    arrays = {"starts": np.array([0, 100, 500]), "offsets": np.array([0, 3, 6, 9]), "ids": np.array(snippet * 3)}
    windows = SnippetWindows(arrays, file_id=1, snippet_id=7)
    train = np.arange(1000, 1300, dtype=np.uint16)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        row, keep = windows.row(train, rng, 64)
        seen.add(int(row[keep]) - 1000)  # the window's first token says where in the file it starts
    assert seen == {0, 100}  # never 500, which a cut file would have read at its end
    assert windows.records_within(300, 64).tolist() == [0, 1]
    with pytest.raises(ValueError, match="no snippet window"):
        windows.row(train[:50], rng, 64)
