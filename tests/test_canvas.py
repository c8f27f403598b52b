"""Canvas layout: budgets, healing, nearest context kept."""
from infill.canvas import (PREFIX_ALIGN, SNIPPET_SHARE, budget_split, fim_canvas, kept_ends, regions_canvas,
                           snippet_tokens, widest_reach)


def test_budget_prefers_prefix_but_keeps_suffix():
    assert budget_split(100, 20, 1000, 1000) == (60, 19)
    assert budget_split(100, 20, 10, 1000) == (10, 69)
    assert budget_split(100, 20, 1000, 5) == (74, 5)
    assert budget_split(10, 20, 5, 5) == (0, 0)


def test_canvas_layout(tiny_tokenizer):
    tok = tiny_tokenizer
    canvas = fim_canvas(tok, "def f(x):\n    return sel", "\n\nprint(f(1))\n", hole_len=8, max_context=128)
    assert canvas.ids[0] == tok.file_id
    hole = canvas.ids[canvas.hole_start:canvas.hole_start + canvas.hole_len]
    assert hole == [tok.mask_id] * 8
    assert canvas.healed == " sel"
    assert tok.decode(canvas.ids[1:canvas.hole_start]) == "def f(x):\n    return"
    assert tok.decode(canvas.ids[canvas.hole_start + 8:]) == "\n\nprint(f(1))\n"


def test_long_context_keeps_tokens_nearest_the_hole(tiny_tokenizer):
    tok = tiny_tokenizer
    prefix = "".join(f"x{i} = {i}\n" for i in range(200))
    suffix = "".join(f"y{i} = {i}\n" for i in range(200))
    canvas = fim_canvas(tok, prefix, suffix, hole_len=16, max_context=120)
    assert len(canvas.ids) <= 120
    before = tok.decode(canvas.ids[1:canvas.hole_start])
    after = tok.decode(canvas.ids[canvas.hole_start + 16:])
    assert before.endswith("x199 = 199\n") and after.startswith("y0 = 0\n")



def test_snippets_take_at_most_their_share_most_important_last(tiny_tokenizer):
    tok = tiny_tokenizer
    prefix = "".join(f"x{i} = {i}\n" for i in range(200))
    snippets = [f"def helper{i}(a):\n    return a + {i}" for i in range(30)]
    canvas = fim_canvas(tok, prefix, "\n", hole_len=16, max_context=240, snippets=snippets)
    laid = snippet_tokens(tok, snippets, 240 // SNIPPET_SHARE)
    assert laid and len(laid) <= 240 // SNIPPET_SHARE and len(canvas.ids) <= 240
    assert canvas.ids[1:1 + len(laid)] == laid  # after the file marker, before the prefix
    assert tok.decode(laid).endswith("def helper29(a):\n    return a + 29")  # the most important kept
    assert tok.decode(canvas.ids[1 + len(laid):canvas.hole_start]).endswith("x199 = 199\n")
    assert fim_canvas(tok, prefix, "\n", 16, 240).ids == fim_canvas(tok, prefix, "\n", 16, 240, snippets=[]).ids


def test_a_cut_prefix_starts_in_place_while_typing_goes_on(tiny_tokenizer):
    tok = tiny_tokenizer
    prefix = "".join(f"x{i} = {i}\n" for i in range(300))
    starts = set()
    for typed in ("", "z", "z =", "z = 1"):
        canvas = fim_canvas(tok, prefix + typed, "\n", hole_len=16, max_context=300)
        starts.add(tuple(canvas.ids[:200]))
        assert canvas.hole_start > 300 - 16 - 2 - PREFIX_ALIGN  # at most PREFIX_ALIGN tokens short of the budget
    assert len(starts) == 1  # a sliding cut would change the start at every keystroke


def test_empty_document(tiny_tokenizer):
    canvas = fim_canvas(tiny_tokenizer, "", "", hole_len=4, max_context=64)
    assert canvas.ids == [tiny_tokenizer.file_id] + [tiny_tokenizer.mask_id] * 4


def test_regions_canvas_layout(tiny_tokenizer):
    tok = tiny_tokenizer
    pieces = ["def f(x):\n    return sel", "\n\ndef g(y):\n    ", "\n\nprint(f(1))\n"]
    canvas = regions_canvas(tok, pieces, hole_lens=[6, 4], max_context=128)
    assert canvas.ids[0] == tok.file_id and canvas.hole_lens == [6, 4]
    first, second = canvas.spans
    assert canvas.ids[first] == [tok.mask_id] * 6 and canvas.ids[second] == [tok.mask_id] * 4
    assert canvas.healed == [" sel", ""]  # an indentation run ends a piece: nothing to heal
    assert tok.decode(canvas.ids[1:first.start]) == "def f(x):\n    return"
    assert tok.decode(canvas.ids[first.stop:second.start]) == "\n\ndef g(y):\n    "
    assert tok.decode(canvas.ids[second.stop:]) == "\n\nprint(f(1))\n"


def test_regions_canvas_keeps_the_text_nearest_each_hole(tiny_tokenizer):
    tok = tiny_tokenizer
    lines = lambda name: "".join(f"{name}{i} = {i}\n" for i in range(200))  # noqa: E731
    canvas = regions_canvas(tok, [lines("x"), lines("y"), lines("z")], hole_lens=[8, 8], max_context=200)
    assert len(canvas.ids) <= 200
    first, second = canvas.spans
    before, between, after = (tok.decode(canvas.ids[1:first.start]), tok.decode(canvas.ids[first.stop:second.start]),
                              tok.decode(canvas.ids[second.stop:]))
    assert before.endswith("x199 = 199\n") and after.startswith("z0 = 0\n")
    assert between.startswith("y0 = 0\n") and between.endswith("y199 = 199\n") and "y100 = 100" not in between
    assert len(canvas.ids) > 190  # the budget is used, not wasted


def test_regions_canvas_with_no_room_keeps_only_the_holes(tiny_tokenizer):
    tok = tiny_tokenizer
    canvas = regions_canvas(tok, ["a = 1\n", "b = 2\n", "c"], hole_lens=[3, 3], max_context=7)
    assert canvas.ids == [tok.file_id] + [tok.mask_id] * 6 and canvas.hole_starts == [1, 4]


def test_kept_ends_favour_the_text_before_a_hole():
    assert kept_ends([100, 100, 100], 5) == [(0, 15), (5, 15), (5, 0)]
    assert kept_ends([100, 12, 100], 5) == [(0, 15), (5, 7), (5, 0)]  # a short middle piece is kept whole
    assert widest_reach([100, 100], 40) == 10 and widest_reach([3, 3], 1000) == 3
