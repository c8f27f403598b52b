"""`infill train`: autoregressive pretraining and masked-diffusion training of the code model.

Phase `ar` trains a causal model on next-token prediction. Phase `diffusion` trains a bidirectional
model on the hole-shaped masked-diffusion objective (`training.noising`); started from an `ar`
checkpoint (`--init`) it is the adaptation recipe (shifted logits keep the autoregressive head's
meaning), started from nothing it is diffusion from scratch; `--ar-share` keeps a share of each batch
on next-token prediction, run causally on the same weights (a joint objective). Phase `distill` fine-tunes a diffusion
model (`--init`) on its own left-to-right answers (`--teacher`, written by `training.distill`), with
corpus windows under the diffusion objective mixed in so that it keeps what it knew. `--canvases`
mixes laid-out edit canvases (`training.edit_canvases`) into either diffusion phase, and the
saved model records their layout so that the worker lays edit jobs out the same way. Runs resume
from `OUT/state.pt`.

What each step trains on, and the thread that builds it, is `training.batches`; this module holds
the run: its flags, the model it starts from, the losses, the schedule, evaluation and saving.

Phases `ar` and `diffusion` also train the product's layouts: `--fim-rate` rearranges autoregressive
windows for fill-in-the-middle (`infill.fim_ar`), and `--snippets` puts the language server's
`<|snippet|>` context before a share of the windows (`training.snippet_data`); the model's config
records both (`fim_sentinels`, `snippet_context`).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from infill.checkpoint import load_model, save_model
from infill.fim import fill
from infill.fim_ar import FIM_RATE, SPM_SHARE
from infill.model import ModelConfig, Transformer
from infill.paths import work_dir
from infill.tokenizer import CodeTokenizer
from training.batches import (Prefetcher, Windows, distill_batch, make_batch, product_batches, read_canvases,
                              read_laid, with_causal, with_laid)
from training.heldout import line_holes
from training.noising import Special


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="infill train", description=__doc__.splitlines()[0])
    p.add_argument("--phase", choices=["ar", "diffusion", "distill"], required=True, help="training objective")
    p.add_argument("--corpus", type=Path, default=work_dir() / "corpus", help="folder made by `infill corpus build`")
    p.add_argument("--out", type=Path, required=True, help="run folder: state.pt, log.jsonl, model/")
    p.add_argument("--init", type=Path, help="model folder or run state.pt to start from (e.g. the ar run's model/)")
    p.add_argument("--teacher", type=Path, nargs="+", default=[],
                   help="`distill`: JSONL files of decoded canvases (`python -m training.distill`)")
    p.add_argument("--distill-share", type=float, default=0.75,
                   help="`distill`: share of each batch taken from the teacher's canvases (the rest: corpus windows)")
    p.add_argument("--canvases", type=Path, nargs="+", default=[],
                   help="`diffusion`, `distill`: JSONL files of laid-out edit canvases "
                        "(`python -m training.edit_canvases`), mixed into each batch")
    p.add_argument("--canvas-share", type=float, default=0.25,
                   help="share of each batch taken from --canvases (the rest as the phase makes it)")
    p.add_argument("--ar-share", type=float, default=0.0,
                   help="`diffusion`: share of each batch's rows run causally on next-token prediction with the "
                        "same weights (a joint objective that keeps the autoregressive loss; 0: none)")
    p.add_argument("--certainty", type=float, default=1.0,
                   help="`distill`: weight of the entropy of masked positions the model already predicts right")
    p.add_argument("--hidden", type=int, default=192, help="hidden size of a new model")
    p.add_argument("--layers", type=int, default=5, help="transformer layers of a new model")
    p.add_argument("--heads", type=int, default=6, help="query heads of a new model")
    p.add_argument("--kv-heads", type=int, default=2, help="key/value heads of a new model (grouped-query)")
    p.add_argument("--ffn", type=int, default=512, help="SwiGLU width of a new model")
    p.add_argument("--seq-len", type=int, default=512, help="tokens per training window")
    p.add_argument("--batch", type=int, default=8, help="windows per step")
    p.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (AdamW)")
    p.add_argument("--warmup", type=int, default=100, help="linear warm-up steps")
    p.add_argument("--tokens", type=float, default=10e6, help="token budget of this run (sets the schedule)")
    p.add_argument("--minutes", type=float, default=0,
                   help="time budget of this process: the schedule anneals by then and the run stops (0: no limit)")
    p.add_argument("--eval-every", type=int, default=200, help="steps between validation passes")
    p.add_argument("--fim-tasks", type=int, default=24, help="held-out single-line holes in the quick FIM check")
    p.add_argument("--save-every", type=int, default=100, help="steps between resumable checkpoints")
    p.add_argument("--seed", type=int, default=0, help="seed for data order, masking and init")
    p.add_argument("--threads", type=int, default=2, help="CPU threads for torch")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="cpu or cuda")
    p.add_argument("--bf16", action="store_true",
                   help="bf16 autocast (always on with cuda; on a CPU without AVX-512 BF16 it is ~20x slower)")
    add_product_args(p)
    args = p.parse_args(argv)
    if args.phase == "distill" and not (args.init and args.teacher):
        p.error("--phase distill fine-tunes a model on its teacher's answers: give --init MODEL and --teacher FILE...")
    if args.canvases and (args.phase == "ar" or not 0 < args.canvas_share < 1):
        p.error("--canvases mix edit canvases into `diffusion` or `distill` batches, with 0 < --canvas-share < 1")
    if args.ar_share and (args.phase != "diffusion" or not 0 < args.ar_share < 1 or not args.init):
        p.error("--ar-share keeps a share of next-token loss while adapting a model: --phase diffusion --init MODEL, "
                "with 0 < --ar-share < 1")
    return args


def add_product_args(p: argparse.ArgumentParser) -> None:
    """The flags of the product's training layouts: FIM rearrangements and snippet context."""
    p.add_argument("--fim-rate", type=float, default=0.0,
                   help=f"`ar`: share of windows rearranged for fill-in-the-middle (`infill.fim_ar`; {FIM_RATE} "
                        "is usual)")
    p.add_argument("--fim-spm", type=float, default=SPM_SHARE,
                   help="`ar`: share of the rearranged windows in SPM order")
    p.add_argument("--snippets", type=Path,
                   help="`ar`, `diffusion`: windows with `<|snippet|>` context (`python -m training.snippet_data`)")
    p.add_argument("--snippet-share", type=float, default=0.25, help="share of each batch taken from --snippets")


