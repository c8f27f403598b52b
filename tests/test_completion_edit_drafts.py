"""Drafts of next-edit regions: each rule on real tree-sitter parses, bad inputs, synthesized tasks."""
import re
from pathlib import Path

import pytest
from lsprotocol import types

from completion.edit_analogy import analogy_sites
from completion.edit_drafts import (
    CALL,
    COPY,
    LITERAL,
    RENAME,
    SLOT_TOKENS,
    Draft,
    draft_regions,
    is_new_name,
    region_span,
)
from completion.edit_events import EditEvent, diff_span
from completion.edit_regions import CURSOR, Region, regions_after
from completion.positions import line_starts
from completion.syntax import ParsedDocument, new_parser
from edit_samples import event
from lsp_server.edit_history import step_span
from training.edit_synth import examples_for_file

ROOT = Path(__file__).resolve().parents[1]


def drafts_of(before, after, lines, language="python"):
    """The drafts of the given (start, end) line ranges of `after`, the edit being before -> after."""
    event = EditEvent("", before, after, diff_span(before, after), 0.0)
    regions = [Region(start, end, CURSOR) for start, end in lines]
    return draft_regions(event, ParsedDocument.parse(language, after), regions)


def test_a_draft_joins_its_pieces_and_changes_only_under_a_rule():
    assert Draft(("a", "b"), (8,), CALL).text == "ab" and Draft(("a", "b"), (8,), CALL).changes
    assert not Draft(("x\n",)).changes and Draft(("x\n",)).rule == COPY


RENAME_LOCAL = """def f(items):
    total = 0
    for item in items:
        total += item
    return total


def g():
    total = 1
    return total
"""


def test_a_local_rename_reaches_its_function_only():
    after = RENAME_LOCAL.replace("    total = 0", "    count = 0")
    inside, other = drafts_of(RENAME_LOCAL, after, [(2, 5), (7, 10)])
    assert inside == Draft(("    for item in items:\n        count += item\n    return count\n",), (), RENAME)
    assert other == Draft(("def g():\n    total = 1\n    return total\n",), (), COPY)


PARAMETER = """def scale(value, factor):
    return value * factor


print(scale(2, factor=3))
"""


def test_a_parameter_rename_reaches_its_body_and_the_keyword_arguments_of_its_calls():
    after = PARAMETER.replace("scale(value, factor):", "scale(value, ratio):")
    body, call = drafts_of(PARAMETER, after, [(1, 2), (4, 5)])
    assert body.text == "    return value * ratio\n" and body.rule == RENAME
    assert call.text == "print(scale(2, ratio=3))\n" and call.rule == RENAME


PASSED_ON = """def build(strat, extended_validation):
    return Converter(strat=strat, extended_validation=extended_validation, checked=extended_validation)


def check(value, extended_validation=False):
    return build(value, extended_validation=extended_validation)
"""


def test_a_name_passed_on_under_its_own_name_takes_its_keyword_along():
    after = PASSED_ON.replace("build(strat, extended_validation)", "build(strat, detailed_validation)")
    (body,) = drafts_of(PASSED_ON, after, [(1, 2)])
    assert body.text == "    return Converter(strat=strat, detailed_validation=detailed_validation, " \
        "checked=detailed_validation)\n"  # `checked=` names another parameter: it stays
    after = PASSED_ON.replace("def check(value, extended_validation=False)", "def check(value, strict=False)")
    (call,) = drafts_of(PASSED_ON, after, [(5, 6)])  # `build` takes `extended_validation`: its keyword stays
    assert call.text == "    return build(value, extended_validation=strict)\n"


ATTRIBUTE = """class Box:
    def __init__(self):
        self.size = 1

    def grow(self):
        self.size += 1
        return self.size
"""


