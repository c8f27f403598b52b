"""Decoder-step kernels (infill.kernels): row stats and commit against NumPy references, on the
`@njit` CPU path, on torch ops (the alternative on a GPU) and on the `@cuda.jit` kernels under
Numba's simulator (tiny shapes, 32 threads; one block per row, and rows split over blocks); the
CUDA kernels also compile to PTX, which the simulator cannot check. On a machine with CUDA,
tests/conftest.py turns the simulator off and the "cuda" cases run on the GPU (tests/test_gpu.py
adds real-size shapes and CUDA tensors)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from infill import kernels
from infill.kernels import commit, row_stats, torch_row_stats
from infill.kernels import cuda as cuda_kernels
from infill.kernels.cpu import exp_nonpos

BACKENDS = ["njit", "cuda"]
ROW_BACKENDS = ["njit", "torch", "cuda", "cuda-split"]  # cuda-split: blocks of 16 columns, so rows of 70 span 5
SIM_THREADS = 32  # few: the simulator runs each thread as a Python thread; vocab and holes go past 32
LOGIT = st.one_of(st.floats(-3, 3, width=32), st.floats(-200, 200, width=32),
                  st.sampled_from([-np.inf, -np.inf, -1.0, 0.0, 2.5]))  # close values, far ones, ties and bans
CONFIDENCE = st.one_of(st.floats(0, 1, width=32), st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]))


def reference_row_stats(logits: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per row, from the materialised softmax in float64: argmax (first), p1, p1 - p2, lse."""
    out = []
    for row in logits.astype(np.float64):
        top_id, top = int(np.argmax(row)), row.max()
        if top == -np.inf:
            out.append((top_id, 0.0, 0.0, -np.inf))
            continue
        total = np.exp(row - top).sum()
        probs = np.sort(np.exp(row - top) / total)
        out.append((top_id, probs[-1], probs[-1] - (probs[-2] if len(probs) > 1 else 0.0), top + np.log(total)))
    ids, prob, margin, lse = (np.array(column) for column in zip(*out))
    return ids.astype(np.int64), prob, margin, lse


def run_row_stats(backend: str, logits: np.ndarray, threads: int = SIM_THREADS,
                  columns: int = cuda_kernels.BLOCK_COLUMNS) -> tuple[np.ndarray, ...]:
    if backend == "njit":
        return tuple(t.numpy() for t in row_stats(torch.from_numpy(logits)))
    if backend == "torch":
        return tuple(t.numpy() for t in torch_row_stats(torch.from_numpy(logits)))
    rows = logits.shape[0]
    out = (np.empty(rows, np.int64), *(np.empty(rows, np.float32) for _ in range(3)))
    cuda_kernels.launch_row_stats(logits, *out, threads=threads, columns=16 if backend == "cuda-split" else columns)
    return out


def assert_row_stats(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]) -> None:
    assert got[0].tolist() == want[0].tolist()
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-6, atol=1e-5)  # -inf must match -inf


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 6), st.integers(1, 80)), elements=LOGIT))
def test_njit_row_stats_match_the_softmax(logits):
    assert_row_stats(run_row_stats("njit", logits), reference_row_stats(logits))


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 64)), elements=LOGIT),
       st.sampled_from([1, 4, SIM_THREADS]))  # long per-thread folds, short ones, and the tree between
def test_cuda_row_stats_match_the_softmax(logits, threads):
    assert_row_stats(run_row_stats("cuda", logits, threads), reference_row_stats(logits))


@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 2), st.integers(1, 40)), elements=LOGIT),
       st.sampled_from([1, 4]), st.sampled_from([1, 3, 8]))  # a block per column, odd chunks, a short last one
def test_split_cuda_row_stats_match_the_softmax(logits, threads, columns):
    assert_row_stats(run_row_stats("cuda", logits, threads, columns), reference_row_stats(logits))


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 6), st.integers(1, 80)), elements=LOGIT))
def test_torch_row_stats_match_the_softmax(logits):
    assert_row_stats(run_row_stats("torch", logits), reference_row_stats(logits))


