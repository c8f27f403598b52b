"""A linter's fix made at one comparison goes to the file's other comparisons the same check flags
(`completion.edit_lints`): `== None` made `is None` (E711), `!= False` made `is not False` (E712),
`type(a) == T` made `type(a) is T` (E721), `is 128` made `== 128` (F632); not to strings or comments, not
across checks; and the bad inputs: the fix written in a docstring, 5,000 comparisons in one file. Empty
parentheses taken off a raise or a pytest decorator (RSE102, PT001, PT023), a builtin put for an alias of
`typing` (UP006) and `Optional` or `Union` written with `|` (UP007), a generator's default types taken off
(UP043) go to the others of the same check."""
from completion.edit_analogy import prose_at
from completion.edit_lints import comparison_sites, fixed_by, flagged
from completion.edit_sites import MAX_SITES
from completion.syntax import ParsedDocument
from edit_samples import event, proposed

NONES = '''def test_local(transport):
    assert get_local_addr(transport) == None


def test_remote(transport):
    assert get_remote_addr(transport) == None  # was == None before
    assert get_remote_addr(transport) == 0
    assert "== None" in describe(transport)
    assert transport.closed == True
'''


def test_a_comparison_to_none_fixed_once_is_fixed_in_the_file_code_only():
    fixed = NONES.replace("get_local_addr(transport) == None", "get_local_addr(transport) is None")
    expected = fixed.replace("get_remote_addr(transport) == None  #", "get_remote_addr(transport) is None  #")
    assert proposed(NONES, fixed, 1) == expected  # the comment, the string, `== 0` and `== True` stay


def test_each_check_keeps_to_its_own_singletons_and_operator():
    assert flagged("==", "is", "x ", " None") == "E711"
    assert flagged("!=", "is not", "x ", " False") == "E712"
    assert flagged("==", "is", "type(a) ", " int") == "E721"
    assert flagged("==", "is", "x ", " 0") is None and flagged("==", "!=", "x ", " None") is None
    before = "if a != True:\n    pass\nif b != False:\n    pass\nif c == False:\n    pass\nif d != None:\n    pass\n"
    after = before.replace("a != True", "a is not True")
    assert proposed(before, after, 0) == after.replace("b != False", "b is not False")


def test_is_before_a_literal_made_equals_goes_to_the_other_literals_only():
    before = """def serve(rv, name):
    if rv is 128:  # import error
        return
    if rv is 3 or name is not 'main':
        return
    if rv is None or name is not b'x':
        return
    print("rv is 3")
"""
    after = before.replace("rv is 128", "rv == 128")
    assert flagged("is", "==", "    if rv ", " 128:") == "F632" and flagged("is", "==", "if rv ", " None") is None
    assert proposed(before, after, 1) == after.replace("if rv is 3", "if rv == 3")  # not `is not`, `is None`, prose
    fixed = before.replace("name is not 'main'", "name != 'main'")
    assert proposed(before, fixed, 3) == fixed.replace("is not b'x'", "!= b'x'")


def test_a_type_compared_with_is_goes_to_the_other_type_comparisons():
    before = '''def test_types(s, exc):
    assert type(s["b"]) == bytes
    assert type(s["m"]) == Markup
    assert type(exc) == ZeroDivisionError
    assert s["n"] == 1
'''
    after = before.replace('type(s["b"]) == bytes', 'type(s["b"]) is bytes')
    assert proposed(before, after, 1) == after.replace(") == M", ") is M").replace(") == Z", ") is Z")


def test_the_fix_written_in_prose_is_no_fix_to_carry():
    before = '''def check(x):
    """Compare with == None."""
    return x == None
'''
    after = before.replace("with == None", "with is None")
    document = ParsedDocument.parse("python", after)
    left = '    """Compare with '
    assert flagged("==", "is", left, ' None."""') == "E711"
    assert comparison_sites("E711", "==", 1, len(left), event(before, after), prose_at(document)) is None
    assert proposed(before, after, 1) == after


def test_five_thousand_comparisons_give_a_bounded_answer():
    before = "def f(x):\n    return x\n" + "assert f(1) == None\n" * 5000
    after = before.replace("assert f(1) == None", "assert f(1) is None", 1)
    document = ParsedDocument.parse("python", after)
    found = comparison_sites("E711", "==", 2, len("assert f(1) "), event(before, after), prose_at(document))
    assert len(found) == MAX_SITES and [site.line for site in found[:2]] == [3, 4]


def test_empty_parentheses_taken_off_one_raise_or_pytest_decorator_go_off_the_others():
    raises = '''def check(value):
    if value is None:
        raise ValueError()
    if value < 0:
        raise errors.RangeError()  # below zero
    raise TypeError("not a number")


def describe():
    """raise KeyError() in prose stays."""
    return make()
'''
    fixed = raises.replace("raise ValueError()", "raise ValueError")
    assert proposed(raises, fixed, 2) == fixed.replace("RangeError()  #", "RangeError  #")  # not `make()`
    fixtures = '''import pytest


@pytest.fixture()
def client():
    return make()


@pytest.fixture()
def server():
    return make()


@pytest.mark.asyncio()
async def test_run(client):
    await client.run()
'''
    bare = fixtures.replace("@pytest.fixture()\ndef client", "@pytest.fixture\ndef client")
    assert proposed(fixtures, bare, 3) == fixtures.replace("@pytest.fixture()", "@pytest.fixture")  # PT001 only
    assert fixed_by("    raise ValueError()", "    raise ValueError") == ("RSE102", "()")
    assert fixed_by("    return make()", "    return make") is None
    assert fixed_by("    raise f()(1)", "    raise f(1)") is None


