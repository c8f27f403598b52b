"""Cross-keystroke reuse: a new canvas reuses a recent one's keys/values for the start they share."""
import pytest
import torch

from engine.prefix_cache import MIN_REUSE_TOKENS, PrefixCache, shared_start
from engine.runner import ModelRunner
from infill.decode import encode, full_pass
from infill.fim import prepare

PREFIX = "import os\n\n\ndef read_config(path, default=None):\n    if not os.path.exists(path):\n" * 3


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def test_shared_start():
    a = torch.tensor([1, 2, 3, 4])
    assert shared_start(a, torch.tensor([1, 2, 9, 4])) == 2
    assert shared_start(a, torch.tensor([1, 2])) == 2
    assert shared_start(a, torch.tensor([7])) == 0


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
    first = runner.complete(PREFIX + "        return ", "\n", "single_line", 8, None, {})
    assert runner.prefixes.misses == 1 and runner.prefixes.hits == 0
    again = runner.complete(PREFIX + "        return ", "\n", "single_line", 8, None, {})
    assert runner.prefixes.hits == 1 and again.text == first.text
    d = runner.start(PREFIX + "        return d", "\n", "single_line", 8, None, {})
    reused = d.states[0].prefix[0][0].shape[2]
    assert MIN_REUSE_TOKENS <= reused <= int(d.states[0].positions[0])
    runner.start(PREFIX + "        return d", "\n", "single_line", 8, None, {"reuse_prefix": False})
    assert runner.prefixes.hits == 2  # asked not to, it did not look


def test_the_cache_keeps_the_newest_canvases():
    cache = PrefixCache(capacity=2)
    kv = [(torch.zeros(1, 1, 40, 2), torch.zeros(1, 1, 40, 2))]
    for start in (100, 200, 300):
        cache.store(torch.arange(start, start + 40), kv)
    assert cache.lookup(torch.arange(100, 140), limit=40) is None  # evicted
    found = cache.lookup(torch.arange(300, 340), limit=35)
    assert found is not None and found[0][0].shape[2] == 35
