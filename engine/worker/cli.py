"""`python -m engine` and `infill serve`: the worker process's command line.

It checks the flags (usage errors say what to change), loads the model runner the flags ask for
(torch is imported only then), binds and serves one `Worker` until SIGTERM or SIGINT, and stops
with the process that started it (`--parent-pid`), removing the folder it was given
(`--owned-dir`). With `--workers N` this process loads no model: it supervises N worker children
(`engine.launch.serve_workers`).
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import zmq

from engine.wire.flags import DEVICE_HELP, DTYPES, check_device, check_limits
from engine.wire.keys import ServerKeys, load_server_keys
from engine.launch import serve_workers, worker_addresses
from engine.wire.private import check_private
from engine.worker.placement import placement
from engine.worker.worker import Worker, serve_until_signal
from infill.weights import DEFAULT_PREFIX_CACHE_MB, WEIGHTS

logger = logging.getLogger(__name__)

DEFAULT_BIND = "tcp://127.0.0.1:5555"
_PARENT_CHECK_S = 0.5  # how often a worker started by another process looks whether it is still there
_ORPHAN_EXIT_S = 10.0  # an orphan whose main loop has not stopped this long after being asked exits
_LOOPBACK_TCP = re.compile(r"tcp://127\.0\.0\.1:(\d{1,5}|\*)")
_ANY_TCP = re.compile(r"tcp://([^\s:/]+|\[[0-9a-fA-F:.]+\]):(\d{1,5}|\*)")
# torch's OpenMP threads wait at each barrier by sleeping, not spinning, unless the environment says
# otherwise: a spinning thread holds its core while a thread whose core another process took stalls
# the rest. `python -m bench.worker_threads --answers 8 --rounds 2` on two shared CPU cores, ms per
# single-line answer of the bundled model (mean of the rounds): 2 threads (torch's choice) 196
# sleeping, 3585 by OpenMP's default, 4814 spinning; 1 thread 358 to 838; beside two busy loops,
# 2 threads 422 sleeping, 20261 by default, 23002 spinning; 1 thread 937 to 1702. A short spin before
# sleeping (`GOMP_SPINCOUNT` 1k, 10k, 100k; `--threads 2 --answers 8`, int8): idle 75.4 ms sleeping
# against 76.0-84.9, beside two busy loops 160.6 against 191.7, 236.8 and 1717.1.
OMP_WAIT_POLICY = "PASSIVE"
# Where neither `--threads` nor OMP_NUM_THREADS says, a model this small computes on one CPU thread:
# a keystroke's passes run a few rows, too few to share. Two shared cores, after 0c80641 (two threads
# against one): `bench.worker_threads --threads 1,2 --policies passive --busy 0,2` 73.4 against 55.5
# ms per answer idle, 131.3 against 89.8 beside two busy loops; keystroke to ghost text p50 / p90 in
# Neovim 69.0 / 134.9 and 63.9 / 119.6 against 56.2 / 90.2 and 61.4 / 95.0, in VS Code 99.5 / 134.5
# and 102.7 / 147.7 against 96.8 / 132.4 and 98.4 / 125.4, VS Code beside two busy loops 176.1 / 346.3
# against 148.6 / 266.4. Larger models keep torch's choice (not measured here).
ONE_THREAD_PARAMS = 100_000_000


def remove_owned_dir(folder: Path | None) -> None:
    """Remove the folder this worker was given with --owned-dir (its ipc:// socket's), if any."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def stop_with_parent(worker: Worker, parent_pid: int, owned_dir: Path | None = None,
                     ) -> threading.Thread:
    """A daemon thread that stops `worker` once `parent_pid` is no longer its parent: a supervisor
    or language server killed with SIGKILL (no chance to stop its children) leaves no orphan.
    Should the worker not be done `_ORPHAN_EXIT_S` later (a step that never ends), the thread
    removes `owned_dir` and ends the process itself."""
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_PARENT_CHECK_S)
        logger.warning("the parent process %d is gone; stopping", parent_pid)
        worker.stop()
        time.sleep(_ORPHAN_EXIT_S)  # a worker that stops in time ends this thread with it
        logger.error("the worker did not stop within %.0f s of its parent's end; exiting now",
                     _ORPHAN_EXIT_S)
        remove_owned_dir(owned_dir)
        os._exit(1)

    thread = threading.Thread(target=watch, name="engine-parent-watch", daemon=True)
    thread.start()
    return thread


