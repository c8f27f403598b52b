"""Compile the CUDA kernels to PTX without a GPU: the check that they type and lower for the
device, which the simulator (it runs kernels as Python) cannot give.

    NUMBA_ENABLE_CUDASIM=0 python -m infill.kernels.ptx [--cc 9.0] [--out DIR]

Needs NVVM: from CUDA_HOME, else from the `nvidia-cuda-nvcc-cu12` wheel (a dev dependency).
Prints each kernel's PTX size; with --out, writes `<kernel>.ptx` files there.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from types import SimpleNamespace


def nvvm_home() -> str | None:
    """CUDA_HOME, or the folder of the nvidia-cuda-nvcc wheel (it holds nvvm/ like a toolkit)."""
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    try:
        import nvidia.cuda_nvcc
    except ImportError:
        return None
    return nvidia.cuda_nvcc.__path__[0]


def compile_kernels(cc: tuple[int, int]) -> dict[str, str]:
    """PTX of each kernel for compute capability cc, for C-contiguous arrays of the wrappers' dtypes."""
    import numba.cuda.dispatcher
    from numba import boolean, cuda, float32, int64

    from infill.kernels import cuda as kernels

    # Numba's built-in target asks the current GPU for its compute capability when it compiles a
    # device function; with no GPU, the answer is cc.
    numba.cuda.dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
    rows, f32, i64, b1 = float32[:, ::1], float32[::1], int64[::1], boolean[::1]
    parts = (float32[:, ::1], int64[:, ::1], float32[:, ::1], float32[:, ::1])  # (R, C) partials of split rows
    signatures = {
        "row_stats_kernel": (kernels.row_stats_kernel, (rows, i64, f32, f32, f32)),
        "row_chunks_kernel": (kernels.row_chunks_kernel, (rows, int64, *parts)),
        "merge_chunks_kernel": (kernels.merge_chunks_kernel, (*parts, i64, f32, f32, f32)),
        "commit_kernel": (kernels.commit_kernel, (i64, b1, i64, i64, f32, i64, i64, b1, float32, int64)),
    }
    return {name: cuda.compile_ptx(kernel.py_func, signature, cc=cc)[0]
            for name, (kernel, signature) in signatures.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="9.0", help="compute capability to compile for, e.g. 8.0 or 9.0")
    parser.add_argument("--out", type=Path, help="folder to write <kernel>.ptx files to")
    args = parser.parse_args(argv)
    from numba.core import config

    if config.ENABLE_CUDASIM:
        sys.exit("run with NUMBA_ENABLE_CUDASIM=0: the simulator compiles nothing")
    home = nvvm_home()
    if home is None:
        sys.exit("no NVVM: set CUDA_HOME to a CUDA toolkit or install the dev extras (pip install -e '.[dev]')")
    os.environ["CUDA_HOME"] = home
    major, minor = (int(part) for part in args.cc.split("."))
    for name, ptx in compile_kernels((major, minor)).items():
        print(f"{name}: {len(ptx.splitlines())} lines of PTX for sm_{major}{minor}")
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{name}.ptx").write_text(ptx)


if __name__ == "__main__":
    main()
