"""Completions drafted from the user's own code (issue 38): a FIM request carries a draft of its
hole, the worker lays it in, the model checks it in one pass (`veto`, `veto_rule` "cut") and fills
what follows; `completion.fim.plan` finds the draft and `completionDrafts` turns it off. On a tiny
random model, a real worker process and the real pipeline."""
from __future__ import annotations

import re

import pytest
import torch

from completion import fim
from completion.requests import build_request, capped_draft
from completion.settings import Settings
from engine.launch import spawn_local_worker, stop_worker
from engine.wire.protocol import (MAX_SLOT_TOKENS, MAX_SLOTS, MAX_SUFFIX_CHARS, CompleteRequest, Error, ErrorCode,
                                    Hole as WireHole, Item, ProtocolError, Result, Timings, decode, encode)
from engine.client.sync_client import WorkerClient
from engine.worker.runner import ModelRunner
from engine.worker.work import job_of
from infill import decode as decoding
from infill.decode.regions import veto
from infill.commit import DecoderConfig
from infill.decoder_defaults import decoder_config
from infill.fim import drafted_fim_ids, start_job
from infill.job import Hole, Job
from lsp_server.settings import ServerSettings

PREFIX = "def area(width, height):\n    return width * height\n\n\ndef main():\n    x = "
SUFFIX = "\n    return x\n"
DRAFT = "area(3, 4)"
LONG_DRAFT = "n = " + "1 + " * 400 + "1"  # hundreds of tokens: past any hole's budget
CUT = {"veto": 1e-9, "veto_rule": "cut"}  # a random model disagrees somewhere: the draft is cut there
# A file that says the same thing twice: typing the second `total = compute(` drafts what followed the first.
REPEATING = ("def compute(width, height, depth):\n    return width * height * depth\n\n\n"
             "def first():\n    scale = read_scale()\n    total = compute(width=3, height=4, depth=5) + offset_of(3)\n"
             "    return total\n\n\ndef second():\n    scale = read_scale()\n    total = compute(")
REPEATING_SUFFIX = "\n    return total\n"


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def fim_request(rid: str = "r", **fields) -> CompleteRequest:
    return CompleteRequest(**{"id": rid, "kind": "fim", "prefix": PREFIX, "suffix": SUFFIX, "mode": "single_line",
                              "max_tokens": 16, "deadline_ms": 30_000, **fields})


def test_a_fim_request_carries_its_draft_over_the_wire_into_the_job():
    request = fim_request(draft=["area(", ")"], slots=[3])
    assert decode(encode(request)) == request
    job = job_of(request)
    assert job.kind == "fim" and job.one_hole and job.drafted
    assert job.holes[0].draft == ("area(", ")") and job.holes[0].slots == (3,)
    assert not job_of(fim_request()).drafted  # no draft: the plain job of today


@pytest.mark.parametrize("fields, said", [
    ({"draft": ["a", "b"]}, "'slots' must hold one length between each two"),
    ({"draft": ["a", "b"], "slots": [MAX_SLOT_TOKENS + 1]}, "'slots[0]' must lie in"),
    ({"draft": ["a"] * (MAX_SLOTS + 2), "slots": [1] * (MAX_SLOTS + 1)}, f"at most {MAX_SLOTS} entries"),
    ({"draft": [7]}, "'draft[0]' must be str"),
    ({"draft": ["x" * (MAX_SUFFIX_CHARS + 1)]}, "draft a smaller region"),
])
def test_a_bad_fim_draft_is_refused_naming_its_field(fields, said):
    with pytest.raises(ProtocolError, match=re.escape(said)) as raised:
        fim_request(**fields)
    assert "\n" not in raised.value.message


def test_an_edit_drafts_its_regions_in_its_holes_not_in_the_fim_field():
    with pytest.raises(ProtocolError, match="must be empty for kind 'edit'"):
        CompleteRequest(id="e", kind="edit", prefix="", suffix="", holes=[WireHole("multi_line", 8, "a\n")],
                        pieces=[], draft=["x"])


def test_the_front_end_cuts_a_draft_to_the_wire_caps_instead_of_failing():
    pieces, slots = capped_draft(["a"] * (MAX_SLOTS + 5), [MAX_SLOT_TOKENS + 9] * (MAX_SLOTS + 4))
    assert len(pieces) == MAX_SLOTS + 1 and slots == [MAX_SLOT_TOKENS] * MAX_SLOTS
    pieces, slots = capped_draft(["x" * MAX_SUFFIX_CHARS, "never sent"], [2])
    assert pieces == ["x" * MAX_SUFFIX_CHARS] and slots == []
    assert capped_draft([""], []) == ([], [])
    request = build_request("b", PREFIX, SUFFIX, "single_line", 16, 100, draft=["y" * (MAX_SUFFIX_CHARS * 2)])
    assert len(request.draft[0]) == MAX_SUFFIX_CHARS


