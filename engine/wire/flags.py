"""The worker's model flags as a launcher writes them, and a front end's flags for its own worker.

The rules of `--device`, `--dtype`, `--max-context` and `--prefix-cache-mb` live here, once,
torch-free and model-free, because every end needs them: a front end that starts its own worker
(`infill lsp`, `infill run`, `infill gateway`) refuses a bad value as a usage error before it
starts one, the language server refuses it as a setting (`lsp_server.settings`: `is_device`,
`is_dtype`), and the worker's own parser (`engine.worker.cli`) checks its flags with the same
functions. How the flags combine on a machine (`engine.worker.placement`) is the worker's
business.
"""
from __future__ import annotations

import argparse
import re

DEFAULT_STARTUP_TIMEOUT_S = 60.0  # importing torch and loading a model takes seconds on a CPU
# Plus this much per GB of a model folder's weights: a 7B bf16 checkpoint (15 GB) read from a slow
# disk (100 MB/s) and moved to a GPU, then its kernels compiled in the warm-up.
STARTUP_S_PER_GB = 15.0
# Far above any one decoding step: a step this long is stuck for good. The clients' health watch
# (`engine.client.watch`) marks such a worker down and its launcher (`engine.launch`) kills it.
LONGEST_STEP_S = 10.0
DTYPES = ("auto", "bf16", "fp16", "fp32")
DEVICE_HELP = "auto, cpu, cuda or cuda:N"
_DEVICE = re.compile(r"auto|cpu|cuda(?::(\d{1,3}))?")


def is_device(value: object) -> bool:
    """Whether `value` names a device: auto, cpu, cuda or cuda:N (N of at most three digits)."""
    return isinstance(value, str) and _DEVICE.fullmatch(value) is not None


def is_dtype(value: object) -> bool:
    return isinstance(value, str) and value in DTYPES


def check_device(device: str) -> str:
    """`device` if it is one of auto, cpu, cuda, cuda:N; else a ValueError saying what is."""
    if not is_device(device):
        raise ValueError(f"--device {device!r} is not a device: use {DEVICE_HELP}")
    return device


def check_dtype(dtype: str) -> str:
    """`dtype` if it is one of `DTYPES`; else a ValueError saying what is."""
    if not is_dtype(dtype):
        raise ValueError(f"--dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    return dtype


def check_limits(max_context: int | None, prefix_cache_mb: int | None) -> None:
    """A ValueError for a canvas of under one token or a negative cache size (None: unset)."""
    if max_context is not None and max_context < 1:
        raise ValueError(f"--max-context must be at least 1 token, got {max_context}")
    if prefix_cache_mb is not None and prefix_cache_mb < 0:
        raise ValueError(f"--prefix-cache-mb must be 0 or more, got {prefix_cache_mb}")


def model_flags(device: str | None = None, dtype: str | None = None) -> list[str]:
    """The worker flags for a device and dtype (None: the worker's default, auto)."""
    return [*(["--device", device] if device else []), *(["--dtype", dtype] if dtype else [])]


def add_local_worker_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of a command that starts its own worker (`infill lsp`, `infill run`), passed on to it."""
    parser.add_argument("--device", default=None, metavar="DEVICE",
                        help=f"where the worker it starts runs the model: {DEVICE_HELP} (default auto)")
    parser.add_argument("--dtype", default=None, choices=DTYPES,
                        help="that worker's model dtype (default auto: bf16 on CUDA, fp32 on the CPU)")
    parser.add_argument("--startup-timeout", type=float, default=None, metavar="SECONDS",
                        help=f"how long that worker may take to load its model (default "
                             f"{DEFAULT_STARTUP_TIMEOUT_S:.0f} s plus {STARTUP_S_PER_GB:.0f} s per GB of weights)")
    parser.add_argument("--max-context", type=int, default=None, metavar="TOKENS",
                        help="that worker's canvas length at most (default: the model's trained context)")
    parser.add_argument("--prefix-cache-mb", type=int, default=None, metavar="MB",
                        help="that worker's cross-keystroke key/value cache in MiB (default: the worker's)")


def local_worker_flags(args: argparse.Namespace) -> list[str]:
    """The worker flags of `add_local_worker_flags`'s options (those left unset are the worker's defaults)."""
    limits = [(flag, value) for flag, value in (("--max-context", args.max_context),
                                                ("--prefix-cache-mb", args.prefix_cache_mb)) if value is not None]
    return model_flags(args.device, args.dtype) + [item for flag, value in limits for item in (flag, str(value))]


def check_local_worker_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error for a device that is no device, a start-up timeout that is not positive, or a
    context or cache size out of range."""
    try:
        if args.device is not None:
            check_device(args.device)
        if args.startup_timeout is not None and args.startup_timeout <= 0:
            raise ValueError(f"--startup-timeout must be positive, got {args.startup_timeout}")
        check_limits(args.max_context, args.prefix_cache_mb)
    except ValueError as exc:
        parser.error(str(exc))
