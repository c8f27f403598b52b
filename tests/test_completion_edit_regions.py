"""Tests of completion.edit_regions: the regions a next edit rewrites after an edit event, found
with tree-sitter, without a model."""
from __future__ import annotations

from completion import edit_literals, edit_regions, next_edit
from completion.edit_checks import applied
from completion.edit_events import EditEvent, diff_span
from completion.edit_regions import (
    CALL,
    CURSOR,
    MAX_REGION_LINES,
    MAX_REGIONS,
    RENAME,
    Region,
    capped,
    merged,
    outside,
    regions_after,
    renamed,
)
from completion.positions import split_lines
from completion.syntax import ParsedDocument

MODULE = '''\
import os

LIMIT = 10


def total(items):
    count = 0
    for item in items:
        count += item
    return count


def average(items):
    count = len(items)
    return total(items) / count


class Cart:
    def __init__(self, items):
        self.items = items
        self.limit = LIMIT

    def add(self, item):
        if len(self.items) < self.limit:
            self.items.append(item)

    def size(self):
        return len(self.items)


def report(cart):
    print(len(cart.items), LIMIT)
    return total(cart.items)
'''


def line_of(text: str, needle: str, start: int = 0) -> int:
    """The 0-based line of the first line at or after `start` that holds `needle`."""
    lines = text.split("\n")
    return next(i for i in range(start, len(lines)) if needle in lines[i])


def edited(before: str, old_line: str, new_line: str, start: int = 0) -> tuple[EditEvent, ParsedDocument, int]:
    """The event that replaces the line holding `old_line` (the first at or after `start`) by
    `new_line`, the document after it, and that line (where the cursor is)."""
    lines = before.split("\n")
    at = line_of(before, old_line, start)
    lines[at] = new_line
    after = "\n".join(lines)
    event = EditEvent("file:///w/m.py", before, after, diff_span(before, after), 0.0)
    return event, ParsedDocument.parse("python", after), at


def rename_lines(regions: list[Region]) -> set[int]:
    return {line for region in regions if region.reason != CURSOR
            for line in range(region.start_line, region.end_line)}


def far_regions(regions: list[Region], cursor: int) -> set[int]:
    """The lines of regions that lie outside the cursor's window."""
    window = range(cursor - edit_regions.CURSOR_LINES_ABOVE, cursor + edit_regions.CURSOR_LINES_BELOW + 1)
    return {line for region in regions for line in range(region.start_line, region.end_line)
            if line not in window}


def test_a_renamed_local_finds_its_uses_in_its_function_only():
    event, document, at = edited(MODULE, "    count = 0", "    n = 0")
    assert renamed(event) == ("count", "n")
    regions = regions_after(event, document, at)
    in_total = {line_of(MODULE, "count += item"), line_of(MODULE, "return count")}
    assert in_total <= rename_lines(regions)
    in_average = {line_of(MODULE, "count = len"), line_of(MODULE, "/ count")}
    assert not in_average & rename_lines(regions)  # `average` has a `count` of its own
    assert at not in rename_lines(regions) | far_regions(regions, at)  # never the event's line


def test_a_renamed_parameter_finds_its_uses_in_the_body():
    event, document, at = edited(MODULE, "def total(items):", "def total(values):")
    regions = regions_after(event, document, at)
    assert line_of(MODULE, "for item in items") in rename_lines(regions)
    assert line_of(MODULE, "count = len(items)") not in rename_lines(regions)  # average's items
    assert not any(region.reason == CALL for region in regions)  # a rename, not a new signature


def test_a_renamed_exception_name_finds_its_uses_in_its_handler_only():
    before = '''def on_failed(self, e):
    try:
        return self.load(e)
    except BadRequest as e:
        if self.debug:
            raise
        raise BadRequest() from e
    finally:
        self.log(e)
'''
    event, document, at = edited(before, "    except BadRequest as e:", "    except BadRequest as ebr:")
    regions = regions_after(event, document, at)
    assert line_of(before, "from e") in rename_lines(regions)
    after = next_edit.plan(next_edit.EditAsk(document, event, at, "t", 1000, drafting=next_edit.Drafting.RULES))
    assert applied(document.text, next_edit.finish(after, [])) == document.text.replace("from e", "from ebr")


