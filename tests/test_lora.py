"""LoRA adapters on the tiny public checkpoints: training moves the adapters alone, a saved adapter
folder reopens through the ordinary loader with the adapters merged (the same logits as the
unmerged adapted model), and serves; a folder whose base is gone says where it looked."""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.launch import weights_gb
from engine.worker.runner import ModelRunner
from infill.adapters import ADAPTER_CONFIG, ADAPTER_WEIGHTS
from infill.checkpoint import load_model
from infill.job import Job
from infill.model import Transformer
from infill.serving import open_tokenizer
from infill.tiny import training_text, write_tiny
from training.adapt import is_public
from training.lora import TARGETS, add_adapters, checkpoint_layers, save_adapters
from training.noising import Special, diffusion_batch
from training.train import batch_loss

FAMILIES = ["dream", "open-dcoder", "coda", "llada"]  # Qwen2 biased, Qwen2 tied, Qwen3, LLaDA names
RANK, ALPHA, STEPS = 4, 8, 8
WINDOW, LENGTH = 96, 80  # tokens per window, and per noised sample cut from it


@pytest.fixture(scope="module", params=FAMILIES)
def base(request, tmp_path_factory) -> Path:
    return write_tiny(request.param, tmp_path_factory.mktemp(request.param) / "base")


def windows(folder: Path, count: int = 4) -> np.ndarray:
    """(count, WINDOW) token windows of standard-library source in the folder's tokenizer."""
    ids = np.array(open_tokenizer(folder).encode(training_text()[0]), dtype=np.int64)
    return np.stack([ids[i * WINDOW:(i + 1) * WINDOW] for i in range(count)])


def probe(folder: Path) -> torch.Tensor:
    return torch.from_numpy(windows(folder, 2)[:, :48])  # (2, 48)


def logits(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.eval()(ids)[0]  # (B, T, V)


def train(model, folder: Path, params, steps: int = STEPS) -> list[float]:
    """`steps` AdamW steps of the diffusion loss on one fixed batch; the loss at each step."""
    batch = diffusion_batch(windows(folder), Special.of(open_tokenizer(folder)), np.random.default_rng(0), LENGTH)
    opt = torch.optim.AdamW(params, lr=1e-2)
    model.train()
    losses = []
    for _ in range(steps):
        loss = batch_loss(model, batch, "diffusion", "cpu")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@dataclass
class Adapted:
    base: Path
    frozen: dict[str, torch.Tensor]  # the base's state before training
    model: Transformer  # trained, its adapters unmerged
    losses: list[float]
    folder: Path  # where its adapters were saved


@pytest.fixture(scope="module")
def adapted(base, tmp_path_factory) -> Adapted:
    torch.manual_seed(0)
    model = load_model(base)
    frozen = {k: v.clone() for k, v in model.state_dict().items()}
    losses = train(model, base, add_adapters(model, rank=RANK, alpha=ALPHA))
    folder = tmp_path_factory.mktemp("adapted") / "model"
    save_adapters(model, folder, base)
    return Adapted(base, frozen, model, losses, folder)


def test_adapters_start_as_the_base_and_freeze_everything_else(base):
    model = load_model(base)
    before = logits(model, probe(base))
    params = add_adapters(model, rank=RANK, alpha=ALPHA)
    names = [name for name, p in model.named_parameters() if p.requires_grad]
    assert len(params) == len(names) == 2 * len(TARGETS) * model.cfg.num_layers  # an A and a B per projection
    assert all(".lora_A." in n or ".lora_B." in n for n in names)
    assert all(p.dtype == torch.float32 for p in params)
    assert torch.equal(logits(model, probe(base)), before)  # B starts at zero
    with pytest.raises(ValueError, match="already has LoRA"):
        add_adapters(model)


def test_training_moves_the_adapters_alone_and_lowers_the_loss(adapted):
    assert adapted.losses[-1] < 0.8 * adapted.losses[0]
    state = adapted.model.state_dict()
    for name, tensor in adapted.frozen.items():  # peft keeps a wrapped layer's tensors under base_layer
        wrapped = name.replace(".weight", ".base_layer.weight").replace(".bias", ".base_layer.bias")
        assert torch.equal(state.get(name, state.get(wrapped)), tensor), name
    assert all(p.abs().sum() > 0 for n, p in adapted.model.named_parameters() if ".lora_B." in n)


def test_the_saved_folder_reopens_merged_with_the_adapted_logits(adapted):
    ids = probe(adapted.base)
    reopened = load_model(adapted.folder)
    merged = logits(reopened, ids)
    assert torch.allclose(merged, logits(adapted.model, ids), atol=1e-4, rtol=1e-4)
    assert (merged - logits(load_model(adapted.base), ids)).abs().max() > 0.1
    assert not any("lora" in name for name in reopened.state_dict())  # plain linear layers: no cost per token


def test_the_folder_names_its_base_and_reads_the_bases_tokenizer(adapted):
    base, folder = adapted.base, adapted.folder
    config = json.loads((folder / ADAPTER_CONFIG).read_text())
    assert config["base_model_name_or_path"] == str(base.resolve())
    assert (config["peft_type"], config["r"], config["lora_alpha"]) == ("LORA", RANK, ALPHA)
    assert set(config["target_modules"]) == set(TARGETS)
    weights = sorted(p.name for p in folder.glob("*.safetensors"))
    assert weights == [ADAPTER_WEIGHTS]  # the base's weights are named, not copied
    text = training_text()[1][:400]
    assert open_tokenizer(folder).encode(text) == open_tokenizer(base).encode(text)
    assert is_public(base) and is_public(folder)


def test_the_worker_runner_serves_an_adapter_folder(adapted):
    runner = ModelRunner(adapted.folder)
    [answer] = runner.complete(Job.fim("def area(radius):\n    return ", "\n", "single_line", 6), None)
    assert answer.forward_passes >= 1 and answer.stop_reason == "done"


def test_doctor_checks_an_adapter_folder(adapted):
    from cli.doctor import diagnose

    report = diagnose(adapted.folder, device="cpu", dtype="fp32")
    assert report.failed == 0, report.lines
    assert any(line.startswith("ok    weights:") and f"LoRA rank {RANK}" in line for line in report.lines)


def test_adapters_stack_on_an_adapted_model(adapted, tmp_path):
    model = load_model(adapted.folder)  # merged: the first adapters are in its weights
    train(model, adapted.base, add_adapters(model, rank=RANK, alpha=ALPHA), steps=2)
    save_adapters(model, tmp_path / "again", adapted.folder)
    ids = probe(adapted.base)
    assert torch.allclose(logits(load_model(tmp_path / "again"), ids), logits(model, ids), atol=1e-4, rtol=1e-4)


def saved_bytes_and_grads(model, folder: Path) -> tuple[int, list[torch.Tensor]]:
    """Bytes the autograd graph keeps for one diffusion loss's backward, and the adapters' gradients."""
    batch = diffusion_batch(windows(folder), Special.of(open_tokenizer(folder)), np.random.default_rng(1), LENGTH)
    kept = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t.numel() * t.element_size()) or t,
                                                  lambda t: t):
        loss = batch_loss(model, batch, "diffusion", "cpu")
    loss.backward()
    return sum(kept), [p.grad for n, p in model.named_parameters() if p.requires_grad]