def test_a_method_renamed_at_its_call_on_self_renames_the_classs_own_definition():
    before = ("class Conn:\n    def close(self):\n        pass\n\n    def run(self):\n        self.close()\n\n\n"
              "class Other:\n    def close(self):\n        pass\n")
    after = before.replace("        self.close()", "        self.aclose()")
    (definition, other) = drafts_of(before, after, [(1, 2), (9, 10)])
    assert definition == Draft(("    def aclose(self):\n",), (), RENAME)
    assert other.rule == COPY  # another class's method of that name
    defined = after.replace("class Conn:\n", "class Conn:\n    def aclose(self):\n        pass\n\n")
    (kept,) = drafts_of(defined.replace("self.aclose()", "self.close()"), defined, [(5, 6)])
    assert kept.rule == COPY  # the class has the new name: the call was pointed at it


def test_an_attribute_rename_reaches_every_self_attribute():
    after = ATTRIBUTE.replace("self.size = 1", "self.width = 1")
    (draft,) = drafts_of(ATTRIBUTE, after, [(5, 7)])
    assert draft.text == "        self.width += 1\n        return self.width\n"


IMPORT = """from os import path

print(path.join("a", "b"), path.sep)
"""


def test_an_import_rename_reaches_its_uses_and_a_function_rename_its_calls():
    after = IMPORT.replace("from os import path", "from os import paths")
    (draft,) = drafts_of(IMPORT, after, [(2, 3)])
    assert draft.text == 'print(paths.join("a", "b"), paths.sep)\n'
    source = "def go():\n    pass\n\ngo()\n"
    (call,) = drafts_of(source, source.replace("def go", "def run"), [(3, 4)])
    assert call == Draft(("run()\n",), (), RENAME)


SHADOWED = """import tempdir


def check(paths):
    with temporary() as tempdir:
        copy(paths, tempdir)


def temporary():
    return tempdir.mkdtemp()


def counted():
    global tempdir
    tempdir = tempdir.reload()
"""


def test_an_import_renamed_in_a_function_goes_to_a_functions_copy_of_it():
    before = "def test_a(app):\n    from flask.testing import make_builder\n\n    make_builder(app)\n\n\n" \
             "def test_b(app):\n    from flask.testing import make_builder\n\n    make_builder(app)\n"
    after = before.replace("import make_builder", "import EnvironBuilder", 1)
    own, twin = drafts_of(before, after, [(3, 4), (7, 10)])  # flask's tests: each imports its own
    assert own.text == "    EnvironBuilder(app)\n" and twin.text == after[after.index("    from", 60):].replace(
        "make_builder", "EnvironBuilder")


def test_an_import_renamed_leaves_the_functions_that_bind_its_name_for_themselves():
    after = SHADOWED.replace("import tempdir", "import tempfile")  # flake8's git hook
    local, module, declared = drafts_of(SHADOWED, after, [(4, 6), (9, 10), (13, 15)])
    assert local.rule == COPY and module.text == "    return tempfile.mkdtemp()\n"
    assert declared.text == "    global tempfile\n    tempfile = tempfile.reload()\n"  # `global`: the module's name


def test_a_keyword_arguments_name_renamed_renames_no_variable_of_that_name():
    before = "def test(writer):\n    logger.configure(patch=f)\n\n\ndef other():\n    def patch(r):\n" \
             "        pass\n    logger.patch(patch)\n    logger.configure(patch=g)\n    attrib(patch=g)\n\n\n" \
             "def third():\n    logger.configure(patch=f)\n"
    after = before.replace("configure(patch=f)", "configure(patcher=f)", 1)
    (draft,) = drafts_of(before, after, [(5, 10)])
    assert draft.rule == COPY  # the callee's parameter: no name of this file (loguru's `patch=` -> `patcher=`)
    sites = analogy_sites(event(before, after), document=ParsedDocument.parse("python", after))
    assert sorted(site.line for site in sites) == [8, 9, 13]  # keywords and the line's copy alone


def test_a_javascript_rename_reaches_its_function():
    before = "function f(a) {\n  let n = a;\n  return n + n;\n}\n"
    after = before.replace("let n = a", "let m = a")
    (draft,) = drafts_of(before, after, [(2, 3)], "javascript")
    assert draft == Draft(("  return m + m;\n",), (), RENAME)


