"""The transformer: cached context gives the uncached answer; rows of a pass; causal and bidirectional masks."""
import pytest
import torch
import torch.nn.functional as F

from infill.model import ModelConfig, Transformer, grouped_attention


def tiny(causal=False, shift=True):
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=64, hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=8,
                      intermediate_size=48, causal=causal, logits_shift=shift)
    return Transformer(cfg).eval()


@torch.no_grad()
def test_hole_step_against_cached_context_matches_full_pass():
    model = tiny()
    ids = torch.randint(4, 64, (2, 20))
    full, kv = model(ids)
    # re-run positions 12..19 alone against the cached keys/values of positions 0..11
    context = [(k[:, :, :12], v[:, :, :12]) for k, v in kv]
    part, _ = model(ids[:, 12:], positions=torch.arange(12, 20).expand(2, 8), cache=context)
    # bidirectional: the context's cached states saw the full input, and the hole sees everything
    assert torch.allclose(part, full[:, 12:], atol=1e-5)


@torch.no_grad()
def test_rows_give_those_rows_of_the_full_pass_and_every_key():
    model = tiny()
    ids = torch.randint(4, 64, (2, 20))
    mask = torch.rand(2, 1, 20, 20) > 0.3
    mask[..., 0] = True  # every row attends somewhere
    full, kv = model.hidden(ids, mask=mask)
    rows = torch.tensor([3, 11, 12, 19])
    some, kv_rows = model.hidden(ids, mask=mask, rows=rows)
    assert some.shape == (2, 4, 32)
    assert torch.allclose(some, full[:, rows], atol=1e-5)
    for (k, v), (k_rows, v_rows) in zip(kv, kv_rows):  # the last layer's keys/values are all still made
        assert torch.equal(k, k_rows) and torch.equal(v, v_rows)


@torch.no_grad()
def test_causal_prefix_is_independent_of_what_follows():
    model = tiny(causal=True)
    a = torch.randint(4, 64, (1, 12))
    b = a.clone()
    b[0, 8:] = (b[0, 8:] + 1) % 60 + 4
    assert torch.allclose(model(a)[0][:, :8], model(b)[0][:, :8], atol=1e-6)


@torch.no_grad()
def test_bidirectional_sees_the_suffix():
    model = tiny(causal=False)
    a = torch.randint(4, 64, (1, 12))
    b = a.clone()
    b[0, 10] = (b[0, 10] + 1) % 60 + 4
    assert not torch.allclose(model(a)[0][:, :8], model(b)[0][:, :8], atol=1e-6)


def test_shift_reads_each_position_from_the_one_before():
    model = tiny(shift=True)
    logits = torch.randn(1, 5, 64)
    assert torch.equal(model.token_logits(logits)[:, 3], logits[:, 2])
    assert model.predictor_index(torch.tensor([0, 3])).tolist() == [0, 2]
    assert tiny(shift=False).predictor_index(torch.tensor([3])).tolist() == [3]


def test_config_round_trip(tmp_path):
    cfg = tiny().cfg
    cfg.save(tmp_path / "config.json")
    assert ModelConfig.load(tmp_path / "config.json") == cfg


@pytest.mark.parametrize("mask", [None, "rows", "keys"])
def test_grouped_attention_is_attention_with_shared_keys(mask):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 6, 5, 8), torch.randn(2, 2, 9, 8), torch.randn(2, 2, 9, 8)  # 3 heads per key head
    given = {None: None, "rows": torch.rand(2, 1, 5, 9) > 0.3, "keys": torch.rand(2, 1, 1, 9) > 0.3}[mask]
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=given, enable_gqa=True)
    torch.testing.assert_close(grouped_attention(q, k, v, given), expected, atol=1e-6, rtol=1e-5)


@torch.no_grad()
def test_rows_written_into_the_canvas_cache_see_what_the_whole_pass_saw():
    model = tiny()
    ids = torch.randint(4, 64, (1, 20))
    full, kv = model.hidden(ids)
    canvas = [(k.clone(), v.clone()) for k, v in kv]
    for k, v in canvas:  # the rows 8..13 will write theirs: what stands there must not count
        k[:, :, 8:14], v[:, :, 8:14] = 1e3, -1e3
    positions = torch.arange(8, 14)[None]
    h, written = model.hidden(ids[:, 8:14], positions=positions, cache=canvas, write_at=slice(8, 14))
    torch.testing.assert_close(h, full[:, 8:14], atol=1e-5, rtol=1e-4)
    for (k, v), (k_full, v_full), (k_rows, _) in zip(canvas, kv, written):
        torch.testing.assert_close(k, k_full, atol=1e-5, rtol=1e-4)  # the canvas holds the rows' keys now
        torch.testing.assert_close(k_rows, k_full[:, :, 8:14], atol=1e-5, rtol=1e-4)
