"""Cross-keystroke reuse: a new canvas reuses a recent one's keys/values for the start they share."""
import pytest
import torch

from engine.worker.prefix_cache import MIN_REUSE_TOKENS, PrefixCache, shared_end, shared_start
from engine.worker.runner import ModelRunner
from runner_fim import complete_fim, start_fim
from infill import decode
from infill.decode.passes import encode, full_pass
from infill.fim import prepare

PREFIX = "import os\n\n\ndef read_config(path, default=None):\n    if not os.path.exists(path):\n" * 3
SUFFIX = "\n    with open(path) as handle:\n        return json.load(handle)\n" * 3


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def test_shared_start():
    a = torch.tensor([1, 2, 3, 4])
    assert shared_start(a, torch.tensor([1, 2, 9, 4])) == 2
    assert shared_start(a, torch.tensor([1, 2])) == 2
    assert shared_start(a, torch.tensor([7])) == 0


def test_shared_end():
    a = torch.tensor([1, 2, 3, 4])
    assert shared_end(a, torch.tensor([9, 2, 3, 4])) == 3
    assert shared_end(a, torch.tensor([3, 4])) == 2
    assert shared_end(a, torch.tensor([7])) == 0


def test_moved_keys_are_the_keys_encoded_at_the_new_positions(runner):
    ids = torch.randint(4, runner.model.cfg.vocab_size, (1, 24))
    with torch.no_grad():
        _, here = runner.model.hidden(ids)
        _, there = runner.model.hidden(ids, positions=torch.arange(5, 29)[None])  # same text, 5 further on
    for (k, v), (k5, v5) in zip(runner.model.moved(here, 5), there):
        assert torch.allclose(k, k5, atol=1e-4) and torch.allclose(v, v5, atol=1e-4)


def test_a_reused_start_and_end_of_the_same_canvas_change_nothing(runner):
    canvas, _ = prepare(runner.model, runner.tok, PREFIX + "        return ", SUFFIX, "single_line", 8)
    ids = torch.tensor(canvas.ids)[None]
    end = canvas.hole_start + canvas.hole_len
    window = slice(canvas.hole_start - 1, end)
    with torch.no_grad():
        h, context, whole = encode(runner.model, ids, window)
        start = [(k[:, :, :canvas.hole_start - 1], v[:, :, :canvas.hole_start - 1]) for k, v in whole]
        finish = (end, [(k[:, :, end:], v[:, :, end:]) for k, v in whole])
        h2, context2, whole2 = encode(runner.model, ids, window, prefix=start, suffix=finish)
    assert torch.allclose(h, h2, atol=1e-5)
    assert all(torch.allclose(a[0], b[0], atol=1e-5) for a, b in zip(context, context2))
    assert all(a[0].shape == b[0].shape for a, b in zip(whole, whole2))


def test_a_reused_start_of_the_same_canvas_changes_nothing(runner):
    canvas, _ = prepare(runner.model, runner.tok, PREFIX + "        return ", "\n", "single_line", 8)
    ids = torch.tensor(canvas.ids)[None]
    window = slice(canvas.hole_start - 1, canvas.hole_start + canvas.hole_len)
    with torch.no_grad():
        h, context, whole = encode(runner.model, ids, window)
        reuse = [(k[:, :, :canvas.hole_start - 1], v[:, :, :canvas.hole_start - 1]) for k, v in whole]
        h2, context2, _ = encode(runner.model, ids, window, prefix=reuse)
        h3, _ = full_pass(runner.model, ids, window)
    assert torch.allclose(h, h2, atol=1e-5) and torch.allclose(h, h3)
    assert all(torch.allclose(a[0], b[0], atol=1e-5) for a, b in zip(context, context2))


def test_the_next_keystroke_reuses_the_shared_start(runner):
    runner.prefixes = PrefixCache()
    first = complete_fim(runner, PREFIX + "        return ", "\n", "single_line", 8, None, {})
    assert runner.prefixes.misses == 1 and runner.prefixes.hits == 0
    again = complete_fim(runner, PREFIX + "        return ", "\n", "single_line", 8, None, {})
    assert runner.prefixes.hits == 1 and again.text == first.text
    d = start_fim(runner, PREFIX + "        return d", "\n", "single_line", 8, None, {})
    reused = d.reuse[d.states[0]].prefix[0][0].shape[2]
    assert MIN_REUSE_TOKENS <= reused <= int(d.states[0].positions[0])
    start_fim(runner, PREFIX + "        return d", "\n", "single_line", 8, None, {"reuse_prefix": False})
    assert runner.prefixes.hits == 2  # asked not to, it did not look