def test_a_draft_fills_the_hole_with_no_masks_after_it_in_either_mode(tiny_tokenizer):
    tok = tiny_tokenizer
    assert drafted_fim_ids(tok, "", Hole("single_line", 16, "", (DRAFT,))) == tok.encode(DRAFT)
    assert drafted_fim_ids(tok, "", Hole("multi_line", 40, "", (DRAFT + "\n    y = 2",))) == tok.encode(
        DRAFT + "\n    y = 2")
    slotted = drafted_fim_ids(tok, "", Hole("multi_line", 40, "", ("area(", ")"), (2,)))
    assert slotted == tok.encode("area(") + [tok.mask_id] * 2 + tok.encode(")")


def test_a_draft_longer_than_the_holes_budget_is_cut_to_it(runner, tiny_tokenizer):
    long_draft = "value = " + " + ".join(f"item_{i}" for i in range(60))
    assert len(drafted_fim_ids(tiny_tokenizer, "", Hole("single_line", 5, "", (long_draft,)))) == 5
    [answer] = runner.complete(Job.fim(PREFIX, SUFFIX, "single_line", 5, draft=(long_draft,)), None)
    assert long_draft.startswith(answer.text) and 0 < len(answer.text) < len(long_draft)


def test_a_draft_stands_without_a_pass_unless_the_model_checks_it_then_in_one(runner):
    [plain] = runner.complete(Job.fim(PREFIX, SUFFIX, "single_line", 16, draft=(DRAFT,)), None)
    assert (plain.text, plain.forward_passes, plain.confidence) == (DRAFT, 0, 1.0)
    nothing_vetoes = {"veto": 1.0, "veto_rule": "cut"}  # no probability is over 1: every token stands
    [checked] = runner.complete(Job.fim(PREFIX, SUFFIX, "single_line", 16, decoder=nothing_vetoes,
                                        draft=(DRAFT,)), None)
    assert (checked.text, checked.forward_passes) == (DRAFT, 1)


def vetoed_after_one_rejection(runner, rule: str) -> torch.Tensor:
    """The masks a veto leaves in a drafted hole whose third token the model rejects, sure of
    another, while it agrees with every other one."""
    job = Job.fim(PREFIX, SUFFIX, "single_line", 16, draft=(DRAFT,))
    state = start_job(runner.model, runner.tok, job, DecoderConfig(veto=0.5, veto_rule=rule)).states[0]
    drafted = state.ids[0, state.span].clone()
    state.last_best, state.last_prob = drafted.clone(), torch.full(drafted.shape, 0.9)
    state.last_best[2] = drafted[2] + 1
    assert veto(state, slice(0, len(drafted)))
    return state.masked


def test_the_cut_rule_masks_the_draft_from_the_first_rejected_token_on_the_each_rule_that_token_alone(runner):
    assert vetoed_after_one_rejection(runner, "cut").tolist() == [False, False] + [True] * (len(
        runner.tok.encode(DRAFT)) - 2)
    each = vetoed_after_one_rejection(runner, "each")
    assert each.tolist() == [i == 2 for i in range(len(each))]


def test_after_a_cut_the_draft_before_it_stands_and_the_model_fills_the_rest(runner):
    """The pass that saw the wrong tail commits nothing; the next passes fill it under the
    hole's rules."""
    job = Job.fim(PREFIX, SUFFIX, "single_line", 16, decoder=CUT, draft=(DRAFT,))
    state = start_job(runner.model, runner.tok, job, DecoderConfig(veto=1e-9, veto_rule="cut")).states[0]
    drafted = state.ids[0, state.span].clone()
    decoding.step(runner.model, [state])
    wrong = torch.nonzero(state.last_best != drafted)
    assert len(wrong), "a random model agrees with no real text"
    first = int(wrong[0])
    assert not state.masked[:first].any() and state.masked[first:].all()
    while not state.done:
        decoding.step(runner.model, [state])
    assert torch.equal(state.ids[0, state.span][:first], drafted[:first]) and state.passes >= 2


def test_a_drafted_decoding_is_neither_carried_by_typing_nor_streamed_before_it_is_checked(runner):
    job = Job.fim(PREFIX, SUFFIX, "single_line", 16, decoder=CUT, draft=(DRAFT,))
    started = runner.start(job, None)
    assert runner.typed_on(started, "a", None) is None and runner.partial(started) is None


