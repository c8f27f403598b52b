"""CUDA kernels of the decoder step (`@cuda.jit`), and their launchers.

`row_stats_kernel` runs one thread block per row of logits: each thread folds its strided slice of
the vocabulary into (max, lowest index of the max, second max, sum of exp(x - max)), then the block
merges those partials in shared memory by a tree reduction and thread 0 writes the row's outputs.
A row longer than `BLOCK_COLUMNS` (a 152k vocabulary) is split: `row_chunks_kernel` runs one block
per (row, chunk of BLOCK_COLUMNS columns) and writes each chunk's partial to scratch arrays (R, C),
and `merge_chunks_kernel` folds a row's C partials in one block. One block per row would leave most
of a GPU's streaming multiprocessors idle for the few rows of a step (16 rows on 132 SMs).
`commit_kernel` runs one thread block per request: threads commit the positions above the threshold
in parallel, a block sum counts them, and block argmax rounds add the most confident masked
positions until the request has its minimum.

Launchers take arrays Numba accepts (device arrays, or NumPy arrays under the simulator,
`NUMBA_ENABLE_CUDASIM=1`); `launch_on_tensors` runs one on CUDA torch tensors. Without a GPU,
`python -m infill.kernels.ptx` compiles the kernels to PTX, which checks what the simulator cannot.
"""
from __future__ import annotations

import math

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30.4 registers np.row_stack when it compiles; NumPy 2.5 removed it
    np.row_stack = np.vstack
from numba import cuda, float32, int64  # noqa: E402

MAX_THREADS = 256  # threads per block; the size of the shared-memory reduction buffers
BLOCK_COLUMNS = 8192  # columns one block folds: 32 per thread at 256 threads, so a 152k row runs as 19 blocks
NEG_INF = float32(-math.inf)


def launch_on_tensors(launch, tensors, scratch=(), **scalars) -> None:
    """Run a launcher on CUDA torch tensors (no copies: `numba.cuda.as_cuda_array` reads each
    tensor's `__cuda_array_interface__`): on their device, on torch's current stream, so the kernel
    queues behind the model's work. `scratch` tensors go to the launcher as `partials`."""
    import torch

    device = tensors[0].device
    with cuda.gpus[device.index]:
        stream = cuda.external_stream(torch.cuda.current_stream(device).cuda_stream)
        if scratch:
            scalars["partials"] = tuple(cuda.as_cuda_array(t) for t in scratch)
        launch(*(cuda.as_cuda_array(t.detach()) for t in tensors), stream=stream, **scalars)


def check_threads(threads: int) -> None:
    if threads < 1 or threads > MAX_THREADS or threads & (threads - 1):
        raise ValueError(f"threads per block must be a power of two in 1..{MAX_THREADS}, got {threads}")


@cuda.jit(device=True)
def _larger(a, b):
    """max(a, b): the builtin max of two floats fails to compile for the device in Numba's built-in
    CUDA target (found by `python -m infill.kernels.ptx`)."""
    return a if a > b else b


@cuda.jit(device=True)
def _smaller(a, b):
    return a if a < b else b


@cuda.jit(device=True)
def _rescaled(total, top, new_top):
    """A sum of exp(x - top) re-expressed against new_top >= top (0 stays 0, even at -inf)."""
    if total == 0:
        return float32(0)
    return total * math.exp(top - new_top)


@cuda.jit(device=True)
def _fold_row_slice(logits, row, start, stop, step):
    """(top, top_id, second, total) over logits[row, start:stop:step]; top_id is start when all -inf."""
    top, second, total, top_id = NEG_INF, NEG_INF, float32(0), int64(start)
    for j in range(start, stop, step):
        x = logits[row, j]
        if x > top:
            total = _rescaled(total, top, x) + float32(1)
            second, top, top_id = top, x, j
        else:
            second = _larger(second, x)
            if x > NEG_INF:
                total += math.exp(x - top)
    return top, top_id, second, total


@cuda.jit(device=True)
def _merge_partials(tops, top_ids, seconds, totals, a, b):
    """Fold partial b into partial a (lowest index wins a tie for the max)."""
    top_a, top_b = tops[a], tops[b]
    new_top = _larger(top_a, top_b)
    seconds[a] = _larger(_larger(seconds[a], seconds[b]), _smaller(top_a, top_b))
    totals[a] = _rescaled(totals[a], top_a, new_top) + _rescaled(totals[b], top_b, new_top)
    if top_b > top_a or (top_b == top_a and top_ids[b] < top_ids[a]):
        top_ids[a] = top_ids[b]
    tops[a] = new_top