@pytest.mark.parametrize("name", ["class", "None", "3x", "for"])
def test_a_rename_to_a_keyword_or_no_identifier_drafts_nothing(name):
    before = "x = 1\nprint(x)\n"
    (draft,) = drafts_of(before, before.replace("x = 1", f"{name} = 1"), [(1, 2)])
    assert draft == Draft(("print(x)\n",)) and not is_new_name(name)


def test_a_non_ascii_rename_is_replaced_in_utf8_bytes():
    before = 'é = "ü"\nprint(é, "ü")\n'
    (draft,) = drafts_of(before, before.replace("é = ", "ñandú = "), [(1, 2)])
    assert draft == Draft(('print(ñandú, "ü")\n',), (), RENAME)


def test_a_changed_literal_reaches_the_same_literal_elsewhere():
    before = 'LIMIT = 30\nwait(timeout=30, "30")\nretry(31)\n'
    after = before.replace("LIMIT = 30", "LIMIT = 60")
    near, far = drafts_of(before, after, [(1, 2), (2, 3)])
    assert near == Draft(('wait(timeout=60, "30")\n',), (), LITERAL) and far == Draft(("retry(31)\n",))


def test_a_changed_number_reaches_the_same_number_in_its_function_or_after_the_same_token():
    before = "size = 2**16\nkey = urandom(16)\nlimit = (2**16) + 1\n"
    after = before.replace("size = 2**16", "size = 2**18")
    first, second = drafts_of(before, after, [(1, 2), (2, 3)])  # aiohttp's buffer grown, not its key's bytes
    assert first == Draft(("key = urandom(16)\n",)) and second == Draft(("limit = (2**18) + 1\n",), (), LITERAL)
    before = "f(18, 2**16)\nh(2**16)\nurandom(16)\n"  # the changed number's token, not an equal one's before it
    near, far = drafts_of(before, before.replace("f(18, 2**16)", "f(18, 2**18)"), [(1, 2), (2, 3)])
    assert near == Draft(("h(2**18)\n",), (), LITERAL) and far == Draft(("urandom(16)\n",))
    before = "def clock(t):\n    hours = t % 24\n    t //= 24\n\n\ndef day(t):\n    return t // 24\n"
    after = before.replace("t % 24", "t % 240")  # within the user's function, one function's constant
    own, other = drafts_of(before, after, [(2, 3), (6, 7)])
    assert own == Draft(("    t //= 240\n",), (), LITERAL) and other == Draft(("    return t // 24\n",))
    before = "def tree(levels, hide):\n    prefix = levels[(2 if hide else 2):]\n    return prefix\n"
    after = before.replace("else 2", "else 1")  # the equal number the user left on the line is another value
    assert drafts_of(before, after, [(1, 2)]) == [Draft(("    prefix = levels[(2 if hide else 1):]\n",))]
    before = "assert b == 3.14\nmake(8, 3.14)\n"  # a fraction is one value wherever it stands
    (draft,) = drafts_of(before, before.replace("b == 3.14", "b == 3.15"), [(1, 2)])
    assert draft == Draft(("make(8, 3.15)\n",), (), LITERAL)


def test_a_word_changed_inside_a_string_is_a_literal_not_a_rename():
    before = 'kind = "alpha"\nif kind == "alpha":\n    pass\n'
    (draft,) = drafts_of(before, before.replace('kind = "alpha"', 'kind = "beta"'), [(1, 3)])
    assert draft.text == 'if kind == "beta":\n    pass\n' and draft.rule == LITERAL


SIGNATURE = """def join(base, name, sep):
    return base + sep + name


join("a", "b", "/")
join("a", name="b", sep="/")
"""


def signature(new_parameters):
    after = SIGNATURE.replace("join(base, name, sep):", f"join({new_parameters}):")
    return drafts_of(SIGNATURE, after, [(4, 5), (5, 6)])


def test_a_removed_parameter_drops_its_argument_positional_or_keyword():
    positional, keyword = signature("base, sep")
    assert positional == Draft(('join("a", "/")\n',), (), CALL)
    assert keyword == Draft(('join("a", sep="/")\n',), (), CALL)


