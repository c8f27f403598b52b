"""The GPU session's first 10-20 seconds: whether the rest can work, written to a file at once.

    python scripts/gpu_preflight.py OUT_FILE [--cpu]

One Python process: every import the session needs (what is missing is said, pyzmq included;
the session's own modules, `training.train` and `training.bundle`, with all they import),
`torch.cuda.is_available()` asserted (unless --cpu, the CPU rehearsal), one row-statistics call
on CUDA tensors against torch's (and, when Numba's kernel fails or disagrees, `row_stats=torch`,
which the session exports as INFILL_CUDA_ROW_STATS), one commit on CUDA tensors against the CPU.
Each line is flushed as it is written, so a session cut during the preflight still returns what
it found. Exit status 0 when the session may go on, 1 when it must not (no CUDA, an import that
training needs is missing, a commit that disagrees).
"""
from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

NEEDED = ("torch", "numpy", "numba", "msgpack", "tokenizers", "safetensors", "tqdm")
WANTED = ("numba.cuda", "zmq", "pytest")  # the worker's socket and the gpu tests: tried, not required
OWN = ("training.train", "training.bundle")  # the session's own modules, with all they import


def main(argv: list[str]) -> int:
    out_path, cpu = Path(argv[0]), "--cpu" in argv[1:]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    out = out_path.open("w", buffering=1)

    def say(line: str) -> None:
        out.write(f"{time.monotonic() - started:6.1f} s  {line}\n")
        out.flush()

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the session's own modules (OWN)
    missing = []
    for name in NEEDED + WANTED + OWN:
        try:
            module = importlib.import_module(name)
            say(f"import {name}: {getattr(module, '__version__', 'ok')}")
        except Exception as exc:  # a broken install raises more than ImportError; ours, what they lack
            missing.append(name)
            say(f"import {name}: MISSING ({type(exc).__name__}: {exc})")
    needed_missing = [m for m in missing if m in NEEDED + OWN]
    if needed_missing:
        say(f"verdict: stop, cannot import {' '.join(needed_missing)}")
        return 1
    import torch

    say(f"torch {torch.__version__}, CUDA build {torch.version.cuda}, available {torch.cuda.is_available()}")
    if not torch.cuda.is_available() and not cpu:
        say("verdict: stop, torch sees no CUDA device (training would run on the CPU)")
        return 1
    device = torch.device("cpu" if cpu else "cuda")
    if device.type == "cuda":
        say(f"device: {torch.cuda.get_device_name()}, {torch.cuda.mem_get_info()[0] / 2**30:.1f} GiB free")
    from infill import kernels

    logits = torch.randn(16, 151936, generator=torch.Generator().manual_seed(0)).to(device)
    want = kernels.torch_row_stats(logits)
    choice = "numba"
    try:
        kernels.CUDA_ROW_STATS = "numba"
        got = kernels.row_stats(logits)
        agree = torch.equal(got.top1_id.cpu(), want.top1_id.cpu()) and torch.allclose(
            got.top1_prob.cpu(), want.top1_prob.cpu(), rtol=1e-5, atol=1e-6)
        say(f"row stats (numba) on {device.type}: {'agree with torch' if agree else 'DISAGREE with torch'}")
        choice = "numba" if agree else "torch"
    except Exception as exc:
        say(f"row stats (numba) on {device.type}: FAILED ({type(exc).__name__}: {exc})")
        choice = "torch"
    say(f"row_stats={choice}")
    holes = dict(holes=torch.zeros(7, dtype=torch.int64), masked=torch.tensor([1, 1, 0, 1, 1, 1, 1]).bool(),
                 offsets=torch.tensor([0, 4, 4, 7]), top1_id=torch.arange(10, 17),
                 confidence=torch.tensor([0.2, 0.95, 0.99, 0.3, 0.1, 0.1, 0.4]), remaining=torch.tensor([3, 0, 3]))
    on_cpu = {k: v.clone() for k, v in holes.items()}
    on_device = {k: v.to(device) for k, v in holes.items()}
    try:
        want_step = kernels.commit(**on_cpu, threshold=0.9, min_commit=2)
        got_step = kernels.commit(**on_device, threshold=0.9, min_commit=2)
        same = got_step.counts.tolist() == want_step.counts.tolist() and all(
            on_device[k].tolist() == on_cpu[k].tolist() for k in on_cpu)
    except Exception as exc:
        say(f"commit on {device.type}: FAILED ({type(exc).__name__}: {exc})")
        same = False
    else:
        say(f"commit on {device.type}: {'agrees with the CPU' if same else 'DISAGREES with the CPU'}")
    verdict = "go" if same else "stop, the commit kernel is wrong on this device"
    say(f"verdict: {verdict} ({time.monotonic() - started:.1f} s)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
