"""Reading and writing model folders: `config.json` + `model.safetensors` (+ `tokenizer.json`).

Our own checkpoints store a `ModelConfig` as `config.json`; public checkpoints (Hugging Face
layout) are recognised by their `model_type`/`architectures` and translated by `infill.families`.
A sharded checkpoint is read from the shards its `model.safetensors.index.json` names, and from
nothing else in the folder. A LoRA adapter folder (`infill.adapters`) loads its base's weights
with its adapters merged into them.

Loading builds the model on the meta device (no memory) and reads each tensor straight onto the
target device in the target dtype, one at a time, then assigns it: a 7B bf16 checkpoint served in
bf16 is never copied to fp32, and host memory holds at most one tensor on its way to a GPU.
A folder that is not a supported checkpoint raises one ValueError that says what is wrong, before
anything is built: its files are read only when they are regular files under their caps
(`infill.folder_files`), its config's types and ranges are checked and the weights' memory is
compared with the device's (`infill.model_shape`).
"""
from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save_file

from infill.adapters import adapter_chain, merge_adapters, weights_folder
from infill.folder_files import is_present, open_safetensors
from infill.folder_files import read_json as _read_json
from infill.int8_store import dequantized, is_int8_file, save_int8
from infill.model import ModelConfig, Transformer
from infill.model_shape import check_fits, check_shape, typed

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# model_type values of plain autoregressive configs that a diffusion model may also ship (Open-dCoder
# is a Qwen2 config, CoDA's defaults read a Qwen3 one): served only when the folder names a mask token.
_AUTOREGRESSIVE_TYPES = {"qwen2", "qwen3"}


def save_model(model: Transformer, folder: Path, dtype: torch.dtype = torch.float16, int8: bool = False) -> None:
    """Write config.json and model.safetensors (tied weights stored once); `int8` stores the
    matrices as int8 with per-channel scales (`infill.int8_store`) instead of `dtype`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.cfg.save(folder / "config.json")
    state = {k: v.detach().to(torch.float32 if int8 else dtype).contiguous() for k, v in model.state_dict().items()}
    if model.cfg.tie_word_embeddings:
        state.pop("lm_head.weight", None)
    if int8:
        save_int8(state, folder / SINGLE)
    else:
        save_file(state, str(folder / SINGLE), metadata={"format": "pt"})


def is_own_config(raw: dict) -> bool:
    """Our ModelConfig (also when it holds a translated public model); HF configs carry model_type."""
    return "model_type" not in raw


def read_json(path: Path, what: str) -> dict:
    """A JSON object from a regular file under its cap (`infill.folder_files`), else a ValueError."""
    return _read_json(path, what)


def read_config(folder: Path) -> dict:
    """The folder's config.json, or a ValueError saying that this is no model folder."""
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder: point --model at a model folder")
    path = folder / "config.json"
    if not is_present(path):
        raise ValueError(f"{folder} has no config.json: a model folder holds config.json, "
                         f"{SINGLE} (or shards with {INDEX}) and tokenizer.json")
    return read_json(path, "the model's config")


def tensor_files(folder: Path) -> dict[str, Path]:
    """Each tensor's name and the file holding it: the index's shards, else model.safetensors
    (of the base model, for an adapter folder)."""
    folder = weights_folder(folder)
    index = folder / INDEX
    if index.is_file():
        weight_map = read_json(index, "the shard index").get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise ValueError(f"{index} has no weight_map (tensor name -> shard file): download it again")
        shards = {name: folder / str(shard) for name, shard in weight_map.items()}
        missing = sorted({path.name for path in shards.values() if not is_present(path)})
        if missing:
            raise ValueError(f"{index} names shard(s) missing from {folder}: {', '.join(missing[:4])}; "
                             "the download is incomplete: fetch those files again")
        return shards
    single = folder / SINGLE
    if is_present(single):
        with open_safetensors(single) as f:
            return {name: single for name in f.keys()}
    found = sorted(path.name for path in folder.glob("*.safetensors"))
    if found:
        raise ValueError(f"{folder} has shards ({', '.join(found[:3])}) but no {INDEX} naming their "
                         "tensors: download the index too")
    raise ValueError(f"{folder} has no {SINGLE} and no {INDEX}: no weights to load")


def check_mask_token(folder: Path, raw: dict) -> None:
    """A plain autoregressive config (Qwen2, Qwen3) is served only when the folder names a mask
    token (config.json's mask_token_id, or a mask_token in its tokenizer files): without one it is
    an autoregressive model, whose masked-diffusion answers would be nonsense."""
    if str(raw.get("model_type", "")).lower() not in _AUTOREGRESSIVE_TYPES or "mask_token_id" in raw:
        return
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        path = folder / name
        if is_present(path) and read_json(path, "tokenizer settings").get("mask_token"):
            return
    raise ValueError(f"{folder / 'config.json'} is a plain autoregressive {raw['model_type']} model: "
                     "it names no mask token (no mask_token_id in config.json, no mask_token in "
                     "tokenizer_config.json), so it is not a masked diffusion model; serve a diffusion "
                     "checkpoint (Dream, DiffuCoder, Open-dCoder, CoDA, LLaDA)")


