"""`infill adapt REPO`: fine-tune a model on one repository's code, on the CPU, in minutes.

    infill adapt REPO [--out DIR] [--base MODEL] [--minutes N] [--exclude GLOB ...]

The repository's source files (`training.repo_files`) are tokenized with the base model's
tokenizer and the base is trained on them under its own objective (masked diffusion,
`training.noising`) with holes shaped as editors ask (`EDITOR_SHAPES`: whole lines, line tails,
short blocks). Three kinds of rows make each batch (`training.adapt_rows`):

- repository windows;
- repository windows with the `<|snippet|>` context the language server would send for them
  (definitions of the names used near a pseudo-cursor, from the whole repository, ranked and
  fitted as the server does: `training.snippet_data`), so that the model learns to use them;
  the adapted config then says `snippet_context: true`. Models without a snippet token skip them;
- replay: windows of the running interpreter's standard library, which the bundled model was
  trained on, under the corpus objective, so that general skill is kept.

The learning rate warms up and then follows a cosine to 10% over `--minutes` (time, not steps).
Progress shows the time left; the run folder (`OUT.partial/`) holds a resumable state, without
pickle (`training.adapt_state`), so running the same command again goes on where a cut run
stopped, and Ctrl-C saves a usable model. OUT is checked before anything is trained: new, empty,
or a folder adapt wrote, and apart from the repository and the base (`training.adapt_folder`). The
model folder is written beside OUT under a temporary name and renamed into place once complete,
so OUT is either the previous model or the new one, never half of one. It holds the weights, the
base's tokenizer and decoder defaults, a model card (`MODEL_CARD.md`: the repository, files,
tokens, minutes, base) and `adapt.json` (with the list of files adapt wrote); `bench.repo` adds its
held-out figures (`add_figures`).

A public checkpoint (too large to train whole) gets LoRA adapters instead (`training.lora`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from infill.checkpoint import is_own_config, load_model, save_model
from infill.model import Transformer
from infill.paths import REPO_ROOT, bundled_model_dir, work_dir
from infill.serving import open_tokenizer
from training.adapt_folder import RECORD, checked_out, run_dir, write_folder
from training.adapt_rows import Rows, make_rows
from training.adapt_state import Progress, load_state, save_state
from training.batches import Prefetcher
from training.evalguard import EvalGuard
from training.repo_files import Gathered, RepoError, RepoFile, counts_text, gather, said
from training.train import batch_loss, check_device, lr_at

SAVE_EVERY_S = 60.0  # seconds between resumable states
CARD = "MODEL_CARD.md"


@dataclass(slots=True)
class AdaptConfig:
    base: Path = field(default_factory=bundled_model_dir)  # the model folder to start from
    out: Path | None = None  # the adapted model folder (default: work/adapted/REPO-NAME)
    repo: Path | None = None  # where the files came from (the card says it)
    minutes: float = 10.0  # wall-clock budget of the training loop
    steps: int = 0  # a step budget as well (0: none), for comparisons that a busy machine must not move
    exclude: tuple[str, ...] = ()  # gitignore-style globs of files to leave out
    lr: float = 1e-4  # peak learning rate: the base's last (5e-4 and 2e-3 raised the held-out loss in tuning)
    warmup: int = 10  # linear warm-up steps
    seq_len: int = 512  # tokens per training row
    batch: int = 8  # rows per step
    snippet_share: float = 0.25  # rows with the server's snippet context before the window
    replay_share: float = 0.25  # rows of standard-library code under the corpus objective
    lora_rank: int = 16  # adapters' rank, for a base trained through LoRA
    seed: int = 0
    threads: int = 2
    device: str = field(default_factory=lambda: "cuda" if torch.cuda.is_available() else "cpu")

    def __post_init__(self):
        if not self.minutes > 0:
            raise ValueError(f"--minutes must be above 0, got {self.minutes}")
        if not (0 <= self.snippet_share < 1 and 0 <= self.replay_share < 1
                and self.snippet_share + self.replay_share < 1):
            raise ValueError("--snippet-share and --replay-share are shares of a batch: each in [0, 1), "
                             "less than 1 together")


def default_out(repo: Path) -> Path:
    return work_dir() / "adapted" / Path(repo).resolve().name


def fingerprint(config: AdaptConfig, files: list[RepoFile]) -> str:
    """What a saved state was trained on: the base, the files and the row layout; a resumed run
    must match it."""
    digest = hashlib.sha256(str(Path(config.base).resolve()).encode())
    for f in files:
        digest.update(f.path.encode() + b"\0" + hashlib.sha256(f.text.encode()).digest())
    digest.update(json.dumps([config.seq_len, config.batch, config.snippet_share, config.replay_share]).encode())
    return digest.hexdigest()[:16]


def lora_module():
    """`training.lora`, which needs peft (the `lora` extra), imported only for a public base."""
    try:
        import training.lora as lora
    except ImportError as error:
        raise RepoError(f"a public checkpoint is adapted through LoRA adapters, which need peft ({error}): "
                        "pip install 'infill[lora]'") from error
    return lora


def opened(config: AdaptConfig, lora: bool) -> tuple[Transformer, list[torch.nn.Parameter]]:
    """The base model to train and its trained parameters: every weight of one of ours (fp32),
    or the LoRA adapters of a public checkpoint (bf16 on a GPU, layers recomputed in the
    backward pass so that a 7B fits one card)."""
    if not lora:
        model = load_model(config.base, device=config.device).float()
        return model, list(model.parameters())
    adapters = lora_module()
    on_gpu = config.device.startswith("cuda")
    model = load_model(config.base, device=config.device, dtype=torch.bfloat16 if on_gpu else torch.float32)
    params = adapters.add_adapters(model, rank=config.lora_rank)
    if on_gpu:
        adapters.checkpoint_layers(model)
    return model, params


def is_public(base: Path) -> bool:
    """Whether `base` is a public family's checkpoint (trained through adapters), not one of ours."""
    return not is_own_config(json.loads((Path(base) / "config.json").read_text()))


