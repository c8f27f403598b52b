"""A number of a Python version tuple bumped goes to the old version's dotted spelling in the file's
strings and comments (`completion.edit_versions`); and the bad inputs: a trove classifier's line, a
longer version, a float in code, a tuple that is no version's, 5,000 mentions in one file."""
from completion.edit_sites import MAX_SITES
from completion.edit_versions import version_bumped, version_sites
from edit_samples import event, proposed

SETUP = '''import sys

if sys.version_info < (3, 9):
    raise RuntimeError("app 4.x requires Python 3.9+")  # 3.9.1 fixed it

RATIO = 3.9
setup(
    python_requires=">=3.9",
    classifiers=[
        "Programming Language :: Python :: 3.9",
        "Programming Language :: Python :: 3.10",
    ],
)
'''


def test_a_version_tuple_bumped_goes_to_its_dotted_spelling_in_prose_only():
    bumped = SETUP.replace("< (3, 9)", "< (3, 10)")
    expected = bumped.replace("Python 3.9+", "Python 3.10+").replace(">=3.9", ">=3.10")
    assert proposed(SETUP, bumped, 2) == expected  # not 3.9.1, the float, nor the classifier


def test_a_tuple_s_trailing_zero_is_spelled_either_way_in_prose():
    source = ('PYTHON_VERSION = tuple(sys.version_info[:3])\nSUPPORTED = PYTHON_VERSION >= (3, 8, 0)\n'
              'raise ImportError("Falcon requires Python 3.8+ (3.8.0 at least); 3.8.1 fixed it")\n')
    bumped = source.replace("(3, 8, 0)", "(3, 9, 0)")
    assert proposed(source, bumped, 1) == bumped.replace("Python 3.8+ (3.8.0", "Python 3.9+ (3.9.0")


def test_only_a_number_of_a_tuple_a_version_is_compared_with_is_a_version():
    assert version_bumped("12", "13", "if sys.version_info >= (3, ", ", 7):") == ("3.12.7", "3.13.7")
    assert version_bumped("8", "9", "REQUIRED_PYTHON = (3, ", ")") == ("3.8", "3.9")
    assert version_bumped("3", "4", "if sys.version_info[:2] < (", ", 9):") == ("3.9", "4.9")
    assert version_bumped("8", "9", "size = (3, ", ")") is None  # no version's
    assert version_bumped("8", "9", "conversion = (3, ", ")") is None  # a word that ends in one
    assert version_bumped("8", "9", "if sys.version_info < (", "):") is None  # no tuple of two
    assert version_bumped("8", "x", "REQUIRED_PYTHON = (3, ", ")") is None


def test_five_thousand_mentions_give_the_nearest_sites():
    many = "VERSION = (3, 9)\n" + "".join(f'# Python 3.9 note {n}\n' for n in range(5000))
    bumped = many.replace("(3, 9)", "(3, 10)", 1)
    sites = version_sites("3.9", "3.10", 0, event(many, bumped), lambda offset: True)
    assert [site.line for site in sites] == list(range(1, MAX_SITES + 1))
    assert version_sites("3.9", "3.10", 0, event(many, bumped), None) == []  # no tree: no prose known


GEN = '''def task(func):
    """Adapts a callback-based function into a Task.

    .. versionchanged:: 3.3
       ``gen.Task`` is now a function that returns a `.Future`.
    """


def with_timeout(timeout, future):
    """Wraps a `.Future` in a timeout.

    .. versionadded:: 3.3
    """


def moment():
    """A special object which may be yielded to allow the IOLoop to run for one iteration.

    .. versionadded:: 3.2

    .. deprecated:: 3.3
       Use ``sleep(0)`` instead.
    """
'''


def test_the_release_being_written_renamed_in_one_directive_goes_to_the_file_s_other_directives_of_it():
    renamed = GEN.replace("versionchanged:: 3.3", "versionchanged:: 4.0")
    expected = renamed.replace(":: 3.3", ":: 4.0")
    assert proposed(GEN, renamed, 3) == expected  # 3.2 stays
    older = GEN.replace("versionadded:: 3.2", "versionadded:: 3.1")
    assert proposed(GEN, older, 19) == older  # an older release mended is that entry's own
    stated = GEN.replace("versionadded:: 3.2", "versionadded:: 4.0")
    renamed = stated.replace("versionchanged:: 3.3", "versionchanged:: 4.0")
    assert proposed(stated, renamed, 3) == renamed  # 4.0 stated already: the user dated one entry anew
