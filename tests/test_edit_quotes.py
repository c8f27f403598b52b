"""A string over several lines whose quotes were spelled anew at one end: its other end follows."""
from __future__ import annotations

import pytest

from completion import next_edit
from completion.edit_checks import applied
from completion.edit_events import EditEvent, diff_span
from completion.edit_quotes import other_end
from completion.next_edit import Drafting, EditAsk, Refused
from completion.syntax import ParsedDocument

DOCSTRING = "# SPDX: MIT\n\n'''\nlegacy - an example package\n'''\n__version__ = '1.0.0'\n"
DEDENT = 'toml = dedent(\n    f"""\n    name = "Łukasz {x}"\n    """\n)\n'


def event_of(before: str, after: str) -> EditEvent:
    return EditEvent("file:///t.py", before, after, diff_span(before, after), 0.0)


def planned_text(before: str, after: str) -> str:
    """The text after the rules' next edit of `after` (the user's edit of `before`)."""
    planned = next_edit.plan(EditAsk(ParsedDocument.parse("python", after), event_of(before, after), 2, "r", 800,
                                     drafting=Drafting.RULES))
    return after if isinstance(planned, Refused) else applied(after, next_edit.finish(planned, []))


def test_the_closing_quotes_follow_the_opening_ones_in_a_document_that_does_not_parse():
    after = DOCSTRING.replace("'''\nlegacy", '"""\nlegacy')
    assert ParsedDocument.parse("python", after).tree.root_node.has_error
    assert planned_text(DOCSTRING, after) == DOCSTRING.replace("'''", '"""')


@pytest.mark.parametrize("old, new", [('"""', "'''"), ("'''", '"""')])
def test_either_end_leads_and_a_prefix_and_text_past_ascii_stay(old, new):
    before = DEDENT.replace('"""', old)
    opened = before.replace(f'f{old}', f'f{new}')
    assert planned_text(before, opened) == DEDENT.replace('"""', new)
    closed = before.replace(f'    {old}\n)', f'    {new}\n)')
    assert planned_text(before, closed) == DEDENT.replace('"""', new)


def test_no_other_end_for_another_change_a_one_line_string_or_quotes_that_stay_unmatched():
    one_line = "x = '''a'''\ny = 1\n"
    assert other_end(event_of(one_line, one_line.replace("'''a", '"""a')), "python") is None
    retyped = DOCSTRING.replace("'''\nlegacy", "'' \nlegacy")  # three quotes made two: no spelling of the end
    assert other_end(event_of(DOCSTRING, retyped), "python") is None
    assert other_end(event_of(DOCSTRING, DOCSTRING.replace("'''\nlegacy", '"""\nlegacy')), "javascript") is None
    prose = "# it's '''\nx = 1\n"  # quotes in a comment are no string's end
    assert other_end(event_of(prose, prose.replace("'''", '"""')), "python") is None


def test_a_broken_document_with_no_such_change_is_still_refused():
    before = "def f(x):\n    return x\n"
    after = before.replace("def f(x):", "def f(x:")
    planned = next_edit.plan(EditAsk(ParsedDocument.parse("python", after), event_of(before, after), 0, "r", 800))
    assert planned == Refused(next_edit.UNPARSED)
