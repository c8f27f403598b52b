"""Public families' tokenizers, hole rules and canvases, on tiny checkpoints in each real layout
(`python -m infill.tiny FAMILY DIR`), through the model runner."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from engine.worker.runner import ModelRunner
from infill import decode
from infill.canvas import fim_canvas
from infill.decode.holes import close_tail
from infill.fim import hole_rules, hole_text
from infill.family_tokens import FamilyTokenizer, load_tokenizer
from infill.job import Job
from infill.tiny import write_tiny
from tests.conftest import SAMPLE_CODE

FAMILIES = ["dream", "diffucoder", "open-dcoder", "coda", "llada"]
CODE = SAMPLE_CODE + Path(__file__).read_text() + "s = 'café → ü'\r\n\tx = 1\n\n\n"
PREFIX, SUFFIX = "def read(path):\n    with open(path) as f:\n        return f.re", "\n\nprint(read('a'))\n"


@pytest.fixture(scope="session")
def tiny_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("families")
    return {family: write_tiny(family, root / family) for family in FAMILIES}


def tokenizer(folder: Path) -> FamilyTokenizer:
    return load_tokenizer(folder, json.loads((folder / "config.json").read_text()))


def config(folder: Path, name: str = "config.json") -> dict:
    return json.loads((folder / name).read_text())


def added_texts(tok: FamilyTokenizer) -> list[str]:
    return [t.content for t in tok.tok.get_added_tokens_decoder().values()]


@pytest.mark.parametrize("family", FAMILIES)
def test_tiny_checkpoint_is_sharded_bf16_with_an_index(tiny_dirs, family):
    from safetensors import safe_open

    folder = tiny_dirs[family]
    index = config(folder, "model.safetensors.index.json")
    files = sorted(set(index["weight_map"].values()))
    assert files == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    for file in files:
        with safe_open(str(folder / file), "pt") as shard:
            names = list(shard.keys())
            assert names and all(shard.get_tensor(n).dtype == torch.bfloat16 for n in names)
            assert all(index["weight_map"][n] == file for n in names)


@pytest.mark.parametrize("family", FAMILIES)
def test_code_round_trips_byte_identical(tiny_dirs, family):
    tok = tokenizer(tiny_dirs[family])
    assert tok.decode(tok.encode(CODE)) == CODE


def test_vocab_and_merges_without_tokenizer_json_encode_the_same(tiny_dirs, tmp_path):
    folder = tiny_dirs["open-dcoder"]  # ships both
    for name in ("config.json", "tokenizer_config.json", "generation_config.json", "vocab.json", "merges.txt"):
        shutil.copy(folder / name, tmp_path / name)
    from_files, from_json = tokenizer(tmp_path), tokenizer(folder)
    assert from_files.encode(CODE) == from_json.encode(CODE)
    assert from_files.decode(from_files.encode(CODE)) == CODE
    for name in ("mask_id", "pad_id", "end_ids", "head_ids", "banned_ids"):
        assert getattr(from_files, name) == getattr(from_json, name)


@pytest.mark.parametrize("family", FAMILIES)
def test_special_ids_come_from_the_folder_and_agree_with_the_tokenizer(tiny_dirs, family):
    folder = tiny_dirs[family]
    tok, cfg, settings = tokenizer(folder), config(folder), config(folder, "tokenizer_config.json")
    assert tok.mask_id == cfg["mask_token_id"] and tok.tok.id_to_token(tok.mask_id) == settings["mask_token"]
    assert tok.pad_id == cfg["pad_token_id"] == tok.end_ids[0]
    eos = tok.tok.token_to_id(settings["eos_token"])  # CoDA's config has no eos: tokenizer_config.json names it
    turn = tok.tok.token_to_id("<|eot_id|>" if family == "llada" else "<|im_end|>")
    assert eos in tok.end_ids and turn in tok.end_ids and len(tok.end_ids) == len(set(tok.end_ids)) >= 2
    assert tok.head_ids == ([cfg["bos_token_id"]] if family == "llada" else [])
    if family == "llada":  # said by its tokenizer.json's post-processor: it starts every text with it
        assert tok.tok.encode("x").ids[0] == tok.head_ids[0] and "add_bos_token" not in settings


@pytest.mark.parametrize("family", FAMILIES)
def test_specials_and_padded_rows_are_banned_and_not_decoded(tiny_dirs, family):
    folder = tiny_dirs[family]
    tok = tokenizer(folder)
    rows = config(folder).get("embedding_size") or config(folder)["vocab_size"]
    assert rows > tok.vocab_size  # padded like the real embeddings
    added = set(tok.tok.get_added_tokens_decoder())
    assert set(tok.banned_ids) == (added - set(tok.end_ids)) | set(range(tok.vocab_size, rows))
    assert tok.mask_id in tok.banned_ids
    code = tok.encode("x = 1\n")
    assert tok.decode([tok.mask_id, *code, *tok.end_ids, rows - 1]) == "x = 1\n"
    specials = [t.content for t in tok.tok.get_added_tokens_decoder().values() if t.special]
    assert all(t not in tok.decode(sorted(added)) for t in specials)
    assert tok.encode("<|endoftext|>") != [tok.tok.token_to_id("<|endoftext|>")]  # text, never the token


@pytest.mark.parametrize("family", ["dream", "llada"])
def test_no_healing_at_a_line_start(tiny_dirs, family):
    tok = tokenizer(tiny_dirs[family])
    healed = tok.heal("def f(x):\n")
    assert healed.text == "" and healed.ids == tok.encode("def f(x):\n")


@pytest.mark.parametrize("family", ["dream", "llada"])
@pytest.mark.parametrize("prefix, rest", [
    ("        return self.val", "ue\n"),  # mid-identifier
    ("def f(x):\n    ", "return x\n"),  # after indentation, where a word takes one space of it
    ("x = ", "len(y)\n"),  # a lone space joins the word after it
])
def test_healing_keeps_the_ids_the_whole_text_would_have(tiny_dirs, family, prefix, rest):
    tok = tokenizer(tiny_dirs[family])
    healed = tok.heal(prefix)
    assert healed.text and prefix.endswith(healed.text) and tok.decode(healed.ids) + healed.text == prefix
    assert tok.encode(prefix + rest)[:len(healed.ids)] == healed.ids
    allowed = tok.tokens_starting_with(healed.text)
    assert allowed and all(tok.token_texts[i].startswith(healed.text) for i in allowed)


def test_single_line_hole_ends_at_a_token_that_holds_a_newline(tiny_dirs):
    tok = tokenizer(tiny_dirs["dream"])
    ids = tok.encode("f(x)\n")
    assert tok.token_texts[ids[-1]] == ")\n"  # Qwen's pre-tokenizer keeps `)` and the newline together
    rules = hole_rules(tok, "", "y = ", "single_line")
    assert ids[-1] in rules.end_ids.tolist() and ids[-1] not in hole_rules(tok, "", "y = ", "multi_line").end_ids
    more = tok.encode("z = 2")
    hole = torch.tensor(ids + more)
    masked = torch.tensor([False] * len(ids) + [True] * len(more))
    close_tail(hole, masked, rules)
    assert hole[len(ids):].tolist() == [tok.pad_id] * len(more) and not masked.any()
    assert hole_text(tok, hole.tolist(), "", single_line=True) == "f(x)\n"
    assert hole_text(tok, ids + [tok.end_ids[1]] + more, "", single_line=False) == "f(x)\n"


def test_line_start_bans_every_blank_line_end_first(tiny_dirs):
    tok = tokenizer(tiny_dirs["dream"])
    first = hole_rules(tok, "", "def f():\n", "single_line").first_banned
    assert tok.newline_id in first and tok.encode("\n\n")[0] in first
    assert tok.encode(")\n")[0] not in first and set(tok.end_ids) <= set(first)


@pytest.mark.parametrize("family", ["open-dcoder", "llada"])
def test_canvas_starts_with_the_family_begin_token_only(tiny_dirs, family):
    tok = tokenizer(tiny_dirs[family])
    canvas = fim_canvas(tok, "x = ", "\n", 4, 512)
    head = tok.head_ids
    assert canvas.ids[:canvas.hole_start] == head + tok.heal("x = ").ids
    assert canvas.ids[canvas.hole_start:canvas.hole_start + 4] == [tok.mask_id] * 4
    assert canvas.ids[canvas.hole_start + 4:] == tok.encode("\n")


@pytest.mark.parametrize("family", FAMILIES)
def test_runner_answers_with_text_and_ends_of_the_family(tiny_dirs, family):
    folder = tiny_dirs[family]
    runner = ModelRunner(folder)
    assert runner.decoder_defaults["threshold"] == 0.9  # the family's published decoder, no decoder.json
    fresh = tokenizer(folder)
    for mode in ("single_line", "multi_line"):
        decoding = runner.start(Job.fim(PREFIX, SUFFIX, mode, 16), None)
        while not decoding.done:
            runner.step([decoding])
        [answer] = runner.answers(decoding)
        assert answer.text and all(t not in answer.text for t in added_texts(fresh))
        assert fresh.decode(fresh.encode(answer.text)) == answer.text
        [tokens] = decode.hole_tokens(decode.best(decoding.states))
        assert not set(tokens) & set(runner.tok.banned_ids)
        ends = [i for i, t in enumerate(tokens) if t in fresh.end_ids]
        assert all(t in fresh.end_ids for t in tokens[ends[0]:]) if ends else len(tokens) == 16


def steer(runner: ModelRunner, rows: list[int], scale: float) -> None:
    """Make one of `rows` the model's best token everywhere: two rows point opposite ways along one
    direction, so whatever the hidden state, one of them has a large positive logit."""
    direction = torch.randn(runner.model.cfg.hidden_size, generator=torch.Generator().manual_seed(0))
    u = direction / direction.norm()
    with torch.no_grad():
        weight = runner.model.lm_head.weight
        for k, row in enumerate(rows):
            weight[row] = scale * u * (1 if k % 2 == 0 else -1)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_hole_stops_at_any_of_the_family_ends(tiny_dirs, family):
    runner = ModelRunner(tiny_dirs[family])
    tok = runner.tok
    steer(runner, tok.end_ids[:2], 200.0)
    decoding = runner.start(Job.fim("x = ", "\n", "multi_line", 16), None)
    while not decoding.done:
        runner.step([decoding])
    [tokens] = decode.hole_tokens(decode.best(decoding.states))
    assert tokens[0] not in tok.end_ids and tokens[1] in tok.end_ids[:2]  # never empty; ends right after
    [answer] = runner.answers(decoding)
    assert answer.text == tok.decode(tokens[:1])[len(decoding.healed[0]):]


@pytest.mark.parametrize("family", ["dream", "coda"])
def test_rows_past_the_tokenizer_are_never_committed(tiny_dirs, family):
    runner = ModelRunner(tiny_dirs[family])
    padded = list(range(runner.tok.vocab_size, runner.model.cfg.vocab_size))
    steer(runner, padded[:2], 1e4)
    canvas = fim_canvas(runner.tok, PREFIX, SUFFIX, 8, 512)
    with torch.no_grad():
        logits, _ = runner.model(torch.tensor([canvas.ids]))
    assert set(logits[0].argmax(-1).tolist()) <= set(padded[:2])  # unrestricted, the padded rows would win
    [answer] = runner.complete(Job.fim(PREFIX, SUFFIX, "multi_line", 8), None)
    fresh = tokenizer(tiny_dirs[family])
    assert fresh.decode(fresh.encode(answer.text)) == answer.text and answer.text


# --- each family's files as published, against a second reading of them written here ---------------

PUBLISHED_FILES = {
    "dream": {"vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"},
    "diffucoder": {"vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"},
    "open-dcoder": {"tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json"},
    "coda": {"tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "added_tokens.json",
             "special_tokens_map.json"},
    "llada": {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"},
}
# The pre-tokenizer regexes as the families' tokenizer.json files spell them (Qwen2.5's; GPT-2's).
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT2_SPLIT = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
SNIPPETS = [
    "def area(radius):\n    return 3.14159 * radius ** 2\n",
    "for i in range(10):\n\tif i % 2 == 0:\n\t\tprint(f'{i:>4}')\r\n",
    "  self.items = {'café': [1, 22, 333]}  # ünïcode → arrows\n\n\n",
    "class Node:\n    def __init__(self, value: int) -> None:\n        self.value = value\n",
    "x=12345678;y='it''s';z=\"don't\"\n",
]


def gpt2_bytes() -> dict[int, str]:
    """GPT-2's byte-to-character table: printable bytes stand for themselves, the rest move past 255."""
    kept = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    table, extra = {b: chr(b) for b in kept}, 0
    for b in range(256):
        if b not in table:
            table[b], extra = chr(256 + extra), extra + 1
    return table