def test_a_renamed_comprehension_name_goes_to_the_comprehensions_that_bind_it_only():
    before = '''@hookimpl
def plugins(hookimpls, what):
    found = [hookimpl.plugin for hookimpl in hookimpls]
    names = {hookimpl.name for hookimpl in hookimpls if hookimpl.plugin}
    return found, names, hookimpl


def classes(what):
    kinds = frozenset(cl for cl in what if isclass(cl))
    return kinds, frozenset(cl for cl in what if isinstance(cl, Attribute))
'''
    old = "    found = [hookimpl.plugin for hookimpl in hookimpls]"
    event, document, at = edited(before, old, "    found = [item.plugin for item in hookimpls]")
    after = next_edit.plan(next_edit.EditAsk(document, event, at, "t", 1000, drafting=next_edit.Drafting.RULES))
    names = "    names = {hookimpl.name for hookimpl in hookimpls if hookimpl.plugin}"
    assert applied(document.text, next_edit.finish(after, [])) == document.text.replace(
        names, names.replace("hookimpl.", "item.").replace("for hookimpl", "for item"))  # not @hookimpl
    first = "    kinds = frozenset(cl for cl in what if isclass(cl))"
    event, document, at = edited(before, first, "    kinds = frozenset(cls for cls in what if isclass(cls))")
    after = next_edit.plan(next_edit.EditAsk(document, event, at, "t", 1000, drafting=next_edit.Drafting.RULES))
    assert applied(document.text, next_edit.finish(after, [])) == before.replace("cl for cl", "cls for cls") \
        .replace("(cl)", "(cls)").replace("(cl,", "(cls,")  # the comprehension alike in the same function


def test_a_renamed_attribute_finds_its_uses_across_the_class_and_the_file():
    event, document, at = edited(MODULE, "self.items = items", "        self.goods = items")
    assert renamed(event) == ("items", "goods")
    regions = regions_after(event, document, at)
    uses = {line_of(MODULE, "len(self.items) <"), line_of(MODULE, "self.items.append"),
            line_of(MODULE, "return len(self.items)"), line_of(MODULE, "print(len(cart.items)")}
    assert uses <= rename_lines(regions)
    assert line_of(MODULE, "for item in items") not in rename_lines(regions)  # a local `items`


def test_a_module_level_name_finds_its_uses_in_the_file():
    event, document, at = edited(MODULE, "LIMIT = 10", "MAX_ITEMS = 10")
    regions = regions_after(event, document, at)
    assert {line_of(MODULE, "self.limit = LIMIT"), line_of(MODULE, "print(len(cart.items), LIMIT)")} \
        <= rename_lines(regions)
    assert all(region.reason == RENAME for region in regions if region.start_line > at + 6)


def test_a_renamed_function_finds_its_calls():
    event, document, at = edited(MODULE, "def total(items):", "def sum_of(items):")
    regions = regions_after(event, document, at)
    assert {line_of(MODULE, "return total(items)"), line_of(MODULE, "return total(cart.items)")} \
        <= rename_lines(regions)


def test_a_name_replaced_by_an_expression_or_with_marks_beside_it_is_no_rename_but_a_rename_rewrapped_is():
    source = "def check(e):\n    assert e.value.message == 'x'\n    return hashlib.sha1(e.value.message)\n"
    subscripted, _, _ = edited(source, "assert e.value", "    assert e.value.args[0] == 'x'")
    assert renamed(subscripted) is None  # `message` -> `args[0]`: the rename rule would write `args`
    called, _, _ = edited(source, "assert e.value", "    assert e.value.get_message() == 'x'")
    assert renamed(called) is None
    argued, _, _ = edited(source, "return hashlib", "    return hashlib.new(-1, e.value.message)")
    assert renamed(argued) is None  # an argument put in beside it: `.new(` is no `.sha1(` renamed
    compared = "def test(self):\n    self.assertTrue(list(request) == e.keys())\n    self.assertTrue(len(e) == 2)\n"
    as_equal, _, _ = edited(compared, "list(request)", "    self.assertEqual(list(request), e.keys())")
    assert renamed(as_equal) is None  # `==` made `,` too: `assertEqual(len(e) == 2)` would be wrong
    valued, _, _ = edited("LIMIT = 10\nprint(LIMIT)\n", "LIMIT = 10", "MAX_ITEMS = 20")
    assert renamed(valued) == ("LIMIT", "MAX_ITEMS")  # a value changed beside it is no mark
    rewrapped, _, _ = edited(source, "return hashlib", "    return hashlib.sha3_256(\n        e.value.message\n    )")
    assert renamed(rewrapped) == ("sha1", "sha3_256")
    imports = "from .base import Event, TCPStream, Backend\n"
    wrapped, _, _ = edited(imports, "from .base", "from .base import (\n    Event,\n    SocketStream,\n    Backend,\n)")
    assert renamed(wrapped) == ("TCPStream", "SocketStream")  # the list wrapped in brackets as it was renamed
    signature = "def url_for(self, __name: str, **params) -> str:\n    return __name\n"
    positional, _, _ = edited(signature, "def url_for", "def url_for(self, name: str, /, **params) -> str:")
    assert renamed(positional) == ("__name", "name")


def test_an_added_parameter_finds_the_call_sites():
    event, document, at = edited(MODULE, "def total(items):", "def total(items, start):")
    assert renamed(event) is None
    regions = regions_after(event, document, at)
    calls = {line_of(MODULE, "return total(items)"), line_of(MODULE, "return total(cart.items)")}
    assert calls == {region.start_line for region in regions if region.reason == CALL}