def test_reordered_parameters_reorder_the_positional_arguments():
    positional, keyword = signature("base, sep, name")
    assert positional == Draft(('join("a", "/", "b")\n',), (), CALL)
    assert keyword == Draft(('join("a", name="b", sep="/")\n',))


def test_a_call_that_passes_the_reordered_names_in_their_new_order_keeps_them():
    before = "class T:\n    def convert(self, param, ctx, value):\n        return value\n\n" \
             "    def __call__(self, value, param, ctx):\n        return self.convert(value, param, ctx)\n"
    after = before.replace("convert(self, param, ctx, value)", "convert(self, value, param, ctx)")
    (kept,) = drafts_of(before, after, [(5, 6)])
    assert kept == Draft(("        return self.convert(value, param, ctx)\n",))


def test_an_added_parameter_opens_a_slot_positional_or_by_name():
    positional, keyword = signature("base, name, sep, width")
    assert positional == Draft(('join("a", "b", "/", ', ')\n'), (SLOT_TOKENS,), CALL)
    assert keyword == Draft(('join("a", name="b", sep="/", width=', ')\n'), (SLOT_TOKENS,), CALL)
    (empty,) = drafts_of("def go():\n    pass\n\ngo()\n", "def go(now):\n    pass\n\ngo()\n", [(3, 4)])
    assert empty == Draft(("go(", ")\n"), (SLOT_TOKENS,), CALL)


def test_a_method_call_does_not_pass_self_and_a_keyword_only_parameter_is_passed_by_name():
    before = "class C:\n    def put(self, key, value):\n        pass\n\n\nC().put(1, 2)\n"
    (method,) = drafts_of(before, before.replace("self, key, value", "self, value"), [(5, 6)])
    assert method == Draft(("C().put(2)\n",), (), CALL)
    before = "def go(a):\n    pass\n\n\ngo(1)\n"
    (keyword,) = drafts_of(before, before.replace("go(a):", "go(a, *, wait):"), [(4, 5)])
    assert keyword == Draft(("go(1, wait=", ")\n"), (SLOT_TOKENS,), CALL)


def test_a_method_made_static_keeps_the_arguments_of_its_calls_on_an_object():
    before = ("class Colors:\n    def __init__(self):\n        self.error = self.style(\"ERROR\", RED)\n\n"
              "    def style(self, text, style):\n        return style + text\n")
    after = before.replace("    def style(self, text, style):", "    @staticmethod\n    def style(text, style):")
    (call,) = drafts_of(before, after, [(2, 3)])
    assert call == Draft(('        self.error = self.style("ERROR", RED)\n',))  # isort's format.py, made static


def test_a_call_passing_each_parameter_on_by_its_name_passes_the_added_one_where_its_scope_has_it():
    before = ("def choices(cli, args):\n    pass\n\n\ndef complete(cli, args, words):\n"
              "    return choices(cli, args)\n\n\ndef other(cli, args):\n    return choices(cli, args)\n")
    after = before.replace("def choices(cli, args):", "def choices(cli, args, words):")
    carried, unbound = drafts_of(before, after, [(5, 6), (9, 10)])
    assert carried == Draft(("    return choices(cli, args, words)\n",), (), CALL)
    assert unbound == Draft(("    return choices(cli, args, ", ")\n"), (SLOT_TOKENS,), CALL)  # no `words` there


def test_an_added_parameter_with_a_default_changes_nothing():
    positional, keyword = signature("base, name, sep, width=3")
    assert positional == Draft(('join("a", "b", "/")\n',)) and keyword.rule == COPY