@cuda.jit(device=True)
def _write_row(row, top, top_id, second, total, top1_id, top1_prob, margin, lse):
    top1_id[row] = top_id
    if total == 0:  # only -inf in the row
        top1_prob[row], margin[row], lse[row] = float32(0), float32(0), NEG_INF
    else:
        top1_prob[row] = float32(1) / total
        margin[row] = -math.expm1(second - top) / total
        lse[row] = top + math.log(total)


@cuda.jit(device=True)
def _block_fold(tops, top_ids, seconds, totals, t, threads):
    """Tree-merge the block's partials into slot 0 (threads a power of two)."""
    cuda.syncthreads()
    half = threads // 2
    while half > 0:
        if t < half:
            _merge_partials(tops, top_ids, seconds, totals, t, t + half)
        cuda.syncthreads()
        half //= 2


@cuda.jit
def row_stats_kernel(logits, top1_id, top1_prob, margin, lse):
    """One block per row of logits (R, V); blockDim.x a power of two <= MAX_THREADS."""
    row, t, threads = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    tops = cuda.shared.array(MAX_THREADS, float32)
    seconds = cuda.shared.array(MAX_THREADS, float32)
    totals = cuda.shared.array(MAX_THREADS, float32)
    top_ids = cuda.shared.array(MAX_THREADS, int64)
    tops[t], top_ids[t], seconds[t], totals[t] = _fold_row_slice(logits, row, t, logits.shape[1], threads)
    _block_fold(tops, top_ids, seconds, totals, t, threads)
    if t == 0:
        _write_row(row, tops[0], top_ids[0], seconds[0], totals[0], top1_id, top1_prob, margin, lse)


@cuda.jit
def row_chunks_kernel(logits, columns, part_top, part_id, part_second, part_total):
    """Block (row, chunk c) folds logits[row, c * columns:(c + 1) * columns] into partials (R, C)."""
    row, chunk, t, threads = cuda.blockIdx.x, cuda.blockIdx.y, cuda.threadIdx.x, cuda.blockDim.x
    tops = cuda.shared.array(MAX_THREADS, float32)
    seconds = cuda.shared.array(MAX_THREADS, float32)
    totals = cuda.shared.array(MAX_THREADS, float32)
    top_ids = cuda.shared.array(MAX_THREADS, int64)
    start = chunk * columns
    stop = start + columns if start + columns < logits.shape[1] else logits.shape[1]
    tops[t], top_ids[t], seconds[t], totals[t] = _fold_row_slice(logits, row, start + t, stop, threads)
    _block_fold(tops, top_ids, seconds, totals, t, threads)
    if t == 0:
        part_top[row, chunk], part_id[row, chunk] = tops[0], top_ids[0]
        part_second[row, chunk], part_total[row, chunk] = seconds[0], totals[0]


@cuda.jit
def merge_chunks_kernel(part_top, part_id, part_second, part_total, top1_id, top1_prob, margin, lse):
    """One block per row: fold its C partials (C <= blockDim.x) and write the row's outputs."""
    row, t, threads = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    tops = cuda.shared.array(MAX_THREADS, float32)
    seconds = cuda.shared.array(MAX_THREADS, float32)
    totals = cuda.shared.array(MAX_THREADS, float32)
    top_ids = cuda.shared.array(MAX_THREADS, int64)
    if t < part_top.shape[1]:
        tops[t], top_ids[t] = part_top[row, t], part_id[row, t]
        seconds[t], totals[t] = part_second[row, t], part_total[row, t]
    else:  # an empty partial: merging it changes nothing
        tops[t], top_ids[t], seconds[t], totals[t] = NEG_INF, int64(0x7FFFFFFFFFFFFFFF), NEG_INF, float32(0)
    _block_fold(tops, top_ids, seconds, totals, t, threads)
    if t == 0:
        _write_row(row, tops[0], top_ids[0], seconds[0], totals[0], top1_id, top1_prob, margin, lse)