def check_dtype(device: str, dtype: str) -> str:
    """One matmul in `dtype` on `device`, or a ValueError saying which dtype to pass instead."""
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device}: this torch ({torch.__version__}) sees no CUDA device; "
                             "pass --device cpu, or install a CUDA build of torch")
        if dtype == "bf16" and not torch.cuda.is_bf16_supported():
            raise ValueError(f"{torch.cuda.get_device_name(device)} has no bf16: pass --dtype fp16 or --dtype fp32")
    try:
        a = torch.ones(8, 8, dtype=DTYPES[dtype], device=device)
        (a @ a).sum().item()
    except (RuntimeError, TypeError) as exc:
        reason = " ".join(str(exc).split())[:120]
        raise ValueError(f"{device} cannot compute in {dtype} ({reason}): pass --dtype fp32") from None
    return f"a matmul in {dtype} on {device} runs"


def load_model(folder: Path, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32) -> Transformer:
    """Load any supported model folder into our Transformer on `device` in `dtype`, in eval mode."""
    folder = Path(folder)
    raw = read_config(folder)
    files = tensor_files(folder)
    if not is_own_config(raw):
        check_mask_token(folder, raw)
    cfg, ours = folder_config(folder, raw, files)
    check_fits(cfg, torch.finfo(dtype).bits // 8, str(device), folder / "config.json")
    with torch.device("meta"):
        model = Transformer(cfg)
    int8 = is_own_config(raw) and any(is_int8_file(path) for path in set(files.values()))
    state = read_tensors(files, ours, torch.device(device), torch.float32 if int8 else dtype)
    if int8:  # our int8 storage: matrices times their per-channel scales
        state = dequantized(state, dtype)
    if cfg.tie_word_embeddings:
        state.pop("lm_head.weight", None)
    _assign(model, state, folder)
    for adapters in adapter_chain(folder):
        merge_adapters(model, adapters)
    return model.eval()


def folder_config(folder: Path, raw: dict, files: dict[str, Path]) -> tuple[ModelConfig, dict[str, str]]:
    """Our config for the folder's config.json (`raw`), checked (`infill.model_shape`), and our
    name for each of its tensors (`files`, from `tensor_files`)."""
    path = folder / "config.json"
    if is_own_config(raw):
        return _own_config(folder, raw), {name: name for name in files}
    from infill.families import translate

    try:
        return translate(raw, files, path)
    except KeyError as exc:
        raise ValueError(f"{path} lacks the field {exc}, which its family needs") from None


def _own_config(folder: Path, raw: dict) -> ModelConfig:
    path = folder / "config.json"
    try:
        return check_shape(typed(raw, path), path)
    except AssertionError as exc:
        raise ValueError(f"{path} is neither a Hugging Face config (no model_type) nor one of ours: {exc}") from None


def check_weights(files: dict[str, Path]) -> int:
    """Each weights file's header read and checked against its size (a shard cut short is a
    ValueError naming it); the number of files."""
    shards = sorted(set(files.values()))
    for path in shards:
        with open_safetensors(path):
            pass
    return len(shards)


def read_tensors(files: dict[str, Path], ours: dict[str, str], device: torch.device,
                 dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """The tensors `files` names, under our names, each read onto `device` and cast to `dtype`."""
    state: dict[str, torch.Tensor] = {}
    by_file: dict[Path, list[str]] = {}
    for name, path in files.items():
        by_file.setdefault(path, []).append(name)
    for path, names in by_file.items():
        with open_safetensors(path, device=str(device)) as f:
            present = set(f.keys())
            for name in names:
                if name not in present:
                    raise ValueError(f"the shard index puts tensor {name!r} in {path.name}, which lacks it: "
                                     "the shard or the index is damaged; download both again")
                state[ours[name]] = f.get_tensor(name).to(dtype)
    return state


def _assign(model: Transformer, state: dict[str, torch.Tensor], folder: Path) -> None:
    """Put the loaded tensors in place of the meta ones (re-tying a tied head)."""
    try:
        missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    except RuntimeError as exc:  # a shape that does not fit the config
        raise ValueError(f"checkpoint in {folder} does not fit its config.json: {exc}") from None
    if model.cfg.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
        missing = [k for k in missing if k != "lm_head.weight"]
    if missing or unexpected:
        raise ValueError(f"checkpoint in {folder} does not fit its config.json: missing tensors "
                         f"{missing[:5]}, unexpected tensors {unexpected[:5]}")