def test_checkpointed_layers_keep_less_for_the_same_gradients(adapted):
    plain, recomputed = load_model(adapted.folder), load_model(adapted.folder)
    for model in (plain, recomputed):
        torch.manual_seed(0)
        add_adapters(model, rank=RANK, alpha=ALPHA)
        with torch.no_grad():  # B away from zero, so that A has gradients too
            for param in (p for n, p in model.named_parameters() if ".lora_B." in n):
                param.add_(0.01)
    checkpoint_layers(recomputed)
    kept, grads = saved_bytes_and_grads(plain, adapted.base)
    kept_recomputed, grads_recomputed = saved_bytes_and_grads(recomputed, adapted.base)
    assert kept_recomputed < kept / 2
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(grads, grads_recomputed))


def test_a_missing_base_is_named(base, tmp_path):
    moved = shutil.copytree(base, tmp_path / "base")
    model = load_model(moved)
    add_adapters(model, rank=RANK, alpha=ALPHA)
    save_adapters(model, tmp_path / "adapted", moved)
    shutil.rmtree(moved)
    with pytest.raises(ValueError, match=str(moved)):
        load_model(tmp_path / "adapted")
    with pytest.raises(ValueError, match="base_model_name_or_path"):
        ModelRunner(tmp_path / "adapted")


def test_saving_into_the_base_is_refused(base):
    model = load_model(base)
    add_adapters(model, rank=RANK, alpha=ALPHA)
    with pytest.raises(ValueError, match="is the base model folder"):
        save_adapters(model, base, base)


def test_adapters_peft_settings_it_cannot_merge_are_refused(adapted, tmp_path):
    copy = shutil.copytree(adapted.folder, tmp_path / "dora")
    config = json.loads((copy / ADAPTER_CONFIG).read_text())
    (copy / ADAPTER_CONFIG).write_text(json.dumps({**config, "use_dora": True}))
    with pytest.raises(ValueError, match="use_dora"):
        load_model(copy)


def test_the_objectives_ids_are_the_tokenizers(base, tiny_model_dir):
    for folder in (base, tiny_model_dir):
        tok = open_tokenizer(folder)
        sp = Special.of(tok)
        assert (sp.mask, sp.pad) == (tok.mask_id, tok.pad_id)
        assert [sp.newline] == tok.encode("\n")
    assert not is_public(tiny_model_dir)


def test_the_worker_start_up_timeout_counts_the_bases_weights(adapted):
    own = sum(f.stat().st_size for f in adapted.folder.glob("*.safetensors")) / 1e9
    assert weights_gb(adapted.folder) == pytest.approx(own + weights_gb(adapted.base))
    assert weights_gb(adapted.base) > 0
