"""Tokenizers of public diffusion checkpoints (Qwen2-style and LLaDA-style byte-level BPE).

`load_tokenizer(model_dir, config)` returns the tokenizer a model folder needs: the bundled
`CodeTokenizer` for our own checkpoints, else a `FamilyTokenizer` read from `tokenizer.json` (or
`vocab.json` + `merges.txt`). Both answer `infill.tokenizer.ModelTokenizer`.

A family tokenizer takes its special ids from the folder, never from an assumption: config.json
first, then generation_config.json, then tokenizer_config.json's token strings, then the family
table (`infill.families`). Every added token other than an end is banned from holes; special
ones are dropped when decoding and never produced by encoding; embedding rows beyond the
tokenizer (Dream pads 151,667 tokens to 152,064 rows) are never committed. Healing and the end of
a line follow the model's own pre-tokenizer: the piece that a typed character would join is
re-opened into the hole, and a single-line hole ends at any token that holds a newline (Qwen's
`):\\n` is one token).
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

from infill.checkpoint import is_own_config
from infill.families import Family, detect_family
from infill.tokenizer import CodeTokenizer, Healed, ModelTokenizer, TokenTable

# Qwen2's pre-tokenizer (its tokenizer.json and the slow Qwen2Tokenizer): single digits, a word
# with at most one leading non-letter, punctuation runs that swallow the newlines after them.
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# What a user usually types at a cursor: a letter, a digit, a bracket. A prefix's tail that the
# pre-tokenizer would join with one of them is re-opened into the hole.
HEAL_PROBES = ("x", "1", "(")


@dataclass(frozen=True, slots=True)
class FamilyTokens:
    """Token texts a family uses that its config files may not name."""

    end_of_turn: tuple[str, ...]  # chat turns end with these: a hole ends there too
    begin: str | None  # the begin-of-text token its canvases start with (None: none)


# Qwen-derived families start with no begin token (Open-dCoder's FIM is prefix + masks + suffix);
# LLaDA's tokenizer adds `<|startoftext|>` (id 126080) to every text (unverified: names from its
# chat template).
FAMILY_TOKENS = {
    "dream": FamilyTokens(("<|im_end|>",), None),
    "open-dcoder": FamilyTokens(("<|im_end|>",), None),
    "coda": FamilyTokens(("<|im_end|>",), None),
    "llada": FamilyTokens(("<|eot_id|>",), "<|startoftext|>"),
}


@dataclass(frozen=True, slots=True)
class SpecialIds:
    mask: int
    pad: int
    ends: tuple[int, ...]  # pad first, then eos (all listed) and end-of-turn
    begin: int | None  # laid at the start of every canvas when not None


def load_tokenizer(model_dir: Path, config: dict) -> ModelTokenizer:
    """The tokenizer of a model folder whose config.json holds `config`."""
    model_dir = Path(model_dir)
    if is_own_config(config):
        return CodeTokenizer(model_dir / "tokenizer.json")
    family = detect_family(config)
    tok = read_vocabulary(model_dir)
    rows = config.get("embedding_size") or config["vocab_size"]
    return FamilyTokenizer(tok, special_ids(model_dir, config, tok, family), rows)


def read_vocabulary(model_dir: Path) -> Tokenizer:
    """`tokenizer.json`, else a byte-level BPE from `vocab.json` + `merges.txt` with the added
    tokens of `tokenizer_config.json`."""
    if (model_dir / "tokenizer.json").exists():
        return Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    vocab, merges = model_dir / "vocab.json", model_dir / "merges.txt"
    if not (vocab.exists() and merges.exists()):
        raise FileNotFoundError(f"{model_dir} has no tokenizer.json and no vocab.json + merges.txt: "
                                "copy the checkpoint's tokenizer files beside its weights")
    settings = _read_json(model_dir / "tokenizer_config.json")
    tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    if settings.get("tokenizer_class") == "Qwen2Tokenizer":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    else:  # GPT-2's byte-level BPE, whose regex the ByteLevel pre-tokenizer carries
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    for token_id, entry in sorted(settings.get("added_tokens_decoder", {}).items(), key=lambda kv: int(kv[0])):
        added = AddedToken(entry["content"], special=entry.get("special", True), normalized=False)
        tok.add_special_tokens([added]) if entry.get("special", True) else tok.add_tokens([added])
        if tok.token_to_id(entry["content"]) != int(token_id):
            raise ValueError(f"tokenizer_config.json gives {entry['content']!r} id {token_id}, but vocab.json "
                             f"puts it at {tok.token_to_id(entry['content'])}: the tokenizer files disagree")
    return tok


def special_ids(model_dir: Path, config: dict, tok: Tokenizer, family: Family) -> SpecialIds:
    """Mask, pad, ends and begin from the folder's files, the family table where they are silent."""
    generation = _read_json(model_dir / "generation_config.json")
    settings = _read_json(model_dir / "tokenizer_config.json")

    def ids_of(key: str, fallback: int | None) -> list[int]:
        for source in (config, generation):
            if source.get(key) is not None:
                value = source[key]
                return [int(v) for v in value] if isinstance(value, list) else [int(value)]
        text = _token_text(settings.get(key.removesuffix("_id")))
        if text is not None and tok.token_to_id(text) is not None:
            return [tok.token_to_id(text)]
        return [] if fallback is None else [fallback]

    mask = ids_of("mask_token_id", family.mask_token_id)[0]  # the family table always has one
    eos = ids_of("eos_token_id", family.eos_token_id)
    pad = (ids_of("pad_token_id", None) or eos)[0]
    names = FAMILY_TOKENS[family.name]
    turns = [tok.token_to_id(t) for t in names.end_of_turn if tok.token_to_id(t) is not None]
    begin = None
    if settings.get("add_bos_token") or names.begin is not None:
        begin = (ids_of("bos_token_id", None) or [tok.token_to_id(names.begin or "")])[0]
    stated = [("mask_token_id", mask), ("pad_token_id", pad), ("bos_token_id", begin)]
    for name, token_id in stated + [("eos_token_id", i) for i in eos]:
        if token_id is not None and tok.id_to_token(token_id) is None:
            raise ValueError(f"{model_dir}: {name} {token_id} is not a token of its tokenizer "
                             f"({tok.get_vocab_size()} tokens); the config and tokenizer files disagree")
    return SpecialIds(mask=mask, pad=pad, ends=tuple(dict.fromkeys([pad, *eos, *turns])), begin=begin)


