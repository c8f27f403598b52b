"""A function's docstring summary put in the imperative (pydocstyle's D401) goes to the file's other
functions' summaries, each with its own verb (`completion.edit_moods`); and the bad inputs: a class's
docstring, a plural noun, a word with no ending, a word mid-sentence, 5,000 docstrings in one file."""
from completion.edit_moods import imperative, mood_fixed, mood_sites
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

MODULE = '''"""Helpers for the headers."""


class Header:
    """Represents a parsed header."""

    def value(self):
        """Returns the header's value."""
        return self._value


def etag(value):
    """Formats an ETag header."""
    return f'"{value}"'


def accepts(media_type):
    """Determines whether the client accepts it.

    Returns the answer as a bool.
    """
    return True


def tests():
    """Tests for the parser."""


def parse(text):
    """Process the text."""
'''


def test_a_summary_put_in_the_imperative_goes_to_the_other_functions_summaries():
    edited = MODULE.replace('"""Returns the header', '"""Return the header')
    expected = edited.replace('"""Formats an', '"""Format an').replace('"""Determines whether', '"""Determine whether')
    assert proposed(MODULE, edited, 7) == expected  # not the class's, the plural, nor `Returns` mid-docstring


def test_only_the_third_person_s_ending_off_a_word_of_english_is_the_imperative():
    assert [imperative(word) for word in ("Returns", "Matches", "Applies", "Does", "Formats")] == \
        ["Return", "Match", "Apply", "Do", "Format"]
    assert [imperative(word) for word in ("Process", "Access", "Is", "Xyzzys")] == [None, None, None, None]
    assert mood_fixed("Returns", "Return", '        """')
    assert mood_fixed("Returns", "Return", "    r'''")
    assert not mood_fixed("Returns", "Return", "    The value. ")  # mid-docstring: no summary's first word
    assert not mood_fixed("Returns", "Returned", '    """')  # another tense
    assert not mood_fixed("Tests", "Test", '    x = """')  # a string assigned, no docstring's line


def test_five_thousand_docstrings_give_the_nearest_sites():
    many = "".join(f'def f{n}():\n    """Returns the value {n}."""\n\n\n' for n in range(5000))
    edited = many.replace('"""Returns the value 0.', '"""Return the value 0.', 1)
    sites = mood_sites(1, event(many, edited), ParsedDocument.parse("python", edited))
    assert [site.line for site in sites] == [5 + 4 * n for n in range(MAX_SITES)]
    assert {site.new for site in sites} == {"Return"}