def test_reordered_parameters_find_the_call_sites_of_a_method():
    before = "class A:\n    def put(self, key, value):\n        pass\n\n\na = A()\n" + "\n" * 20 + "a.put(1, 2)\n"
    event, document, at = edited(before, "def put(self, key, value)", "    def put(self, value, key):")
    regions = regions_after(event, document, at)
    put = line_of(before, "a.put")
    assert [r for r in regions if r.reason == CALL] == [Region(put, put + 1, CALL)]


def test_the_cursor_window_without_any_rename():
    text = "".join(f"x{i} = {i}\n" for i in range(30))
    event, document, at = edited(text, "x10 = 10", "x10 = 11")
    assert renamed(event) is None
    assert regions_after(event, document, at) == [Region(8, 10, CURSOR), Region(11, 16, CURSOR)]


def test_a_file_that_does_not_parse_gives_the_cursor_window():
    text = "def broken(:\n    )))\n" + "".join(f"y{i} = ((\n" for i in range(20))
    event, document, at = edited(text, "y5 = ((", "z5 = ((")
    regions = regions_after(event, document, at)
    assert regions and rename_lines(regions) <= set(range(at - 2, at + 6))


def test_a_document_without_a_tree_gives_the_cursor_window():
    event, document, at = edited(MODULE, "    count = 0", "    n = 0")
    document.tree = None  # as a document over MAX_PARSE_BYTES has
    regions = regions_after(event, document, at)
    assert {region.reason for region in regions} == {CURSOR}
    assert sum(region.lines for region in regions) == edit_regions.CURSOR_LINES_ABOVE \
        + edit_regions.CURSOR_LINES_BELOW


def test_a_huge_file_stays_within_the_caps():
    body = "".join(f"    v{i} = value + {i}\n" for i in range(5000))
    text = "def f(value):\n" + body
    event, document, at = edited(text, "def f(value):", "def f(amount):")
    regions = regions_after(event, document, at)
    assert len(regions) <= MAX_REGIONS
    assert sum(region.lines for region in regions) <= MAX_REGION_LINES
    assert regions[0].start_line == 1  # nearest the cursor first
    lines = sorted(line for region in regions for line in range(region.start_line, region.end_line))
    assert len(lines) == len(set(lines))  # no overlaps


def test_regions_merge_and_never_hold_the_events_lines():
    regions = [Region(10, 12, CURSOR), Region(12, 14, RENAME), Region(3, 5, CALL), Region(4, 6, CURSOR)]
    assert merged(regions) == [Region(3, 6, CALL), Region(10, 14, RENAME)]
    assert outside([Region(0, 10, CURSOR)], 4, 6) == [Region(0, 4, CURSOR), Region(6, 10, CURSOR)]
    assert outside([Region(4, 6, RENAME)], 4, 6) == []


def test_the_caps_keep_the_nearest_regions():
    lines = ["x"] * 1000
    regions = [Region(line, line + 1, RENAME) for line in range(0, 1000, 10)]
    kept = capped(regions, 500, lines)
    assert len(kept) == MAX_REGIONS
    assert kept[0] == Region(500, 501, RENAME)
    assert max(abs(region.start_line - 500) for region in kept) <= 10 * MAX_REGIONS // 2
    assert capped([Region(0, MAX_REGION_LINES + 1, RENAME), Region(900, 901, CALL)], 0, lines) \
        == [Region(900, 901, CALL)]  # one too large is left out, the next that fits stays


def test_a_renamed_local_in_another_language_stays_in_its_function():
    before = ("function a() {\n  let n = 1;\n  return n + n;\n}\n" + "\n" * 10
              + "function b() {\n  let n = 2;\n  return n;\n}\n")
    after = before.replace("let n = 1", "let m = 1", 1)
    event = EditEvent("file:///w/m.js", before, after, diff_span(before, after), 0.0)
    regions = regions_after(event, ParsedDocument.parse("javascript", after), 1)
    assert 2 in rename_lines(regions) and not {15, 16} & rename_lines(regions)


def test_an_edit_that_replaces_the_whole_file_leaves_no_region():
    after = MODULE.replace("count", "n").replace("items", "things")
    event = EditEvent("file:///w/m.py", "x = 1\n", after, diff_span("x = 1\n", after), 0.0)
    assert regions_after(event, ParsedDocument.parse("python", after), 3) == []


def test_a_changed_literal_finds_its_other_places_in_the_file():
    source = 'def f(df):\n    df["A"] = df["A"].astype("category")\n    x = 10\n' + "    pass\n" * 8 + \
             '\n\ndef g(e):\n    e["A"] = e["A"].astype("category")\n    y = e["categoryx"]\n    return "category"\n'
    event, document, at = edited(source, 'astype("category")', '    df["A"] = df["A"].astype("raw_category")')
    regions = regions_after(event, document, at)
    assert {(r.start_line, r.end_line) for r in regions if r.reason == edit_regions.LITERAL} == {(14, 15), (16, 17)}
    number, document, at = edited(source, "x = 10", "    x = 20")
    assert 2 not in rename_lines(regions_after(number, document, at))  # 10 is nowhere else
    assert edit_literals.changed_literal(number) == ("10", "20")
    both, _, _ = edited(source, "x = 10", "    y = 20")
    assert edit_literals.changed_literal(both) is None  # a name changed too: not a literal's edit


