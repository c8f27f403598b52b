"""Tests of completion.tree_names: the nodes on some lines of a module with many statements are
found by bisection, the same as a full walk finds them; the functions that bind a name, and the names
a span reads and binds."""
from completion import tree_names
from completion.syntax import ParsedDocument


def test_the_nodes_on_some_lines_of_a_long_module_are_those_of_a_full_walk():
    text = "".join(f"v{n} = f({n})\n" for n in range(500))
    document = ParsedDocument.parse("python", text)
    root = document.tree.root_node
    assert root.child_count > tree_names.SCAN_CHILDREN
    found = [(node.type, node.start_point.row) for node in tree_names.overlapping(root, 250, 252, document)]
    assert [row for kind, row in found if kind == "expression_statement"] == [250, 251]
    assert found[0] == ("module", 0) and all(250 <= row <= 251 for _, row in found[1:])



def test_a_name_s_binding_functions_are_its_functions_or_none_for_the_module():
    text = ("import os\n\n\ndef first(sig):\n    return sig\n\n\ndef second():\n    def inner(sig=1):\n"
            "        return sig\n    return os.sep, len\n")
    root = ParsedDocument.parse("python", text).tree.root_node
    assert [scope.start_point.row for scope in tree_names.binding_functions(root, "sig")] == [3, 8]
    assert tree_names.binding_functions(root, "os") is None and tree_names.binding_functions(root, "len") is None
    assert tree_names.binding_functions(root, "inner")[0].start_point.row == 7  # a def's name: the function around it
    start = text.index("return os")
    assert tree_names.identifiers_in(root, start, start + len("return os.sep, len")) == ({"os", "len"}, set())
    start = text.index("inner(sig=1)")
    assert tree_names.identifiers_in(root, start - 4, start + len("inner(sig=1):")) == (set(), {"inner", "sig"})


def test_a_binding_s_scope_is_its_except_clause_else_its_function():
    text = "def f(e):\n    try:\n        g()\n    except E as e:\n        return e\n    return [e for e in e]\n"
    root = ParsedDocument.parse("python", text).tree.root_node
    bindings, reads = tree_names.name_uses(root, "e")
    assert [(node.start_point.row, tree_names.binding_scope(node).type) for node in bindings] == [
        (0, "function_definition"), (3, "except_clause"), (5, "list_comprehension")]
    assert [node.start_point.row for node in reads] == [4, 5, 5]