def check_bind_address(address: str, curve: bool = False) -> str:
    """Return `address` if the worker may bind it, else raise ValueError saying what to use.

    Loopback (ipc:// or tcp://127.0.0.1) is always allowed; any other TCP address only with
    CURVE keys (`curve`), because whoever reaches it could otherwise use the worker.
    """
    if address.startswith("ipc://") and len(address) > len("ipc://"):
        return address
    tcp = _ANY_TCP.fullmatch(address)
    if tcp is None or (tcp.group(2) != "*" and int(tcp.group(2)) > 65535):
        raise ValueError(f"cannot bind {address!r}: use ipc://PATH, tcp://127.0.0.1:PORT, or "
                         "tcp://HOST:PORT with CURVE keys (--keys)")
    if not curve and not _LOOPBACK_TCP.fullmatch(address):
        raise ValueError(f"cannot bind {address!r} without CURVE keys: a non-loopback worker must "
                         "authenticate its clients; create keys with `infill keys` and pass "
                         "--keys DIR, or bind tcp://127.0.0.1:PORT")
    return address


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Serve code completions over ZeroMQ.")
    parser.add_argument("--bind", default=DEFAULT_BIND,
                        help=f"address to listen on: ipc://PATH, tcp://127.0.0.1:PORT, or with "
                             f"--keys tcp://HOST:PORT (default {DEFAULT_BIND}); with --workers N, "
                             f"the first of N (ports PORT..PORT+N-1, paths PATH.0..PATH.N-1)")
    parser.add_argument("--keys", type=Path, default=None, metavar="DIR",
                        help="CURVE key folder from `infill keys`: encrypt, and admit only the "
                             "clients in DIR/authorized (required for non-loopback --bind)")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes to run, each on its own address, restarted if "
                             "they die (default 1)")
    parser.add_argument("--model", type=Path, default=None,
                        help="model folder (config.json, *.safetensors, tokenizer.json); "
                             "default: the bundled model")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: one for a model under 100M parameters on the CPU, "
                             "else torch's own choice; OMP_NUM_THREADS also sets it)")
    parser.add_argument("--parent-pid", type=int, default=None, metavar="PID",
                        help="stop when process PID is no longer this worker's parent (set by the "
                             "supervisors and servers that start workers)")
    parser.add_argument("--owned-dir", type=Path, default=None, metavar="DIR",
                        help="a private folder made for this worker (its ipc:// socket's), removed "
                             "when it stops, however it stops short of a SIGKILL (set by the "
                             "servers that start local workers)")
    add_model_flags(parser)
    return parser


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that say how a worker holds its model (`infill.weights` combines them)."""
    parser.add_argument("--device", default="auto", metavar="DEVICE",
                        help=f"where the model runs: {DEVICE_HELP} (default auto: the first CUDA "
                             "device if there is one, else the CPU)")
    parser.add_argument("--dtype", default="auto", choices=DTYPES,
                        help="the weights' dtype (default auto: bf16 on CUDA, fp32 on the CPU)")
    parser.add_argument("--weights", default="auto", choices=("auto", *WEIGHTS),
                        help="int8: int8 linear layers, a CPU path (faster there; see the model card "
                             "for the quality); fp32: fp32 weights (default auto: int8 on the CPU "
                             "when --dtype is auto, else the dtype's own weights)")
    parser.add_argument("--max-context", type=int, default=None, metavar="TOKENS",
                        help="the longest canvas a request may have (default: the model's trained "
                             "context; lower it to bound a large model's memory)")
    parser.add_argument("--prefix-cache-mb", type=int, default=DEFAULT_PREFIX_CACHE_MB, metavar="MB",
                        help="memory for the keys/values of recent canvases reused across keystrokes "
                             f"(default {DEFAULT_PREFIX_CACHE_MB}; 0 keeps none)")


def openmp_defaults(environ: MutableMapping[str, str]) -> None:
    """The OpenMP settings of a worker's environment, where it sets none (`OMP_WAIT_POLICY`)."""
    environ.setdefault("OMP_WAIT_POLICY", OMP_WAIT_POLICY)


def _load_runner(args: argparse.Namespace) -> Any:
    """The model runner the flags ask for; a ValueError when the flags or the model folder will not do."""
    # Imported here so that importing this module (and testing it with a fake runner) needs no torch.
    openmp_defaults(os.environ)  # read once, as torch loads its OpenMP
    import torch

    from engine.worker.causal_runner import CausalRunner, is_causal
    from engine.worker.runner import ModelRunner
    from infill.checkpoint import check_dtype, read_config
    from infill.paths import bundled_model_dir
    from infill.serving import open_tokenizer

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    where = placement(args.device, args.dtype, args.weights, torch.cuda.device_count())
    logger.info("loading the model on %s in %s%s", where.device, where.dtype, " (int8 linear layers)" * where.int8)
    model_dir = args.model if args.model is not None else bundled_model_dir()
    check_dtype(where.device, where.dtype)  # a dtype the device cannot do: one line, before any loading
    read_config(model_dir)  # a config that is no regular file under its cap: one line, before anything reads it
    if not is_causal(model_dir):  # the tokenizer's problems name its files before the weights are read
        logger.info("%s", startup_summary(model_dir, open_tokenizer(model_dir), where.device, where.dtype))
    if is_causal(model_dir):  # an autoregressive checkpoint: left to right, prefix only
        logger.info("%s is autoregressive: decoding left to right from the prefix alone", model_dir)
        runner = CausalRunner(model_dir, device=where.device, weights=where.weights, dtype=where.dtype,
                              max_context=args.max_context)
    else:
        runner = ModelRunner(model_dir, device=where.device, weights=where.weights, dtype=where.dtype,
                             max_context=args.max_context, prefix_cache_bytes=args.prefix_cache_mb * 2**20)
    threads = default_threads(runner.model.cfg.num_params(), where.device, args.threads, os.environ)
    if threads is not None:
        torch.set_num_threads(threads)
        logger.info("computing on %d CPU thread(s) (--threads or OMP_NUM_THREADS choose otherwise)", threads)
    return runner