def row_chunks(vocab: int, columns: int = BLOCK_COLUMNS) -> int:
    """Blocks per row the split path runs for a vocabulary (1: the one-block kernel suffices)."""
    if columns < 1:
        raise ValueError(f"columns per block must be >= 1, got {columns}")
    chunks = -(-vocab // columns)
    if chunks > MAX_THREADS:
        raise ValueError(f"a row of {vocab} in blocks of {columns} columns needs {chunks} blocks; "
                         f"at most {MAX_THREADS} merge in one: raise columns")
    return chunks


def launch_row_stats(logits, top1_id, top1_prob, margin, lse, threads: int = MAX_THREADS, stream=0,
                     columns: int = BLOCK_COLUMNS, partials=None) -> None:
    """Fill top1_id (R,) int64 and top1_prob, margin, lse (R,) float32 from logits (R, V) float32.

    Rows longer than `columns` run split; `partials` are its scratch arrays (top float32, id
    int64, second float32, total float32, each (R, row_chunks(V, columns))), allocated here when
    not given (torch's caching allocator is cheaper: the wrapper passes its own)."""
    check_threads(threads)
    rows, chunks = logits.shape[0], row_chunks(logits.shape[1], columns)
    if not rows:
        return
    if chunks == 1:
        row_stats_kernel[rows, threads, stream](logits, top1_id, top1_prob, margin, lse)
        return
    if partials is None:
        partials = tuple(cuda.device_array((rows, chunks), dtype, stream=stream)
                         for dtype in (np.float32, np.int64, np.float32, np.float32))
    row_chunks_kernel[(rows, chunks), threads, stream](logits, np.int64(columns), *partials)
    merge_threads = 1 << (chunks - 1).bit_length()  # a power of two >= chunks
    merge_chunks_kernel[rows, merge_threads, stream](*partials, top1_id, top1_prob, margin, lse)


@cuda.jit(device=True)
def _block_sum(values, t, threads):
    """Sum of values[:threads] (shared), returned to every thread; values is clobbered."""
    half = threads // 2
    while half > 0:
        if t < half:
            values[t] += values[t + half]
        cuda.syncthreads()
        half //= 2
    total = values[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def _block_most_confident(masked, confidence, start, stop, confs, ids, t, threads):
    """Most confident masked position in [start, stop) (lowest on ties) or -1, to every thread."""
    best, best_conf = int64(-1), NEG_INF
    for p in range(start + t, stop, threads):
        if masked[p] and (best < 0 or confidence[p] > best_conf):
            best, best_conf = p, confidence[p]
    ids[t], confs[t] = best, best_conf
    cuda.syncthreads()
    half = threads // 2
    while half > 0:
        other = ids[t + half] if t < half else -1
        if other >= 0 and (ids[t] < 0 or confs[t + half] > confs[t]
                           or (confs[t + half] == confs[t] and other < ids[t])):
            ids[t], confs[t] = other, confs[t + half]
        cuda.syncthreads()
        half //= 2
    best = ids[0]
    cuda.syncthreads()
    return best


@cuda.jit(device=True)
def _commit_at(p, holes, masked, top1_id, committed):
    holes[p] = top1_id[p]
    masked[p] = False
    committed[p] = True


@cuda.jit
def commit_kernel(holes, masked, offsets, top1_id, confidence, remaining, counts, committed, threshold,
                  min_commit):
    """One block per request b, owning positions offsets[b]:offsets[b+1] of the flat arrays."""
    b, t, threads = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    start, stop = offsets[b], offsets[b + 1]
    partial = cuda.shared.array(MAX_THREADS, int64)
    confs = cuda.shared.array(MAX_THREADS, float32)
    n = 0
    for p in range(start + t, stop, threads):
        committed[p] = False
        if masked[p] and confidence[p] >= threshold:
            _commit_at(p, holes, masked, top1_id, committed)
            n += 1
    partial[t] = n
    cuda.syncthreads()
    n = _block_sum(partial, t, threads)
    while n < min_commit:
        best = _block_most_confident(masked, confidence, start, stop, confs, partial, t, threads)
        if best < 0:
            break
        if t == 0:
            _commit_at(best, holes, masked, top1_id, committed)
        cuda.syncthreads()
        n += 1
    if t == 0:
        counts[b] = n
        remaining[b] -= n


def launch_commit(holes, masked, offsets, top1_id, confidence, remaining, counts, committed, threshold: float,
                  min_commit: int, threads: int = MAX_THREADS, stream=0) -> None:
    """Commit per request (see `infill.kernels.commit`); counts (B,) gets the number committed."""
    check_threads(threads)
    requests = offsets.shape[0] - 1
    if requests:
        commit_kernel[requests, threads, stream](holes, masked, offsets, top1_id, confidence, remaining, counts,
                                                 committed, np.float32(threshold), np.int64(min_commit))
