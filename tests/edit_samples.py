"""Small edits the analogy tests share: a docstring typo and sibling calls, the edit event that
turns one text into another, and the file the rules' next edits make of it."""
from completion import next_edit
from completion.edit_checks import applied
from completion.edit_events import EditEvent, diff_span
from completion.syntax import ParsedDocument

TYPO = '''import datetime


def parse(text):
    """Read a datetime from text."""
    return datetime.datetime.fromisoformat(text)


def show(value):
    """Write a dateime as text."""
    return value.isoformat()
'''

CALLS = '''def build(app, strict):
    app.route("/a", handler_a, strict=strict)
    app.route("/b", handler_b)
    app.route("/c", handler_c)
    app.cache = {}
'''


def event(before, after):
    return EditEvent("file:///t.py", before, after, diff_span(before, after), 0.0)


def proposed(before, after, cursor_line=0, settled=False):
    """The file after the rules' next edits (no model) for the user's edit before -> after, asked
    as the user stops typing when `settled` (`next_edit.EditAsk.settled`)."""
    document = ParsedDocument.parse("python", after)
    planned = next_edit.plan(next_edit.EditAsk(document, event(before, after), cursor_line, "t", 1000,
                                               drafting=next_edit.Drafting.RULES, settled=settled))
    return after if isinstance(planned, next_edit.Refused) else applied(after, next_edit.finish(planned, []))
