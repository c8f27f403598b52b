"""Tokenizers of public diffusion checkpoints (Qwen2-style and LLaDA-style byte-level BPE).

`load_tokenizer(model_dir, config)` returns the tokenizer a model folder needs: the bundled
`CodeTokenizer` for our own checkpoints, else a `FamilyTokenizer` read from the files the family
publishes: `tokenizer.json`, or `vocab.json` + `merges.txt` (Dream's and DiffuCoder's folders,
whose tokenizer_config.json names `DreamTokenizer`) with the pre-tokenizer split of the family's
layout (Qwen2's for the Qwen2 and Qwen3 layouts, whatever the class name), or both, which must
then encode alike. Both answer `infill.tokenizer.ModelTokenizer`.

A family tokenizer takes its special ids from the folder, never from an assumption: config.json
first, then generation_config.json, then the token names of tokenizer_config.json /
special_tokens_map.json, then the family's token names (`ROLE_NAMES`); a role none fills is an
error naming the files. The begin token is laid only where the family's tokenizer adds it
(`add_bos_token`, else tokenizer.json's post-processor). Every added token other than an end is
banned from holes; special ones are dropped when decoding and never produced by encoding;
embedding rows beyond the tokenizer (Dream pads 151,667 tokens to 152,064 rows) are never
committed. Healing and the end of a line follow the model's own pre-tokenizer: the piece that a
typed character would join is re-opened into the hole, and a single-line hole ends at any token
that holds a newline (Qwen's `):\\n` is one token).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

from infill.checkpoint import is_own_config
from infill.families import Family, detect_family
from infill.folder_files import TOKENIZER_CAP_BYTES, is_present, optional_json, read_text, regular_size
from infill.model_shape import whole
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
# LLaDA's `<|startoftext|>` (id 126080) is laid where its tokenizer says it adds it (`adds_begin`),
# and taken as added only when neither tokenizer_config.json nor tokenizer.json says (unverified).
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
        regular_size(model_dir / "tokenizer.json", "the tokenizer", TOKENIZER_CAP_BYTES)
        return CodeTokenizer(model_dir / "tokenizer.json")
    family = detect_family(config)
    tok = read_vocabulary(model_dir, family)
    path = model_dir / "config.json"
    rows = whole(config, "embedding_size", path, 0) or whole(config, "vocab_size", path)
    tokens = tok.get_vocab_size(with_added_tokens=True)
    if tokens > rows:  # ids past the embedding would index outside it
        raise ValueError(f"{model_dir}: its tokenizer has {tokens:,} tokens but config.json gives the model "
                         f"{rows:,} embedding rows: the tokenizer is not the checkpoint's; download it again")
    return FamilyTokenizer(tok, special_ids(model_dir, config, tok, family), rows)


def family_split(layout: str) -> pre_tokenizers.PreTokenizer:
    """The pre-tokenizer of a family's byte-level BPE, from its layout: Qwen2's split for the Qwen2
    and Qwen3 layouts (Dream, DiffuCoder, Open-dCoder, CoDA; whatever class name their
    tokenizer_config.json gives), GPT-2's for LLaDA's (unverified: LLaDA ships a tokenizer.json,
    whose own pre-tokenizer is used)."""
    if layout in ("qwen2", "qwen3"):
        return pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)


def read_vocabulary(model_dir: Path, family: Family) -> Tokenizer:
    """The folder's tokenizer: `tokenizer.json`, or a byte-level BPE from `vocab.json` +
    `merges.txt` with the family's split and the added tokens of tokenizer_config.json and
    added_tokens.json. A folder with both must encode alike through both, or a ValueError names
    the files."""
    model_dir = Path(model_dir)
    fast, vocab, merges = model_dir / "tokenizer.json", model_dir / "vocab.json", model_dir / "merges.txt"
    has_fast, has_slow = is_present(fast), is_present(vocab) and is_present(merges)
    if not (has_fast or has_slow):
        raise ValueError(f"{model_dir} has no tokenizer.json and no vocab.json + merges.txt: "
                                "copy the checkpoint's tokenizer files beside its weights")
    slow = _from_vocab_and_merges(model_dir, family) if has_slow else None
    if not has_fast:
        return slow
    text = read_text(fast, "the tokenizer", TOKENIZER_CAP_BYTES)
    try:
        tok = Tokenizer.from_str(text)
    except Exception as exc:  # the tokenizers library raises its own exception types
        raise ValueError(f"{fast} cannot be read ({exc}): download it again") from None
    if slow is not None:
        _check_agreement(model_dir, tok, slow)
    return tok


# The classes whose slow tokenizer is a byte-level BPE over vocab.json + merges.txt. Another class
# may split or normalise otherwise: a folder without tokenizer.json that names one is refused.
BYTE_LEVEL_CLASSES = {"Qwen2Tokenizer", "Qwen2TokenizerFast", "DreamTokenizer", "GPT2Tokenizer",
                      "GPT2TokenizerFast", "PreTrainedTokenizerFast", "CodeGenTokenizer", "LLaDATokenizer"}
# Snippets that both readings of a folder with tokenizer.json and vocab.json + merges.txt must encode alike.
AGREEMENT_PROBES = ("def f(x):\n    return x + 12345\n", "  self.value = {'a': [1, 2]}  # café\r\n\tpass\n",
                    "class A(B):\n\n    async def run(self) -> None:\n        await self.go()\n")


def tokenizer_class(model_dir: Path) -> str | None:
    name = _read_json(Path(model_dir) / "tokenizer_config.json").get("tokenizer_class")
    return name if name is None else str(name)[:80]


def _from_vocab_and_merges(model_dir: Path, family: Family) -> Tokenizer:
    settings = _read_json(model_dir / "tokenizer_config.json")
    name = tokenizer_class(model_dir)
    if name is not None and name not in BYTE_LEVEL_CLASSES and not is_present(model_dir / "tokenizer.json"):
        raise ValueError(f"{model_dir / 'tokenizer_config.json'} names tokenizer_class {name!r}, not a byte-level "
                         f"BPE this loader reads from vocab.json + merges.txt (it reads {sorted(BYTE_LEVEL_CLASSES)}): "
                         "add the checkpoint's tokenizer.json, or fix tokenizer_class")
    for name in ("vocab.json", "merges.txt"):
        regular_size(model_dir / name, "the tokenizer's vocabulary", TOKENIZER_CAP_BYTES)
    try:
        tok = Tokenizer(models.BPE.from_file(str(model_dir / "vocab.json"), str(model_dir / "merges.txt")))
    except Exception as exc:  # the tokenizers library raises its own exception types
        raise ValueError(f"{model_dir}: vocab.json + merges.txt cannot be read ({exc}): download them again") from None
    tok.pre_tokenizer = family_split(family.layout)
    tok.decoder = decoders.ByteLevel()
    added = _added_tokens(model_dir, settings)
    for token_id, (text, special) in sorted(added.items()):
        token = AddedToken(text, special=special, normalized=False)
        tok.add_special_tokens([token]) if special else tok.add_tokens([token])
        if tok.token_to_id(text) != token_id:
            raise ValueError(f"{model_dir}: tokenizer_config.json / added_tokens.json give {text!r} id {token_id}, "
                             f"but vocab.json puts it at {tok.token_to_id(text)}: the tokenizer files disagree; "
                             "download them again")
    return tok


def _added_tokens(model_dir: Path, settings: dict) -> dict[int, tuple[str, bool]]:
    """id -> (text, special) from tokenizer_config.json's added_tokens_decoder and added_tokens.json,
    each entry's types checked."""
    decoder, listed = settings.get("added_tokens_decoder", {}), _read_json(model_dir / "added_tokens.json")
    entries = decoder.items() if isinstance(decoder, dict) else [(None, decoder)]
    added = {}
    for key, entry in entries:
        if not (isinstance(entry, dict) and isinstance(entry.get("content"), str) and str(key).isdigit()):
            raise ValueError(f"{model_dir / 'tokenizer_config.json'}: added_tokens_decoder holds {str(entry)[:60]}, "
                             "not an id and its {\"content\": ...}: the file is damaged; download it again")
        added[int(key)] = (entry["content"], bool(entry.get("special", True)))
    for text, token_id in listed.items():
        added.setdefault(whole(listed, text, model_dir / "added_tokens.json"), (text, True))
    return added


