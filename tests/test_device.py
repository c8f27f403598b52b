"""Device, dtype and loading: the serving flags and how they combine, a sharded bf16 checkpoint
read into the dtype asked for (built on the meta device, only the indexed shards read), one clear
error per bad folder, decoder tensors on the model's device, and the prefix cache's byte bound.
The `gpu` test runs one completion on CUDA where there is a device."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from engine.wire.flags import check_local_worker_flags, local_worker_flags, model_flags
from engine.launch import worker_argv
from engine.worker import cli
from engine.worker.prefix_cache import PrefixCache, kv_bytes
from infill import checkpoint, decode
from infill.checkpoint import load_model
from infill.model import ModelConfig, Transformer
from engine.worker.placement import placement

SHAPE = dict(vocab_size=64, hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=8,
             intermediate_size=48, max_position_embeddings=128)


@pytest.mark.parametrize("device, dtype, weights, cuda_count, wanted", [
    ("auto", "auto", "auto", 0, ("cpu", "fp32", True)),  # the CPU as before: int8
    ("auto", "auto", "auto", 2, ("cuda:0", "bf16", False)),
    ("cpu", "fp32", "auto", 0, ("cpu", "fp32", False)),  # a dtype said aloud: its own weights
    ("cpu", "bf16", "auto", 1, ("cpu", "bf16", False)),
    ("cuda:1", "fp16", "auto", 2, ("cuda:1", "fp16", False)),
    ("cuda", "auto", "fp32", 1, ("cuda:0", "fp32", False)),  # fp32 weights on a GPU
    ("auto", "auto", "int8", 1, ("cpu", "fp32", True)),  # int8 picks the CPU
])
def test_flags_combine_into_one_placement(device, dtype, weights, cuda_count, wanted):
    where = placement(device, dtype, weights, cuda_count)
    assert (where.device, where.dtype, where.int8) == wanted


@pytest.mark.parametrize("device, dtype, weights, cuda_count, complaint", [
    ("cuda", "auto", "int8", 1, "int8 is a CPU path"),
    ("cpu", "bf16", "int8", 0, "drop one of the two flags"),
    ("cpu", "fp16", "fp32", 0, "drop one of the two flags"),
    ("cuda", "auto", "auto", 0, "no CUDA device"),
    ("cuda:2", "auto", "auto", 2, "cuda:0 to cuda:1"),
    ("gpu", "auto", "auto", 1, "is not a device"),
    ("cpu", "int4", "auto", 0, "is not one of"),
])
def test_refused_combinations_say_what_to_change(device, dtype, weights, cuda_count, complaint):
    with pytest.raises(ValueError, match=complaint):
        placement(device, dtype, weights, cuda_count)


@pytest.mark.parametrize("argv, complaint", [
    (["--device", "tpu"], "is not a device"),
    (["--device", "cuda", "--weights", "int8"], "int8 is a CPU path"),
    (["--dtype", "bf16", "--weights", "int8"], "drop one of the two flags"),
    (["--max-context", "0"], "at least 1 token"),
    (["--prefix-cache-mb", "-1"], "0 or more"),
])
def test_serve_refuses_bad_flags_as_usage_errors(argv, complaint, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv, prog="infill serve")
    assert stopped.value.code == 2 and complaint in capsys.readouterr().err


def test_serve_passes_its_model_flags_to_the_workers_it_supervises():
    args = cli.build_parser().parse_args(["--device", "cuda:1", "--dtype", "fp16", "--max-context", "512"])
    assert cli.model_argv(args) == ["--device", "cuda:1", "--dtype", "fp16", "--max-context", "512"]
    assert cli.model_argv(cli.build_parser().parse_args([])) == []


def test_lsp_and_run_pass_device_and_dtype_to_their_worker():
    from cli import run as service
    from lsp_server import main as lsp_cli
    from lsp_server import server

    lsp = lsp_cli.build_parser().parse_args(["--device", "cuda", "--dtype", "bf16", "--startup-timeout", "600"])
    run = service.build_parser().parse_args(["--device", "cpu"])
    assert model_flags(lsp.device, lsp.dtype) == ["--device", "cuda", "--dtype", "bf16"]
    assert lsp.startup_timeout == 600
    argv = worker_argv("ipc:///tmp/w.sock", flags=model_flags(run.device, run.dtype))
    assert argv[-2:] == ["--device", "cpu"] and "--dtype" not in argv
    built = server.build_server(worker_flags=model_flags(lsp.device, lsp.dtype), startup_timeout_s=600)
    workers = built.session.workers
    assert workers.flags == ["--device", "cuda", "--dtype", "bf16"] and workers.startup_timeout_s == 600


def test_lsp_and_run_pass_context_and_cache_limits_to_their_worker(capsys):
    from cli import run as service
    from lsp_server import main as lsp_cli

    lsp = lsp_cli.build_parser().parse_args(["--device", "cuda", "--max-context", "4096", "--prefix-cache-mb", "0"])
    assert local_worker_flags(lsp) == ["--device", "cuda", "--max-context", "4096", "--prefix-cache-mb", "0"]
    assert local_worker_flags(service.build_parser().parse_args([])) == []
    parser = service.build_parser()
    with pytest.raises(SystemExit):
        check_local_worker_flags(parser, parser.parse_args(["--max-context", "0"]))
    assert "--max-context must be at least 1" in capsys.readouterr().err


def write_sharded(folder: Path, config: dict | None = None) -> Transformer:
    """A tiny Qwen2-layout checkpoint in bf16: two shards, their index, and a junk file beside
    them that no loader may read (it is no safetensors file)."""
    torch.manual_seed(0)
    model = Transformer(ModelConfig(**SHAPE, tie_word_embeddings=False, qkv_bias=True))
    state = {name: tensor.detach().to(torch.bfloat16).contiguous() for name, tensor in model.state_dict().items()}
    names = sorted(state)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    folder.mkdir(parents=True, exist_ok=True)
    for file, part in shards.items():
        save_file({name: state[name] for name in part}, str(folder / file))
    index = {"metadata": {}, "weight_map": {name: file for file, part in shards.items() for name in part}}
    (folder / checkpoint.INDEX).write_text(json.dumps(index))
    (folder / "model-old.safetensors").write_bytes(b"not a safetensors file")
    raw = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "vocab_size": 64, "hidden_size": 32,
           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 48,
           "max_position_embeddings": 128, "tie_word_embeddings": False, "mask_token_id": 63,
           "eos_token_id": 62, "pad_token_id": 62, "torch_dtype": "bfloat16"}
    (folder / "config.json").write_text(json.dumps(config if config is not None else raw))
    return model


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_sharded_bf16_checkpoint_loads_into_the_dtype_asked_for(tmp_path, monkeypatch, dtype):
    reference = write_sharded(tmp_path)
    built_on = []
    real = checkpoint.Transformer

    def spy(cfg):
        model = real(cfg)
        built_on.append(next(model.parameters()).device.type)
        return model

    monkeypatch.setattr(checkpoint, "Transformer", spy)
    model = load_model(tmp_path, dtype=dtype)
    assert built_on == ["meta"]  # no weights of the configured shape were ever allocated on the host
    assert {p.dtype for p in model.parameters()} == {dtype}
    assert not any(p.is_meta for p in model.parameters())
    expected = reference.model.layers[1].mlp.down_proj.weight.detach().to(torch.bfloat16).to(dtype)
    assert torch.equal(model.model.layers[1].mlp.down_proj.weight, expected)


def test_a_tied_head_is_tied_again_after_loading(tmp_path):
    raw = json.loads((write_sharded(tmp_path), tmp_path / "config.json")[1].read_text())
    index = json.loads((tmp_path / checkpoint.INDEX).read_text())
    index["weight_map"].pop("lm_head.weight")
    (tmp_path / checkpoint.INDEX).write_text(json.dumps(index))
    (tmp_path / "config.json").write_text(json.dumps({**raw, "tie_word_embeddings": True}))
    model = load_model(tmp_path, dtype=torch.bfloat16)
    assert model.lm_head.weight is model.model.embed_tokens.weight


def _drop_config(folder: Path) -> None:
    (folder / "config.json").unlink()


def _drop_shard(folder: Path) -> None:
    (folder / "model-00002-of-00002.safetensors").unlink()


def _drop_index(folder: Path) -> None:
    (folder / checkpoint.INDEX).unlink()


def _index_names_a_tensor_the_shard_lacks(folder: Path) -> None:
    index = json.loads((folder / checkpoint.INDEX).read_text())
    index["weight_map"]["model.norm.weight"] = "model-00001-of-00002.safetensors"
    index["weight_map"]["model.layers.0.input_layernorm.weight"] = "model-00002-of-00002.safetensors"
    (folder / checkpoint.INDEX).write_text(json.dumps(index))


def _config(**changes) -> callable:
    def change(folder: Path) -> None:
        raw = json.loads((folder / "config.json").read_text())
        raw.update(changes)
        (folder / "config.json").write_text(json.dumps({k: v for k, v in raw.items() if v is not None}))
    return change


@pytest.mark.parametrize("damage, complaint", [
    (_drop_config, "has no config.json"),
    (_drop_shard, "names shard\\(s\\) missing .*model-00002-of-00002.safetensors"),
    (_drop_index, "no model.safetensors.index.json naming their tensors"),
    (_index_names_a_tensor_the_shard_lacks, "which lacks it"),
    (_config(mask_token_id=None), "plain autoregressive qwen2 model: it names no mask token"),
    (_config(model_type="mamba", architectures=["MambaForCausalLM"]), "unsupported checkpoint: model_type 'mamba'"),
    (_config(hidden_size=48), "does not fit its config.json"),
])
def test_each_bad_folder_gives_its_one_clear_error(tmp_path, damage, complaint):
    write_sharded(tmp_path)
    damage(tmp_path)
    with pytest.raises(ValueError, match=complaint):
        load_model(tmp_path)


def test_a_mask_token_in_the_tokenizer_settings_admits_a_plain_qwen2_config(tmp_path):
    write_sharded(tmp_path)
    _config(mask_token_id=None)(tmp_path)
    raw = json.loads((tmp_path / "config.json").read_text())
    with pytest.raises(ValueError, match="names no mask token"):
        checkpoint.check_mask_token(tmp_path, raw)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"mask_token": "<|mask|>"}))
    checkpoint.check_mask_token(tmp_path, raw)  # the tokenizer's files name it (Open-dCoder's way)
    with pytest.raises(ValueError, match="mask_token_id outside the vocabulary"):  # the family's id, 151665
        load_model(tmp_path)


def test_serve_shows_a_bad_model_folder_as_a_usage_error(tmp_path, capsys):
    write_sharded(tmp_path)
    _config(mask_token_id=None)(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--model", str(tmp_path), "--device", "cpu"], prog="infill serve")
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "has no tokenizer.json" in err and "Traceback" not in err  # the tokenizer is checked before the weights


def test_decoder_tensors_live_on_the_models_device(tiny_model_dir):
    from engine.worker.runner import ModelRunner
    from infill.job import Job

    runner = ModelRunner(tiny_model_dir, device="cpu", dtype="bf16")
    assert runner.device == torch.device("cpu") and runner.model.lm_head.weight.dtype == torch.bfloat16
    decoding = runner.start(Job.fim("def add(a, b):\n    return ", "\n", "single_line", 6), None)
    runner.step([decoding])
    [state] = decoding.states
    tensors = [state.ids, state.positions, state.rows, state.masked, state.committed_prob, state.last_best,
               state.last_prob, state.remasked, *state.context[0]]
    assert {t.device for t in tensors} == {runner.device}
    assert state.context[0][0].dtype == torch.bfloat16  # keys/values in the model's dtype
    while not decoding.done:
        runner.step([decoding])
    assert len(runner.answers(decoding)) == 1


def test_max_context_lowers_the_context_and_refuses_more_than_trained(tiny_model_dir):
    from engine.worker.runner import ModelRunner

    trained = load_model(tiny_model_dir).cfg.max_position_embeddings
    assert ModelRunner(tiny_model_dir, max_context=trained // 2).info()["max_context"] == trained // 2
    with pytest.raises(ValueError, match="trained context"):
        ModelRunner(tiny_model_dir, max_context=trained + 1)


def kv_of(tokens: int, layers: int = 2) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(torch.zeros(1, 2, tokens, 8, dtype=torch.bfloat16),) * 2 for _ in range(layers)]


def test_prefix_cache_is_bounded_in_bytes_oldest_first():
    one = kv_bytes(kv_of(100))
    assert one == 2 * 2 * (2 * 100 * 8) * 2  # layers x (k, v) x elements x bytes of bf16
    cache = PrefixCache(capacity=16, max_bytes=int(2.5 * one))
    canvases = [torch.arange(100) + 1000 * i for i in range(3)]  # nothing shared: none replaces another
    for canvas in canvases:
        cache.store(canvas, kv_of(100), window_start=50, hole_end=60)
    assert cache.bytes == 2 * one and len(cache._entries) == 2
    assert [kept[0].item() for kept, _ in cache._entries.values()] == [1000, 2000]  # the oldest went
    cache.store(torch.arange(300), kv_of(300), window_start=50, hole_end=60)  # larger than the bound
    assert cache.bytes == 2 * one and len(cache._entries) == 2


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_one_completion_on_cuda(tiny_model_dir):
    from engine.worker.runner import ModelRunner
    from infill.job import Job

    runner = ModelRunner(tiny_model_dir, device="cuda:0", dtype="bf16")
    decoding = runner.start(Job.fim("def add(a, b):\n    return ", "\n", "single_line", 6), None)
    [state] = decoding.states
    assert state.ids.device.type == "cuda" and state.masked.device.type == "cuda"
    while not decoding.done:
        runner.step([decoding])
    [answer] = runner.answers(decoding)
    assert answer.forward_passes >= 1 and "\n" not in answer.text
    assert decode.model_device(runner.model).type == "cuda"
