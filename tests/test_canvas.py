"""Canvas layout: budgets, healing, nearest context kept."""
from infill.canvas import budget_split, fim_canvas


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


def test_empty_document(tiny_tokenizer):
    canvas = fim_canvas(tiny_tokenizer, "", "", hole_len=4, max_context=64)
    assert canvas.ids == [tiny_tokenizer.file_id] + [tiny_tokenizer.mask_id] * 4