def time_bar(budget_s: float, done_s: float) -> tqdm:
    """A progress bar over the time budget, showing the time left."""
    return tqdm(total=round(budget_s), initial=round(done_s), unit="s", dynamic_ncols=True,
                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s, {remaining} left{postfix}",
                mininterval=0.5 if sys.stderr.isatty() else 15)


def train_loop(model: Transformer, params, rows: Rows, config: AdaptConfig, run: Path, mark: str) -> Progress:
    """Steps until the time budget is spent or Ctrl-C; the state is saved on the way and at the end."""
    opt = torch.optim.AdamW(params, lr=config.lr, betas=(0.9, 0.95), weight_decay=0.0)
    rng = np.random.default_rng(config.seed)
    progress = load_state(run, model, opt, rng, mark)
    progress.sessions += 1
    budget_s, total = config.minutes * 60, config.steps or 1 << 40  # the schedule ends with the first budget spent
    batches = Prefetcher(rows.batch, rng)
    batches.start()
    bar, saved_at = time_bar(budget_s, progress.seconds), time.monotonic()
    amp = torch.autocast("cuda", dtype=torch.bfloat16, enabled=config.device.startswith("cuda"))
    model.train()
    try:
        while progress.seconds < budget_s and progress.step < total:
            started = time.monotonic()
            for group in opt.param_groups:
                group["lr"] = lr_at(progress.step, total, config, progress.seconds / budget_s)
            with amp:
                loss = batch_loss(model, batches.next(), "diffusion", config.device)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            spent = time.monotonic() - started
            progress = Progress(progress.step + 1, progress.seconds + spent, round(loss.item(), 4), progress.sessions)
            steps = f"{progress.step}/{config.steps}" if config.steps else progress.step
            bar.set_postfix_str(f"step {steps}, loss {progress.loss:.3f}", refresh=False)
            bar.update(min(round(progress.seconds), bar.total) - bar.n)
            if time.monotonic() - saved_at > SAVE_EVERY_S:
                save_state(run, model, opt, rng, progress, mark)
                saved_at = time.monotonic()
    except KeyboardInterrupt:
        tqdm.write(f"interrupted at step {progress.step}: saving the model as it is", file=sys.stderr)
    finally:
        batches.stop()
        bar.close()
    save_state(run, model, opt, rng, progress, mark)
    return progress


