"""`lookup_hide`: the pass that checks a lookup draft hides each drafted token from the rows before it."""
from types import SimpleNamespace

import pytest
import torch

from engine.worker.runner import ModelRunner
from infill.batch import batch_window_pass
from infill.commit import DecoderConfig
from infill.decode.holes import HoleRules
from infill.decode.lookup import check_lookup, commit_refused, hiding_mask
from infill.decode.passes import window_hidden
from infill.model import ModelConfig, Transformer
from runner_fim import complete_fim, start_fim

HIDDEN = {"rule": "left_run", "lookup": 8, "lookup_hide": True}
RULES = HoleRules(pad_id=1, newline_id=9, banned_ids=[0], first_allowed=None, first_banned=[1], single_line=True)
PREFIX = "def area(shape):\n    return shape.width * shape.height\n\n\ndef size(shape):\n    return "


@pytest.fixture(scope="module")
def runner(tiny_model_dir):
    torch.set_num_threads(1)
    return ModelRunner(tiny_model_dir)


def test_rows_up_to_the_draft_s_end_see_no_later_token_of_this_pass():
    state = SimpleNamespace(positions=torch.tensor([5, 6, 7, 8, 9]), span=slice(6, 10),
                            looked=torch.tensor([False, True, True, False]))  # drafted: canvas 7 and 8
    mask = hiding_mask(state, context=2)  # (5, 2 + 5 + 5): cached, the pass before's window, this pass's
    assert mask[:, :2].all()
    before, now = mask[:, 2:7], mask[:, 7:]
    assert now[1].tolist() == [True, True, False, False, False]  # canvas 6 predicts 7: sees nothing drafted
    assert before[1].tolist() == [False, False, True, True, True]  # ... but the masks the last pass saw there
    assert now[2].tolist() == [True, True, True, False, False]  # canvas 7 (drafted) predicts 8: sees 7 only
    assert now[4].all() and not before[4].any()  # after the draft: this pass's window, as without hiding


def test_a_row_s_own_mask_in_a_batch_gives_what_the_row_gets_alone():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(vocab_size=50, hidden_size=16, num_layers=2, num_heads=2, num_kv_heads=1,
                                    head_dim=8, intermediate_size=32, max_position_embeddings=64)).eval()
    contexts = [[(torch.randn(1, 1, s, 8), torch.randn(1, 1, s, 8)) for _ in range(2)] for s in (6, 9)]
    windows = [torch.randint(2, 50, (4,)), torch.randint(2, 50, (3,))]
    positions = [torch.arange(6, 10), torch.arange(9, 12)]
    own = torch.rand(4, 6 + 4) > 0.3
    own[:, -4:] |= torch.eye(4, dtype=torch.bool)  # each row sees itself
    with torch.no_grad():
        together, _ = batch_window_pass(model, windows, positions, contexts, [own, None])
        alone, _ = model.hidden(windows[0][None], positions=positions[0][None], cache=contexts[0], mask=own[None, None])
        plain, _ = model.hidden(windows[1][None], positions=positions[1][None], cache=contexts[1])
    assert torch.allclose(together[0], alone[0], atol=1e-5)
    assert torch.allclose(together[1], plain[0], atol=1e-5)


def drafted_rows(runner: ModelRunner, draft: list[int], hide: bool) -> torch.Tensor:
    """The hidden states (W, d) of a pass checking `draft`, written after a first pass's commits."""
    decoding = start_fim(runner, PREFIX, "\n", "single_line", 12, None, {**HIDDEN, "lookup_hide": hide})
    [state] = decoding.states
    runner.step([decoding])
    first = int(torch.nonzero(state.masked)[0])
    at = slice(first, first + len(draft))
    state.ids[0, state.span][at] = torch.tensor(draft)
    state.masked[at] = False
    state.looked = torch.zeros_like(state.masked)
    state.looked[at] = True
    [[rows]], _ = window_hidden(runner.model, [state], [None])
    return rows[state.rows[first:at.stop]]  # the rows predicting each drafted position


