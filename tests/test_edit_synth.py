"""Next-edit examples synthesized from hand-written sources: exact sites, scopes, negatives,
determinism, the CLI's records, and training sources refused when they touch evaluation data."""
import json
import re
from collections import Counter
from difflib import SequenceMatcher

import pytest

from training.corpus import is_validation
from training.edit_kinds import ADDED_PARAMS, KINDS, NEGATIVE_KINDS, Edit
from training.edit_sites import error_count, parse
from training.edit_synth import examples_for_file, main, make_example, synthesize, training_sources
from training.evalguard import EvalGuard

SOURCE = '''import os


class Counter:
    def __init__(self, start):
        self.total = start
        self.step = 2

    def bump(self):
        self.total = self.total + self.step
        return self.total


def scale(values, factor):
    # multiply every value
    result = []
    for item in values:
        result.append(item * factor)
    return result


def other(values):
    result = {}
    unused = len(values)
    return result


def join_path(base, name, sep):
    return base + sep + name


def pad(text, width, fill):
    return text.rjust(width)


def describe(kind):
    if kind == "alpha-mode":
        return join_path("a", kind, "/") + pad(kind, 8, "-")
    elif kind == "beta":
        return join_path("b", kind, "/") + pad(kind, width=4, fill="*")
    label = "only once here"
    if not label:
        return "alpha-mode"
    return label + str(counter_limit(kind, 250, 250))


def counter_limit(kind, low, high):
    return Counter(low).bump() + high + os.getpid()


def report(args):
    print(args.verbose_level)
    if args.verbose_level > 3:
        print(args.verbose_level)
'''


def tokens(text):
    return re.findall(r"\w+|\S", text)


def changes(a, b):
    """(old tokens, new tokens) of each place where b differs from a, token by token."""
    ta, tb = tokens(a), tokens(b)
    ops = SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes()
    return [(" ".join(ta[i1:i2]), " ".join(tb[j1:j2])) for op, i1, i2, j1, j2 in ops if op != "equal"]


def function_text(text, name):
    """A top-level function's source (up to the next top-level statement)."""
    match = re.search(rf"^def {name}\(.*?(?=^\S)", text, re.M | re.S)
    return match.group(0)


def all_examples(kind):
    return examples_for_file("demo.py", SOURCE, seed=0, kinds=[kind], per_kind=100)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_makes_examples_that_parse_with_the_event_at_the_cursor(kind):
    examples = all_examples(kind)
    assert examples, kind
    for ex in examples:
        assert ex["original"] == SOURCE and ex["kind"] == kind
        assert all(error_count(parse(ex[k].encode())) == 0 for k in ("original", "edited", "expected"))
        edited, cursor = ex["edited"], ex["cursor"]
        head = next(i for i, (a, b) in enumerate(zip(SOURCE, edited + "\0")) if a != b)
        assert head <= cursor and SOURCE.endswith(edited[cursor:])  # the cursor ends the event's text
        if kind in NEGATIVE_KINDS:
            assert ex["expected"] == edited
        else:
            assert ex["expected"] != edited and changes(edited, ex["expected"])


def test_rename_local_changes_every_use_in_its_function_and_nothing_in_another():
    examples = [ex for ex in all_examples("rename_local")
                if changes(SOURCE, ex["edited"])[0][0] == "result" and ex["cursor"] < SOURCE.index("def other")]
    assert examples
    for ex in examples:
        (_, new), = changes(SOURCE, ex["edited"])
        assert changes(ex["edited"], ex["expected"]) == [("result", new)] * 2
        assert function_text(ex["expected"], "other") == function_text(SOURCE, "other")
        assert f"{new} = []" in ex["expected"] and f"return {new}\n" in function_text(ex["expected"], "scale")


def test_rename_parameter_keeps_a_same_named_parameter_of_another_function():
    examples = [ex for ex in all_examples("rename_parameter") if changes(SOURCE, ex["edited"])[0][0] == "kind"
                and SOURCE.index("def describe") < ex["cursor"] < SOURCE.index("def counter_limit")]
    assert examples
    for ex in examples:
        (_, new), = changes(SOURCE, ex["edited"])
        assert Counter(changes(ex["edited"], ex["expected"])) == Counter({("kind", new): 7})
        assert function_text(ex["expected"], "counter_limit") == function_text(SOURCE, "counter_limit")


def test_rename_attribute_function_and_class_reach_every_site():
    expected_sites = {"total": 4, "step": 2, "Counter": 2, "join_path": 3, "pad": 3, "counter_limit": 2, "scale": None}
    seen = set()
    for kind in ("rename_attribute", "rename_function", "rename_class"):
        for ex in all_examples(kind):
            (old, new), = changes(SOURCE, ex["edited"])
            seen.add(old)
            assert len(changes(ex["edited"], ex["expected"])) == expected_sites[old] - 1
            assert changes(SOURCE, ex["expected"]) == [(old, new)] * expected_sites[old]
    assert {"total", "step", "Counter", "join_path", "pad", "counter_limit"} <= seen
    assert "scale" not in seen  # defined but never used: nothing to follow


