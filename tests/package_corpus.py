"""A corpus folder as `infill corpus build` writes it, from one fake MIT wheel, for the snippet
data and the GPU session tests."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from training.corpus import is_validation, write_tokens

SHAPES = '''"""Shapes and their areas."""
import math


class Circle:
    """A circle of a given radius."""

    def __init__(self, radius):
        self.radius = radius


# The area of any shape with a radius.
def area(shape):
    return math.pi * shape.radius ** 2
'''
USE = '''from pkg.shapes import Circle, area
from pkg.secret import secret_helper


def total_area(radii):
    shapes = [Circle(r) for r in radii]
    return sum(area(s) for s in shapes) + secret_helper()
'''
SECRET = '''def secret_helper():
    """Held out: never in train.bin."""
    return 0
'''
TRAIN = {"pkg/pkg/shapes.py": SHAPES, "pkg/pkg/use.py": USE}
HELD_OUT = {"pkg/pkg/secret.py": SECRET}


def write_wheel(folder: Path) -> Path:
    """pkg-1.0-py3-none-any.whl: the three modules and an MIT license in its metadata."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nLicense: MIT\n\n")
        for name, text in {**TRAIN, **HELD_OUT}.items():
            zf.writestr(name.split("/", 1)[1], text)
    return wheel


def write_corpus(folder: Path, tok, repeats: int = 6) -> Path:
    """tokenizer.json, train.bin (the training modules, `repeats` times), val.bin (the held-out
    one), val_files.jsonl and wheels/ in `folder`."""
    assert not any(is_validation(name, 1.0) for name in TRAIN), "a fixture file would be held out"
    folder.mkdir(parents=True, exist_ok=True)
    tok.tok.save(str(folder / "tokenizer.json"))
    write_tokens(tok, list(TRAIN.items()) * repeats, folder / "train.bin")
    write_tokens(tok, list(HELD_OUT.items()) * 8, folder / "val.bin")
    (folder / "val_files.jsonl").write_text(
        "".join(json.dumps({"path": p, "text": t}) + "\n" for p, t in HELD_OUT.items()))
    write_wheel(folder / "wheels")
    assert len(np.fromfile(folder / "train.bin", dtype=np.uint16)) > 300
    return folder
