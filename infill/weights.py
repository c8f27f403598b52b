"""The weights a model is served with, and the serving defaults that depend on them (torch-free).

`WEIGHTS` names the two ways a model's linear layers can be held: fp32, or int8 (`infill.quantize`,
a CPU path). How a worker's `--device`, `--dtype` and `--weights` combine on a machine is the
worker's (`engine.worker.placement`).
"""
from __future__ import annotations

WEIGHTS = ("fp32", "int8")
# On two CPU cores int8 decodes 1.2-1.6x faster than fp32 and costs 0.4 points of pass@1 on the
# whole HumanEval single-line set (left to right: 8.8% against 9.2%; the model card).
DEFAULT_WEIGHTS = "int8"
# The cross-keystroke cache's bound: 64 canvases of 1,024 tokens of the bundled model, or two of 4k
# tokens of a 7B model in bf16 (`engine.worker.prefix_cache`).
DEFAULT_PREFIX_CACHE_MB = 512