def test_signature_changes_reach_their_call_sites():
    (added,) = [ex for ex in all_examples("signature_add") if "def join_path(base, name, sep)" not in ex["edited"]]
    param = re.search(r"def join_path\(base, name, sep, (\w+)\)", added["edited"]).group(1)
    literal = dict(ADDED_PARAMS)[param]
    assert added["expected"] == added["edited"].replace('kind, "/")', f'kind, "/", {literal})')
    assert added["expected"].count(f", {literal})") == 2
    removed = {changes(SOURCE, ex["edited"])[0]: changes(ex["edited"], ex["expected"])
               for ex in all_examples("signature_remove")}
    assert removed == {(", fill", ""): [(', " - "', ""), (', fill = " * "', "")], ("kind ,", ""): [("kind ,", "")]}
    swapped = {ex["edited"]: ex["expected"] for ex in all_examples("signature_reorder")}
    edited = SOURCE.replace("def join_path(base, name, sep)", "def join_path(name, base, sep)")
    assert swapped[edited] == edited.replace('join_path("a", kind', 'join_path(kind, "a"').replace(
        'join_path("b", kind', 'join_path(kind, "b"')
    # the one call passes 250 twice: nothing to swap, no example
    assert SOURCE.replace("kind, low, high", "kind, high, low") not in swapped


def test_literal_and_attribute_change_every_site_the_same_way():
    for ex in all_examples("literal"):
        (old, new), = changes(SOURCE, ex["edited"])
        assert old in ("mode", "alpha - mode", "250")
        assert changes(ex["edited"], ex["expected"]) == [(old, new)]
    (ex,) = all_examples("attribute")
    (old, new), = changes(SOURCE, ex["edited"])
    assert old == "verbose_level" and changes(ex["edited"], ex["expected"]) == [(old, new)] * 2


def test_negatives_touch_only_unique_sites():
    olds = {changes(SOURCE, ex["edited"])[0][0] for ex in all_examples("negative_literal")}
    assert "beta" in olds and "3" in olds and "250" not in olds and "mode" not in olds
    assert [changes(SOURCE, ex["edited"])[0][0] for ex in all_examples("negative_rename")] == ["unused"]
    comments = all_examples("negative_comment")
    assert comments and all(ex["edited"][:ex["cursor"]].rsplit("\n", 1)[-1].lstrip().startswith("# multiply")
                            for ex in comments)


def test_same_seed_same_examples_other_seed_other_choices():
    sources = [(f"pkg/demo_{i}.py", SOURCE) for i in range(3)]
    first = synthesize(sources, 30, seed=1, kinds=list(KINDS))
    assert first == synthesize(sources, 30, seed=1, kinds=list(KINDS))
    assert first != synthesize(sources, 30, seed=2, kinds=list(KINDS))
    assert set(Counter(e["kind"] for e in first)) == set(KINDS)


def test_cli_writes_next_edit_records(tmp_path):
    val = tmp_path / "val_files.jsonl"
    val.write_text(json.dumps({"path": "pkg/demo.py", "text": SOURCE}) + "\n")
    out = tmp_path / "heldout.jsonl"
    main(["--val-files", str(val), "--count", "20", "--seed", "3", "--out", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 20 and len({r["task_id"] for r in rows}) == 20
    for r in rows:
        assert set(r) == {"task_id", "path", "original", "edited", "cursor", "expected", "kind"}
        assert r["path"] == "pkg/demo.py" and 0 <= r["cursor"] <= len(r["edited"]) and r["kind"] in KINDS


def test_training_sources_refuse_evaluation_and_validation_files(tmp_path):
    eval_dir, src = tmp_path / "data", tmp_path / "src"
    (eval_dir / "set").mkdir(parents=True)
    (eval_dir / "set" / "tasks.jsonl").write_text(json.dumps({"prompt": SOURCE, "canonical_solution": ""}) + "\n")
    clean = SOURCE.replace("def ", "def x_").replace("    ", "  ")
    clean = "\n".join(f"{line}  # {i}" if line.strip() else line for i, line in enumerate(clean.splitlines()))
    held = next(f"mod_{i}.py" for i in range(10_000) if is_validation(f"mod_{i}.py", 1.0))
    kept = next(f"mod_{i}.py" for i in range(10_000) if not is_validation(f"mod_{i}.py", 1.0))
    src.mkdir()
    (src / "leaked.py").write_text(SOURCE)
    (src / held).write_text(clean)
    (src / kept).write_text(clean)
    refused = Counter()
    names = [name for name, _ in training_sources([src], EvalGuard.from_data_dir(eval_dir), 0, refused=refused)]
    assert names == [kept]
    assert refused == {"overlaps evaluation sets": 1, "validation file": 1}
    out = tmp_path / "train.jsonl"
    main(["--files", str(src), "--eval-data", str(eval_dir), "--count", "10", "--out", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and {r["path"] for r in rows} == {kept}


def test_builtins_stay_and_new_names_clash_with_nothing_in_the_file():
    source = "def f(items):\n    id = len(items)\n    count = id + 1\n    total = count * 2\n    return total, count\n"
    examples = examples_for_file("clash.py", source, seed=0, kinds=["rename_local"], per_kind=100)
    renamed = {changes(source, ex["edited"])[0] for ex in examples}
    assert {old for old, _ in renamed} == {"count", "total"}
    assert all(new not in tokens(source) for _, new in renamed)


def test_an_edit_that_breaks_the_parse_is_dropped():
    source = SOURCE.encode()
    at = source.index(b"result = []")
    assert make_example(source, "literal", (Edit(at, at, b"("), [Edit(at + 1, at + 1, b"x")]), 0) is None
    assert make_example(source, "literal", (Edit(at, at + 6, b"res"), [Edit(at + 7, at + 7, b"")]), 0) is None
    assert make_example(source, "literal", (Edit(at, at + 6, b"res"), [Edit(at + 40, at + 40, b"  ")]), 0) is not None
