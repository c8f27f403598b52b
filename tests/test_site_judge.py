"""The learned judge of analogy sites: its features on small edits, the shipped judge keeping a
site like the edited one and dropping one unlike it, and its training script on a tiny task set."""
import dataclasses
import json

import pytest

from completion import next_edit
from completion.edit_checks import applied
from completion.edit_rewrites import rewrite_of
from completion.site_judge import FEATURES, Candidate, SiteJudge, candidates, load
from completion.syntax import ParsedDocument
from bench import site_judge_fit
from edit_samples import CALLS, TYPO, event


def candidates_of(before, after, floor=None):
    document = ParsedDocument.parse("python", after)
    change = event(before, after)
    return candidates(change, [change], *next_edit.site_inputs(change, document), document, floor)


def features(candidate: Candidate) -> dict:
    return dict(zip(FEATURES, candidate.features))


def test_a_typo_fixed_in_a_docstring_is_a_prose_word_typo_with_one_site():
    before = TYPO.replace("Read a datetime", "Read a dateime")
    found = candidates_of(before, TYPO)
    assert [c.site.new for c in found] == ["datetime"]
    f = features(found[0])
    assert f["word_prose"] == 1.0 and f["word_code"] == 0.0 and f["pattern"] == 0.0
    assert f["typo"] == 1.0 and f["case_only"] == 0.0
    assert f["cut_free"] == 1.0 and f["above_cut"] == 1.0
    assert f["same_scope"] == 0.0  # the other docstring is in another function


def test_a_keyword_added_to_a_call_has_twin_sites_in_its_scope():
    before = CALLS.replace(", strict=strict)", ")")
    found = candidates_of(before, CALLS)
    assert sorted(c.site.line for c in found) == [2, 3]
    for candidate in found:
        f = features(candidate)
        assert f["pattern"] == 1.0 and f["insertion"] == 1.0 and f["deletion"] == 0.0
        assert f["same_scope"] == 1.0 and f["same_indent"] == 1.0
        assert f["score"] >= 0.85 and f["margin"] >= 0.0


def test_a_floor_brings_candidates_below_the_fixed_cut():
    source = '''def build(app):
    app.route("/a", handler_a)
    app.route("/b", handler_b)
    total = app.route("/c", handler_c) + app.count(items, limit) + 1
'''
    after = source.replace("handler_a)", "handler_a, strict=True)")
    cut = candidates_of(source, after)
    low = candidates_of(source, after, floor=0.1)
    assert {c.site.line for c in cut} == {2}
    assert {c.site.line for c in low} == {2, 3}
    assert [features(c)["above_cut"] for c in low if c.site.line == 3] == [0.0]


def test_the_shipped_judge_keeps_a_like_site_and_drops_an_unlike_one_the_fixed_cut_keeps():
    """A typo fixed in one docstring: the next docstring is like it, a long comment far below is not
    (the fixed cut keeps both: a typo in prose needs no likeness)."""
    judge = load()
    text = TYPO + '''

def note(value):
    # Keep the dateime of the last write, so that a reader that comes later sees what we saw then.
    return value
'''
    before = text.replace("Read a datetime", "Read a dateime")
    found = {c.site.line: c for c in candidates_of(before, text, floor=judge.floor)}
    assert set(found) == {9, 14} and all(f["above_cut"] == 1.0 for f in map(features, found.values()))
    assert judge.probability(found[9].features) >= judge.threshold
    assert judge.probability(found[14].features) < judge.threshold
    assert proposed(before, text, judge) == text.replace("Write a dateime", "Write a datetime")
    assert proposed(before, text, None) == text.replace("dateime", "datetime")


def proposed(before, after, judge):
    """The file after the rules' next edits (no model) with the analogy sites `judge` keeps."""
    planned = next_edit.plan(next_edit.EditAsk(ParsedDocument.parse("python", after), event(before, after), 1, "t",
                                               1000, drafting=next_edit.Drafting.RULES, judge=judge))
    return applied(after, next_edit.finish(planned, []))


def test_a_plan_proposes_the_sites_its_judge_keeps_and_no_other():
    before = CALLS.replace(", strict=strict)", ")")
    every = CALLS.replace("_b)", "_b, strict=strict)").replace("_c)", "_c, strict=strict)")
    assert proposed(before, CALLS, None) == every
    assert proposed(before, CALLS, dataclasses.replace(load(), threshold=0.0)) == every
    assert proposed(before, CALLS, dataclasses.replace(load(), threshold=1.01)) == CALLS


def test_a_judge_with_other_features_is_refused():
    data = load().to_json()
    data["features"] = data["features"][:-1]
    with pytest.raises(ValueError, match="bench.site_judge_fit"):
        SiteJudge.from_json(data)


def write_tasks(path, tasks):
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))


def task(name, original, edited, expected, kind):
    return {"task_id": name, "path": "m.py", "original": original, "edited": edited, "expected": expected,
            "cursor": len(edited), "kind": kind}


def test_the_training_script_learns_a_judge_from_a_tiny_task_set(tmp_path, capsys):
    typo_before = TYPO.replace("datetime from", "dateime from")
    typo_edited = typo_before.replace("Read a dateime", "Read a datetime")
    calls_before = CALLS.replace(", strict=strict)", ")")
    tasks = [task("t1", typo_before, typo_edited, TYPO.replace("dateime", "datetime"), "rename"),
             task("t2", calls_before, CALLS, CALLS, "negative")]
    assert rewrite_of(event(typo_before, typo_edited)).removed == "dateime"
    write_tasks(tmp_path / "alpha-t.jsonl", tasks)
    write_tasks(tmp_path / "beta-t.jsonl", tasks)
    out = tmp_path / "judge.json"
    assert site_judge_fit.main(["--tasks", str(tmp_path / "alpha-t.jsonl"), str(tmp_path / "beta-t.jsonl"),
                                "--out", str(out), "--grid", "0.3", "0.6", "--json"]) == 0
    printed = capsys.readouterr().out.splitlines()
    figures = json.loads(printed[-1])
    assert figures["candidates"] == 6 and figures["positives"] == 2
    assert set(figures["cross_validated"]) == {"fixed cut", "0.3", "0.6"}
    assert figures["cross_validated"]["fixed cut"]["negatives_false"] == 2  # the sibling calls, in both
    judge = SiteJudge.from_json(json.loads(out.read_text()))
    typo_site = candidates_of(typo_before, typo_edited)[0]
    call_site = candidates_of(calls_before, CALLS)[0]
    assert judge.probability(typo_site.features) > judge.probability(call_site.features)


def test_the_training_script_overwrites_only_a_judge(tmp_path, capsys):
    """`--out` naming a file that is not a site judge's JSON is refused before any work, unchanged."""
    tasks = tmp_path / "alpha-t.jsonl"
    write_tasks(tasks, [task("t1", CALLS.replace(", strict=strict)", ")"), CALLS, CALLS, "negative")])
    for name, text in (("source.py", "print('mine')\n"), ("other.json", '{"name": "not a judge"}\n')):
        precious = tmp_path / name
        precious.write_text(text)
        with pytest.raises(SystemExit) as refused:
            site_judge_fit.main(["--tasks", str(tasks), "--out", str(precious)])
        assert refused.value.code == 2 and precious.read_text() == text
    assert "refusing to overwrite" in capsys.readouterr().err
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(load().to_json()))
    assert site_judge_fit.replaceable(judge) and site_judge_fit.replaceable(tmp_path / "new.json")
