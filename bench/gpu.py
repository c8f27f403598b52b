"""GPU figures: per-forward latency, decoder tokens per second, and the row-statistics kernel.

    python -m bench.gpu [--device auto|cpu|cuda[:N]] [--dtype bf16|fp16|fp32] [--tasks 20] [--tiny] [--json]

1. Forward latency: one cached denoising step (a window of --hole positions per request, against
   keys/values of 1k or 4k cached context positions, logits of the window's rows included) at batch
   1, 4, 16 and 32, for the bundled model and for a random model in Open-dCoder-0.5B's shape
   (Qwen2: d 896, 24 layers, 14 q / 2 kv heads, FFN 4864, vocab 151,936, tied embeddings), built
   directly on the device in --dtype. Medians of CUDA-synchronised calls.
2. Decoders: the bundled model's default decoder and `verify` on --tasks single-line holes cut
   from this repository's own source files (they travel with the working tree), decoded on the
   device: tokens per forward and tokens per second as run; then per model shape the tokens per
   second that tokens per forward and the step latency at 1k context imply (batch 1 and 16).
   If decoding on the device fails, tokens per forward come from the CPU and the error is shown.
3. Row stats: `infill.kernels.row_stats` (the fused kernel: `@cuda.jit` on a GPU, `@njit` on the
   CPU) against `torch_row_stats` (max, topk, logsumexp) at vocab 8k and 152k, as GB/s of logits
   read, beside a device copy's GB/s (read + write) as the bandwidth within reach; `faster` names
   the one to choose for `infill.kernels.CUDA_ROW_STATS`.

4. Commit: `infill.kernels.commit` (the fused commit rule) on the device for 1 and 32 requests of
   a 32-position hole, against the same commit on the CPU.

`--tiny` shrinks every size so that the CPU runs it in seconds (the test). A human table goes to
stdout; with `--json` each section's figures are printed as one JSON line (`{"section": NAME,
NAME: ...}`) the moment it is done, so a run cut short keeps every finished section, and the last
line is one JSON object of every figure.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

import torch

from infill import kernels
from infill.checkpoint import load_model
from infill.commit import NEVER, DecoderConfig
from infill.decoder_defaults import decoder_config, model_decoder_defaults
from infill.model import ModelConfig, Transformer
from infill.paths import PACKAGE_DIR, bundled_model_dir

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
VERIFY = DecoderConfig(rule="verify", drafts=8, refresh_every=NEVER)
OPEN_DCODER_05B = ModelConfig(vocab_size=151936, hidden_size=896, num_layers=24, num_heads=14, num_kv_heads=2,
                              head_dim=64, intermediate_size=4864, rope_theta=1e6, max_position_embeddings=32768,
                              tie_word_embeddings=True, qkv_bias=True, mask_token_id=151665, pad_token_id=151643,
                              eos_token_id=151643, family="open-dcoder")
TINY_SHAPE = ModelConfig(vocab_size=2048, hidden_size=56, num_layers=2, num_heads=14, num_kv_heads=2, head_dim=4,
                         intermediate_size=128, max_position_embeddings=512, qkv_bias=True)
FULL = {"batches": [1, 4, 16, 32], "contexts": [1024, 4096], "hole": 16, "tasks": 20, "vocabs": [8192, 151936],
        "rows": [16, 256], "copy_mb": 512, "repeats": 20}
TINY = {"batches": [1, 2], "contexts": [32, 64], "hole": 4, "tasks": 2, "vocabs": [512, 2048], "rows": [4],
        "copy_mb": 4, "repeats": 3}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(run, device: torch.device, repeats: int) -> float:
    """Median wall time of run() in ms over `repeats` calls after two warm-ups, synchronised."""
    for _ in range(2):
        run()
    times = []
    for _ in range(repeats):
        sync(device)
        started = time.perf_counter()
        run()
        sync(device)
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2] * 1e3


def step_call(model: Transformer, batch: int, context: int, hole: int):
    """A cached step of `batch` windows of `hole` positions against `context` cached ones."""
    cfg, device, dtype = model.cfg, model.lm_head.weight.device, model.lm_head.weight.dtype
    ids = torch.randint(8, cfg.vocab_size, (batch, hole), device=device)  # (B, W)
    positions = torch.arange(context, context + hole, device=device).expand(batch, hole)  # (B, W)
    shape = (batch, cfg.num_kv_heads, context, cfg.head_dim)  # (B, nkv, C, hd)
    cache = [(torch.randn(shape, device=device, dtype=dtype), torch.randn(shape, device=device, dtype=dtype))
             for _ in range(cfg.num_layers)]

    def run():
        hidden, _ = model.hidden(ids, positions=positions, cache=cache)
        return model.lm_head(hidden).float()  # (B, W, V): what the decoder scores

    return run


@torch.inference_mode()
def forward_latency(name: str, model: Transformer, sizes: dict) -> list[dict]:
    device, rows = model.lm_head.weight.device, []
    for context in sizes["contexts"]:
        for batch in sizes["batches"]:
            row = {"model": name, "batch": batch, "context": context, "hole": sizes["hole"]}
            try:
                row["ms"] = round(median_ms(step_call(model, batch, context, sizes["hole"]), device,
                                            sizes["repeats"]), 3)
            except torch.OutOfMemoryError as error:
                row["error"] = f"out of memory: {str(error).splitlines()[0]}"
            rows.append(row)
    return rows


def random_model(cfg: ModelConfig, device: torch.device, dtype: torch.dtype) -> Transformer:
    """A random model of cfg's shape, initialised on the device (no host copy of its weights)."""
    with torch.device(device):
        model = Transformer(cfg)
    return model.to(dtype).eval()