def new_model(args, tok: CodeTokenizer, phase: str) -> Transformer:
    if args.init and args.init.suffix == ".pt":
        state = torch.load(args.init, weights_only=False)
        model = Transformer(state["cfg"])
        model.load_state_dict(state["model"])
    elif args.init:
        model = load_model(args.init)
    else:
        cfg = ModelConfig(
            vocab_size=tok.vocab_size, hidden_size=args.hidden, num_layers=args.layers, num_heads=args.heads,
            num_kv_heads=args.kv_heads, head_dim=args.hidden // args.heads, intermediate_size=args.ffn,
            mask_token_id=tok.mask_id, pad_token_id=tok.pad_id, eos_token_id=tok.end_id,
        )
        model = Transformer(cfg)
    model.cfg.causal = phase == "ar"
    mark_layouts(model.cfg, args, phase)
    if not args.init or args.seq_len > model.cfg.max_position_embeddings:  # fine-tuning on shorter windows
        model.cfg.max_position_embeddings = args.seq_len  # leaves the context as it was; else the longest trained on
    return model.float()


def mark_layouts(cfg: ModelConfig, args, phase: str) -> None:
    """Record in the config the layouts this run trains, which canvases then lay out: snippets
    before the prefix, FIM prompts of a causal model."""
    if args.snippets:
        cfg.snippet_context = True
    cfg.fim_sentinels = phase == "ar" and args.fim_rate > 0


def batch_loss(model: Transformer, arrays: tuple[np.ndarray, ...], phase: str, device,
               certainty: float = 0.0) -> torch.Tensor:
    """The step's loss; `distill` adds `certainty` times the certainty-forcing term on the teacher's rows."""
    if phase == "ar":
        x = torch.from_numpy(arrays[0]).to(device, non_blocking=True)
        logits, _ = model(x[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1).float(), x[:, 1:].flatten())
    inputs, targets, weights = (torch.from_numpy(a).to(device, non_blocking=True) for a in arrays[:3])
    h, _ = model.hidden(inputs.long())  # (B, T, d)
    rows, cols = torch.nonzero(weights > 0, as_tuple=True)  # masked positions only: the head is the costliest matmul
    logits = model.lm_head(h[rows, model.predictor_index(cols)]).float()  # (M, V)
    wanted, weight = targets[rows, cols].long(), weights[rows, cols]
    loss = (F.cross_entropy(logits, wanted, reduction="none") * weight).sum() / weights.numel()
    if phase == "distill" and certainty:
        loss = loss + certainty * certainty_loss(logits, wanted, weight * taught_rows(arrays[3], rows, device))
    return loss


