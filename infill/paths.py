"""Where the project keeps its files: the bundled model and the corpus work folder."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BUNDLED_MODEL_NAME = "infill-py-16m"


def bundled_model_dir() -> Path:
    """The model served by default; INFILL_MODEL overrides it."""
    override = os.environ.get("INFILL_MODEL")
    return Path(override) if override else REPO_ROOT / "models" / BUNDLED_MODEL_NAME


def work_dir() -> Path:
    """Corpus downloads, token shards and training checkpoints (never committed)."""
    return Path(os.environ.get("INFILL_WORK", REPO_ROOT / "work"))
