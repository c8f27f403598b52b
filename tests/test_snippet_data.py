"""Snippet context for training: the server's definitions and ranking mirrored without tree-sitter,
built from training files only, and laid into training rows."""
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from completion import context
from completion.definitions import Definition as ServerDefinition, definitions, imports
from completion.syntax import encode, new_parser
from infill.noising import Special
from infill.snippet_data import (SnippetWindows, build, names_near, noised_row, package_of, python_definitions,
                                 python_imports, ranked_snippets)
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


def server_view(text: str):
    tree = new_parser("python").parse(encode(text))
    return [(d.name, d.text, d.line) for d in definitions(tree, text, "file:///m.py")], imports(tree, text)


def test_definitions_and_imports_match_the_servers_on_tricky_code():
    server, server_imports = server_view(TRICKY)
    assert [(d.name, d.text, d.line) for d in python_definitions(TRICKY)] == server
    assert python_imports(TRICKY) == server_imports
    assert len(server) == 8


def test_definitions_match_the_servers_on_standard_library_modules():
    root = Path(sysconfig.get_paths()["stdlib"])
    for name in ("argparse.py", "dataclasses.py", "functools.py", "json/decoder.py", "email/message.py"):
        text = (root / name).read_text()
        server, server_imports = server_view(text)
        assert [(d.name, d.text, d.line) for d in python_definitions(text)] == server, name
        assert python_imports(text) == server_imports, name


def test_unparsable_files_define_nothing():
    assert python_definitions("def broken(:\n") == [] and python_imports("import (\n") == ""


def test_names_and_ranking_are_the_servers():
    prefix, suffix = TRICKY[:400], TRICKY[400:]
    assert names_near(prefix, suffix) == context.names_near(prefix, suffix)
    mine = python_definitions(TRICKY)
    index = {}
    for where in ("pkg/a.py", "pkg/b.py"):
        for d in mine:
            index.setdefault(d.name, []).append((where, d))
    names = ["size", "helper", "open", "Box", "missing", "fetch"]
    visible = range(5, 12)

    def lookup(name):
        return [ServerDefinition(d.name, d.text, where, d.line) for where, d in index.get(name, [])]

    ranked = context.rank_definitions(names, lookup, "pkg/a.py", (), visible)
    candidates = context.snippet_candidates(ranked, "import os", "pkg/a.py")
    server = [s.text for s in context.fit_snippets(candidates, 384)]
    assert ranked_snippets(names, index, "pkg/a.py", visible, "import os") == server
    assert server[-1] == "import os"  # the most important sits next to the prefix


def test_packages():
    assert package_of("requests/requests/models.py") == "requests/requests"
    assert package_of("stdlib/email/mime/text.py") == "stdlib/email"
    assert package_of("six/six.py") == "six" and package_of("stdlib/os.py") == "stdlib"


@pytest.fixture
def corpus(tmp_path, tiny_tokenizer) -> Path:
    return write_corpus(tmp_path / "corpus", tiny_tokenizer)


def test_build_takes_definitions_from_training_files_of_the_package(corpus, tiny_tokenizer):
    arrays, report = build(corpus, corpus / "wheels", seq_len=1024, seed=0)
    assert report["files"] == report["of_files"] == 12 and report["packages"] == 1 and report["windows"] == len(arrays["starts"]) > 0
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