def test_a_name_a_method_reads_but_does_not_bind_is_the_module_s_not_a_member():
    source = ("def helper(x):\n    return x\n\n\nclass A:\n    limit = helper(1)\n\n    def f(self, path):\n"
              "        return helper(path)\n\n    def g(self, path):\n        return helper(path) + self.helper\n\n\n"
              "print(helper(1))\n")
    event, document, _ = edited(source, "return helper(path)", "        return assist(path)")
    uses = [node.start_point[0] for node in edit_regions.rename_uses(event, document)]
    assert uses == [0, 5, 11, 14]  # the definition, the class body's call, g's and the module's; not self.helper


def test_the_uses_are_read_once_per_event_and_anew_when_the_document_changed():
    source = ("def helper(x):\n    return x\n\n\nclass A:\n    limit = helper(1)\n\n    def f(self, path):\n"
              "        return helper(path)\n\n    def g(self, path):\n        return helper(path) + self.helper\n\n\n"
              "print(helper(1))\n")
    event, document, _ = edited(source, "return helper(path)", "        return assist(path)")
    first = edit_regions.rename_uses(event, document)
    assert [node.id for node in edit_regions.rename_uses(event, document)] == [node.id for node in first]
    at = document.text.index("print(helper(1))")
    document.replace(at, at + len("print(helper(1))"), "print(1)")
    document.reparse()
    assert [node.start_point[0] for node in edit_regions.rename_uses(event, document)] == [0, 5, 11]


def test_a_member_renamed_leaves_the_attributes_of_another_imported_module_alone():
    source = ("import ddt\nimport os\nfrom .signals import sent\n\n\n@ddt.data(1, 2)\ndef test(result):\n"
              "    assert result.data\n    assert result.data == os.data\n    sent.data = 2\n")
    event, document, _ = edited(source, "assert result.data", "    assert result.content")
    uses = edit_regions.rename_uses(event, document)
    assert [(node.start_point[0], node.start_point[1]) for node in uses] == [(8, 18), (9, 9)]  # not ddt's nor os's
    module, document, _ = edited(source, "== os.data", "    assert result.data == os.content")
    assert [node.start_point[0] for node in edit_regions.rename_uses(module, document)] == [7, 8, 9]  # not ddt's
    alone = "import ddt\n\n\n@ddt.data(1, 2)\ndef test(result):\n    assert result.data\n"
    event, document, at = edited(alone, "assert result.data", "    assert result.content")
    assert edit_regions.rename_uses(event, document) == []
    assert next_edit.site_inputs(event, document) == (True, False)  # the rename rule's: no word carried


def test_a_builtin_type_s_method_put_for_another_is_renamed_on_the_same_receiver_only():
    source = ("def walk(stack, window, seq):\n    stack.append((0, seq))\n    window.append(1)\n"
              "    for item in seq:\n        stack.append(item)\n")
    event, document, _ = edited(source, "stack.append((0, seq))", "    stack.appendleft((0, seq))")
    assert [node.start_point[0] for node in edit_regions.rename_uses(event, document)] == [4]  # not `window`'s
    own = source + "\n\nclass Stack:\n    def append(self, item):\n        pass\n"
    event, document, _ = edited(own, "stack.append((0, seq))", "    stack.appendleft((0, seq))")
    assert [node.start_point[0] for node in edit_regions.rename_uses(event, document)] == [2, 4]  # the file defines it


def test_a_builtin_put_for_another_is_no_rename_unless_the_file_binds_it():
    source = ("def write(message, catalog):\n    flags = list(message.flags)\n"
              "    if isinstance(message.id, (list, tuple)):\n        return list(catalog)\n")
    event, document, _ = edited(source, "flags = list(", "    flags = sorted(message.flags)")
    assert edit_regions.renamed(event) == ("list", "sorted") and edit_regions.rename_uses(event, document) == []
    own = source.replace("def write(", "from .compat import list\n\n\ndef write(")
    event, document, _ = edited(own, "flags = list(", "    flags = sorted(message.flags)")
    assert [node.start_point[0] for node in edit_regions.rename_uses(event, document)] == [5, 6]  # the file's own
    raised = "def test_index():\n    raise Exception('dummy')\n    with pytest.raises(Exception):\n        run()\n"
    event, document, _ = edited(raised, "raise Exception", "    raise ValueError('dummy')")
    assert [node.start_point[0] for node in edit_regions.rename_uses(event, document)] == [2]  # an exception's