def cut_tasks(count: int, package: Path = PACKAGE_DIR) -> list[dict]:
    """Single-line holes from the model package's Python files (`infill/`, in the checkout or an
    installed copy): the second half of a code line."""
    lines = [(path, i) for path in sorted(package.glob("*.py"))
             for i, line in enumerate(path.read_text().splitlines())
             if len(line.strip()) >= 24 and not line.strip().startswith(("#", '"', "'"))]
    step = max(1, len(lines) // max(1, count))
    tasks = []
    for path, i in lines[::step][:count]:
        text = path.read_text().splitlines(keepends=True)
        line = text[i].rstrip("\n")
        cut = len(line) - len(line.lstrip()) + len(line.strip()) // 2
        tasks.append({"name": f"{path.name}:{i + 1}", "prompt": "".join(text[:i]) + line[:cut],
                      "suffix": "\n" + "".join(text[i + 1:]), "reference": line[cut:]})
    return tasks


def decode_tasks(model: Transformer, tok, tasks: list[dict], cfg: DecoderConfig) -> dict:
    """Tokens (pads not counted), forwards and seconds of each task decoded alone."""
    from infill.fim import fill

    tokens = passes = exact = 0
    started = time.perf_counter()
    for task in tasks:
        out = fill(model, tok, task["prompt"], task["suffix"], "single_line", 32, cfg)
        tokens += sum(1 for t in out.tokens if t != tok.pad_id)
        passes += out.forward_passes
        exact += out.text.strip() == task["reference"].strip()
    sync(model.lm_head.weight.device)
    seconds = time.perf_counter() - started
    return {"tasks": len(tasks), "tokens": tokens, "forwards": passes, "exact": exact,
            "tokens_per_forward": round(tokens / max(1, passes), 3),
            "tokens_per_s": round(tokens / seconds, 1), "seconds": round(seconds, 3)}


def decoder_rates(model_dir: Path, device: torch.device, dtype: torch.dtype, tasks: list[dict]) -> list[dict]:
    """The default decoder and verify on the tasks, on the device (else on the CPU, with the error)."""
    from infill.family_tokens import load_tokenizer

    tok = load_tokenizer(model_dir, json.loads((model_dir / "config.json").read_text()))
    default = decoder_config(model_decoder_defaults(model_dir), {}, "single_line")
    rows, models = [], {}
    for name, cfg in (("default", default), ("verify-8", VERIFY)):
        row = {"decoder": name, "config": asdict(cfg), "device": str(device)}
        try:
            models.setdefault(device, load_model(model_dir, device=str(device), dtype=dtype))
            row.update(decode_tasks(models[device], tok, tasks, cfg))
        except Exception as error:  # the device path is new: report it and measure on the CPU instead
            row.update(device="cpu", error=f"{type(error).__name__}: {error}"[:300])
            models.setdefault("cpu", load_model(model_dir, device="cpu"))
            row.update(decode_tasks(models["cpu"], tok, tasks, cfg))
        rows.append(row)
    return rows


def implied_rates(latency: list[dict], decoders: list[dict], context: int) -> list[dict]:
    """Tokens per second per request and in all that tokens per forward and step latency imply."""
    rows = []
    for step in latency:
        if step["context"] != context or "ms" not in step:
            continue
        for dec in decoders:
            per_request = dec["tokens_per_forward"] * 1e3 / step["ms"]
            rows.append({"model": step["model"], "decoder": dec["decoder"], "batch": step["batch"],
                         "context": context, "tokens_per_s_per_request": round(per_request, 1),
                         "tokens_per_s_total": round(per_request * step["batch"], 1)})
    return rows


def copy_gb_s(device: torch.device, megabytes: int, repeats: int) -> float:
    """GB/s of a device copy (bytes read plus bytes written): the bandwidth within reach."""
    source = torch.empty(megabytes << 18, dtype=torch.float32, device=device).normal_()
    target = torch.empty_like(source)
    ms = median_ms(lambda: target.copy_(source), device, repeats)
    return round(2 * source.numel() * 4 / ms / 1e6, 1)


def row_stats_bandwidth(device: torch.device, sizes: dict) -> list[dict]:
    """GB/s of logits read by the fused kernel and by torch ops, each checked against the other."""
    rows = []
    for vocab in sizes["vocabs"]:
        for count in sizes["rows"]:
            logits = torch.randn(count, vocab, device=device) * 4  # (R, V) float32
            ours, theirs = kernels.row_stats(logits), kernels.torch_row_stats(logits)
            assert torch.equal(ours.top1_id, theirs.top1_id), "row stats: the kernel and torch disagree on the argmax"
            for got, want in zip(ours[1:], theirs[1:]):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
            gigabytes = count * vocab * 4 / 1e9
            kernel_ms = median_ms(lambda: kernels.row_stats(logits), device, sizes["repeats"])
            torch_ms = median_ms(lambda: kernels.torch_row_stats(logits), device, sizes["repeats"])
            rows.append({"vocab": vocab, "rows": count, "kernel_ms": round(kernel_ms, 4),
                         "torch_ms": round(torch_ms, 4), "kernel_gb_s": round(gigabytes / kernel_ms * 1e3, 1),
                         "torch_gb_s": round(gigabytes / torch_ms * 1e3, 1),
                         "faster": "numba" if kernel_ms < torch_ms else "torch"})
    return rows


def commit_latency(device: torch.device, repeats: int) -> list[dict]:
    """ms of one fused commit step on the device and on the CPU, for 1 and 32 requests of 32 positions."""
    rows = []
    for requests in (1, 32):
        positions = 32 * requests
        on_cpu = {"holes": torch.zeros(positions, dtype=torch.int64), "masked": torch.ones(positions, dtype=torch.bool),
                  "offsets": torch.arange(0, positions + 1, 32), "top1_id": torch.arange(positions),
                  "confidence": torch.rand(positions, generator=torch.Generator().manual_seed(requests)),
                  "remaining": torch.full((requests,), 32)}
        timed = {}
        for name, where in (("device", device), ("cpu", torch.device("cpu"))):
            fresh = {k: v.to(where) for k, v in on_cpu.items()}
            step = lambda fresh=fresh: kernels.commit(**{k: v.clone() for k, v in fresh.items()},  # noqa: E731
                                                      threshold=0.9, min_commit=1)
            timed[name] = median_ms(step, where, repeats)
        rows.append({"requests": requests, "positions": positions, "device_ms": round(timed["device"], 4),
                     "cpu_ms": round(timed["cpu"], 4)})
    return rows


def print_tables(report: dict) -> None:
    print(f"device {report['device']} ({report['device_name']}), {report['dtype']}, torch {report['torch']}")
    print("forward latency: one cached step, ms (median)")
    print(f"{'model':<23}{'context':>8}{'batch':>7}{'hole':>6}{'ms':>10}{'x batch 1':>11}")
    for row in report["forward"]:
        first = next(r for r in report["forward"] if r["model"] == row["model"] and r["context"] == row["context"])
        ratio = f"{row['ms'] / first['ms']:.2f}" if "ms" in row and "ms" in first else "-"
        ms = f"{row['ms']:.3f}" if "ms" in row else row["error"][:30]
        print(f"{row['model']:<23}{row['context']:>8}{row['batch']:>7}{row['hole']:>6}{ms:>10}{ratio:>11}")
    print("decoders on the bundled model (single-line holes cut from this repository)")
    print(f"{'decoder':<12}{'device':>8}{'tasks':>7}{'exact':>7}{'tok/fwd':>9}{'tok/s':>9}  error")
    for row in report["decoders"]:
        print(f"{row['decoder']:<12}{row['device']:>8}{row['tasks']:>7}{row['exact']:>7}"
              f"{row['tokens_per_forward']:>9.3f}{row['tokens_per_s']:>9.1f}  {row.get('error', '')}")
    print(f"implied tokens/s at {report['implied_context']} context (tokens per forward / step latency)")
    print(f"{'model':<23}{'decoder':<12}{'batch':>6}{'per request':>13}{'total':>10}")
    for row in report["implied"]:
        print(f"{row['model']:<23}{row['decoder']:<12}{row['batch']:>6}{row['tokens_per_s_per_request']:>13.1f}"
              f"{row['tokens_per_s_total']:>10.1f}")
    print(f"row stats, float32 logits, GB/s read (device copy: {report['copy_gb_s']} GB/s read + write)")
    print(f"{'vocab':>8}{'rows':>6}{'kernel ms':>11}{'torch ms':>10}{'kernel GB/s':>13}{'torch GB/s':>12}  faster")
    for row in report["row_stats"]:
        print(f"{row['vocab']:>8}{row['rows']:>6}{row['kernel_ms']:>11.4f}{row['torch_ms']:>10.4f}"
              f"{row['kernel_gb_s']:>13.1f}{row['torch_gb_s']:>12.1f}  {row['faster']}")
    print("commit (the fused commit rule), ms of one step (median; the clones of its inputs included)")
    print(f"{'requests':>9}{'positions':>10}{'device ms':>11}{'cpu ms':>9}")
    for row in report.get("commit", []):
        print(f"{row['requests']:>9}{row['positions']:>10}{row['device_ms']:>11.4f}{row['cpu_ms']:>9.4f}")


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(f"--device {name}: torch sees no CUDA device here; use --device cpu (with --tiny)")
    return device


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N")
    parser.add_argument("--dtype", choices=sorted(DTYPES), help="weights and activations (default bf16 on CUDA, "
                                                                 "fp32 on the CPU)")
    parser.add_argument("--model", type=Path, default=None, help="the model folder of the bundled rows "
                                                                 "(default: the bundled model)")
    parser.add_argument("--tasks", type=int, help="holes the decoders run (default 20; 2 with --tiny)")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes, for a CPU test of the benchmark")
    parser.add_argument("--json", action="store_true", help="end with one JSON object of the figures")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    device, sizes = pick_device(args.device), dict(TINY if args.tiny else FULL)
    dtype = DTYPES[args.dtype or ("bf16" if device.type == "cuda" else "fp32")]
    model_dir = args.model or bundled_model_dir()
    tasks = cut_tasks(args.tasks or sizes["tasks"])
    shape_name = "open-dcoder-0.5b" + ("-tiny" if args.tiny else "")
    report = {"device": str(device), "dtype": str(dtype).removeprefix("torch."), "torch": torch.__version__,
              "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "tiny": args.tiny, "cuda_row_stats_default": kernels.CUDA_ROW_STATS}

    def section(name: str, value) -> None:  # each section's figures out the moment they exist
        report[name] = value
        if args.json:
            print(json.dumps({"section": name, name: value}), flush=True)

    section("setup", {k: report[k] for k in ("device", "dtype", "torch", "device_name", "tiny")})
    report.pop("setup")
    models = {model_dir.name: load_model(model_dir, device=str(device), dtype=dtype),
              shape_name: random_model(TINY_SHAPE if args.tiny else OPEN_DCODER_05B, device, dtype)}
    section("forward", [row for name, model in models.items() for row in forward_latency(name, model, sizes)])
    section("decoders", decoder_rates(model_dir, device, dtype, tasks))
    report["implied_context"] = sizes["contexts"][0]
    section("implied", implied_rates(report["forward"], report["decoders"], sizes["contexts"][0]))
    section("copy_gb_s", copy_gb_s(device, sizes["copy_mb"], sizes["repeats"]))
    section("row_stats", row_stats_bandwidth(device, sizes))
    section("commit", commit_latency(device, sizes["repeats"]))
    print_tables(report)
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