def causal_loss(model: Transformer, windows: np.ndarray, device) -> torch.Tensor:
    """Next-token loss of clean windows (B, T+1) run causally on a bidirectional model's weights
    (shifted logits already mean "the next token"); the model is causal for this one pass, so that
    attention takes its causal kernels rather than a mask."""
    x = torch.from_numpy(windows).to(device, non_blocking=True)
    was, model.cfg.causal = model.cfg.causal, True
    try:
        h, _ = model.hidden(x[:, :-1])  # (B, T, d)
    finally:
        model.cfg.causal = was
    return F.cross_entropy(model.lm_head(h).flatten(0, 1).float(), x[:, 1:].flatten())


def joint_loss(model: Transformer, batch: tuple, device, ar_share: float) -> torch.Tensor:
    """The joint objective: the diffusion loss of the batch's masked rows and the next-token loss of
    its causal rows, weighted by their shares of the batch."""
    arrays, windows = batch
    diffusion = batch_loss(model, arrays, "diffusion", device)
    return (1 - ar_share) * diffusion + ar_share * causal_loss(model, windows, device)


def taught_rows(flags: np.ndarray, rows: torch.Tensor, device) -> torch.Tensor:
    """(M,) 1.0 where a masked position belongs to a teacher's canvas, else 0."""
    return torch.from_numpy(flags).to(device)[rows].float()


def certainty_loss(logits: torch.Tensor, wanted: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Certainty forcing: the entropy of the positions whose top-1 already is the teacher's token,
    weighted, over all weighted positions of the batch; logits (M, V), wanted and weight (M,)."""
    logp = logits.log_softmax(-1)
    entropy = -(logp.exp() * logp).sum(-1)  # (M,)
    right = (logits.argmax(-1) == wanted).float()
    return (entropy * right * weight).sum() / weight.sum().clamp(min=1.0)


def lr_at(step: int, total: int, args, time_share: float = 0.0) -> float:
    """Linear warm-up, then cosine to 10% of the peak over the token budget or the time budget,
    whichever runs out first (`time_share`: the part of `--minutes` already spent)."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = min(1.0, max(time_share, (step - args.warmup) / max(1, total - args.warmup)))
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


@torch.no_grad()
def validate(model, val: Windows, phase: str, sp: Special, device, batches: int = 8) -> float:
    """Mean loss on fixed validation windows (same seed every time)."""
    model.eval()
    rng = np.random.default_rng(1234)
    losses = [batch_loss(model, make_batch(val, 8, phase, sp, rng), phase, device).item() for _ in range(batches)]
    model.train()
    return float(np.mean(losses))


@torch.no_grad()
def fim_exact_match(model: Transformer, tok: CodeTokenizer, tasks: list[dict]) -> float:
    """Share of held-out single-line holes the model fills exactly (whitespace-trimmed)."""
    model.eval()
    hits = sum(fill(model, tok, t["prompt"], t["suffix"], "single_line", 32).text.strip()
               == t["canonical_solution"].strip() for t in tasks)
    model.train()
    return hits / max(1, len(tasks))


def evaluate(model, tok, val_data: Windows, fim_tasks: list[dict], args, sp: Special, amp) -> dict:
    with amp:
        objective = "diffusion" if args.phase == "distill" else args.phase  # forgetting shows there
        scores = {"val_loss": round(validate(model, val_data, objective, sp, args.device), 4)}
        if fim_tasks:
            scores["fim_exact"] = round(fim_exact_match(model, tok, fim_tasks), 4)
    tqdm.write(f"val loss {scores['val_loss']}, FIM exact {scores.get('fim_exact', '-')}")
    return scores


def save_state(path: Path, model, opt, step: int, tokens: int, rng, elapsed: float) -> None:
    tmp = path.with_suffix(".tmp")
    with rng.bit_generator.lock:  # the prefetch thread draws from it
        rng_state = rng.bit_generator.state
    torch.save({"model": model.state_dict(), "cfg": model.cfg, "opt": opt.state_dict(), "step": step,
                "tokens": tokens, "rng": rng_state, "elapsed": elapsed}, tmp)
    tmp.replace(path)


def check_device(device: str) -> None:
    """A run asked for CUDA fails at once where torch has none, instead of training on the CPU."""
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"--device {device}: this torch ({torch.__version__}, CUDA {torch.version.cuda}) sees no "
                         "CUDA device; install a CUDA build of torch or pass --device cpu")


def save_model_folder(model, tok, folder: Path) -> None:
    save_model(model, folder, dtype=torch.float32)
    tok.tok.save(str(folder / "tokenizer.json"))