def test_a_whole_number_s_regions_are_the_places_its_draft_carries_it_to():
    source = "size = 2**16\nkey = urandom(16)\n" + "pass\n" * 8 + "limit = (2**16) + 1\n"
    event, document, at = edited(source, "size = 2**16", "size = 2**18")
    regions = regions_after(event, document, at)
    assert {(r.start_line, r.end_line) for r in regions if r.reason == edit_regions.LITERAL} == {(10, 11)}


def carried_lines(source: str, needle: str, line: str) -> list[int]:
    event, document, _ = edited(source, needle, line)
    return [node.start_point.row for node in edit_literals.carried_literals(event, document)]


def test_a_round_fraction_is_carried_where_it_stands_alike_or_in_the_user_s_function():
    source = ("def test_read(loop):\n    loop.call_later(0.03, stop)\n    wait(0.03)\n\n\n"
              "def test_write(loop):\n    loop.call_later(0.03, stop)\n    deadline = now + 0.03\n    area = 3.14\n\n\n"
              "def test_area():\n    return 3.14\n")
    assert carried_lines(source, "    loop.call_later(0.03, stop)", "    loop.call_later(0.1, stop)") == [2, 6]
    assert carried_lines(source, "area = 3.14", "    area = 3.1416") == [12]  # several digits: one value anywhere


def test_a_round_fraction_given_as_an_argument_is_carried_to_calls_of_the_same_callee():
    source = ("def test_read(loop):\n    loop.call_later(0.03, stop)\n\n\n"
              "def test_poll(loop):\n    pause(0.03)\n    loop.call_later(0.03, stop)\n")
    assert carried_lines(source, "    loop.call_later(0.03, stop)", "    loop.call_later(0.1, stop)") == [6]


def test_a_number_many_other_tests_hold_stays_theirs_one_a_few_hold_is_carried():
    tests = "".join(f"def test_case_{n}(differ):\n    differ.parse(code_{n}, parsers=2)\n\n\n" for n in range(5))
    last = "def test_last(differ):\n    differ.parse(code, parsers=2)\n    differ.parse(code + 'a', parsers=2)\n"
    source = tests + last
    assert carried_lines(source, "parse(code, parsers=2)", "    differ.parse(code, parsers=3)") == [22]
    few = source.replace("parsers=2)\n\n\n", "parsers=1)\n\n\n", 3)
    assert carried_lines(few, "parse(code, parsers=2)", "    differ.parse(code, parsers=3)") == [13, 17, 22]


def test_a_string_of_a_character_or_two_is_carried_in_calls_of_the_same_callee():
    source = ("OPTIONS = [('width=', 'w', 'line width')]\n\n\ndef save(name, text):\n"
              "    with open(name, 'w') as out:\n        out.write(text)\n\n\n"
              "def save_all(name, texts):\n    with open(name, 'w') as out:\n        out.writelines(texts)\n")
    assert carried_lines(source, "with open(name, 'w') as out:", "    with open(name, 'wb') as out:") == [9]
    options = carried_lines(source, "OPTIONS = [", "OPTIONS = [('width=', 'x', 'line width')]")
    assert options == []  # no call around the option's letter: the modes are other values


def test_a_value_that_echoes_its_call_goes_only_to_calls_that_echo_it_too():
    source = ("def test_host(self):\n    inst = make(host='host', port='8080')\n"
              "    self.assertEqual(inst.host, 'host')\n    lookup('host')\n    send(data, 'host')\n")
    assert carried_lines(source, "inst = make(", "    inst = make(host='localhost', port='8080')") == [2]
    plain = source.replace("make(host=", "make(name=")
    assert carried_lines(plain, "inst = make(", "    inst = make(name='localhost', port='8080')") == [2, 3, 4]


def test_a_sentence_reworded_is_carried_nowhere_but_a_typo_mended_is():
    source = ('def write(data):\n    if full():\n        raise BufferFull("Reached maximum read buffer size")\n\n\n'
              'def read():\n    if full():\n        raise BufferFull("Reached maximum read buffer size")\n')
    line = '        raise BufferFull("Reached maximum write buffer size")'
    assert carried_lines(source, "raise BufferFull", line) == []
    assert carried_lines(source.replace("maximum", "maxmum"), "raise BufferFull", line.replace("write", "read")) == [7]


def test_a_generic_literal_or_its_quotes_alone_have_no_literal_rule():
    source = 'def f(items):\n    head = items[1]\n    sep = ";"\n    key = "a"\n    return sep.join(items[1:]), key\n'
    for needle, line in (("head = items[1]", "    head = items[0]"), ('sep = ";"', '    sep = "; "')):
        event, document, at = edited(source, needle, line)
        assert edit_literals.changed_literal(event) is None
        assert edit_regions.literal_regions(event, document) == []
    key, _, _ = edited(source, 'key = "a"', '    key = "b"')
    assert edit_literals.changed_literal(key) == ('"a"', '"b"')  # a name in quotes: a key
    quotes, _, _ = edited(source, 'key = "a"', "    key = 'a'")
    assert edit_literals.changed_literal(quotes) is None  # the same value
    width, _, _ = edited(source.replace("items[1]", "items[2]"), "head = items[2]", "    head = items[20]")
    assert edit_literals.changed_literal(width) == ("2", "20")  # a number of its own