def test_an_added_splat_asks_no_caller_but_the_overridden_methods_call_passes_it_on():
    positional, keyword = signature("base, name, sep, **options")
    assert positional == Draft(('join("a", "b", "/")\n',)) and keyword.rule == COPY
    before = ("class Impl(Base):\n    def insert(self, table, rows):\n        super().insert(table, rows)\n"
              "        return super(Impl, self).insert(\n            table, rows\n        )\n\n\n"
              "def use(impl):\n    super().insert(impl, [])\n")
    after = before.replace("insert(self, table, rows):", "insert(self, table, rows, *args, **kw):")
    one, several, outside = drafts_of(before, after, [(2, 3), (3, 6), (9, 10)])
    assert one == Draft(("        super().insert(table, rows, *args, **kw)\n",), (), CALL)
    assert several.text == "        return super(Impl, self).insert(\n            table, rows, *args, **kw\n        )\n"
    assert outside.rule == COPY  # another function's `super()` call is no override's
    passing = before.replace("super().insert(table, rows)", "super().insert(table, rows, **kw)")
    (kept,) = drafts_of(passing, passing.replace("rows):", "rows, **kw):"), [(2, 3)])
    assert kept.rule == COPY  # it passes `**kw` already


def test_typed_splats_added_ask_no_caller_but_pass_on_to_the_overridden_method_only():
    before = ("class Locks(Base):\n    def acquire(self):\n        super().acquire()\n        for lock in self.locks:\n"
              "            lock.acquire()\n\n\nlocks.acquire()\n")
    after = before.replace("def acquire(self):", "def acquire(self, *a: Any, **k: Any):")
    overridden, wrapped, caller = drafts_of(before, after, [(2, 3), (4, 5), (7, 8)])
    assert overridden == Draft(("        super().acquire(*a, **k)\n",), (), CALL)
    assert wrapped.rule == COPY and caller.rule == COPY  # no slot opened for a splat


def test_splats_taken_off_the_header_are_dropped_from_the_overridden_methods_call_on_one_line():
    before = ("class Bar(Base):\n    def close(self, *args, **kwargs):\n"
              "        super(Bar, self).close(*args, **kwargs)\n"
              "        super().close(\n            *args, **kwargs)\n        other.close(*rest)\n")
    after = before.replace("def close(self, *args, **kwargs):", "def close(self):")
    one, several, unrelated = drafts_of(before, after, [(2, 3), (3, 5), (5, 6)])
    assert one == Draft(("        super(Bar, self).close()\n",), (), CALL)
    assert several.rule == COPY and unrelated.rule == COPY  # over two lines; `*rest` was no parameter
    kept = after.replace("def close(self):", "def close(self, **kwargs: Any):")
    (partly,) = drafts_of(before, kept, [(2, 3)])
    assert partly == Draft(("        super(Bar, self).close(**kwargs)\n",), (), CALL)  # a typed splat stays


def test_calls_over_several_lines_or_with_splats_stay_as_they_are():
    before = SIGNATURE + 'join(\n    "a", "b", "/")\njoin(*parts)\n'
    after = before.replace("join(base, name, sep):", "join(base, sep):")
    (split, splat) = drafts_of(before, after, [(6, 8), (8, 9)])
    assert split == Draft(('join(\n    "a", "b", "/")\n',)) and splat == Draft(("join(*parts)\n",))


def test_a_document_without_a_tree_or_that_does_not_parse_gives_copies():
    before, after = "x = 1\nprint(x)\n", "y = 1\nprint(x)\n"
    event = EditEvent("", before, after, diff_span(before, after), 0.0)
    bare = ParsedDocument("python", new_parser("python"), after)
    assert draft_regions(event, bare, [Region(1, 2, CURSOR)]) == [Draft(("print(x)\n",))]
    broken = after + "def (:\n"
    event = EditEvent("", before + "def (:\n", broken, diff_span(before + "def (:\n", broken), 0.0)
    drafted = draft_regions(event, ParsedDocument.parse("python", broken), [Region(1, 2, CURSOR)])
    assert [d.rule for d in drafted] == [COPY]


def test_no_regions_a_whole_file_edit_and_regions_past_the_end_never_raise():
    before, after = "a = 1\n", "def f(x):\n    return x\n\nf(1)\n"
    assert drafts_of(before, after, []) == []
    whole, past, empty = drafts_of(before, after, [(0, 5), (9, 12), (3, 3)])
    assert whole.text == after and past == Draft(("",)) and empty == Draft(("",))


