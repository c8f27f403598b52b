"""Several edits as one pattern: a change made at two places is proposed at a third that one edit
would not reach; a proposed change undone or typed over is proposed no more in that document."""
import itertools

from completion import next_edit
from completion.edit_analogy import analogy_sites
from completion.edit_events import EditEvent, diff_span
from completion.edit_patterns import Memory, memory_of, pattern_sites
from completion.syntax import ParsedDocument

CALLBACKS = '''def on_open(event, ctx):
    return ctx.state


def on_close(event, ctx):
    return ctx.state


def on_error(event, ctx):
    return ctx.state
'''

CALLS = '''def build(app, strict):
    app.route("/a", handler_a)
    app.route("/b", handler_b)
    app.route("/c", handler_c)
    app.route("/d", handler_d)
'''


def events_of(*texts: str) -> list[EditEvent]:
    """The events that take each text to the next, oldest first."""
    return [EditEvent("file:///t.py", before, after, diff_span(before, after), float(number))
            for number, (before, after) in enumerate(itertools.pairwise(texts))]


def changed_lines(before: str, found) -> set[int]:
    return {site.line for site in found}


def keyword_added(text: str, route: str) -> str:
    return text.replace(f'"/{route}", handler_{route})', f'"/{route}", handler_{route}, strict=strict)')


def test_a_parameter_renamed_in_two_callbacks_goes_to_the_third():
    first = CALLBACKS.replace("on_open(event, ctx)", "on_open(event, context)")
    second = first.replace("on_close(event, ctx)", "on_close(event, context)")
    history = events_of(CALLBACKS, first, second)
    document = ParsedDocument.parse("python", second)
    assert analogy_sites(history[-1], scoped=True, document=document) == []  # one edit: its scope only
    assert memory_of(history[-1], history) == Memory(repeats=1)
    found = pattern_sites(history[-1], history, scoped=True, document=document)
    assert 8 in changed_lines(second, found)  # `def on_error(event, ctx):`
    assert all(site.new == "context" for site in found)


def test_a_keyword_added_twice_reaches_a_call_that_looks_less_alike():
    calls = CALLS.replace('app.route("/d", handler_d)', 'app.route("/d", handler_d)  # the last of them all')
    first = keyword_added(calls, "a")
    second = keyword_added(first, "b")
    history = events_of(calls, first, second)
    alone = analogy_sites(history[-1])
    assert 4 not in changed_lines(second, alone)  # the commented call is too unlike for one edit
    assert {3, 4} <= changed_lines(second, pattern_sites(history[-1], history))


def test_a_proposed_change_undone_is_proposed_no_more():
    first = keyword_added(CALLS, "a")
    accepted = keyword_added(first, "b")  # the proposal taken
    undone = first  # and undone
    history = events_of(CALLS, first, accepted, undone)
    assert memory_of(history[-1], history).refused
    assert pattern_sites(history[-1], history) == []  # the undo itself is no change to carry on
    again = keyword_added(undone, "c")
    history = events_of(CALLS, first, accepted, undone, again)
    assert analogy_sites(history[-1])  # without the history, /b and /d would be proposed
    assert memory_of(history[-1], history).refused
    assert pattern_sites(history[-1], history) == []


def test_a_proposed_change_typed_over_is_proposed_no_more():
    first = keyword_added(CALLS, "a")
    accepted = keyword_added(first, "b")
    typed_over = accepted.replace("handler_b, strict=strict)", "handler_b, strict=False)")
    again = keyword_added(typed_over, "c")
    history = events_of(CALLS, first, accepted, typed_over, again)
    assert memory_of(history[-1], history) == Memory(repeats=1, refused=True)
    assert pattern_sites(history[-1], history) == []


def test_other_edits_in_between_leave_the_pattern_alone():
    first = keyword_added(CALLS, "a")
    elsewhere = first.replace("def build(app, strict):", "def build(app, strict, debug):")
    second = keyword_added(elsewhere, "b")
    history = events_of(CALLS, first, elsewhere, second)
    assert memory_of(history[-1], history) == Memory(repeats=1)
    assert changed_lines(second, pattern_sites(history[-1], history)) == {3, 4}


def test_the_plan_reads_the_events_as_patterns():
    first = keyword_added(CALLS, "a")
    accepted = keyword_added(first, "b")
    history = events_of(CALLS, first, accepted, first)  # the proposal taken, then undone
    document = ParsedDocument.parse("python", first)

    def changed(events):
        planned = next_edit.plan(next_edit.EditAsk(document, events[-1], 2, "t", 1000, events=events,
                                                   drafting=next_edit.Drafting.RULES))
        return next_edit.applied(first, next_edit.finish(planned, [])) != first
    assert changed(history[-1:])  # the undo alone looks like a change to carry to /a
    assert not changed(history)