def second_reading(folder: Path, family: str):
    """Encode by hand from the folder's files: vocab.json + merges.txt where published, else
    tokenizer.json's vocabulary and merges; the family's regex; merges applied lowest rank first."""
    regex = pytest.importorskip("regex")
    if (folder / "vocab.json").exists():
        vocab = json.loads((folder / "vocab.json").read_text())
        lines = [line for line in (folder / "merges.txt").read_text().splitlines() if line and not line.startswith("#")]
        merges = [tuple(line.split(" ")) for line in lines]
    else:
        model = json.loads((folder / "tokenizer.json").read_text())["model"]
        vocab = model["vocab"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    rank = {pair: r for r, pair in enumerate(merges)}
    split = regex.compile(GPT2_SPLIT if family == "llada" else QWEN2_SPLIT)
    table = gpt2_bytes()

    def encode(text: str) -> list[int]:
        ids = []
        for piece in split.findall(text):
            parts = [table[b] for b in piece.encode("utf-8")]
            while len(parts) > 1:
                best = min(range(len(parts) - 1), key=lambda i: rank.get((parts[i], parts[i + 1]), len(rank)))
                if (parts[best], parts[best + 1]) not in rank:
                    break
                parts[best:best + 2] = [parts[best] + parts[best + 1]]
            ids += [vocab[p] for p in parts]
        return ids

    return encode


@pytest.mark.parametrize("family", FAMILIES)
def test_folders_hold_the_files_the_family_publishes(tiny_dirs, family):
    present = {p.name for p in tiny_dirs[family].iterdir()}
    tokenizer_files = {"tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "added_tokens.json",
                       "special_tokens_map.json"}
    assert present & tokenizer_files == PUBLISHED_FILES[family]
    settings = config(tiny_dirs[family], "tokenizer_config.json")
    if family in ("dream", "diffucoder"):
        assert settings["tokenizer_class"] == "DreamTokenizer"


@pytest.mark.parametrize("family", FAMILIES)
def test_snippets_encode_as_a_second_reading_of_the_published_files(tiny_dirs, family):
    tok, by_hand = tokenizer(tiny_dirs[family]), second_reading(tiny_dirs[family], family)
    for snippet in SNIPPETS:
        assert tok.encode(snippet) == by_hand(snippet), snippet
        assert tok.decode(tok.encode(snippet)) == snippet


def test_a_dream_folder_gets_qwen2s_split_not_gpt2s(tiny_dirs):
    """Dream's tokenizer_config.json says DreamTokenizer: its digits are still split one by one."""
    tok = tokenizer(tiny_dirs["dream"])
    digits = tok.encode("12345")
    assert [tok.decode([i]) for i in digits] == list("12345")
    text = "def f(x):\n    return 12345\n"
    assert tok.encode(text) == second_reading(tiny_dirs["dream"], "dream")(text)
    assert tok.encode(text) != second_reading(tiny_dirs["dream"], "llada")(text)  # GPT-2's split reads it otherwise


def copy_folder(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def test_a_folder_whose_two_tokenizer_layouts_disagree_is_refused(tiny_dirs, tmp_path):
    folder = copy_folder(tiny_dirs["open-dcoder"], tmp_path / "m")
    merges = (folder / "merges.txt").read_text().splitlines()
    (folder / "merges.txt").write_text("\n".join(merges[:1] + merges[200:]) + "\n")  # a stale, shorter merge list
    with pytest.raises(ValueError, match="tokenizer.json and vocab.json \\+ merges.txt disagree"):
        tokenizer(folder)


def test_missing_special_tokens_say_which_files_to_fix(tiny_dirs, tmp_path):
    folder = copy_folder(tiny_dirs["dream"], tmp_path / "m")
    for name in ("config.json", "generation_config.json"):
        raw = config(folder, name)
        raw.pop("mask_token_id", None)
        (folder / name).write_text(json.dumps(raw))
    settings = config(folder, "tokenizer_config.json")
    settings.pop("mask_token")
    settings["added_tokens_decoder"] = {i: e for i, e in settings["added_tokens_decoder"].items()
                                        if e["content"] != "<|mask|>"}
    (folder / "tokenizer_config.json").write_text(json.dumps(settings))
    (folder / "special_tokens_map.json").unlink()
    with pytest.raises(ValueError, match="no mask token.*tokenizer_config.json"):
        tokenizer(folder)


def test_an_unknown_tokenizer_class_without_tokenizer_json_is_refused(tiny_dirs, tmp_path):
    folder = copy_folder(tiny_dirs["dream"], tmp_path / "m")
    settings = config(folder, "tokenizer_config.json")
    settings["tokenizer_class"] = "LlamaTokenizer"
    (folder / "tokenizer_config.json").write_text(json.dumps(settings))
    with pytest.raises(ValueError, match="tokenizer_config.json names tokenizer_class 'LlamaTokenizer'"):
        tokenizer(folder)