def card_text(config: AdaptConfig, data: dict, progress: Progress, lora: bool, snippets: bool) -> str:
    """The adapted model's card: where it came from and how it was made."""
    how = f"LoRA adapters of rank {config.lora_rank} on the frozen base" if lora else "every weight fine-tuned"
    rows = data["rows_per_step"]
    return "\n".join([
        f"# {Path(config.out).name}", "",
        f"`{config.base}` adapted to the repository `{config.repo or '(files given)'}` by `infill adapt` "
        f"({how}).", "",
        "| | |", "| --- | --- |",
        f"| files | {data['files']:,} (skipped: {counts_text(data.get('skipped', {}))}) |",
        f"| tokens | {data['tokens']:,} |",
        f"| training | {progress.seconds / 60:.1f} minutes, {progress.step} steps of {config.batch} rows of "
        f"{data['seq_len']} tokens, {config.threads} CPU threads |",
        f"| rows per step | {rows['repository']} repository, {rows['with_snippets']} with snippet context, "
        f"{rows['replay']} standard-library replay |",
        f"| learning rate | {config.lr:g} peak, cosine over the time budget |",
        f"| final loss | {progress.loss} |",
        f"| snippet context | {'trained (`snippet_context: true`)' if snippets else 'not trained'} |", "",
    ]) + "\n"


def add_figures(model_dir: Path, figures: dict) -> None:
    """Record held-out figures (`bench.repo`'s summary) in an adapted model's folder: in
    `adapt.json` and as a section of its card."""
    model_dir = Path(model_dir)
    record_path = model_dir / RECORD
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    record["held_out"] = figures
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    card = (model_dir / CARD).read_text() if (model_dir / CARD).exists() else ""
    card = card.split("\n## Held-out figures")[0].rstrip("\n") + "\n"
    card += "\n## Held-out figures (`bench.repo`)\n\n```json\n" + json.dumps(figures, indent=2) + "\n```\n"
    (model_dir / CARD).write_text(card)


def fill_folder(folder: Path, model: Transformer, config: AdaptConfig, data: dict, progress: Progress,
                lora: bool) -> None:
    """Write the adapted model into the new, empty `folder`, `adapt.json` last (it lists the files)."""
    snippets = data["rows_per_step"]["with_snippets"] > 0
    if lora:
        lora_module().save_adapters(model, folder, Path(config.base).resolve())
    else:
        model.cfg.snippet_context = model.cfg.snippet_context or snippets
        save_model(model, folder, dtype=torch.float16)
        for name in ("tokenizer.json", "decoder.json"):
            if (Path(config.base) / name).exists():
                shutil.copyfile(Path(config.base) / name, folder / name)
    record = {"base": str(config.base), "repo": str(config.repo or ""), "config": jsonable(config),
              "data": data, "steps": progress.step, "seconds": round(progress.seconds, 1), "loss": progress.loss,
              "sessions": progress.sessions}
    (folder / CARD).write_text(card_text(config, data, progress, lora, snippets))
    record["files"] = sorted({p.name for p in folder.iterdir()} | {RECORD})
    (folder / RECORD).write_text(json.dumps(record, indent=2) + "\n")


def jsonable(config: AdaptConfig) -> dict:
    return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()}


def dev_guard() -> EvalGuard | None:
    """The evaluation sets' fingerprints where this checkout has them (the project's own
    measurements), so that replay never trains on them; None on a user's machine."""
    data = REPO_ROOT.parent / "shared" / "data"
    return EvalGuard.from_data_dir(data) if data.is_dir() else None