def test_row_chunks_cover_the_vocabulary_within_one_merge_block():
    assert cuda_kernels.row_chunks(8192) == 1 and cuda_kernels.row_chunks(8193) == 2
    assert cuda_kernels.row_chunks(151936) == 19 and cuda_kernels.row_chunks(152064) == 19  # Qwen's and Dream's
    with pytest.raises(ValueError, match="raise columns"):
        cuda_kernels.row_chunks(257 * 16, columns=16)
    with pytest.raises(ValueError, match="columns per block must be >= 1"):
        cuda_kernels.row_chunks(10, columns=0)


def test_cuda_row_stats_choice_is_checked_and_torch_path_agrees(monkeypatch):
    assert kernels.CUDA_ROW_STATS in kernels.CUDA_ROW_STATS_CHOICES
    result = subprocess.run([sys.executable, "-c", "import infill.kernels"], capture_output=True, text=True,
                            env=os.environ | {"INFILL_CUDA_ROW_STATS": "cupy"}, timeout=120)
    assert result.returncode != 0 and "INFILL_CUDA_ROW_STATS must be one of" in result.stderr
    monkeypatch.setattr(kernels, "CUDA_ROW_STATS", "torch")  # the choice binds CUDA tensors only
    logits = torch.randn(4, 300, generator=torch.Generator().manual_seed(1))
    assert_row_stats(tuple(t.numpy() for t in row_stats(logits)), reference_row_stats(logits.numpy()))


@pytest.mark.parametrize("backend", ROW_BACKENDS)
def test_row_stats_edge_rows(backend):
    tied = np.linspace(-2, 2, 70, dtype=np.float32)
    tied[[3, 40]] = 5.0  # the max twice: the lowest index wins and the margin is 0
    banned = np.full(70, -np.inf, dtype=np.float32)
    banned[33] = -7.5  # the only allowed token: certain
    far = np.full(70, -np.inf, dtype=np.float32)
    far[[0, 1, 69]] = [-150.0, 100.0, 99.0]  # 250 apart: the exp clamp must not matter
    logits = np.stack([tied, banned, np.full(70, -np.inf, dtype=np.float32), far])
    ids, prob, margin, lse = run_row_stats(backend, logits)
    assert ids.tolist() == [3, 33, 0, 1]
    assert margin[0] == 0 and prob[0] == pytest.approx(reference_row_stats(logits[:1])[1][0], rel=1e-5)
    assert (prob[1], margin[1], lse[1]) == (1.0, 1.0, np.float32(-7.5))
    assert (prob[2], margin[2], lse[2]) == (0.0, 0.0, -np.inf)
    assert_row_stats((ids, prob, margin, lse), reference_row_stats(logits))


def test_polynomial_exp_is_accurate_on_its_range():
    d = np.linspace(-100, 0, 2001)
    got = np.array([exp_nonpos(x) for x in d])
    np.testing.assert_allclose(got, np.exp(d), rtol=1e-7, atol=0)
    assert exp_nonpos(-np.inf) == pytest.approx(np.exp(-100), rel=1e-7) and exp_nonpos(0.0) == 1.0  # clamped


@st.composite
def commit_cases(draw, max_requests: int = 4, max_len: int = 12) -> dict:
    """One batch: hole lengths, masks, proposals, confidences, remaining counts and the rule."""
    lengths = draw(st.lists(st.integers(0, max_len), min_size=1, max_size=max_requests))
    n = sum(lengths)
    masked = draw(hnp.arrays(np.bool_, n))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return {"holes": np.arange(n, dtype=np.int64) + 1000, "masked": masked, "offsets": offsets,
            "top1_id": draw(hnp.arrays(np.int64, n, elements=st.integers(0, 999))),
            "confidence": draw(hnp.arrays(np.float32, n, elements=CONFIDENCE)),
            "remaining": np.array([masked[a:b].sum() for a, b in zip(offsets[:-1], offsets[1:])], np.int64),
            "threshold": draw(st.sampled_from([0.0, 0.5, 0.9, 1.01])), "min_commit": draw(st.integers(0, 3))}