def lsp_lines_holding(text: str, needle: str) -> set[int]:
    """The LSP lines (ended by `\\n`, `\\r\\n` or a lone `\\r`) of `text` that hold `needle`."""
    return {index for index, line in enumerate(split_lines(text)) if needle in line}


def test_a_lone_cr_in_a_docstring_hides_no_rename_below_it():
    """Tree-sitter counts rows at `\\n` only; the event's lines count the lone `\\r` too."""
    before = MODULE.replace('def total(items):\n', 'def total(items):\n    """Add\rthe items\rup."""\n')
    event, document, at = edited(before, "    count = 0", "    n = 0")
    regions = regions_after(event, document, at)
    uses = lsp_lines_holding(document.text, "count += item") | lsp_lines_holding(document.text, "return count")
    assert uses <= rename_lines(regions) and len(uses) == 2
    planned = next_edit.plan(next_edit.EditAsk(document, event, at, "r", 800, drafting=next_edit.Drafting.RULES))
    total_after = document.text[:document.text.index("def average")]
    renamed_text = applied(document.text, next_edit.finish(planned, []))
    assert renamed_text[:renamed_text.index("def average")] == total_after.replace("count", "n")


def test_a_lone_cr_in_a_docstring_hides_no_call_site_below_it():
    docstring = 'def total(items):\n    """Add\rthe items\rup."""\n'
    before = MODULE.replace("def total(items):\n", docstring)
    event, document, at = edited(before, "def total(items):", "def total(items, scale):")
    calls = [region for region in regions_after(event, document, at) if region.reason == CALL]
    lines = {line for region in calls for line in range(region.start_line, region.end_line)}
    sites = lsp_lines_holding(document.text, "return total(items)") | lsp_lines_holding(document.text, "total(cart")
    assert sites <= lines and len(sites) == 2


def test_a_use_pointed_at_a_name_the_scope_has_renames_nothing():
    before = '''def base(typ, default):
    found = getattr(type, "__base__", default)
    return found or type
'''
    event, document, at = edited(before, "found = getattr(", '    found = getattr(typ, "__base__", default)')
    assert renamed(event) == ("type", "typ")
    assert edit_regions.rebound(event, document)
    assert edit_regions.rename_uses(event, document) == []
    assert line_of(before, "return found") not in rename_lines(regions_after(event, document, at))


def test_an_attribute_pointed_at_its_property_renames_nothing_but_a_half_renamed_one_goes_on():
    before = '''class Renderer:
    def __init__(self, formatter):
        self._formatter = formatter

    @property
    def formatter(self):
        return self._formatter

    def reset(self, value):
        self._formatter = value
'''
    event, document, _ = edited(before, "self._formatter = formatter", "        self.formatter = formatter")
    assert edit_regions.rebound(event, document) and edit_regions.rename_uses(event, document) == []
    half = before.replace("def formatter(self):\n        return self._formatter", "def render(self):\n        return 1")
    event, document, _ = edited(half, "self._formatter = formatter", "        self.formatter = formatter")
    assert not edit_regions.rebound(event, document)
    assert [node.start_point.row for node in edit_regions.rename_uses(event, document)] == [9]


def test_an_attribute_pointed_at_another_the_class_assigns_renames_nothing():
    before = '''class Context:
    def __init__(self, environment):
        self.environment = environment
        self.eval_ctx = EvalContext(self.environment)

    def wrap(self):
        return self.environment.autoescape

    def undefined(self, name):
        return self.environment.undefined(name)
'''
    event, document, _ = edited(before, "return self.environment.autoescape",
                                "        return self.eval_ctx.autoescape")
    assert renamed(event) == ("environment", "eval_ctx")
    assert edit_regions.rebound(event, document) and edit_regions.rename_uses(event, document) == []
    fresh = before.replace("        self.eval_ctx = EvalContext(self.environment)\n", "")
    event, document, _ = edited(fresh, "return self.environment.autoescape", "        return self.eval_ctx.autoescape")
    assert not edit_regions.rebound(event, document)  # a name new to the class: its uses are renamed
    assert len(edit_regions.rename_uses(event, document)) == 2  # its assignment and its other use


def test_a_name_that_stands_everywhere_gets_no_rename_rule():
    before = "x = 1\n" + "print(x)\n" * (edit_regions.MAX_NAME_USES + 1)
    event, document, _ = edited(before, "x = 1", "y = 1")
    assert renamed(event) == ("x", "y")
    assert edit_regions.too_common(("x", "y"), document.text)
    assert edit_regions.rename_uses(event, document) == []
    small = "x = 1\n" + "print(x)\n" * 3
    event, document, _ = edited(small, "x = 1", "y = 1")
    assert len(edit_regions.rename_uses(event, document)) == 3


