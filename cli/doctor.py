"""`infill doctor MODEL_DIR`: whether a model folder will serve, and if not, what to do.

Each check prints one line, `ok` or `FAIL` with what to do; a check whose inputs failed is not
run. The checks: config.json read and the family detected (and from which field), the weights'
files present (an adapter folder's base's, and its LoRA adapters), the tokenizer read from the
family's published files with its special ids, a round trip of a few code snippets (and that each
token stays inside one piece of the family's pre-tokenizer split), the config fields read, the
memory the model needs on the device at the context it will serve, the dtype on the device, and
one short completion with its latency.
Each line is printed as soon as its check is done, so that a check that takes long (or a damaged
folder) never hides the ones before it; a damaged file is its check's FAIL line, never a traceback.
Exit status 0 when every check passes, 1 otherwise.

`summary_line` is the one line `infill serve` logs when it starts.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

SNIPPETS = (
    "def area(radius):\n    return 3.14159 * radius ** 2\n",
    "for i in range(10):\n\tif i % 2 == 0:\n\t\tprint(f'{i:>4}')\r\n",
    "  self.items = {'café': [1, 22, 333]}  # → ü\n\n\n",
)
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}


@dataclass
class Report:
    """The checks' lines; each is also written to `out` (flushed) the moment it is known."""

    lines: list[str] = field(default_factory=list)
    failed: int = 0
    out: TextIO | None = None

    def ok(self, name: str, text: str) -> None:
        self._add(f"ok    {name}: {text}")

    def fail(self, name: str, text: str) -> None:
        self.failed += 1
        self._add(f"FAIL  {name}: {text}")

    def _add(self, line: str) -> None:
        self.lines.append(line)
        if self.out is not None:
            self.out.write(line + "\n")
            self.out.flush()

    def check(self, name: str, run: Callable[[], str]):
        """Run one check: its text on success, else its FAIL line with the error's message. The
        readers raise ValueError for every damage they know; anything else is named by its type."""
        try:
            text = run()
        except (ValueError, OSError, RuntimeError, KeyError, AssertionError) as exc:
            self.fail(name, _message(exc))
            return None
        except Exception as exc:  # a damage no reader foresaw: still one line, and the next checks
            self.fail(name, f"unexpected {type(exc).__name__}: {_message(exc)}; report this with the folder")
            return None
        self.ok(name, text)
        return text


def family_and_why(raw: dict) -> tuple[str, str]:
    from infill.families import family_and_why as why

    return why(raw)


def check_dtype(device: str, dtype: str) -> str:
    from infill.checkpoint import check_dtype as check

    return check(device, dtype)


def _message(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())  # one line


def resolve(device: str, dtype: str) -> tuple[str, str]:
    """The device and dtype `infill serve` would take for these flags."""
    import torch

    from engine.wire.flags import check_device
    from engine.worker.placement import placement

    check_device(device)
    where = placement(device, dtype, "auto", torch.cuda.device_count())
    return where.device, where.dtype


def memory_needed(cfg, dtype: str, context: int) -> dict[str, int]:
    """Bytes the model takes at `context` tokens: weights, keys/values of one canvas, its logits."""
    per = DTYPE_BYTES[dtype]
    weights = cfg.num_params() * per
    kv = 2 * cfg.num_layers * cfg.num_kv_heads * cfg.head_dim * context * per
    logits = context * cfg.vocab_size * 4
    return {"weights": weights, "kv": kv, "logits": logits, "total": weights + kv + logits}