def _check_agreement(model_dir: Path, fast: Tokenizer, slow: Tokenizer) -> None:
    """tokenizer.json against vocab.json + merges.txt: the same size and the same ids for the probes."""
    differ = fast.get_vocab_size(with_added_tokens=True) != slow.get_vocab_size(with_added_tokens=True)
    probe = next((p for p in AGREEMENT_PROBES if fast.encode(p, add_special_tokens=False).ids
                  != slow.encode(p, add_special_tokens=False).ids), None)
    if differ or probe is not None:
        what = (f"{fast.get_vocab_size(with_added_tokens=True)} tokens against "
                f"{slow.get_vocab_size(with_added_tokens=True)}") if differ else f"they encode {probe!r} differently"
        raise ValueError(f"{model_dir}: tokenizer.json and vocab.json + merges.txt disagree ({what}): "
                         "delete the stale pair, or download the checkpoint's tokenizer files again")


# Token texts by role, per family, looked up by name where the config files give no id.
ROLE_NAMES = {
    "mask": {"dream": ("<|mask|>",), "open-dcoder": ("<|mask|>",), "coda": ("<|mask|>",),
             "llada": ("<|mdm_mask|>",)},
    "eos": {"dream": ("<|endoftext|>",), "open-dcoder": ("<|endoftext|>",), "coda": ("<|im_end|>",),
            "llada": ("<|endoftext|>", "<|eot_id|>")},
}