def test_a_builtin_put_for_an_alias_of_typing_goes_to_the_same_alias_in_code():
    before = '''import typing as t


def pack(name: str, parts: t.Tuple[int, ...]) -> t.List[bytes]:
    return [name.encode("utf-8"), repr(parts).encode("utf-8")]


def names() -> t.Tuple[str, str]:
    return "t.Tuple[str]", "b"
'''
    built = before.replace("parts: t.Tuple[int, ...]", "parts: tuple[int, ...]")
    assert proposed(before, built, 3) == built.replace("-> t.Tuple[str, str]", "-> tuple[str, str]")  # UP006
    assert fixed_by("x: t.Tuple[int]", "x: tuple[int]") == ("UP006", "t.Tuple")
    assert fixed_by("x: t.Tuple", "x: tuple") is None


def test_optional_written_with_a_bar_goes_to_the_same_alias_but_not_to_a_quoted_member():
    before = '''import typing as t
from typing import Optional


class Loader(Mapping[str, t.Optional[str]]):
    def load(self, name: t.Optional[str] = None) -> t.Optional[tuple[str, t.Optional[int]]]:
        parent: t.Optional["Loader"] = None
        other: Optional[str] = None
        kinds: t.Union[int, t.Dict[str, int]] = 0
        return "t.Optional[str]"
'''
    barred = before.replace("Mapping[str, t.Optional[str]]", "Mapping[str, str | None]")
    expected = barred.replace("name: t.Optional[str]", "name: str | None").replace(
        "-> t.Optional[tuple[str, t.Optional[int]]]", "-> tuple[str, int | None] | None")
    assert proposed(before, barred, 4) == expected  # UP007: a forward reference, `Optional`, a string stay
    assert fixed_by("x: t.Union[int, t.Dict[str, int]]", "x: int | t.Dict[str, int]") == ("UP007", "t.Union")
    assert fixed_by('x: t.Optional["A"]', 'x: "A" | None') is None
    assert fixed_by("x: t.Optional[int]", "x: int") is None


def test_a_bare_except_given_a_broad_exception_gives_it_to_the_other_bare_ones_in_code():
    before = '''def load(path):
    try:
        return open(path).read()
    except:
        return None


def close(handle):
    try:
        handle.close()
    except:
        pass
    except_ = "except:"
'''
    broad = before.replace("    except:\n        return None", "    except Exception:\n        return None")
    expected = broad.replace("    except:\n        pass", "    except Exception:\n        pass")
    assert proposed(before, broad, 3) == expected  # E722: the string's `except:` stays
    based = before.replace("    except:\n        return None", "    except BaseException:\n        return None")
    based_too = based.replace("    except:\n        pass", "    except BaseException:\n        pass")
    assert proposed(before, based, 3) == based_too
    narrow = before.replace("    except:\n        return None", "    except OSError:\n        return None")
    assert proposed(before, narrow, 3) == narrow  # a narrower exception is that handler's own
    assert fixed_by("    except:", "    except Exception:") == ("E722", " Exception")
    assert fixed_by("    except:", "    except OSError:") is None
    assert fixed_by("    except :", "    except Exception:") is None


def test_keys_taken_off_what_in_iterates_go_off_the_others_and_off_keys_listed_whole():
    before = '''def names(params, fields):
    for key in params.keys():
        print(key)
    if "q" in fields["extra"].keys():
        return list(params.keys())
    found = [key for key in fields.keys() if key]
    help = "for key in params.keys(): ..."
    return params.keys()
'''
    fixed = before.replace("for key in params.keys():", "for key in params:", 1)
    expected = fixed.replace('in fields["extra"].keys():', 'in fields["extra"]:').replace(
        "list(params.keys())", "list(params)").replace("in fields.keys() if", "in fields if")
    assert proposed(before, fixed, 1) == expected  # SIM118: the string's and the view returned stay
    assert fixed_by("    x = list(d.keys())", "    x = list(d)") == ("SIM118", ".keys()")
    assert fixed_by("    x = d.keys()", "    x = d") is None


def test_a_generators_default_types_taken_off_go_off_the_others_but_not_other_types():
    before = '''from collections.abc import AsyncGenerator, Generator


def lines() -> Generator[str, None, None]:
    yield "a"


def pairs() -> t.Generator[tuple[int, str], None, None]:
    yield 1, "a"


async def chunks() -> AsyncGenerator[bytes, None]:
    yield b"a"


def sums() -> Generator[int, int, None]:
    total = yield 0


async def ticks() -> AsyncGenerator[int, int]:
    yield 1
    doc = "Generator[str, None, None]"
'''
    fixed = before.replace("lines() -> Generator[str, None, None]", "lines() -> Generator[str]")
    expected = fixed.replace("t.Generator[tuple[int, str], None, None]", "t.Generator[tuple[int, str]]").replace(
        "AsyncGenerator[bytes, None]", "AsyncGenerator[bytes]")
    assert proposed(before, fixed, 3) == expected  # UP043: a send type, a string stay
    assert fixed_by("x: AsyncGenerator[int, None]", "x: AsyncGenerator[int]") == ("UP043", ", None")
    assert fixed_by("x: Generator[int, None, None]", "x: Generator[int, None]") is None
    assert fixed_by("x: Generator[int, str, None]", "x: Generator[int, str]") is None