def test_the_next_keystroke_reuses_the_shared_end_moved_to_its_place(runner):
    runner.prefixes = PrefixCache()
    complete_fim(runner, PREFIX + "        return", SUFFIX, "single_line", 8, None, {})
    d = start_fim(runner, PREFIX + "        return default", SUFFIX, "single_line", 8, None, {})
    state = d.states[0]
    prefix, (first, kv) = d.reuse[state]
    assert first > int(state.positions[-1]) and kv[0][0].shape[2] == state.ids.shape[1] - first
    assert kv[0][0].shape[2] >= MIN_REUSE_TOKENS
    assert d.step_tokens == first - prefix[0][0].shape[2]  # the first pass runs only what lies between
    while not d.done:
        runner.step([d])
    assert not d.reuse and runner.answers(d)[0].text is not None  # given to its first pass, then let go


def test_a_first_full_pass_gives_back_the_canvas_it_encoded_once(runner):
    """What the worker's prefix cache keeps comes back from the decoder's step, not from its state."""
    decoding = start_fim(runner, PREFIX + "        return", SUFFIX, "single_line", 8, None, {"rule": "left_to_right"})
    state = decoding.states[0]
    canvas = state.ids[0].clone()
    [(encoded, kv)] = decode.step(runner.model, [state]).encoded
    assert torch.equal(encoded, canvas) and kv[0][0].shape[2] == len(canvas)
    assert not state.done and decode.step(runner.model, [state]).encoded == [None]


def test_a_keystroke_in_a_file_longer_than_the_context_reuses_the_start(runner):
    long_prefix = PREFIX * 8  # past the model's 256 positions: the canvas holds the prefix's end only
    runner.prefixes = PrefixCache()
    complete_fim(runner, long_prefix + "        return", SUFFIX, "single_line", 8, None, {})
    d = start_fim(runner, long_prefix + "        return d", SUFFIX, "single_line", 8, None, {})
    prefix = d.reuse[d.states[0]].prefix
    assert prefix is not None and prefix[0][0].shape[2] >= int(d.states[0].positions[0]) - 4


def test_a_canvas_that_differs_in_more_than_a_keystroke_reuses_nothing(runner):
    runner.prefixes = PrefixCache()
    complete_fim(runner, PREFIX + "        return", SUFFIX, "single_line", 8, None, {})
    middle = len(PREFIX) // 2
    elsewhere = PREFIX[:middle] + "x = 1\n" * 12 + PREFIX[middle:] + "        return"  # another place of the file
    assert not start_fim(runner, elsewhere, SUFFIX, "single_line", 8, None, {}).reuse


def test_the_line_below_reuses_nothing(runner):
    """Its suffix lacks the line that was the kept canvas's suffix: not typing on at one place."""
    runner.prefixes = PrefixCache()
    lines = SUFFIX.split("\n")
    complete_fim(runner, PREFIX, "\n".join(lines[1:]), "single_line", 8, None, {})
    decoding = start_fim(runner, PREFIX + lines[1] + "\n", "\n".join(lines[2:]), "single_line", 8, None, {})
    assert not decoding.reuse and runner.prefixes.misses == 2


def hole_canvas(start: int, typed: int = 0) -> torch.Tensor:
    """A 40-token start from `start` (plus `typed` tokens), a hole of four -1s, a 36-token end."""
    return torch.cat([torch.arange(start, start + 40 + typed), torch.full((4,), -1), torch.arange(36)])


def test_the_cache_keeps_the_newest_canvases():
    cache = PrefixCache(capacity=2)
    kv = [(torch.zeros(1, 1, 80, 2), torch.zeros(1, 1, 80, 2))]
    for start in (100, 200, 300):
        cache.store(hole_canvas(start), kv, 39, 44)
    assert cache.lookup(hole_canvas(100, typed=1), 40, 45) is None  # evicted
    prefix, end = cache.lookup(hole_canvas(300, typed=1), 40, 45)
    assert prefix[0][0].shape[2] == 40 and end[0] == 45 and end[1][0][0].shape[2] == 36 and end[2] == 1


def test_a_canvas_typed_on_takes_the_place_of_the_one_it_types_on_from():
    cache = PrefixCache(capacity=2)
    kv = [(torch.zeros(1, 1, 80, 2), torch.zeros(1, 1, 80, 2))]
    cache.store(hole_canvas(100), kv, 39, 44)
    cache.store(hole_canvas(200), kv, 39, 44)
    for typed in (1, 2, 3):  # typing on at the second place keeps the first one
        cache.store(hole_canvas(200, typed), kv, 39 + typed, 44 + typed)
    assert cache.lookup(hole_canvas(100, typed=1), 40, 45) is not None
    assert cache.lookup(hole_canvas(200, typed=4), 43, 48)[0][0][0].shape[2] == 43