def _size(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def memory_available(device: str) -> int | None:
    from infill.model_shape import memory_available as available

    return available(device)


def static_checks(folder: Path, report: Report) -> tuple | None:
    """config, family, weights, tokenizer, snippets, fields: (raw, cfg, tok) when all passed."""
    from infill.checkpoint import is_own_config, read_config

    raw, found = {}, []

    def config() -> str:
        raw.update(read_config(folder))
        return f"{folder / 'config.json'} read, {len(raw)} fields"

    if report.check("config", config) is None:
        return None
    family = report.check("family", lambda: "{} ({})".format(*family_and_why(raw)))
    if family is None:
        return None
    if not is_own_config(raw) and report.check("diffusion", lambda: _diffusion(folder, raw)) is None:
        return None
    if report.check("weights", lambda: _weights(folder)) is None:
        return None
    tok = _tokenizer(folder, raw, report)
    if tok is None:  # the fields' ids would only repeat the tokenizer's problem
        return None
    if report.check("fields", lambda: _fields(folder, raw, found)) is None:
        return None
    return raw, found[0], tok


def _diffusion(folder: Path, raw: dict) -> str:
    from infill.checkpoint import check_mask_token

    check_mask_token(folder, raw)
    return "a masked diffusion model (it names a mask token)"


def _weights(folder: Path) -> str:
    from infill.adapters import describe, is_adapter_folder
    from infill.checkpoint import check_weights, tensor_files

    files = tensor_files(folder)  # an adapter folder's base's
    check_weights(files)  # each file's header against its size: a shard cut short fails here
    shards = sorted({p.name for p in files.values()})
    text = f"{len(files)} tensors in {len(shards)} file(s) ({', '.join(shards[:3])}{', ...' * (len(shards) > 3)})"
    return text + (f"; {describe(folder)}" if is_adapter_folder(folder) else "")


def _tokenizer(folder: Path, raw: dict, report: Report):
    from infill.checkpoint import is_own_config
    from infill.families import detect_family
    from infill.family_tokens import family_split, load_tokenizer, tokenizer_class

    tok = None

    def read() -> str:
        nonlocal tok
        tok = load_tokenizer(folder, raw)
        files = [n for n in ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json",
                             "added_tokens.json", "special_tokens_map.json") if (folder / n).is_file()]
        named = tokenizer_class(folder)
        return (f"{tok.vocab_size} tokens from {', '.join(files)}" + (f" (class {named})" if named else "")
                + f"; mask {tok.mask_id}, pad {tok.pad_id}, ends {list(tok.end_ids)}, begin {tok.head_ids or 'none'}")

    if report.check("tokenizer", read) is None:
        return None
    split = None if is_own_config(raw) else family_split(detect_family(raw).layout)

    def round_trip() -> str:
        counts = []
        for snippet in SNIPPETS:
            ids = tok.encode(snippet)
            if tok.decode(ids) != snippet:
                raise ValueError(f"{snippet!r} decodes to {tok.decode(ids)!r}: the tokenizer files are damaged; "
                                 "download them again")
            if split is not None:
                pieces = [snippet[a:b] for _, (a, b) in split.pre_tokenize_str(snippet)]
                by_piece = [i for piece in pieces for i in tok.encode(piece)]
                if by_piece != ids:
                    raise ValueError(f"{snippet!r}: the tokenizer's tokens cross the family's pre-tokenizer pieces "
                                     f"({len(ids)} tokens, {len(by_piece)} piece by piece): its tokenizer.json "
                                     "splits text otherwise than the family; download the checkpoint's own")
                counts.append(f"{len(ids)} tokens / {len(pieces)} pieces")
            else:
                counts.append(f"{len(ids)} tokens")
        return f"{len(SNIPPETS)} snippets round trip ({'; '.join(counts)})"

    return tok if report.check("snippets", round_trip) is not None else None


def _fields(folder: Path, raw: dict, found: list) -> str:
    """The config's fields as our model reads them, types and ranges checked; the config is put in `found`."""
    from infill.checkpoint import folder_config, tensor_files

    cfg, _ = folder_config(folder, raw, tensor_files(folder))
    found.append(cfg)
    return (f"{cfg.num_layers} layers, d {cfg.hidden_size}, {cfg.num_heads}/{cfg.num_kv_heads} heads of "
            f"{cfg.head_dim}, FFN {cfg.intermediate_size}, vocab {cfg.vocab_size}, theta {cfg.rope_theta:g}, context "
            f"{cfg.max_position_embeddings}, shift {cfg.logits_shift}, tied {cfg.tie_word_embeddings}, "
            f"qkv bias {cfg.qkv_bias}, qk norm {cfg.qk_norm}, {cfg.num_params() / 1e6:.1f}M parameters")


