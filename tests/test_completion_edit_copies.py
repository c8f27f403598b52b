"""Edits carried to the exact copies of the edited line (`completion.edit_blocks.line_copy`,
`block_sites`), on shapes taken from real commits: a local renamed on one of three copied lines,
`elif` made `if` on two copied branches, a builtin exception swapped in a copied `with`, a version
number in copied docstrings; and what must not go: a short line repeated by chance, a word put for
another in a copied docstring (one copy's mistake mended: the word rule decides), a half-typed
word, 5,000 copies (bounded). A `# noqa` with its codes goes to a short line's copies too."""
from completion.edit_analogy import analogy_sites, line_copies
from completion.edit_blocks import MIN_COPY_CHARS, line_copy
from completion.edit_rewrites import rewrite_of
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

NOTES = '''def first(msg):
    try:
        run()
    except ValueError as exc:
        exc.__notes__ = [*getattr(e, "__notes__", []), msg]
        raise


def second(msg):
    try:
        run()
    except KeyError as exc:
        exc.__notes__ = [*getattr(e, "__notes__", []), msg]
        raise
'''


def sites_of(before, after):
    return analogy_sites(event(before, after), document=ParsedDocument.parse("python", after))


def carried_everywhere(text, old, new, cursor_line):
    """True when the rules, after the first `old` of `text` was made `new`, make every other one `new`."""
    return proposed(text, text.replace(old, new, 1), cursor_line) == text.replace(old, new)


def test_a_local_renamed_on_a_copied_line_goes_to_its_copies_whatever_their_scope():
    assert carried_everywhere(NOTES, "getattr(e,", "getattr(exc,", 4)


def test_a_keyword_and_a_builtin_changed_on_copied_lines_go_to_the_copies():
    branches = ("def write(self, data):\n    if self.closed:\n        return\n    elif self._file is stderr:\n"
                "        flush()\n\n\ndef close(self):\n    if self.closed:\n        return\n"
                "    elif self._file is stderr:\n        flush()\n")
    assert carried_everywhere(branches, "elif", "if", 3)
    raises = ("def test_a():\n    with pytest.raises(Exception):\n        a()\n\n\n"
              "def test_b():\n    with pytest.raises(Exception):\n        b()\n")
    assert carried_everywhere(raises, "Exception", "AssertionError", 1)


def test_a_version_in_copied_docstrings_goes_to_the_copies_but_a_word_put_for_another_does_not():
    docs = ('def a():\n    """A.\n\n    .. versionadded:: 18.3.0\n    """\n\n\n'
            'def b():\n    """B.\n\n    .. versionadded:: 18.3.0\n    """\n')
    assert carried_everywhere(docs, "18.3.0", "19.1.0", 3)
    mended = ('def low(xs):\n    """Get the object with the max value of this attribute."""\n\n\n'
              'def high(xs):\n    """Get the object with the max value of this attribute."""\n')
    swapped = mended.replace("max", "min", 1)
    rewrite = rewrite_of(event(mended, swapped))
    assert line_copies(rewrite, event(mended, swapped), ParsedDocument.parse("python", swapped)) == []


def test_a_short_line_repeated_by_chance_is_no_copy():
    short = "def a(x):\n    if x is None:\n        return 1\n\n\ndef b(x):\n    if x is None:\n        return 2\n"
    assert len("if x is None:") < MIN_COPY_CHARS
    widened = short.replace("if x is None:", "if x is None and ready:", 1)
    assert sites_of(short, widened) == []


def test_a_noqa_with_its_codes_goes_to_the_copies_of_a_short_line_but_a_pragma_does_not():
    raising = ("def test_a():\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        log()\n    else:\n"
               "        pass\n\n\ndef test_b():\n    try:\n        1 / 0\n    except ZeroDivisionError:\n"
               "        log()\n    else:\n        pass\n")
    assert len("1 / 0") < MIN_COPY_CHARS
    assert carried_everywhere(raising, "1 / 0\n", "1 / 0  # noqa: B018\n", 2)  # loguru's tests
    covered = raising.replace("    else:\n", "    else:  # pragma: no cover\n", 1)
    assert sites_of(raising, covered) == []


def test_a_half_typed_word_on_a_copied_line_goes_nowhere():
    before = NOTES + "\n\ndef third(exception):\n    return exception\n"
    half = before.replace("getattr(e,", "getattr(excep,", 1)
    assert sites_of(before, half) == []


def test_five_thousand_copies_give_a_bounded_answer():
    line = "    total = total + compute(item, weight)\n"
    text = "def f(item, weight, total):\n" + line * 5000
    after = text.replace("weight)", "weight, 2)", 1)
    found = sites_of(text, after)
    assert 0 < len(found) <= MAX_SITES
    edited_line = "    total = total + compute(item, weight, 2)"
    assert all(after[site.start:site.end] == line.rstrip("\n") and site.new == edited_line
               for site in found)  # each copy's line made the edited one
    assert line_copy("    x = 1", "    y = 1") is None  # too short to be a copy

