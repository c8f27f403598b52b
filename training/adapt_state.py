"""The resumable state of an `infill adapt` run (`OUT.partial/state.safetensors`), kept without pickle.

One safetensors file holds the trained weights (`model/NAME`) and the optimizer's tensors
(`opt/PARAM/KEY`); its metadata holds everything else as JSON: the progress, the optimizer's
groups and plain numbers, the data order's random state and the fingerprint of what it was trained
on. Nothing in the run folder is ever unpickled (the format before this one, `state.pt`, is left
unread), so a planted file runs nothing: a state that cannot be read, or does not fit the model and
files of this run, is named in one line and the run starts over.
"""
from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file
from tqdm import tqdm

from infill.model import Transformer

STATE = "state.safetensors"
PICKLED_STATE = "state.pt"  # the format before this one: never read
MAX_STATE_BYTES = 64_000_000_000  # more than any model this trains, with its optimizer


@dataclass(slots=True)
class Progress:
    step: int = 0
    seconds: float = 0.0  # training time spent, over all resumed runs
    loss: float | None = None
    sessions: int = 0  # runs that trained it (a resumed run adds one)


class BadState(ValueError):
    """A saved state that cannot be resumed; the argument says why."""


def trained_name(model: Transformer, name: str) -> bool:
    """Whether a state-dict entry is trained (every one, or only the adapters' when the rest is frozen)."""
    param = dict(model.named_parameters()).get(name)
    return param is None or param.requires_grad


def save_state(run: Path, model: Transformer, opt: torch.optim.Optimizer, rng: np.random.Generator,
               progress: Progress, mark: str) -> None:
    """Write the resumable state into the run folder under a new temporary name and rename it
    (a cut write leaves the last one)."""
    with rng.bit_generator.lock:  # the prefetch thread draws from it
        rng_state = rng.bit_generator.state
    tensors = {f"model/{k}": v for k, v in model.state_dict().items() if trained_name(model, k)}
    opt_state = opt.state_dict()
    plain = {}
    for index, values in opt_state["state"].items():
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                tensors[f"opt/{index}/{key}"] = value
            else:
                plain.setdefault(str(index), {})[key] = value
    meta = {"progress": [progress.step, progress.seconds, progress.loss, progress.sessions], "fingerprint": mark,
            "rng": rng_state, "opt_groups": opt_state["param_groups"], "opt_plain": plain}
    fd, tmp = tempfile.mkstemp(prefix=".state-", suffix=".tmp", dir=run)
    os.close(fd)
    try:
        save_file(unshared(tensors), tmp, metadata={"state": json.dumps(meta)})
        os.replace(tmp, run / STATE)
    finally:
        Path(tmp).unlink(missing_ok=True)


def unshared(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tensors as safetensors stores them: contiguous, on the CPU, none sharing memory with
    another (a tied weight is copied)."""
    seen, out = set(), {}
    for name, tensor in tensors.items():
        tensor = tensor.detach().cpu().contiguous()
        pointer = tensor.untyped_storage().data_ptr()
        out[name] = tensor.clone() if pointer in seen else tensor
        seen.add(pointer)
    return out


def load_state(run: Path, model: Transformer, opt: torch.optim.Optimizer, rng: np.random.Generator,
               expected: str) -> Progress:
    """A saved run's progress, loaded into `model`, `opt` and `rng`; a fresh Progress when there
    is no state, it was trained on something else, or it cannot be read (said in one line)."""
    path = run / STATE
    if not os.path.lexists(path):
        if os.path.lexists(run / PICKLED_STATE):
            tqdm.write(f"{run / PICKLED_STATE} is a pickle (an older infill adapt's state) and is never loaded: "
                       "starting over", file=sys.stderr)
        return Progress()
    try:
        tensors, meta = read_state(path)
        if meta.get("fingerprint") != expected:
            raise BadState("it was trained on other files or another base")
        progress = apply_state(tensors, meta, model, opt, rng)
    except BadState as error:
        tqdm.write(f"{path} is not resumed ({error}): starting over", file=sys.stderr)
        return Progress()
    tqdm.write(f"resuming at step {progress.step}, {progress.seconds:.0f} s of {run} already trained", file=sys.stderr)
    return progress


def read_state(path: Path) -> tuple[dict[str, torch.Tensor], dict]:
    """The tensors and the JSON metadata of a state file; BadState for anything that is not one."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STATE_BYTES:
        raise BadState("it is not a regular file of a state's size")
    try:
        with safe_open(str(path), framework="pt") as handle:
            meta = json.loads((handle.metadata() or {}).get("state", "null"))
            tensors = {name: handle.get_tensor(name) for name in handle.keys()}
    except (SafetensorError, OSError, ValueError) as error:
        raise BadState(f"it cannot be read as a state: {one_line(error)}") from None
    if not isinstance(meta, dict):
        raise BadState("it holds no state record")
    return tensors, meta


def apply_state(tensors: dict[str, torch.Tensor], meta: dict, model: Transformer, opt: torch.optim.Optimizer,
                rng: np.random.Generator) -> Progress:
    """Check every part of a read state against this run's model and optimizer, then load them;
    BadState (nothing loaded) when one does not fit."""
    try:
        progress = checked_progress(meta["progress"])
        scratch = np.random.PCG64()
        scratch.state = meta["rng"]
        weights = checked_weights(tensors, model)
        opt.load_state_dict(optimizer_state(tensors, meta, sum(len(g["params"]) for g in opt.param_groups)))
    except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as error:
        raise BadState(f"it does not fit this run: {one_line(error)}") from None
    model.load_state_dict(weights, strict=False)
    rng.bit_generator.state = scratch.state
    return progress


def one_line(error: Exception, limit: int = 200) -> str:
    return " ".join(str(error).split())[:limit] or type(error).__name__


def checked_progress(raw) -> Progress:
    step, seconds, loss, sessions = raw
    if not (type(step) is int and type(sessions) is int and isinstance(seconds, (int, float))
            and (loss is None or isinstance(loss, (int, float))) and step >= 0 and sessions >= 0 and seconds >= 0):
        raise ValueError(f"progress {raw!r} is not steps, seconds, loss and sessions")
    return Progress(step, float(seconds), loss, sessions)


def checked_weights(tensors: dict[str, torch.Tensor], model: Transformer) -> dict[str, torch.Tensor]:
    """The state's model tensors, each a trained entry of `model` of its shape and dtype."""
    own = model.state_dict()
    weights = {name[len("model/"):]: t for name, t in tensors.items() if name.startswith("model/")}
    wanted = {name for name in own if trained_name(model, name)}
    if set(weights) != wanted:
        raise ValueError("its weights are not this model's")
    for name, tensor in weights.items():
        if tensor.shape != own[name].shape or tensor.dtype != own[name].dtype:
            raise ValueError(f"{name} is {tuple(tensor.shape)} {tensor.dtype}, not {tuple(own[name].shape)}")
    return weights


def optimizer_state(tensors: dict[str, torch.Tensor], meta: dict, n_params: int) -> dict:
    """The optimizer's state dict rebuilt from the state's `opt/` tensors and its JSON."""
    state: dict[int, dict] = {}
    for name, tensor in tensors.items():
        if name.startswith("opt/"):
            _, index, key = name.split("/", 2)
            state.setdefault(int(index), {})[key] = tensor
    for index, values in meta["opt_plain"].items():
        state.setdefault(int(index), {}).update(values)
    if any(not 0 <= index < n_params for index in state):
        raise ValueError("its optimizer state names parameters this run does not train")
    return {"state": state, "param_groups": meta["opt_groups"]}
