"""Where the project keeps its files: the bundled model, the self-check's example and the work
folder, in the checkout and in an installed copy.

An installed wheel carries the repository's bundled files under `infill/_bundled/` (see
scripts/namespaced_wheel.py) and keeps no work inside site-packages: its work folder is the
user's data folder (`$XDG_DATA_HOME/infill`, else `~/.local/share/infill`). INFILL_MODEL and
INFILL_WORK override the model and the work folder in both.
"""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent  # the checkout (in an installed copy: the folder it is installed in)
BUNDLED = PACKAGE_DIR / "_bundled"  # only in an installed copy: the wheel's copy of the files below
BUNDLED_MODEL_NAME = "infill-py-16m"


def installed() -> bool:
    """True in a copy installed from the wheel, False in the checkout (editable installs too)."""
    return BUNDLED.is_dir()


def _bundle_root() -> Path:
    """Where `models/` and `examples/` are: the wheel's bundle, or the checkout."""
    return BUNDLED if installed() else REPO_ROOT


def bundled_model_dir() -> Path:
    """The model served by default; INFILL_MODEL overrides it."""
    override = os.environ.get("INFILL_MODEL")
    return Path(override) if override else _bundle_root() / "models" / BUNDLED_MODEL_NAME


def example_file(name: str) -> Path:
    """A file of the repository's examples/ (`infill run`'s self-check completes one)."""
    return _bundle_root() / "examples" / name


def user_data_dir() -> Path:
    """The user's data folder for this project, as the XDG base directories say (a relative
    XDG_DATA_HOME is ignored, as they say too)."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "infill"


def work_dir() -> Path:
    """Corpus downloads, token shards and training checkpoints (never committed; never inside an
    installed package); INFILL_WORK overrides it."""
    override = os.environ.get("INFILL_WORK")
    if override:
        return Path(override)
    return user_data_dir() if installed() else REPO_ROOT / "work"