def test_a_literal_is_found_where_its_text_stands_and_nowhere_else():
    text = 'A = "on"\n# "on" in a comment\nB = f("on", "one")\nC = """on"""\n'
    document = ParsedDocument.parse("python", text)
    assert [node.start_point.row for node in edit_literals.literal_nodes(document, '"on"')] == [0, 2]
    many = 'x = "a"\n' * (edit_regions.MAX_NAME_USES + 50)
    assert len(edit_literals.literal_nodes(ParsedDocument.parse("python", many), '"a"')) == edit_literals.MAX_PLACES


def test_an_import_moved_to_a_module_the_file_has_already_is_renamed_in_the_other_imports():
    before = "import attr\nimport attrs\nfrom attr import has\nfrom attr import fields\n\nattr.ib()\n"
    event, document, _ = edited(before, "from attr import has", "from attrs import has")
    assert edit_regions.rebound(event, document)
    assert [node.start_point.row for node in edit_regions.rename_uses(event, document)] == [3]  # not attr.ib


def test_an_import_pointed_at_a_name_the_file_has_leaves_the_old_uses_to_follow_it():
    before = ("from .core import BaseCommand\nfrom .core import Group\n\n\ndef run(cli: BaseCommand) -> None:\n"
              "    return Command(cli)\n\n\ndef Command(cli):\n    return BaseCommand(cli)\n")
    event, document, _ = edited(before, "from .core import BaseCommand", "from .core import Command")
    assert not edit_regions.rebound(event, document)  # BaseCommand is bound nowhere now
    assert [node.start_point.row for node in edit_regions.rename_uses(event, document)] == [4, 9]
    still = before.replace("from .core import Group", "from .base import BaseCommand")
    event, document, _ = edited(still, "from .core import BaseCommand", "from .core import Command")
    assert edit_regions.rebound(event, document)
    assert [node.start_point.row for node in edit_regions.rename_uses(event, document)] == [1]  # its imports alone


def test_an_import_pointed_at_another_name_under_the_same_alias_renames_nothing():
    before = ("from distutils.errors import OptionError as OptionError\n\n\n"
              "def check():\n    raise OptionError('no input')\n")
    event, document, _ = edited(before, "import OptionError as",
                                "from distutils.errors import DistutilsOptionError as OptionError")
    assert edit_regions.rename_uses(event, document) == []  # the uses read the alias, which stays
    plain, document, _ = edited(before.replace(" as OptionError", ""), "import OptionError",
                                "from distutils.errors import DistutilsOptionError")
    assert [node.start_point.row for node in edit_regions.rename_uses(plain, document)] == [4]


def test_typing_s_alias_put_for_its_builtin_goes_to_the_file_but_its_import():
    before = ("from typing import List, Optional\n\n\ndef f(items: List[int]) -> List[str]:\n"
              "    names: List[str] = []\n    return names\n\n\nclass C:\n    seen: Optional[List[int]] = None\n")
    event, document, _ = edited(before, "    names: List[str] = []", "    names: list[str] = []")
    assert [node.start_point.row for node in edit_regions.rename_uses(event, document)] == [3, 3, 9]


def test_an_import_line_sorted_into_another_leaves_the_old_name_alone():
    before = "import re\nimport os\nimport codecs\n\nPATTERN = re.compile('x')\nOPEN = codecs.open\n"
    event, document, _ = edited(before, "import re", "import codecs")
    assert edit_regions.rebound(event, document) and edit_regions.rename_uses(event, document) == []


SHADOWED = '''def flatten(mapping):
    for key, value in mapping.items():
        if isinstance(value, (tuple, list)):
            for value in value:
                yield key, value
        else:
            yield key, value


def runs(data):
    for _, b in groups(data):
        b = list(b)
        yield b[0], b[-1]
    return b
'''


def use_lines(event: EditEvent, document: ParsedDocument) -> list[int]:
    return [node.start_point.row for node in edit_regions.rename_uses(event, document)]


def test_a_binding_split_off_a_name_rebound_over_itself_renames_only_what_it_binds():
    loop, document, _ = edited(SHADOWED, "for value in value:", "            for v in value:")
    assert use_lines(loop, document) == [line_of(SHADOWED, "yield key, value")]  # the loop's body only
    assigned, document, _ = edited(SHADOWED, "b = list(b)", "        lb = list(b)")
    assert use_lines(assigned, document) == [line_of(SHADOWED, "yield b[0]")] * 2  # the rest of its block
    plain, document, _ = edited(SHADOWED, "for _, b in groups", "    for _, run in groups(data):")
    assert line_of(SHADOWED, "b = list(b)") in use_lines(plain, document)  # no shadowing: the whole scope


