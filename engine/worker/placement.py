"""Where a worker's model lives and what it computes with (torch-free, for the command line).

Three settings combine: `--device` (auto, cpu, cuda, cuda:N), `--dtype` (auto, bf16, fp16, fp32)
and `--weights` (auto, fp32, int8: int8 linear layers, see `infill.quantize`). `placement` turns
them into one `Placement` or a ValueError that says which flag to change:

- auto device: the first CUDA device when there is one, else the CPU (always the CPU with int8);
- auto dtype: bf16 on CUDA (every public diffusion coder ships bf16), fp32 on the CPU;
- auto weights: int8 on the CPU when the dtype is auto (as before these flags: faster there),
  else the dtype's own weights. int8 is a CPU path (fbgemm) whose other layers compute in fp32:
  it refuses CUDA and a half dtype. `--weights fp32` means fp32 weights: it refuses a half dtype.

The flags' rules are the wire's (`engine.wire.flags`: `check_device`, `check_dtype`), which every
front end's settings and the launcher use too.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.wire.flags import check_device, check_dtype
from infill.weights import WEIGHTS


@dataclass(frozen=True, slots=True)
class Placement:
    device: str  # "cpu" or "cuda:N"
    dtype: str  # "bf16", "fp16" or "fp32": the weights' and activations' dtype
    int8: bool  # int8 linear layers (a CPU path; the rest computes in fp32)

    @property
    def weights(self) -> str:
        """The name `infill.quantize.for_inference` takes."""
        return "int8" if self.int8 else "fp32"

    @property
    def on_cuda(self) -> bool:
        return self.device.startswith("cuda")


def placement(device: str, dtype: str, weights: str, cuda_count: int) -> Placement:
    """The settings resolved on a machine with `cuda_count` CUDA devices (see the module's rules)."""
    check_dtype(dtype)
    if weights not in ("auto", *WEIGHTS):
        raise ValueError(f"--weights {weights!r} is not one of auto, {', '.join(WEIGHTS)}")
    explicit = dtype != "auto"  # int8 is the CPU's default only while the dtype is left to us
    check_device(device)
    resolved = "cpu" if device == "auto" and weights == "int8" else _resolve_device(device, cuda_count)
    on_cuda = resolved != "cpu"
    if weights == "int8" and on_cuda:
        raise ValueError(f"--weights int8 is a CPU path; on {resolved} use --dtype bf16 or fp16 "
                         "(or pass --device cpu)")
    if weights in WEIGHTS and dtype in ("bf16", "fp16"):
        raise ValueError(f"--weights {weights} computes in fp32 and --dtype {dtype} asks for half "
                         f"precision: drop one of the two flags")
    if dtype == "auto":
        dtype = "bf16" if on_cuda and weights == "auto" else "fp32"
    int8 = weights == "int8" or (weights == "auto" and not on_cuda and dtype == "fp32" and not explicit)
    return Placement(resolved, dtype, int8)


def _resolve_device(device: str, cuda_count: int) -> str:
    if device == "auto":
        return "cuda:0" if cuda_count else "cpu"
    if device == "cpu":
        return device
    index = int(device.partition(":")[2] or 0)
    if cuda_count == 0:
        raise ValueError(f"--device {device}: this machine has no CUDA device (or torch was built "
                         "without CUDA); use --device cpu or auto")
    if index >= cuda_count:
        raise ValueError(f"--device {device}: this machine has {cuda_count} CUDA device(s), "
                         f"cuda:0 to cuda:{cuda_count - 1}")
    return f"cuda:{index}"
