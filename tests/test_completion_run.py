"""`completion.fim.run` and `completion.next_edit.run`: each pipeline asked whole within a
`Deadline`, with its one failure policy, on scripted backends (no worker). The clock the deadline
reads is set by hand, never waited on."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from completion import fim, next_edit
from completion.edit_events import EditEvent, diff_span
from completion.next_edit import Drafting, EditAsk
from completion.settings import Settings
from completion.syntax import ParsedDocument
from engine.client.calls import WorkerError, WorkerTimeout
from engine.wire import deadline as deadline_module
from engine.wire.deadline import Deadline
from engine.wire.protocol import CompleteRequest, ErrorCode, Item, Result, Timings

NOW = 100.0
BEFORE = "def total(items):\n    count = 0\n    for item in items:\n        count += item\n    return count\n"
AFTER = BEFORE.replace("    count = 0", "    acc = 0")  # the user renamed the local: its drafts rename the uses
EVENT = EditEvent("file:///t.py", BEFORE, AFTER, diff_span(BEFORE, AFTER), 0.0)
RENAMED = BEFORE.replace("count", "acc")
HOLE = fim.hole_in_text("file:///w/m.py", "def f():\n", "")


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    """The deadline module's clock, at NOW until a test moves it (asyncio's own clock untouched)."""
    now = SimpleNamespace(value=NOW)
    monkeypatch.setattr(deadline_module, "time", SimpleNamespace(monotonic=lambda: now.value))
    return now


class Scripted:
    """A backend that answers each request with `answer(request)` (which may raise), noting the
    requests it was asked."""

    def __init__(self, answer) -> None:
        self.answer, self.asked = answer, []

    async def complete(self, request: CompleteRequest) -> Result:
        self.asked.append(request)
        return self.answer(request)


def failing(exc: Exception):
    def answer(request: CompleteRequest) -> Result:
        raise exc
    return answer


def texts(request: CompleteRequest, *answers: str) -> Result:
    return Result(request.id, [Item(text, 0.9, 2) for text in answers], Timings(0.0, 0.0, 0.0, 1.0), "done")


def renaming(request: CompleteRequest) -> Result:
    """Each edit hole renamed `count` to `total_x`: an answer the drafts (`acc`) would never give."""
    return Result(request.id, [Item(hole.replaces.replace("count", "total_x"), 0.9, 1, index)
                               for index, hole in enumerate(request.holes)], Timings(0.0, 0.0, 0.0, 1.0), "done")


def edit_plan(drafting: Drafting = Drafting.DRAFTED) -> next_edit.EditPlan:
    planned = next_edit.plan(EditAsk(ParsedDocument.parse("python", AFTER), EVENT, 1, "r", 800, "file:///t.py",
                                     events=[EVENT], drafting=drafting))
    assert isinstance(planned, next_edit.EditPlan) and planned.request is not None
    return planned


async def test_fim_run_asks_every_candidate_within_what_is_left_and_finishes(clock):
    planned = fim.plan(HOLE, Settings(deadline_ms=1000), None, "r", invoked=True, candidates=2)
    backend = Scripted(lambda request: texts(request, "    return 1" if request.id == "r" else "    pass"))
    clock.value = NOW + 0.25
    answered = await fim.run(planned, backend, Deadline(NOW, 1000))
    assert [r.deadline_ms for r in backend.asked] == [750, 750]  # what is left, not the planned 1000
    assert answered.texts == ["    return 1", "    pass"] and [r.id for r in answered.results] == ["r", "r-1"]


async def test_fim_run_leaves_out_a_failing_candidate_and_the_others_stand():
    planned = fim.plan(HOLE, Settings(), None, "r", invoked=True, candidates=2)

    def one_fails(request: CompleteRequest) -> Result:
        if request.id == "r-1":
            raise WorkerError(ErrorCode.OVERLOADED, "busy")
        return texts(request, "    return 1")
    assert (await fim.run(planned, Scripted(one_fails), Deadline(NOW, 1000))).texts == ["    return 1"]
    for exc in (WorkerTimeout("late"), WorkerError(ErrorCode.INTERNAL, "boom"), RuntimeError("a bug")):
        answered = await fim.run(planned, Scripted(failing(exc)), Deadline(NOW, 1000))
        assert answered.texts == [] and answered.results == []


async def test_fim_run_strict_raises_the_failure_for_a_caller_that_must_say_why():
    planned = fim.plan(HOLE, Settings(), None, "r")
    with pytest.raises(WorkerError, match="busy"):
        await fim.run(planned, Scripted(failing(WorkerError(ErrorCode.OVERLOADED, "busy"))), Deadline(NOW, 1000),
                      strict=True)


async def test_fim_run_asks_nothing_without_a_backend_time_or_a_completion(clock):
    planned = fim.plan(HOLE, Settings(), None, "r")
    backend = Scripted(lambda request: texts(request, "    return 1"))
    assert (await fim.run(planned, None, Deadline(NOW, 1000))).texts == []
    clock.value = NOW + 1.0
    assert (await fim.run(planned, backend, Deadline(NOW, 1000))).texts == []  # the deadline has passed
    mid_line = fim.hole_in_text("file:///w/m.py", "x = ", "f(1)\n")
    assert (await fim.run(fim.plan(mid_line, Settings(), None, "r"), backend, Deadline(NOW, 9000))).texts == []
    assert backend.asked == []


async def test_next_edit_run_gives_the_workers_answer_within_what_is_left(clock):
    planned = edit_plan()
    backend = Scripted(renaming)
    clock.value = NOW + 0.5
    edits = await next_edit.run(planned, backend, Deadline(NOW, 800))
    assert [r.deadline_ms for r in backend.asked] == [300]
    assert next_edit.applied(AFTER, edits) == AFTER.replace("count", "total_x")  # the answer, not the drafts


@pytest.mark.parametrize("exc", [WorkerTimeout("late"), WorkerError(ErrorCode.OVERLOADED, "busy"),
                                 WorkerError(ErrorCode.INTERNAL, "boom")], ids=["timeout", "overloaded", "error"])
async def test_next_edit_run_keeps_the_drafts_when_the_worker_fails(exc):
    edits = await next_edit.run(edit_plan(), Scripted(failing(exc)), Deadline(NOW, 800))
    assert next_edit.applied(AFTER, edits) == RENAMED


async def test_next_edit_run_keeps_the_drafts_without_a_backend_or_time_and_asks_nothing(clock):
    backend = Scripted(renaming)
    assert next_edit.applied(AFTER, await next_edit.run(edit_plan(), None, Deadline(NOW, 800))) == RENAMED
    clock.value = NOW + 1.0
    assert next_edit.applied(AFTER, await next_edit.run(edit_plan(), backend, Deadline(NOW, 800))) == RENAMED
    assert backend.asked == []


async def test_next_edit_run_without_drafts_shows_nothing_when_the_worker_fails():
    planned = edit_plan(Drafting.MODEL)
    assert await next_edit.run(planned, Scripted(failing(WorkerTimeout("late"))), Deadline(NOW, 800)) == []
    assert next_edit.applied(AFTER, await next_edit.run(planned, Scripted(renaming), Deadline(NOW, 800))) \
        == AFTER.replace("count", "total_x")


def test_plan_says_why_it_refused():
    typing = AFTER.replace("    return count", "    ret = coun\n    return count")
    event = EditEvent("file:///t.py", AFTER, typing, diff_span(AFTER, typing), 0.0)
    refused = next_edit.plan(EditAsk(ParsedDocument.parse("python", typing), event, 1, "r", 800))
    assert refused == next_edit.Refused("a name is still being typed")
    assert next_edit.plan(EditAsk(None, EVENT, 1, "r", 800)) == next_edit.Refused("the document has no tree")