def test_a_use_of_an_import_pointed_at_a_builtin_renames_nothing():
    module = "from typing import Any\n\n\ndef first(x: Any) -> Any:\n    return x\n\n\n" \
        "def second(x: Any):\n    return x\n"
    pointed, document, _ = edited(module, "def first", "def first(x: Any) -> object:")
    assert use_lines(pointed, document) == []  # `Any` stays imported, its other uses stay
    py2 = "def pairs(n):\n    return [(i, j) for i in xrange(n) for j in xrange(i)]\n\n\ndef evens(n):\n" \
        "    return xrange(0, n, 2)\n"
    ported, document, _ = edited(py2, "return xrange(0", "    return range(0, n, 2)")
    assert use_lines(ported, document) == [1, 1]  # a builtin for a name the file never imported: renamed


TWICE = '''@app.websocket("/ws")
async def ws():
    await broadcast()


@collect
async def ws(queue):
    await queue.get()


class Session:
    def close(self):
        self.closed = True

    def __exit__(self, *exc):
        self.close()


class Socket:
    def close(self, code):
        self.code = code

    def check(self):
        return check()


def check():
    return ws
'''


def test_a_definition_renamed_while_another_of_its_name_stands_renames_nothing():
    duplicate, document, _ = edited(TWICE, "async def ws(queue):", "async def ws_v2(queue):")
    assert edit_regions.rebound(duplicate, document) and use_lines(duplicate, document) == []  # no `async def ws_v2():`
    method, document, _ = edited(TWICE, "    def close(self):", "    def disconnect(self):")
    assert edit_regions.rebound(method, document)  # `Socket.close` stays: no `self.close()` is sure to be this one
    function, document, _ = edited(TWICE, "def check():", "def check_open():")
    assert line_of(TWICE, "return check()") in use_lines(function, document)  # a method `check` is no other one
    alone = TWICE.replace("def close(self, code):", "def shut(self, code):")
    method, document, _ = edited(alone, "    def close(self):", "    def disconnect(self):")
    assert use_lines(method, document) == [line_of(alone, "self.close()")]


def test_a_function_renamed_leaves_a_module_of_its_name_in_the_imports():
    source = ("from build import ProjectBuilder\nfrom build.env import Env\nfrom .build import x\n\n\n"
              "def build(path):\n    return ProjectBuilder(path)\n\n\nbuild('.')\n")
    event, document, _ = edited(source, "def build(path):", "def build_package(path):")
    assert [node.start_point[0] for node in edit_regions.rename_uses(event, document)] == [9]
    imported = "import build\n\nbuild.main()\n"
    event, document, _ = edited(imported, "build.main()", "builder.main()")
    assert [node.start_point[0] for node in edit_regions.rename_uses(event, document)] == [0]  # a module renamed


def test_a_parameter_renamed_keeps_the_local_its_function_rebinds_from_it():
    source = ("def windowed(iterable, n):\n    if n < 0:\n        raise ValueError(iterable)\n"
              "    iterable = iter(iterable)\n    window = list(islice(iterable, n))\n    return iterable\n")
    event, document, _ = edited(source, "def windowed(iterable, n):", "def windowed(seq, n):")
    assert [node.start_point for node in edit_regions.rename_uses(event, document)] == [(2, 25), (3, 20)]
    branch = source.replace("    iterable = iter(iterable)\n", "    if n:\n        iterable = iter(iterable)\n")
    event, document, _ = edited(branch, "def windowed(iterable, n):", "def windowed(seq, n):")
    assert len(edit_regions.rename_uses(event, document)) == 5  # rebound in a branch: every use may be the parameter


def test_a_local_renamed_at_its_assignment_stops_where_its_block_assigns_the_old_name_afresh():
    source = ("def check_xsrf(self):\n    token = self.get_argument('_xsrf')\n    if not token:\n"
              "        raise Missing()\n    _, token, _ = decode(token)\n    if not token:\n        raise Invalid()\n"
              "    return token\n")
    event, document, _ = edited(source, "    token = self.get_argument", "    input_token = self.get_argument('_xsrf')")
    assert [node.start_point.row for node in edit_regions.rename_uses(event, document)] == [2, 4]  # its right side
    rebuilt = ("def version():\n    parts = __version__.split()[0]\n    parts = re.split('[.-]', parts)\n"
               "    return len(parts)\n")
    event, document, _ = edited(rebuilt, "    parts = __version__", "    version_parts = __version__.split()[0]")
    assert [node.start_point.row for node in edit_regions.rename_uses(event, document)] == [2, 2, 3]  # a chain goes on
    fresh = ("def test_skip(tmpdir, case):\n    skip, count, names = case\n    found = run(tmpdir, skip)\n"
             "    names = {str(path) for path in found}\n    assert names == names\n")
    event, document, _ = edited(fresh, "    skip, count, names = case", "    skip, count, names_expected = case")
    assert edit_regions.rename_uses(event, document) == [] and edit_regions.renames_in_scope(event, document)
    unused, document, _ = edited(fresh, "    skip, count, names = case", "    skip, count, _names = case")
    assert [node.start_point.row for node in edit_regions.rename_uses(unused, document)] == [3, 4, 4]