def reference_commit(case: dict) -> dict:
    """The rule, position by position: above threshold, then most confident (lowest index) to min."""
    out = {k: case[k].copy() for k in ("holes", "masked", "remaining")}
    out["counts"] = np.zeros(len(case["offsets"]) - 1, np.int64)
    out["committed"] = np.zeros(len(case["holes"]), np.bool_)
    conf, threshold = case["confidence"], np.float32(case["threshold"])
    for b, (start, stop) in enumerate(zip(case["offsets"][:-1], case["offsets"][1:])):
        open_ = [p for p in range(start, stop) if case["masked"][p]]
        picked = [p for p in open_ if conf[p] >= threshold]
        rest = sorted((p for p in open_ if p not in picked), key=lambda p: (-conf[p], p))
        picked += rest[:max(0, case["min_commit"] - len(picked))]
        out["holes"][picked] = case["top1_id"][picked]
        out["masked"][picked] = False
        out["committed"][picked] = True
        out["counts"][b] = len(picked)
        out["remaining"][b] -= len(picked)
    return out


def run_commit(backend: str, case: dict, threads: int = SIM_THREADS) -> dict:
    """Commit a copy of case; return the state it leaves and its outputs, as NumPy arrays."""
    state = {k: v.copy() for k, v in case.items() if isinstance(v, np.ndarray)}
    if backend == "njit":
        tensors = {k: torch.from_numpy(v) for k, v in state.items()}
        step = commit(**tensors, threshold=case["threshold"], min_commit=case["min_commit"])
        return {**state, "counts": step.counts.numpy(), "committed": step.committed.numpy()}
    state["counts"] = np.empty(len(case["offsets"]) - 1, np.int64)
    state["committed"] = np.empty(len(case["holes"]), np.bool_)
    cuda_kernels.launch_commit(*(state[k] for k in ("holes", "masked", "offsets", "top1_id", "confidence",
                                                    "remaining", "counts", "committed")),
                               threshold=case["threshold"], min_commit=case["min_commit"], threads=threads)
    return state


def assert_commit(case: dict, got: dict) -> None:
    want = reference_commit(case)
    for key in ("holes", "masked", "remaining", "counts", "committed"):
        assert got[key].tolist() == want[key].tolist(), key
    for b, (start, stop) in enumerate(zip(case["offsets"][:-1], case["offsets"][1:])):
        had_masks = case["masked"][start:stop].sum()
        assert got["counts"][b] >= min(case["min_commit"], had_masks)  # the at-least rule
    assert (got["committed"] == (case["masked"] & ~got["masked"])).all()


@settings(max_examples=30, deadline=None)
@given(commit_cases())
def test_njit_commit_follows_the_rule(case):
    assert_commit(case, run_commit("njit", case))


@settings(max_examples=30, deadline=None)
@given(commit_cases(max_requests=3, max_len=10), st.sampled_from([1, 4, SIM_THREADS]))
def test_cuda_commit_follows_the_rule(case, threads):
    assert_commit(case, run_commit("cuda", case, threads))


@pytest.mark.parametrize("backend", BACKENDS)
def test_commit_holes_longer_than_a_block(backend):
    rng = np.random.default_rng(0)
    masked = rng.random(73) < 0.7
    masked[[5, 37, 64]], masked[70:] = True, False  # the last request has nothing left: it commits nothing
    confidence = rng.random(73).astype(np.float32) * 0.7
    confidence[[5, 37, 64]] = 0.79  # none reaches the threshold; three tie (5 and 37 in one thread of 32)
    case = {"holes": np.zeros(73, np.int64), "masked": masked, "offsets": np.array([0, 70, 70, 73]),
            "top1_id": rng.integers(0, 999, 73), "confidence": confidence,
            "remaining": np.array([masked[:70].sum(), 0, 0]), "threshold": 0.95, "min_commit": 2}
    got = run_commit(backend, case)  # 70 positions in request 0: 32 threads stride over them
    assert_commit(case, got)
    assert got["counts"].tolist() == [2, 0, 0] and np.flatnonzero(got["committed"]).tolist() == [5, 37]


