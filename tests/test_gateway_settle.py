"""The streamed part of a completion is always the start of the final answer (`gateway.settle`).

For many texts the worker could answer, every prefix's settled part must start the final
answer's text: a stream's chunks then add up to the unstreamed answer.
"""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gateway.settle import cut_at_stop, final_text, settled
from completion.postprocess import clean

CODE = st.text(alphabet=" \n\tab():{}[]'\"#=,x", max_size=60)
CONTEXTS = st.sampled_from([
    ("def f(x):\n    ", "\n\nprint(1)\n"),
    ("def f(x):\n    return ", "\n"),
    ("items = [", "]\n"),
    ("call(a, ", ")\nnext_line()\n"),
    ("if x:\n\ty = ", "\n\tz = 2\n"),
    ("", ""),
])
STOPS = st.lists(st.sampled_from(["\n\n", "#", "):", "x", "\n"]), max_size=2)


@settings(max_examples=400, deadline=None)
@given(CODE, CONTEXTS, st.sampled_from(["single_line", "multi_line"]), STOPS,
       st.integers(1, 4), st.data())
def test_every_prefix_settles_to_the_start_of_the_final_answer(text, context, mode, stops, max_lines, data):
    prefix, suffix = context
    final, _ = final_text(clean(text, mode, max_lines, prefix, suffix, "python"), stops)
    cut = data.draw(st.integers(0, len(text)))
    shown = settled(text[:cut], mode, max_lines, prefix, suffix, "python", stops)
    assert final.startswith(shown), (text[:cut], shown, final)


def test_whole_lines_of_a_multi_line_text_flow_before_the_end():
    shown = settled("x = 1\n    y = 2\n    z", "multi_line", 12, "def f():\n    ", "\n", "python", [])
    assert shown == "x = 1\n    y = 2"


def test_the_first_line_flows_as_it_is_written_but_not_its_trailing_blanks():
    assert settled("return a + ", "single_line", 12, "def f(a):\n    ", "\n", "python", []) == "return a +"


def test_text_right_of_the_cursor_holds_back_as_many_characters():
    assert settled("a, b", "single_line", 12, "f(", ")\n", "python", []) == "a, "


def test_a_stop_sequence_ends_the_settled_text_and_a_possible_start_of_one_is_held():
    assert settled("x = 1 # note", "single_line", 12, "", "\n", "python", ["#"]) == "x = 1 "
    assert settled("x = 1", "single_line", 12, "", "\n", "python", ["12345"]) == "x"
    assert cut_at_stop("a.b.c", [".", "c"]) == ("a", True)
    assert cut_at_stop("abc", ["", "z"]) == ("abc", False)