def test_decoder_json_settings_for_drafted_completions_apply_to_them_alone():
    defaults = {"rule": "left_run", "per_mode": {"multi_line": {"window": 12}},
                "fim_drafts": {"veto": 0.5, "veto_rule": "cut"}}
    drafted = decoder_config(defaults, {}, "multi_line", fim_drafted=True)
    assert (drafted.veto, drafted.veto_rule, drafted.window) == (0.5, "cut", 12)
    assert decoder_config(defaults, {}, "multi_line").veto == 0.0  # an edit's regions, an undrafted hole
    with pytest.raises(ValueError, match="veto_rule"):
        decoder_config({"fim_drafts": {"veto_rule": "sometimes"}}, {}, None, fim_drafted=True)


def plan_of(text_before: str, text_after: str, **options) -> fim.Plan:
    settings, problems = Settings.from_options({"mode": "single_line", **options})
    assert not problems
    hole = fim.hole_in_text("file:///w/calc.py", text_before, text_after)
    return fim.plan(hole, settings, None, "p1")


def test_plan_drafts_from_the_document_and_completion_drafts_off_sends_none():
    planned = plan_of(REPEATING, REPEATING_SUFFIX)
    assert planned.draft is not None and planned.draft.text.startswith("width=3, height=4, depth=5)")
    assert planned.requests[0].draft == [planned.draft.text]
    off = plan_of(REPEATING, REPEATING_SUFFIX, completionDrafts=False)
    assert off.draft is None and off.requests[0].draft == []
    assert plan_of("x = ", "\n").requests[0].draft == []  # nothing repeats: no draft


def test_completion_drafts_is_read_by_the_language_server_and_a_bad_value_is_said():
    settings, problems = ServerSettings.from_options({"completionDrafts": False})
    assert settings.drafts is False and not problems
    settings, problems = ServerSettings.from_options({"completionDrafts": "no"})
    assert settings.drafts is True and problems == ["setting 'completionDrafts' must be true or false, got 'no'; "
                                                    "using the default"]


def test_a_drafted_answer_that_repeats_the_text_after_the_cursor_is_dropped_as_any_answer_is():
    planned = plan_of(REPEATING, "width=3, height=4, depth=5) + offset_of(3)\n    return total\n")
    repeat = "width=3, height=4, depth=5) + offset_of(3)"
    result = Result("p1", [Item(repeat, 1.0, 0)], Timings(0.0, 0.0, 0.0, 0.0), "done")
    assert fim.finish(planned, [result], Settings(mode="single_line")) == []


@pytest.fixture(scope="module")
def worker(tiny_model_dir):
    proc, address = spawn_local_worker(tiny_model_dir, threads=1)
    yield address
    stop_worker(proc)  # (its exit code is test_worker's concern; a busy machine may outwait SIGTERM)


def test_a_real_worker_answers_a_drafted_request_from_its_draft_and_cuts_one_past_its_budget(worker):
    with WorkerClient(worker, timeout_s=60) as client:
        standing = client.complete(fim_request("d1", draft=[DRAFT]))
        checked = client.complete(fim_request("d2", draft=[DRAFT], decoder={"veto": 1.0, "veto_rule": "cut"}))
        cut = client.complete(fim_request("d3", draft=[LONG_DRAFT], max_tokens=4))
        plain = client.complete(fim_request("d4"))
    assert [(i.text, i.forward_passes) for i in standing.items] == [(DRAFT, 0)]
    assert [(i.text, i.forward_passes) for i in checked.items] == [(DRAFT, 1)]
    assert cut.stop_reason == "done" and LONG_DRAFT.startswith(cut.items[0].text)
    assert 0 < len(cut.items[0].text) < len(LONG_DRAFT)
    assert plain.items[0].forward_passes >= 1


def test_a_real_worker_refuses_a_malformed_draft_in_one_line_and_goes_on(worker):
    import zmq
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(worker)
    try:
        good = encode(fim_request("ok", draft=["a", "b"], slots=[2]))
        payload = good.replace(b"\xa5slots\x91\x02", b"\xa5slots\x90")  # the slot list emptied on the wire
        assert payload != good
        sock.send(payload)
        assert sock.poll(30_000), "no reply to a bad draft"
        reply = decode(sock.recv())
        assert isinstance(reply, Error) and reply.code == ErrorCode.INVALID_FIELD and "slots" in reply.message
        sock.send(encode(fim_request("after", draft=[DRAFT])))
        assert sock.poll(30_000), "no reply after the bad draft"
        assert decode(sock.recv()).items[0].text == DRAFT
    finally:
        sock.close()