@pytest.mark.parametrize("hide", [True, False])
def test_a_hidden_check_is_not_swayed_by_the_tokens_it_checks(runner, hide):
    rows = drafted_rows(runner, [40, 41, 42, 43], hide)
    changed = drafted_rows(runner, [40, 41, 55, 56], hide)  # the same first two tokens
    assert torch.allclose(rows[2], changed[2], atol=1e-6) == hide  # predicts the third from the first two
    assert torch.allclose(rows[3], changed[3], atol=1e-6) is False  # it saw the third, which changed


def test_a_hidden_check_keeps_the_top_1_tokens_and_commits_the_top_1_where_it_refused():
    cfg = DecoderConfig(**HIDDEN)
    hole = torch.tensor([20, 30, 31, 32, 0])
    state = SimpleNamespace(ids=hole[None].clone(), span=slice(0, 5), cfg=cfg, hides_lookups=True, mask_id=0,
                            looked=torch.tensor([False, True, True, True, False]),
                            masked=torch.tensor([False, False, False, False, True]),
                            last_best=torch.tensor([20, 30, 99, 32, 7]), last_prob=torch.full((5,), 0.2),
                            committed_prob=torch.ones(5), rules=RULES, scored=slice(0, 5), looked_keep=cfg.lookup_keep)
    logits = torch.zeros(5, 100)
    refused = check_lookup(state, logits, torch.logsumexp(logits, 1))
    assert refused == (2, 31)  # 30 was the top-1 and stands; 31 was not
    assert state.masked.tolist() == [False, False, True, True, True]
    assert commit_refused(state, refused).tolist() == [False, False, True, False, False]  # 99, though unsure


CHECKED = "def check(shape):\n    assert shape.width > 0 and shape.height > 0\n\n\ndef check_again(shape):\n    assert "


def test_left_to_right_with_hidden_drafts_is_left_to_right_in_fewer_passes():
    """At threshold 1.0 `left_run` is left to right; drafts checked hidden, kept only where they are
    the top-1, leave its answer as it was (here the model's own wrong line, `shape.height` twice,
    not the copied one). The check is left to right's but for the keys after each row, the pass
    before's (78 of 100 tuning lines kept left to right's answer), so the line is pinned here, with
    keys of 3 tokens."""
    from infill.paths import bundled_model_dir

    torch.set_num_threads(1)
    bundled = ModelRunner(bundled_model_dir())
    whole = {"threshold": 1.0, "max_passes": 0}  # left to right, with no budget of passes
    plain = complete_fim(bundled, CHECKED, "\n", "single_line", 32, None, {**whole, "lookup": 0})
    hidden = complete_fim(bundled, CHECKED, "\n", "single_line", 32, None,
                          {**whole, "lookup": 16, "lookup_hide": True, "lookup_keep": 1.0, "lookup_keep_before": 0.0,
                           "lookup_key": 3})
    assert hidden.text == plain.text
    assert hidden.forward_passes < plain.forward_passes


def test_a_refused_draft_s_positions_take_back_the_keys_the_check_saw():
    from infill.decode.lookup import forget_refused

    now, saw = torch.ones(1, 1, 5, 2), torch.zeros(1, 1, 5, 2)  # (1, nkv, W, hd): canvas positions 5..9
    state = SimpleNamespace(positions=torch.arange(5, 10), span=slice(6, 10), window_kv=[(now, now + 1)], slides=False,
                            masks_kv=[(saw, saw + 1)])
    forget_refused(state, 2)  # refused at hole position 2: canvas 8, the window's row 3
    [(keys, values)] = state.window_kv
    assert keys[0, 0, :, 0].tolist() == [1, 1, 1, 0, 0] and values[0, 0, :, 0].tolist() == [2, 2, 2, 1, 1]
    assert state.masks_kv is None


def test_a_guess_draft_runs_while_its_guesses_are_likely_to_the_first_end_and_takes_it():
    from infill.decode.lookup import guess_draft

    ends, sure = torch.tensor([1, 9]), torch.full((5,), 0.5)  # pad and the line's end
    assert guess_draft(torch.tensor([40, 41, 9, 42, 1]), sure, ends, 0.3).tolist() == [40, 41, 9]
    assert guess_draft(torch.tensor([40, 41, 42]), sure[:3], ends, 0.3).tolist() == [40, 41, 42]
    unsure = torch.tensor([0.5, 0.2, 0.9])
    assert guess_draft(torch.tensor([40, 41, 42]), unsure, ends, 0.3).tolist() == [40]  # up to the first below
