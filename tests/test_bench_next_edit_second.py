"""bench.next_edit_second: a task one follow-up later (the user made the change twice), and the
rules with that history against the rules reading the last edit alone (no model)."""
from bench.next_edit_drafts import LAST_EDIT, RULES, run_task
from bench.next_edit_second import earlier_events, second_edit

CALLS = '''def build(app, strict):
    app.route("/a", handler_a)
    app.route("/b", handler_b)
    app.route("/c", handler_c)  # the last of them all
'''


class NoModel:
    """The runner the rules side never asks (no job is decoded)."""

    tok = None


def with_keyword(text: str, route: str) -> str:
    return text.replace(f"handler_{route})", f"handler_{route}, strict=strict)")


def test_the_first_follow_up_becomes_the_second_edit():
    edited = with_keyword(CALLS, "a")
    task = {"path": "t.py", "original": CALLS, "edited": edited, "cursor": 0, "kind": "repeated_pattern",
            "expected": with_keyword(with_keyword(edited, "b"), "c")}
    later = second_edit(task)
    assert later["original"] == edited and later["edited"] == with_keyword(edited, "b")
    assert later["expected"] == task["expected"] and later["cursor"] == later["edited"].index("    app.route(\"/c\"")
    assert [(event.before, event.after) for event in earlier_events(later)] == [(CALLS, edited)]
    assert second_edit({**task, "expected": with_keyword(edited, "b")}) is None  # one follow-up only
    found = run_task(NoModel(), later, [], model_side=False)
    assert found.answers[RULES].predicted == task["expected"]  # twice: the less alike call too
    assert found.answers[LAST_EDIT].predicted == later["edited"]  # once: too unlike