def adapt(config: AdaptConfig, files: list[RepoFile] | None = None) -> Path:
    """Adapt `config.base` to `files` (default: the repository `config.repo`'s source files) and
    return the model folder written at `config.out`, once it is a folder adapt may write."""
    check_device(config.device)
    config.out = checked_out(config.out or default_out(config.repo or Path.cwd()), config.repo, config.base,
                             work_dir())
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    guard = dev_guard() if files is None or config.replay_share else None  # only what is read here needs it
    gathered = Gathered(files) if files is not None else read_repo(config, guard)
    tok = open_tokenizer(config.base)
    lora = is_public(config.base)
    rows, data = make_rows(tok, gathered.files, config, guard, np.random.default_rng(config.seed + 1))
    data["skipped"] = dict(gathered.skipped)
    model, params = opened(config, lora)
    run = run_dir(config.out)
    run.mkdir(parents=True, exist_ok=True)
    tqdm.write(f"adapting {config.base} to {data['files']} files ({data['tokens']:,} tokens)"
               f"{said(gathered.skipped)} for {config.minutes:g} minutes", file=sys.stderr)
    progress = train_loop(model, params, rows, config, run, fingerprint(config, gathered.files))
    model.eval()
    return write_folder(config.out, lambda folder: fill_folder(folder, model, config, data, progress, lora))


def read_repo(config: AdaptConfig, guard: EvalGuard | None) -> Gathered:
    """The repository's source files; the skips worth a look are named on stderr."""
    gathered = gather(Path(config.repo), config.exclude, source_languages(config.base), guard)
    for line in gathered.named:
        tqdm.write(f"skipped {line}", file=sys.stderr)
    return gathered


def source_languages(base: Path) -> tuple[str, ...] | None:
    """The languages a base model completes: the bundled model knows Python; a public coder, any."""
    return None if is_public(base) else ("python",)


def build_parser(prog: str = "infill adapt") -> argparse.ArgumentParser:
    defaults = AdaptConfig()
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("repo", type=Path, help="the repository's root folder")
    p.add_argument("--out", type=Path, help="model folder to write (default: work/adapted/REPO-NAME)")
    p.add_argument("--base", type=Path, default=bundled_model_dir(),
                   help="model folder to start from (default: the bundled model)")
    p.add_argument("--minutes", type=float, default=10.0, help="training time budget (the schedule anneals by then)")
    p.add_argument("--steps", type=int, default=0,
                   help="stop after this many steps as well (0: none); the schedule anneals by the first budget spent")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="gitignore-style pattern of files to leave out (repeatable)")
    p.add_argument("--lr", type=float, default=defaults.lr, help="peak learning rate")
    p.add_argument("--batch", type=int, default=defaults.batch, help="rows per step")
    p.add_argument("--seq-len", type=int, default=defaults.seq_len, help="tokens per row")
    p.add_argument("--snippet-share", type=float, default=defaults.snippet_share,
                   help="share of rows with the language server's snippet context (0: none)")
    p.add_argument("--replay-share", type=float, default=defaults.replay_share,
                   help="share of rows of standard-library code, to keep general skill (0: none)")
    p.add_argument("--lora-rank", type=int, default=defaults.lora_rank, help="LoRA rank, for a public checkpoint")
    p.add_argument("--seed", type=int, default=0, help="seed of the data order and masking")
    p.add_argument("--threads", type=int, default=2, help="CPU threads for torch")
    p.add_argument("--device", default=defaults.device, help="cpu, cuda or cuda:N (default: a GPU when there is one)")
    return p


def main(argv: list[str] | None = None, prog: str = "infill adapt") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        config = AdaptConfig(base=args.base, out=args.out, repo=args.repo, minutes=args.minutes, steps=args.steps,
                             exclude=tuple(args.exclude), lr=args.lr, batch=args.batch, seq_len=args.seq_len,
                             snippet_share=args.snippet_share, replay_share=args.replay_share,
                             lora_rank=args.lora_rank, seed=args.seed, threads=args.threads,
                             device=args.device)
        if not (Path(args.base) / "config.json").is_file():
            raise RepoError(f"--base {args.base} is not a model folder (no config.json)")
        out = adapt(config)
    except (RepoError, ValueError) as error:
        print(f"infill adapt: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("infill adapt: interrupted; the model folder was left as it was and the run's last saved state "
              "is kept: run the same command again to go on", file=sys.stderr)
        return 130
    print(f"wrote {out}; serve it with `infill run --model {out}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
