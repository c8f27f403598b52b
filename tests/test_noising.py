"""The training objective's layout rules (pure NumPy, no model)."""
import numpy as np

from training.noising import Special, cut_holes, diffusion_batch, line_starts, noise_window

SP = Special(mask=0, pad=1, newline=9)


def fake_window(length=300, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(10, 50, size=length)
    w[rng.choice(np.arange(1, length - 1), size=length // 8, replace=False)] = SP.newline
    return w


def test_line_starts_follow_newlines():
    w = np.array([5, 9, 6, 7, 9, 8])
    assert line_starts(w, 9).tolist() == [2, 5]


def test_holes_keep_context_and_pad_only_inside_holes():
    rng = np.random.default_rng(1)
    for seed in range(50):
        w = fake_window(seed=seed)
        ids, is_hole = cut_holes(w, SP, rng, 256)
        assert ids.shape == is_hole.shape == (256,)
        assert not (ids[~is_hole] == SP.pad).any()
        context = ids[~is_hole]
        # context tokens appear in the window's order: each is the next unused window token or later
        assert np.isin(context, w).all()


def test_pads_follow_the_middle():
    rng = np.random.default_rng(2)
    for seed in range(50):
        ids, is_hole = cut_holes(fake_window(seed=seed), SP, rng, 256)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], is_hole.astype(int), [0]])))
        for start, end in zip(edges[::2], edges[1::2]):
            hole = ids[start:end]
            pads = np.flatnonzero(hole == SP.pad)
            if len(pads):  # pads form one run at the tail
                assert (hole[pads[0]:] == SP.pad).all()


def test_masked_positions_carry_weight_one_over_t():
    rng = np.random.default_rng(3)
    for seed in range(50):
        inputs, targets, weights = noise_window(fake_window(seed=seed), SP, rng, 256)
        masked = inputs == SP.mask
        assert masked.any() and not masked[0]
        assert (weights[~masked] == 0).all()
        assert np.allclose(weights[masked], weights[masked][0]) and weights[masked][0] >= 1.0
        assert (inputs[~masked] == targets[~masked]).all()


def test_batch_shapes():
    rng = np.random.default_rng(4)
    windows = np.stack([fake_window(seed=s) for s in range(4)])
    inputs, targets, weights = diffusion_batch(windows, SP, rng, 200)
    assert inputs.shape == targets.shape == weights.shape == (4, 200)


def test_distill_samples_mask_only_the_hole_and_keep_the_teachers_tokens():
    from training.noising import crop, distill_sample

    rng = np.random.default_rng(3)
    ids = np.arange(10, 710)  # a decoded canvas of 700 positions, the hole at [500, 532)
    hole = (500, 532)
    suffix_runs = 0
    for _ in range(200):
        inputs, targets, weights = distill_sample(ids, hole, SP, rng, 256)
        start, stop = crop(len(ids), hole, 256)
        assert start <= hole[0] and hole[1] <= stop and stop - start == 256
        assert targets.tolist() == ids[start:stop].tolist()
        masked = inputs == SP.mask
        inside = np.zeros(256, bool)
        inside[hole[0] - start:hole[1] - start] = True
        assert masked.any() and not (masked & ~inside).any()
        assert (inputs[~masked] == targets[~masked]).all()
        assert abs(weights.sum() - 256) < 1e-3 and weights.dtype == np.float32 and ((weights > 0) == masked).all()
        first = int(np.flatnonzero(masked)[0])
        suffix_runs += bool(masked[first:hole[1] - start].all())  # masked from a point on, as left to right leaves it
    assert 120 < suffix_runs < 200  # most samples, not all (some are masked at random)


def test_a_short_distill_canvas_is_padded_with_no_weight():
    from training.noising import distill_sample

    inputs, targets, weights = distill_sample(np.arange(10, 110), (60, 80), SP, np.random.default_rng(0), 256)
    assert inputs.shape == targets.shape == weights.shape == (256,)
    assert (targets[100:] == SP.pad).all() and (weights[100:] == 0).all() and (inputs[100:] == SP.pad).all()


def test_a_hole_longer_than_the_window_keeps_its_start():
    from training.noising import distill_sample

    inputs, targets, weights = distill_sample(np.arange(10, 410), (200, 296), SP, np.random.default_rng(0), 64)
    assert targets[0] == 10 + 199 and (inputs[0] != SP.mask)  # the position before the hole leads the window
    assert (inputs == SP.mask).any() and abs(weights.sum() - 64) < 1e-3
