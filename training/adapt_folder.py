"""Where `infill adapt` writes, checked before anything is trained, and how the model goes in place.

The model folder OUT is written only when it is new, an empty folder, or a model folder that
`infill adapt` wrote: its `adapt.json` lists the files adapt put there and the folder holds
nothing else (nothing of the user's is ever removed). Neither OUT nor its run folder
(`OUT.partial`, the resumable state) may be inside or above the repository or the base model
folder (inside the repository only in infill's own work folder, where OUT goes by default, which
`.gitignore` leaves out when infill's checkout is adapted to itself), and the run folder may not be
a link. A refusal is one line (`RepoError`).

The new model is written into a new temporary folder beside OUT and swapped in by renames: OUT
is the previous model until the new one is complete, and the temporary folder is removed whatever
stops the write, Ctrl-C included.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from training.repo_files import RepoError

RECORD = "adapt.json"
MAX_RECORD_BYTES = 10_000_000
# What adapt wrote into a model folder before `adapt.json` listed its files.
EARLIER_FILES = frozenset({RECORD, "MODEL_CARD.md", "config.json", "model.safetensors", "tokenizer.json",
                           "decoder.json"})


def run_dir(out: Path) -> Path:
    return Path(out).with_name(Path(out).name + ".partial")


def checked_out(out: Path, repo: Path | None, base: Path, work: Path) -> Path:
    """OUT resolved, once it is a folder adapt may write (see the module's docstring); RepoError
    with the reason otherwise. Inside infill's own work folder `work` (where OUT goes by default),
    OUT may be inside the repository: that is infill's checkout adapted to itself."""
    out = Path(out).expanduser().resolve()
    if not out.name:
        raise RepoError(f"--out {out} is the file system's root: give a new folder for the model")
    for folder, name in ((out, f"--out {out}"), (run_dir(out), f"--out {out}'s run folder {run_dir(out)}")):
        if repo is not None:
            check_apart(folder, name, Path(repo).resolve(), "the repository", Path(work).resolve())
        check_apart(folder, name, Path(base).resolve(), "the base model folder")
    check_own(out)
    check_run(run_dir(out))
    return out


def check_apart(folder: Path, name: str, place: Path, what: str, work: Path | None = None) -> None:
    """Refuse `folder` (called `name`) when it is `place`, inside it (unless inside `work` too) or
    above it."""
    if folder == place:
        where = f"is {what}"
    elif folder.is_relative_to(place) and not (work is not None and folder.is_relative_to(work)):
        where = f"is inside {what} {place}"
    elif place.is_relative_to(folder):
        where = f"holds {what} {place}"
    else:
        return
    beside = place.parent / (place.name + "-adapted")
    raise RepoError(f"{name} {where}: give a folder outside it, such as {beside}")


def check_own(out: Path) -> None:
    """Refuse an existing OUT that is not a folder adapt wrote (or an empty one)."""
    if not os.path.lexists(out):
        return
    if not out.is_dir():
        raise RepoError(f"--out {out} exists and is not a folder: give a new folder for the model")
    entries = sorted(out.iterdir())
    if not entries:
        return
    written = written_files(out)
    if written is None:
        raise RepoError(f"--out {out} holds files and is not a model folder infill adapt wrote (no {RECORD} of "
                        "its own): give a new folder, or one infill adapt wrote")
    foreign = [e.name for e in entries if e.name not in written or not stat.S_ISREG(e.lstat().st_mode)]
    if foreign:
        raise RepoError(f"--out {out} holds what infill adapt did not write there ({', '.join(foreign[:3])}"
                        f"{', ...' if len(foreign) > 3 else ''}): move it away, or give a new folder")


def written_files(out: Path) -> frozenset[str] | None:
    """The names adapt wrote into `out` by its `adapt.json`, or None when `out` has none of adapt's."""
    path = out / RECORD
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECORD_BYTES:
            return None
        record = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not {"base", "config", "data"} <= record.keys():
        return None
    files = record.get("files")
    if files is None:
        return EARLIER_FILES
    if not isinstance(files, list) or not all(isinstance(name, str) for name in files):
        return None
    return frozenset(files) | {RECORD}


def check_run(run: Path) -> None:
    """Refuse a run folder that is a link or not a folder (the state is written into it)."""
    if run.is_symlink() or (os.path.lexists(run) and not run.is_dir()):
        raise RepoError(f"{run} (the run's state folder) is a link or not a folder: move it away")


def write_folder(out: Path, fill: Callable[[Path], None]) -> Path:
    """`fill` a new temporary folder beside OUT and swap it in; the temporary folder never stays."""
    out.parent.mkdir(parents=True, exist_ok=True)
    check_own(out)  # again: it may have changed while the model trained
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        fill(tmp)
        swap_into(tmp, out)
    except OSError as error:
        raise SystemExit(f"could not write {out} ({error}); it was left as it was, and the run's state is in "
                         f"{run_dir(out)}: run the same command again to save it") from error
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def swap_into(tmp: Path, out: Path) -> None:
    """Put the complete folder `tmp` at `out`: the previous one is renamed aside, put back if the
    new one cannot take its place, and removed once it has."""
    if not os.path.lexists(out):
        tmp.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    out.rename(old)  # over the new empty folder
    try:
        tmp.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