def _token_text(entry) -> str | None:
    """A tokenizer_config.json token entry: a string or {"content": ...}."""
    return entry.get("content") if isinstance(entry, dict) else entry


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


class FamilyTokenizer(TokenTable):
    """A public family's byte-level BPE with that family's special ids (see the module doc)."""

    snippet_id = None  # public families were not trained with our snippet token
    edit_ids = None  # nor with our edit canvas

    def __init__(self, tok: Tokenizer, ids: SpecialIds, model_rows: int):
        self.tok = tok
        self.tok.encode_special_tokens = True  # code that spells `<|im_end|>` is text, never the token
        self.mask_id, self.pad_id = ids.mask, ids.pad
        self.end_ids = list(ids.ends)
        self.head_ids = [] if ids.begin is None else [ids.begin]
        self.model_rows = max(model_rows, self.vocab_size)
        newline = self.encode("\n")
        assert len(newline) == 1, "a byte-level vocabulary has a newline token"
        self.newline_id = newline[0]

    @property
    def vocab_size(self) -> int:
        return self.tok.get_vocab_size(with_added_tokens=True)

    @cached_property
    def hidden_ids(self) -> frozenset[int]:
        """Ids that are never text: special tokens, the mask, and ids the vocabulary skips."""
        added = {i for i, t in self.tok.get_added_tokens_decoder().items() if t.special}
        gaps = {i for i in range(self.vocab_size) if self.tok.id_to_token(i) is None}
        return frozenset(added | gaps | {self.mask_id})

    @cached_property
    def banned_ids(self) -> list[int]:
        """Never proposed in a hole: added and hidden ids that do not end it, and rows past the
        tokenizer."""
        banned = set(self.tok.get_added_tokens_decoder()) | self.hidden_ids
        return sorted(banned - set(self.end_ids)) + list(range(self.vocab_size, self.model_rows))

    @cached_property
    def line_end_ids(self) -> list[int]:
        """Tokens holding a newline (`\\n`, `):\\n`, `\\n    `): a single-line hole ends at any of them."""
        return [i for i, text in enumerate(self.token_texts) if "\n" in text]

    @cached_property
    def token_texts(self) -> list[str]:
        """The decoded text of every token id (hidden ids decode to "")."""
        texts = self.tok.decode_batch([[i] for i in range(self.vocab_size)], skip_special_tokens=False)
        return ["" if i in self.hidden_ids else text for i, text in enumerate(texts)]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids`, specials and rows past the tokenizer skipped."""
        kept = [i for i in ids if i < self.vocab_size and i not in self.hidden_ids]
        return self.tok.decode(kept, skip_special_tokens=False)

    def heal(self, prefix: str) -> Healed:
        """Tokenize `prefix` with the tail a typed character would join re-opened into the hole.

        The pre-tokenizer decides: the prefix is pre-tokenized with each of HEAL_PROBES appended,
        and a piece that spans the cursor is cut at its start (`self.val` + `x` is one Qwen piece
        `.valx`, so `.val` is re-opened; after `):\\n` a new piece starts, so nothing is). The hole's
        first token must then start with the re-opened text; if no token does, only the last token
        is re-opened."""
        if not prefix:
            return Healed([], "")
        cut = min(self._piece_start(prefix, probe) for probe in HEAL_PROBES)
        if cut == len(prefix):
            return Healed(self.encode(prefix), "")
        if self.tokens_starting_with(prefix[cut:]):
            return Healed(self.encode(prefix[:cut]), prefix[cut:])
        ids = self.encode(prefix)
        last = self.token_texts[ids[-1]]
        return Healed(ids[:-1], last) if last and prefix.endswith(last) else Healed(ids, "")

    def _piece_start(self, prefix: str, probe: str) -> int:
        """Where the pre-tokenizer piece that spans the end of `prefix` starts once `probe` is
        typed; len(prefix) when a piece ends there."""
        end = len(prefix)
        for _, (start, stop) in self.tok.pre_tokenizer.pre_tokenize_str(prefix + probe):
            if start < end < stop:
                return start
        return end
