"""Small edits the analogy tests share: a docstring typo and sibling calls, and the edit event
that turns one text into another."""
from completion.edit_events import EditEvent, diff_span

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