def test_crlf_regions_are_cut_as_next_edit_cuts_them():
    before = "x = 1\r\nprint(x)\r\nprint(x + 1)\r\n"
    after = before.replace("x = 1", "y = 1")
    (draft,) = drafts_of(before, after, [(1, 3)])
    assert draft == Draft(("print(y)\r\nprint(y + 1)\r\n",), (), RENAME)
    assert region_span(line_starts(after), Region(1, 2, CURSOR)) == (7, 17)


# Synthesized next-edit tasks (training/edit_kinds.py) on this repository's own files

FILES = ["completion/edit_regions.py", "completion/fim.py", "completion/context.py", "completion/decide.py",
         "completion/positions.py", "completion/postprocess.py", "training/edit_kinds.py", "training/edit_synth.py"]


def user_event(original, edited):
    """The event the server records for the one `didChange` that makes `edited` (see bench/next_edit.py)."""
    head = next((i for i, (a, b) in enumerate(zip(original, edited)) if a != b), min(len(original), len(edited)))
    tail = 0
    while tail < min(len(original), len(edited)) - head and original[-1 - tail] == edited[-1 - tail]:
        tail += 1
    lines = original[:head].count("\n"), original[:len(original) - tail].count("\n")
    where = types.Range(start=types.Position(line=lines[0], character=0),
                        end=types.Position(line=lines[1], character=0))
    change = types.TextDocumentContentChangePartial(range=where, text=edited[head:len(edited) - tail])
    return EditEvent("", original, edited, step_span(original, edited, [change]), 0.0)


def drafted_matches(example):
    """(whether a draft has slots, whether the drafts applied give the expected text, any text
    of up to 40 characters filling each slot)."""
    event = user_event(example["original"], example["edited"])
    document = ParsedDocument.parse("python", example["edited"])
    regions = regions_after(event, document, example["edited"][:example["cursor"]].count("\n"))
    text, pattern, at = document.text, [], 0
    drafts = draft_regions(event, document, regions)
    for region, draft in sorted(zip(regions, drafts), key=lambda pair: pair[0].start_line):
        start, end = region_span(line_starts(text), region)
        pattern += [re.escape(text[at:start]), "(?:.{0,40}?)".join(map(re.escape, draft.pieces))]
        at = end
    pattern.append(re.escape(text[at:]))
    return any(d.slots for d in drafts), re.fullmatch("".join(pattern), example["expected"], re.DOTALL) is not None


def synth_figures(kind):
    """(tasks, matched, with slots) of `kind` over FILES."""
    examples = [ex for path in FILES
                for ex in examples_for_file(path, (ROOT / path).read_text(), seed=0, kinds=[kind], per_kind=6)]
    outcomes = [drafted_matches(ex) for ex in examples]
    return len(outcomes), sum(ok for _, ok in outcomes), sum(slotted for slotted, _ in outcomes)


@pytest.mark.parametrize("kind, share", [("rename_local", 0.9), ("rename_parameter", 0.9),
                                         ("rename_function", 0.9), ("signature_reorder", 0.85),
                                         ("signature_add", 0.9), ("attribute", 0.85)])
def test_drafts_give_most_synthesized_tasks_their_expected_text(kind, share):
    tasks, matched, slotted = synth_figures(kind)
    assert tasks >= 10 and matched >= share * tasks
    assert kind != "signature_add" or slotted >= share * tasks


UNUSED = '''def tag(name, level, style):
    return "<" + name + ">"


def note(text, width, fill):
    return text.center(width)


def main():
    print(tag("a", 1, "x"), tag("b", level=2, style="y"))
    print(note("n", 4, "-"), note("m", 8, fill="*"))
    return tag("c", 3, "z") + note("o", 2, ".")
'''


def test_drafts_give_synthesized_signature_removals_their_expected_text():
    examples = examples_for_file("unused.py", UNUSED, seed=0, kinds=["signature_remove"], per_kind=20)
    assert len(examples) >= 3 and all(drafted_matches(ex)[1] for ex in examples)