def diagnose(folder: Path, device: str = "auto", dtype: str = "auto", complete: bool = True,
             out: TextIO | None = None) -> Report:
    """Every check on `folder` for `device` and `dtype` (as `infill serve` takes them), each line
    also written to `out` as it is known."""
    report = Report(out=out)
    folder = Path(folder)
    found = static_checks(folder, report)
    where = report.check("device", lambda: "{} in {}".format(*resolve(device, dtype)))
    if where is None:
        return report
    device, dtype = resolve(device, dtype)
    if report.check("dtype", lambda: check_dtype(device, dtype)) is None or found is None:
        return report
    _, cfg, _ = found

    def memory() -> str:
        need = memory_needed(cfg, dtype, cfg.max_position_embeddings)
        have = memory_available(device)
        text = (f"{_size(need['total'])} at {cfg.max_position_embeddings} tokens in {dtype} (weights "
                f"{_size(need['weights'])}, keys/values {_size(need['kv'])}, logits {_size(need['logits'])})")
        if have is not None and need["total"] > have:
            raise ValueError(f"{text} but {device} has {_size(have)} free: pass --max-context with fewer "
                             "tokens, a smaller --dtype, or another device")
        return text + ("" if have is None else f", {_size(have)} free on {device}")

    if report.check("memory", memory) is None or not complete:
        return report
    report.check("completion", lambda: _completion(folder, device, dtype))
    return report


def _completion(folder: Path, device: str, dtype: str) -> str:
    from engine.worker.runner import ModelRunner
    from infill.job import Job

    runner = ModelRunner(folder, device=device, dtype=dtype, weights="fp32")  # the dtype's own weights
    started = time.perf_counter()
    [answer] = runner.complete(Job.fim("def add(a, b):\n    return ", "\n\nprint(add(1, 2))\n", "single_line", 8),
                               None)
    ms = (time.perf_counter() - started) * 1000
    hidden = [i for i in runner.tok.encode(answer.text) if i in set(runner.tok.banned_ids)]
    if hidden:
        raise ValueError(f"the answer {answer.text!r} holds banned tokens {hidden[:4]}: report this with the folder")
    return f"{answer.text!r} in {ms:.0f} ms, {answer.forward_passes} forward passes ({answer.stop_reason})"


def summary_line(folder: Path, device: str, dtype: str) -> str:
    """The one line `infill serve` logs at its start (`engine.worker.cli.startup_summary`), or the
    folder's first problem as its FAIL line says it."""
    from engine.worker.cli import startup_summary

    report = Report()
    found = static_checks(Path(folder), report)
    failed = [line for line in report.lines if line.startswith("FAIL")]
    if failed or found is None:
        return f"{folder}: {failed[0].split(None, 1)[1]}"
    return startup_summary(Path(folder), found[2], device, dtype)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Check that a model folder will serve, and say what to "
                                                            "do when it will not.")
    parser.add_argument("model_dir", type=Path, metavar="MODEL_DIR", help="the model folder to check")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (as `infill serve`)")
    parser.add_argument("--dtype", default="auto", choices=("auto", "bf16", "fp16", "fp32"),
                        help="the weights' dtype (as `infill serve`; auto: bf16 on CUDA, fp32 on the CPU)")
    parser.add_argument("--no-completion", action="store_true", help="skip loading the weights and completing")
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    args = build_parser(prog).parse_args(argv)
    report = diagnose(args.model_dir, args.device, args.dtype, complete=not args.no_completion, out=sys.stdout)
    print(f"{args.model_dir}: " + ("every check passed" if not report.failed else f"{report.failed} problem(s)"))
    sys.stdout.flush()
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
