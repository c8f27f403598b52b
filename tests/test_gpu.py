"""On a CUDA device (tests/conftest.py skips these elsewhere): the real `@cuda.jit` kernels on CUDA
tensors against torch references and the CPU path, at the vocabularies served (8k and Qwen's 152k,
so rows run split over blocks); the decoder's `score` taking the CUDA kernel with no host copy; and
one completion of the bundled model on CUDA through `engine.worker.runner.ModelRunner`.

Imports only what the GPU machine has (torch, numba, msgpack, tokenizers, safetensors): no zmq,
pygls, tree-sitter or hypothesis. Run there by `scripts/gpu_check.sh`.
"""
import pytest
import torch

from infill import kernels
from infill.kernels import commit, row_stats, torch_row_stats

pytestmark = pytest.mark.gpu


def edge_logits(rows: int, vocab: int, seed: int) -> torch.Tensor:
    """Random rows (R, V) float32 with the cases the kernels must get right: a tie for the max
    across blocks, a row of one allowed token, a row of only -inf, bans in one block's range."""
    logits = torch.randn(rows, vocab, generator=torch.Generator().manual_seed(seed)) * 4
    logits[0, [3, vocab - 2]] = 50.0  # tied max, far apart: the lowest index, margin 0
    logits[1] = float("-inf")
    logits[1, vocab // 2] = -3.0
    logits[2] = float("-inf")
    logits[3, : vocab // 3] = float("-inf")
    return logits


def assert_stats_close(got, want) -> None:
    assert torch.equal(got.top1_id.cpu(), want.top1_id.cpu())
    for name in ("top1_prob", "margin", "lse"):
        torch.testing.assert_close(getattr(got, name).cpu(), getattr(want, name).cpu(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows, vocab", [(4, 8192), (16, 8192), (5, 8193), (16, 151936), (64, 152064)])
def test_cuda_row_stats_match_torch_and_the_cpu(monkeypatch, rows, vocab):
    monkeypatch.setattr(kernels, "CUDA_ROW_STATS", "numba")
    logits = edge_logits(rows, vocab, seed=vocab)
    on_gpu = row_stats(logits.cuda())
    assert all(t.device.type == "cuda" for t in on_gpu)
    assert_stats_close(on_gpu, row_stats(logits))  # the @njit path
    assert_stats_close(on_gpu, torch_row_stats(logits.cuda()))
    assert on_gpu.top1_id[:3].tolist() == [3, vocab // 2, 0] and on_gpu.margin[0].item() == 0.0
    assert on_gpu.top1_prob[1].item() == 1.0 and on_gpu.lse[2].item() == float("-inf")


def test_torch_choice_on_cuda_matches_the_kernel(monkeypatch):
    logits = edge_logits(8, 151936, seed=2).cuda()
    monkeypatch.setattr(kernels, "CUDA_ROW_STATS", "numba")
    fused = row_stats(logits)
    monkeypatch.setattr(kernels, "CUDA_ROW_STATS", "torch")
    assert_stats_close(row_stats(logits), fused)


def test_decoder_score_takes_the_cuda_kernel_without_host_copies(monkeypatch):
    from infill.decode.passes import score
    from infill.kernels import cuda as cuda_kernels

    monkeypatch.setattr(kernels, "CUDA_ROW_STATS", "numba")
    launched = []
    real = cuda_kernels.launch_row_stats

    def spy(logits, *outputs, **options):
        launched.append((type(logits).__name__, logits.shape))
        real(logits, *outputs, **options)

    monkeypatch.setattr(cuda_kernels, "launch_row_stats", spy)
    logits = edge_logits(6, 151936, seed=3).cuda()
    scores = score(logits, "prob")
    assert len(launched) == 1 and "Device" in launched[0][0] and launched[0][1] == (6, 151936)  # a numba view
    assert all(t.device.type == "cuda" for t in scores)
    want = torch_row_stats(logits)
    assert torch.equal(scores.best, want.top1_id) and torch.equal(scores.confidence, scores.prob)
    torch.testing.assert_close(scores.prob, want.top1_prob, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(scores.lse, want.lse, rtol=1e-5, atol=1e-6)


def test_cuda_commit_matches_the_cpu():
    def args():
        return {"holes": torch.zeros(7, dtype=torch.int64), "masked": torch.tensor([1, 1, 0, 1, 1, 1, 1]).bool(),
                "offsets": torch.tensor([0, 4, 4, 7]), "top1_id": torch.arange(10, 17),
                "confidence": torch.tensor([0.2, 0.95, 0.99, 0.3, 0.1, 0.1, 0.4]),
                "remaining": torch.tensor([3, 0, 3])}

    on_cpu = args()
    cpu_step = commit(**on_cpu, threshold=0.9, min_commit=2)
    on_gpu = {k: v.cuda() for k, v in args().items()}
    gpu_step = commit(**on_gpu, threshold=0.9, min_commit=2)
    assert gpu_step.counts.tolist() == cpu_step.counts.tolist() == [2, 0, 2]
    assert gpu_step.committed.tolist() == cpu_step.committed.tolist()
    assert all(on_gpu[k].tolist() == on_cpu[k].tolist() for k in on_cpu)


def test_bundled_model_completes_on_cuda():
    from engine.worker.runner import ModelRunner
    from infill.job import Job
    from infill.paths import bundled_model_dir
    from infill.tokenizer import SPECIAL_TOKENS

    import os
    from pathlib import Path

    model = Path(os.environ.get("INFILL_MODEL") or bundled_model_dir())  # the session's new model, when it sets one
    runner = ModelRunner(model, device="cuda")  # on a CUDA machine every error is a failure
    assert next(runner.model.parameters()).device.type == "cuda"
    [answer] = runner.complete(Job.fim("def add(a, b):\n    return ", "\n\n\nprint(add(1, 2))\n", "single_line", 16),
                               None)
    assert answer.forward_passes >= 1 and answer.stop_reason == "done"
    assert "\n" not in answer.text.strip("\n") and not any(t in answer.text for t in SPECIAL_TOKENS)