def default_threads(params: int, device: str, threads: int | None, environ: Mapping[str, str]) -> int | None:
    """The torch threads a worker sets where neither `--threads` nor OMP_NUM_THREADS names any: one
    for a model of fewer than ONE_THREAD_PARAMS parameters on the CPU; else None (as it stands)."""
    if threads is not None or "OMP_NUM_THREADS" in environ or device != "cpu":
        return None
    return 1 if params < ONE_THREAD_PARAMS else None


def startup_summary(model_dir: Path, tok: Any, device: str, dtype: str) -> str:
    """The one line a worker logs when it starts (what `infill doctor` checks at length): the
    family and why, the tokenizer's files and special ids, the config fields read."""
    from infill.checkpoint import read_config
    from infill.families import family_and_why
    from infill.family_tokens import tokenizer_class

    raw = read_config(Path(model_dir))
    family, why = family_and_why(raw)
    files = [n for n in ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json")
             if (Path(model_dir) / n).is_file()]
    named = tokenizer_class(Path(model_dir))
    fields = {k: raw[k] for k in ("num_hidden_layers", "n_layers", "num_layers", "hidden_size", "d_model",
                                  "vocab_size", "max_position_embeddings", "max_sequence_length") if k in raw}
    return (f"model {model_dir}: family {family} ({why}); tokenizer {tok.vocab_size} tokens from "
            f"{'+'.join(files)}{f' (class {named})' if named else ''}, mask {tok.mask_id}, pad {tok.pad_id}, "
            f"ends {list(tok.end_ids)}, "
            f"begin {list(tok.head_ids) or 'none'}; config {fields}; on {device} in {dtype} "
            f"(`infill doctor {model_dir}` checks it all)")


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> ServerKeys | None:
    """Validate the flags (exiting with a usage error); returns the CURVE keys, if any."""
    if args.owned_dir is not None and not args.owned_dir.is_dir():
        parser.error(f"--owned-dir {args.owned_dir} is not a folder; make it first, or omit the flag")
    try:
        keys = None if args.keys is None else load_server_keys(args.keys.expanduser())
        check_bind_address(args.bind, curve=keys is not None)
        worker_addresses(args.bind, args.workers)
        if args.owned_dir is not None:
            check_private(args.owned_dir)  # never remove a folder that others could have made
    except ValueError as exc:
        parser.error(str(exc))
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if args.model is not None and not args.model.is_dir():
        parser.error(f"--model {args.model} is not a folder; pass a model folder or omit --model")
    check_model_flags(parser, args)
    return keys


def check_model_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (with a usage error) model flags that are wrong on any machine; whether a CUDA
    device is there is known once torch is imported (`_load_runner`)."""
    try:
        check_device(args.device)  # then as if the machine had the CUDA device asked for, or none
        placement(args.device, args.dtype, args.weights, 1000 if args.device.startswith("cuda") else 0)
        check_limits(args.max_context, args.prefix_cache_mb)
    except ValueError as exc:
        parser.error(str(exc))


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Entry point of `python -m engine` and `infill serve`."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    keys = _check_args(parser, args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if args.workers > 1:  # this process supervises, it loads no model
            return serve_workers(args.bind, args.workers, args.model, args.threads, args.keys,
                                 model_argv(args))
        return _serve_one(parser, args, keys)
    finally:
        remove_owned_dir(args.owned_dir)


def model_argv(args: argparse.Namespace) -> list[str]:
    """The model flags of `args` as a child worker's command line takes them (defaults left out)."""
    argv = []
    for flag in ("device", "dtype", "weights", "max_context", "prefix_cache_mb"):
        value = getattr(args, flag)
        if value is not None and value != build_parser().get_default(flag):
            argv += [f"--{flag.replace('_', '-')}", str(value)]
    return argv


def _serve_one(parser: argparse.ArgumentParser, args: argparse.Namespace, keys: ServerKeys | None) -> int:
    """One worker in this process, served until a signal or its parent's end."""
    try:
        runner = _load_runner(args)
    except ValueError as exc:  # the flags meet this machine, or the model folder is no checkpoint
        parser.error(str(exc))
    try:
        worker = Worker(runner, args.bind, keys)
    except zmq.ZMQError as exc:
        logger.error("cannot bind %s: %s; pick another address with --bind", args.bind, exc)
        return 1
    sys.stderr.write(f"infill worker ready on {worker.address} (model {worker.model_name})\n")
    sys.stderr.flush()
    if args.parent_pid is not None:
        stop_with_parent(worker, args.parent_pid, args.owned_dir)
    serve_until_signal(worker)
    return 0
