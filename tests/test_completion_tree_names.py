"""Tests of completion.tree_names: the nodes on some lines of a module with many statements are
found by bisection, the same as a full walk finds them."""
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