def special_ids(model_dir: Path, config: dict, tok: Tokenizer, family: Family) -> SpecialIds:
    """Mask, pad, ends and begin from the folder's files: config.json, generation_config.json,
    then the token names of tokenizer_config.json / special_tokens_map.json, then the family's
    token names; a role none of them fills is a ValueError that names the files."""
    generation = _read_json(model_dir / "generation_config.json")
    settings = {**_read_json(model_dir / "special_tokens_map.json"), **_read_json(model_dir / "tokenizer_config.json")}

    def ids_of(key: str, names: tuple[str, ...] = ()) -> list[int]:
        for source in (config, generation):
            if source.get(key) is not None:
                value = source[key]
                return _token_ids(value, key, model_dir)
        for text in (_token_text(settings.get(key.removesuffix("_id"))), *names):
            if text is not None and tok.token_to_id(text) is not None:
                return [tok.token_to_id(text)]
        return []

    masks = ids_of("mask_token_id", ROLE_NAMES["mask"][family.name])
    eos = ids_of("eos_token_id", ROLE_NAMES["eos"][family.name])
    for role, found in (("mask", masks), ("eos", eos)):
        if not found:
            raise ValueError(f"{model_dir}: no {role} token: config.json and generation_config.json give no "
                             f"{role}_token_id, and tokenizer_config.json names no {role}_token that the tokenizer "
                             f"has (nor {' or '.join(ROLE_NAMES[role][family.name])}); copy the checkpoint's "
                             "tokenizer_config.json, or set the id in config.json")
    mask = masks[0]
    pad = (ids_of("pad_token_id") or eos)[0]
    names = FAMILY_TOKENS[family.name]
    turns = [tok.token_to_id(t) for t in names.end_of_turn if tok.token_to_id(t) is not None]
    begin = None
    if adds_begin(model_dir, tok, settings, names):
        begin = (ids_of("bos_token_id") or [tok.token_to_id(names.begin or "")])[0]
        if begin is None:
            raise ValueError(f"{model_dir}: the tokenizer adds a begin token, but none is named "
                             "(no bos_token_id, no bos_token): copy the checkpoint's tokenizer_config.json")
    stated = [("mask_token_id", mask), ("pad_token_id", pad), ("bos_token_id", begin)]
    for name, token_id in stated + [("eos_token_id", i) for i in eos]:
        if token_id is not None and tok.id_to_token(token_id) is None:
            raise ValueError(f"{model_dir}: {name} {token_id} is not a token of its tokenizer "
                             f"({tok.get_vocab_size()} tokens); the config and tokenizer files disagree")
    return SpecialIds(mask=mask, pad=pad, ends=tuple(dict.fromkeys([pad, *eos, *turns])), begin=begin)


def _token_ids(value, key: str, model_dir: Path) -> list[int]:
    """A config's token id, or its list of them, each a whole number a tokenizer can hold."""
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31 for v in values):
        raise ValueError(f"{model_dir}: {key} is {str(value)[:40]}, not a token id: config.json or "
                         "generation_config.json is damaged; download it again")
    return values


def adds_begin(model_dir: Path, tok: Tokenizer, settings: dict, names: FamilyTokens) -> bool:
    """Whether the family's own tokenizer starts every text with a begin token: tokenizer_config.json's
    `add_bos_token` where it is stated, else whether tokenizer.json's post-processor adds a special
    token before a text, else the family's habit (LLaDA's `<|startoftext|>`, unverified)."""
    if "add_bos_token" in settings:
        return bool(settings["add_bos_token"])
    if is_present(model_dir / "tokenizer.json"):
        if tok.post_processor is None:
            return False
        encoding = tok.encode("x", add_special_tokens=True)
        return bool(encoding.special_tokens_mask) and encoding.special_tokens_mask[0] == 1
    return names.begin is not None


def _token_text(entry) -> str | None:
    """A tokenizer_config.json token entry: a string or {"content": ...}; None for anything else."""
    text = entry.get("content") if isinstance(entry, dict) else entry
    return text if isinstance(text, str) else None


def _read_json(path: Path) -> dict:
    """A tokenizer or generation setting file, {} when absent (`infill.folder_files.optional_json`)."""
    return optional_json(path, "the model's settings")


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