def test_commit_rule_in_words():
    holes, masked = torch.zeros(6, dtype=torch.int64), torch.tensor([1, 1, 0, 1, 1, 1], dtype=torch.bool)
    remaining = torch.tensor([2, 3])
    step = commit(holes, masked, torch.tensor([0, 3, 6]), torch.arange(10, 16),
                  torch.tensor([0.1, 0.5, 0.99, 0.2, 0.95, 0.9]), remaining, threshold=0.9)
    assert holes.tolist() == [0, 11, 0, 0, 14, 15]  # request 0: none above, so its best; request 1: both above
    assert masked.tolist() == [True, False, False, True, False, False]
    assert step.counts.tolist() == [1, 2] and remaining.tolist() == [1, 1]
    assert step.committed.tolist() == [False, True, False, False, True, True]


def good_commit_args() -> dict:
    return {"holes": torch.zeros(4, dtype=torch.int64), "masked": torch.ones(4, dtype=torch.bool),
            "offsets": torch.tensor([0, 4]), "top1_id": torch.zeros(4, dtype=torch.int64),
            "confidence": torch.zeros(4), "remaining": torch.tensor([4])}


@pytest.mark.parametrize("logits, error, message", [
    (torch.zeros(2, 8, dtype=torch.float64), TypeError, "logits must be torch.float32"),
    (np.zeros((2, 8), np.float32), TypeError, "must be a torch.Tensor"),
    (torch.zeros(8), ValueError, r"shape \(\*, \*\)"),
    (torch.zeros(8, 2).t(), ValueError, "contiguous"),
    (torch.zeros(2, 16)[:, ::2], ValueError, "contiguous"),
    (torch.zeros(2, 0), ValueError, "at least one column"),
    (torch.zeros(2, 8, device="meta"), ValueError, "CPU or a CUDA device"),
])
def test_row_stats_rejects_bad_logits(logits, error, message):
    with pytest.raises(error, match=message):
        row_stats(logits)


@pytest.mark.parametrize("name, value, error, message", [
    ("holes", torch.zeros(4, dtype=torch.int32), TypeError, "holes must be torch.int64"),
    ("holes", torch.zeros(8, dtype=torch.int64)[::2], ValueError, "holes must be contiguous"),
    ("masked", torch.ones(5, dtype=torch.bool), ValueError, r"masked must have shape \(4\)"),
    ("confidence", torch.zeros(4, dtype=torch.float64), TypeError, "confidence must be torch.float32"),
    ("top1_id", torch.zeros(2, 2, dtype=torch.int64), ValueError, "top1_id must have shape"),
    ("offsets", torch.tensor([0, 3]), ValueError, "offsets must rise from 0 to 4"),
    ("offsets", torch.tensor([1, 4]), ValueError, "offsets must rise from 0"),
    ("offsets", torch.zeros(0, dtype=torch.int64), ValueError, "B \\+ 1 bounds"),
    ("remaining", torch.tensor([4, 0]), ValueError, r"remaining must have shape \(1\)"),
    ("confidence", torch.zeros(4, device="meta"), ValueError, "share one device"),
])
def test_commit_rejects_bad_arguments(name, value, error, message):
    args = good_commit_args() | {name: value}
    with pytest.raises(error, match=message):
        commit(**args, threshold=0.9)


def test_commit_rejects_a_negative_minimum_and_launchers_odd_blocks():
    with pytest.raises(ValueError, match="min_commit must be >= 0"):
        commit(**good_commit_args(), threshold=0.9, min_commit=-1)
    with pytest.raises(ValueError, match="power of two"):
        cuda_kernels.launch_row_stats(np.zeros((1, 4), np.float32), *(np.empty(1) for _ in range(4)), threads=48)


def test_cuda_kernels_compile_to_ptx(tmp_path):
    pytest.importorskip("nvidia.cuda_nvcc", reason="NVVM comes with the dev extras (nvidia-cuda-nvcc-cu12)")
    result = subprocess.run([sys.executable, "-m", "infill.kernels.ptx", "--out", str(tmp_path)],
                            env=os.environ | {"NUMBA_ENABLE_CUDASIM": "0"}, cwd=Path(__file__).parents[1],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    for kernel in ("row_stats_kernel", "row_chunks_kernel", "merge_chunks_kernel", "commit_kernel"):
        assert ".entry" in (tmp_path / f"{kernel}.ptx").read_text()
