"""Tests of completion.context (windows, names, snippet choice) and completion.definitions."""
from __future__ import annotations

import pytest

from completion.context import (PRIORITY_OPEN_DOCUMENT, PRIORITY_RECENT_EDIT, PRIORITY_SAME_DOCUMENT,
                                PRIORITY_WORKSPACE, approx_tokens, edit_snippets, fit_snippets,
                                names_near, prefix_window, rank_definitions, stem_at, suffix_window,
                                visible_lines)
from completion.definitions import Definition, DefinitionIndex, definitions, imports
from completion.syntax import new_parser
from engine.wire.protocol import Snippet


def test_windows_keep_whole_lines_nearest_the_cursor():
    prefix = "".join(f"line{i}\n" for i in range(100)) + "x = "
    window = prefix_window(prefix, budget_tokens=10)  # 32 characters
    assert window == "line97\nline98\nline99\nx = " and approx_tokens(window) <= 10
    suffix = "1\n" + "".join(f"line{i}\n" for i in range(100))
    assert suffix_window(suffix, budget_tokens=5) == "1\nline0\nline1"
    assert prefix_window("short", 10) == "short" and suffix_window("short", 10) == "short"
    assert prefix_window("y" * 100, 10) == "y" * 32  # one long line is cut inside it


def test_windows_move_to_a_statement_boundary_when_it_is_near():
    prefix = "a = 1\n" * 10 + "if x:\n    b = 2\n    c = 3\nd = "
    def boundary_after(offset):
        return prefix.index("if x:")
    window = prefix_window(prefix, budget_tokens=12, boundary_after=boundary_after)
    assert window == "if x:\n    b = 2\n    c = 3\nd = "
    assert prefix_window(prefix, 12, lambda offset: None) == "a = 1\nif x:\n    b = 2\n    c = 3\nd = "
    assert prefix_window(prefix, 9, boundary_after) == "    b = 2\n    c = 3\nd = "  # never earlier


def test_names_near_the_cursor_come_nearest_first():
    assert names_near("import os\nx = read(path)\ny = ", "\nz = write(x)\n")[:4] == ["y", "path", "read", "x"]
    assert stem_at("value = read_con") == "read_con" and stem_at("x = (") == ""


def test_visible_lines_span_both_windows():
    assert visible_lines("a\nb\nc\nd = ", "c\nd = ", "1\ne\n") == range(2, 6)


def definition(name: str, uri: str, line: int = 0) -> Definition:
    return Definition(name, f"def {name}():", uri, line)


def test_definitions_are_ranked_by_place_then_nearness():
    here, other, far = "file:///here.py", "file:///open.py", "file:///disk.py"
    index = DefinitionIndex()
    index.update(here, [definition("a", here, 1), definition("b", here, 50)])
    index.update(other, [definition("b", other)])
    index.update(far, [definition("c", far)])
    ranked = rank_definitions(["c", "b", "a"], index.lookup, here, {here, other}, range(0, 10))
    assert [(priority, d.uri) for priority, d in ranked] == [
        (PRIORITY_SAME_DOCUMENT - 1, here), (PRIORITY_OPEN_DOCUMENT - 1, other), (PRIORITY_WORKSPACE, far)]


def test_snippets_fit_the_budget_and_go_least_important_first():
    candidates = [Snippet("a" * 32, "p", 900), Snippet("b" * 320, "p", 600), Snippet("c" * 16, "p", 200)]
    assert [s.text[0] for s in fit_snippets(candidates, budget_tokens=20)] == ["c", "a"]


def test_the_index_follows_updates():
    index = DefinitionIndex()
    index.update("u", [definition("read_config", "u"), definition("read", "u")])
    assert index.starting_with("read", 5) == ["read_config"] and len(index.lookup("read")) == 1
    index.update("u", [definition("write", "u")])
    assert index.lookup("read") == [] and index.by_name.keys() == {"write"}
    index.remove("u")
    assert index.by_name == {} and index.by_uri == {}


@pytest.mark.parametrize("language, source, expected", [
    ("python", 'import os\n@dec\ndef f(a):\n    """Doc."""\n    return a\nclass C:\n    def m(self): pass\n',
     [("f", 'def f(a):\n    """Doc."""'), ("C", "class C:"), ("m", "def m(self):")]),
    ("c", "#include <stdio.h>\n/* Adds. */\nstatic int *add(int a) { return a; }\nstruct P { int x; };\nstruct P p;\n",
     [("add", "/* Adds. */\nstatic int *add(int a)"), ("P", "struct P { int x; }")]),
    ("go", 'package m\nimport "fmt"\n// Add adds.\nfunc Add(a int) int { return a }\ntype T struct { x int }\n',
     [("Add", "// Add adds.\nfunc Add(a int) int"), ("T", "T struct { x int }")]),
    ("rust", "use std::io;\n/// Adds.\nfn add(a: i32) -> i32 { a }\ntrait Tr { fn t(&self); }\n",
     [("add", "/// Adds.\nfn add(a: i32) -> i32"), ("Tr", "trait Tr"), ("t", "fn t(&self);")]),
    ("typescript", 'import {x} from "y";\nfunction f(a: number): number { return a; }\ninterface I { a: number }\n',
     [("f", "function f(a: number): number"), ("I", "interface I { a: number }")]),
    ("java", "import java.util.List;\nclass A { int f(int x) { return x; } }\n",
     [("A", "class A"), ("f", "int f(int x)")]),
    ("cpp", "#include <v>\nint A::h() { return 1; }\n", [("h", "int A::h()")]),
])
def test_definitions_and_imports_per_language(language, source, expected):
    tree = new_parser(language).parse(source.encode())
    assert [(d.name, d.text) for d in definitions(tree, source, "u")] == expected
    first_import = next(line for line in source.splitlines() if line.startswith(("import", "#", "use")))
    assert imports(tree, source) == first_import


def test_recent_edits_become_snippets_newest_first_outside_the_windows():
    texts = {"file:///a.py": "a0\na1\na2\na3\na4\na5\na6\na7\na8\n", "file:///b.py": "b0\nb1\n"}
    edits = [("file:///a.py", 8), ("file:///b.py", 0), ("file:///a.py", 1), ("file:///gone.py", 0)]
    snippets = edit_snippets(edits, texts.get, "file:///a.py", range(0, 4))
    assert [(s.text, s.path, s.priority) for s in snippets] == [
        ("b0\nb1", "/b.py", PRIORITY_RECENT_EDIT - 2), ("a5\na6\na7\na8", "/a.py", PRIORITY_RECENT_EDIT - 3)]