def train(args) -> None:
    check_device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    tok = CodeTokenizer(args.corpus / "tokenizer.json")
    sp = Special.of(tok)
    length = args.seq_len + (1 if args.phase == "ar" else 0)
    train_data, val_data = Windows(args.corpus / "train.bin", length), Windows(args.corpus / "val.bin", length)
    args.out.mkdir(parents=True, exist_ok=True)
    model = new_model(args, tok, args.phase).to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=args.device == "cuda")
    rng, step, tokens, elapsed = np.random.default_rng(args.seed), 0, 0, 0.0
    state_path = args.out / "state.pt"
    if state_path.exists():
        state = torch.load(state_path, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, tokens, elapsed = state["step"], state["tokens"], state["elapsed"]
        rng.bit_generator.state = state["rng"]
        tqdm.write(f"resumed {args.out} at step {step}, {tokens:,} tokens")
    fim_tasks = []  # the quick FIM check needs a model that fills holes: not `ar`
    if args.phase != "ar":
        fim_tasks = line_holes(args.corpus / "val_files.jsonl", args.fim_tasks, seed=args.seed)
    tokens_per_step = args.batch * args.seq_len
    total_steps = int(args.tokens // tokens_per_step)
    amp = torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.bf16 or args.device == "cuda")
    log = (args.out / "log.jsonl").open("a")
    bar = tqdm(total=total_steps, initial=step, unit="step", dynamic_ncols=True,
               mininterval=0.1 if sys.stderr.isatty() else 10)
    laid, n_laid = [], 0
    if args.canvases:
        laid, model.cfg.edit_canvas = read_laid(args.canvases)
        model.cfg.edit_context = args.seq_len  # the window its edit canvases are trained in: edit jobs get as much
        n_laid = round(args.batch * args.canvas_share)
    n_causal = round(args.batch * args.ar_share)
    n_made = args.batch - n_laid - n_causal
    if args.phase == "distill":
        canvases = read_canvases(args.teacher)
        make = lambda r: distill_batch(train_data, canvases, n_made, args.distill_share, sp, r)  # noqa: E731
    else:
        make = product_batches(args, train_data, tok, sp, n_made) or (
            lambda r: make_batch(train_data, n_made, args.phase, sp, r))
    if laid:
        make = with_laid(make, laid, n_laid, sp, args.seq_len)
    if n_causal:
        causal_windows = Windows(args.corpus / "train.bin", args.seq_len + 1)
        make = with_causal(make, causal_windows, n_causal)
    batches = Prefetcher(make, rng)
    batches.start()
    started, first_step, record = time.monotonic(), step, {}
    budget_s = args.minutes * 60
    early_saved = not budget_s  # with a time budget, the model is saved once at 90% of it
    model.train()
    try:  # an interrupt (SIGINT: `timeout --signal=INT` at a session's deadline) still saves below
        while step < total_steps:
            time_share = (time.monotonic() - started) / budget_s if budget_s else 0.0
            if time_share >= 1.0:
                break
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total_steps, args, time_share)
            with amp:
                if n_causal:
                    loss = joint_loss(model, batches.next(), args.device, args.ar_share)
                else:
                    loss = batch_loss(model, batches.next(), args.phase, args.device, args.certainty)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step, tokens = step + 1, tokens + tokens_per_step
            run_time = elapsed + time.monotonic() - started
            bar.update(1)
            record = {"step": step, "tokens": tokens, "loss": round(loss.item(), 4), "seconds": round(run_time, 1)}
            tokens_per_s = (step - first_step) * tokens_per_step / (time.monotonic() - started)
            bar.set_postfix(loss=f"{record['loss']:.3f}", tok_s=f"{tokens_per_s:,.0f}", refresh=False)
            if step % args.eval_every == 0 or step == total_steps:
                record |= evaluate(model, tok, val_data, fim_tasks, args, sp, amp)
            log.write(json.dumps(record) + "\n")
            if step % args.save_every == 0 or step == total_steps:
                save_state(state_path, model, opt, step, tokens, rng, run_time)
                log.flush()
            if not early_saved and time.monotonic() - started >= 0.9 * budget_s:
                early_saved = True  # a run cut before its end still leaves this model
                log.flush()
                save_model_folder(model, tok, args.out / "model")
                tqdm.write(f"saved {args.out / 'model'} at 90% of --minutes, step {step}")
    except KeyboardInterrupt:
        tqdm.write(f"interrupted at step {step}: saving the model as it is")
    batches.stop()
    if "val_loss" not in record:  # stopped by the time budget between evaluations
        log.write(json.dumps(record | evaluate(model, tok, val_data, fim_tasks, args, sp, amp)) + "\n")
    log.close()
    save_state(state_path, model, opt, step, tokens, rng, elapsed + time.monotonic() - started)
    save_model_folder(model, tok, args.out / "model")
    tqdm.write(f"saved {args.out / 'model'} at step {step}/{total_steps}, {tokens:,} tokens")


def main(argv: list[str] | None = None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
