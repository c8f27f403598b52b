"""A model's decoder defaults (`decoder.json` beside its weights) and a request's overrides on top.

`decoder.json` holds the settings measured best for the model (its model card says how), shared
ones, under `per_mode` those of one completion mode, and under `fim_drafts` those of a
completion's hole that starts from a draft (how the model checks it: `veto`, `veto_rule`); a
request's `decoder` overrides go on top. A public checkpoint downloaded without one gets its family's published decoder
(FAMILY_DECODERS). Unknown settings or bad values raise ValueError naming the setting.
"""
from __future__ import annotations

from pathlib import Path

from infill.commit import DecoderConfig
from infill.folder_files import is_present, read_json

PER_MODE = "per_mode"  # decoder.json: {mode: settings} that apply on top of its shared ones
FIM_DRAFTS = "fim_drafts"  # decoder.json: settings on top of the mode's for a completion's drafted hole
SECTIONS = (PER_MODE, FIM_DRAFTS)

# Fast-dLLM's rule (CHECKPOINTS.md): commit every masked position at or above 0.9 (at least one),
# in semi-autoregressive blocks of 32. Published for Dream and LLaDA; Open-dCoder and CoDA are
# Qwen models adapted the way Dream was, and start from the same rule until measured.
FAST_DLLM = {"rule": "threshold", "threshold": 0.9, "block": 32}
FAMILY_DECODERS = {"dream": FAST_DLLM, "llada": FAST_DLLM, "open-dcoder": FAST_DLLM, "coda": FAST_DLLM}


def decoder_config(defaults: dict, overrides: dict, mode: str | None = None,
                   fim_drafted: bool = False, edit: bool = False) -> DecoderConfig:
    """The request's decoder overrides on top of the model's defaults for `mode` (decoder.json's
    shared settings, then its `per_mode` entry, then for a completion's drafted hole its
    `fim_drafts`); unknown keys or bad values raise ValueError. An `edit` job's regions run to
    their end: its defaults' budget of passes (`max_passes`) is a completion's, and a region cut
    short would be a wrong edit."""
    shared = {key: value for key, value in defaults.items() if key not in SECTIONS}
    drafted = defaults.get(FIM_DRAFTS, {}) if fim_drafted else {}
    settings = {**shared, **defaults.get(PER_MODE, {}).get(mode, {}), **drafted}
    if edit:
        settings.pop("max_passes", None)
    settings.update(overrides)
    unknown = set(settings) - set(DecoderConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown decoder settings {sorted(unknown)}; "
                         f"known: {sorted(DecoderConfig.__dataclass_fields__)}")
    return DecoderConfig(**settings)


def model_decoder_defaults(model_dir: Path, family: str | None = None) -> dict:
    """The decoder settings measured best for this model (`decoder.json` beside its weights), else
    those published for its family, else none."""
    path = model_dir / "decoder.json"
    if is_present(path):  # a FIFO or a link to a device there is refused, never read
        return read_json(path, "the decoder's settings")
    return dict(FAMILY_DECODERS.get(family, {}))
