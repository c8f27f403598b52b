"""A string made raw for an invalid escape goes to the file's other strings that hold one
(`completion.edit_escapes`, pycodestyle's W605), one made raw as a regex a call takes to the strings
the same callee takes there (RUF043); a Sphinx role put for another is whole as typed; and the bad
inputs: a string made raw that escapes nothing wrong, 5,000 strings in one file."""
from completion import next_edit
from completion.edit_escapes import made_raw, raw_sites, regex_sites
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

API = '''def get(url, **kwargs):
    """Sends a GET request.

    :param \\*\\*kwargs: Optional arguments.
    """
    return request("get", url, **kwargs)


def head(url, **kwargs):
    """Sends a HEAD request.

    :param \\*\\*kwargs: Optional arguments.
    """
    return request("head", url, pattern=b"\\d+", name="\\\\d", line="a\\n")


def post(url, data=None):
    """Sends a POST request."""
    return request("post", url, data=data)
'''


def test_a_docstring_made_raw_for_an_invalid_escape_goes_to_the_others_that_hold_one():
    raw = API.replace('    """Sends a GET', '    r"""Sends a GET')
    assert proposed(API, raw, 1) == raw.replace('    """Sends a HEAD', '    r"""Sends a HEAD')
    # the POST docstring escapes nothing; `b"\d+"` has a prefix; `"\\d"` and `"a\n"` escape right


def test_a_string_made_raw_that_escapes_nothing_wrong_is_no_such_fix():
    assert made_raw("", "r", "    ", '"""Sends') and not made_raw("", "r", "    b", '"x"')
    assert not made_raw("", "f", "    ", '"x"') and not made_raw("", "r", "    ", "x")
    raw = API.replace('    """Sends a POST', '    r"""Sends a POST')
    after = ParsedDocument.parse("python", raw)
    assert raw_sites(17, 4, event(API, raw), after) is None  # the others' rules decide, not this one
    script = 'const a = "\\d";\nconst b = "\\d";\n'  # another language's strings: no W605 there
    assert raw_sites(0, 10, event(script, script), ParsedDocument.parse("javascript", script)) is None


def test_five_thousand_strings_with_invalid_escapes_give_the_nearest_sites():
    many = "".join(f'x{n} = "\\\\d{n}\\d"\n' for n in range(5000))
    raw = many.replace('x0 = "', 'x0 = r"', 1)
    sites = raw_sites(0, 5, event(many, raw), ParsedDocument.parse("python", raw))
    assert sites is not None and [site.line for site in sites] == list(range(1, MAX_SITES + 1))


TESTS = '''import re

import pytest


def test_limits(lock):
    with pytest.raises(ValueError, match="^total must be >= 1$"):
        lock.total = 0
    with pytest.raises(
        ValueError,
        match="^initial value must be >= 0$",
    ):
        lock.initial = -1
    with pytest.raises(ValueError, match="released too many times"):
        lock.release()
    with pytest.raises(ValueError, match="^line one\\nline two$"):
        lock.split()
    with pytest.warns(RuntimeWarning, match="^ignored.*$"):
        lock.warn()
    assert re.match("^lock [0-9]+$", lock.name)
    assert re.match("^kind [a-z]+$", lock.kind)
'''


def test_a_regex_made_raw_goes_to_the_strings_the_same_callee_takes_there():
    raw = TESTS.replace('match="^total', 'match=r"^total')
    expected = raw.replace('match="^initial', 'match=r"^initial')
    assert proposed(TESTS, raw, 6) == expected  # no marks, a backslash, another callee, another slot: stay
    plain = TESTS.replace('match="released', 'match=r"released')
    assert proposed(TESTS, plain, 12) == plain.replace('match="^total', 'match=r"^total').replace(
        'match="^initial', 'match=r"^initial')  # a regex with no marks made raw: all the callee's there
    matched = TESTS.replace('re.match("^lock', 're.match(r"^lock')
    assert proposed(TESTS, matched, 19) == matched.replace('re.match("^kind', 're.match(r"^kind')  # first argument
    loose = TESTS.replace('    assert re.match', '    assert r"x" == re.match', 1).replace('r"x"', '"x"')
    made = loose.replace('assert "x"', 'assert r"x"')
    assert regex_sites(19, 11, event(loose, made), ParsedDocument.parse("python", made)) is None  # no call's


def test_a_sphinx_role_put_for_another_is_whole_as_typed():
    module = '''class Request:
    @property
    def json(self):
        """The parsed JSON data if :attr:`mimetype` indicates JSON
        (:mimetype:`application/json`, see :meth:`is_json`), an attribute.
        """

    def get_json(self):
        """If the mimetype does not indicate JSON
        (:mimetype:`application/json`, see :meth:`is_json`), this returns None.
        """
'''
    fixed = module.replace(":meth:`is_json`), an", ":attr:`is_json`), an")
    assert proposed(module, fixed, 4) == fixed.replace(":meth:`is_json`), this", ":attr:`is_json`), this")


def test_a_prefix_put_before_a_string_is_no_name_being_typed():
    raw = API.replace('    """Sends a GET', '    r"""Sends a GET')
    assert next_edit.gate(ParsedDocument.parse("python", raw), event(API, raw)) is None
    typing = API.replace("    return request(\"get\"", "    retur = rq\n    return request(\"get\"")
    assert next_edit.gate(ParsedDocument.parse("python", typing), event(API, typing)) == "a name is still being typed"
