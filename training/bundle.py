"""Ship a trained model: copy a run's model folder into `models/NAME` as fp16 (or int8) with its tokenizer."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import torch

from infill.checkpoint import load_model, save_model
from infill.paths import REPO_ROOT

MAX_BUNDLE_BYTES = 100 * 1024 * 1024


def bundle(model_dir: Path, dest: Path, int8: bool = False) -> int:
    """Write dest/config.json, model.safetensors (fp16, or int8 with per-channel scales) and
    tokenizer.json; returns the weight bytes."""
    model = load_model(model_dir)
    save_model(model, dest, dtype=torch.float16, int8=int8)
    shutil.copyfile(model_dir / "tokenizer.json", dest / "tokenizer.json")
    size = (dest / "model.safetensors").stat().st_size
    if size > MAX_BUNDLE_BYTES:
        raise ValueError(f"{dest} weighs {size:,} bytes, over the {MAX_BUNDLE_BYTES:,} byte limit for a bundled model")
    return size


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir", type=Path, help="a run's model folder (e.g. work/runs/diffusion/model)")
    p.add_argument("name", help="folder name under models/")
    p.add_argument("--models", type=Path, default=REPO_ROOT / "models", help="where the model folders live")
    p.add_argument("--int8", action="store_true",
                   help="store the matrices as int8 with per-channel scales (half of fp16; `infill.int8_store`)")
    args = p.parse_args(argv)
    size = bundle(args.model_dir, args.models / args.name, args.int8)
    print(f"bundled {args.model_dir} as {args.models / args.name} ({size:,} bytes of weights)")


if __name__ == "__main__":
    main()
