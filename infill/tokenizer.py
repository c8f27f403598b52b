"""The code tokenizer: byte-level BPE with code-aware pre-tokenization and the canvas's special tokens.

Pre-tokenization keeps the places where a cursor usually stands on token boundaries: a newline is
always its own token, and a run of two or more spaces (indentation) never merges with the word after
it. Inside a word the cursor can still split a token; `heal` handles that by re-opening the last
prefix token into the hole (token healing).
"""
from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

MASK, PAD, END, FILE, SNIPPET, EDIT, BEFORE, AFTER = (
    "<|mask|>", "<|pad|>", "<|end|>", "<|file|>", "<|snippet|>", "<|edit|>", "<|before|>", "<|after|>",
)
SPECIAL_TOKENS = [MASK, PAD, END, FILE, SNIPPET, EDIT, BEFORE, AFTER]  # ids 0..7 in this order

# newline | indentation or alignment runs | a word, number or punctuation run with at most one leading space
PIECE_PATTERN = r"\n|[ \t]{2,}|\t| ?[A-Za-z_][A-Za-z_0-9]*| ?[0-9]+| ?[^\sA-Za-z_0-9]+|\s"
LINE_CACHE = 1 << 14  # lines whose ids `CodeTokenizer.encode` keeps across calls


def _pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PIECE_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])


def train_tokenizer(texts: Iterable[str], vocab_size: int, path: Path) -> "CodeTokenizer":
    """Train the BPE on `texts` and save it as tokenizer.json at `path`."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = _pre_tokenizer()
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=2,
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    return CodeTokenizer(path)


@dataclass(frozen=True, slots=True)
class Healed:
    """A prefix with its last token re-opened: the hole's first token must start with `text`."""
    ids: list[int]
    text: str


class ModelTokenizer(Protocol):
    """What the canvas, the hole rules and the runner ask of a model's tokenizer: the bundled
    `CodeTokenizer` and a public family's `infill.family_tokens.FamilyTokenizer` both answer it."""

    mask_id: int
    pad_id: int
    newline_id: int
    snippet_id: int | None  # None: the model was not trained with snippets
    edit_ids: tuple[int, int, int] | None  # <|edit|>, <|before|>, <|after|>; None: no edit canvas
    head_ids: list[int]  # what a canvas starts with (the bundled file token, a family's begin token, or nothing)
    end_ids: list[int]  # tokens that end a hole: pad first, then eos and end-of-turn
    line_end_ids: list[int]  # tokens that hold a newline: a single-line hole ends at any of them
    banned_ids: list[int]  # never in a hole: specials that are not ends, and rows beyond the vocabulary
    blank_ids: list[int]
    token_texts: list[str]

    @property
    def vocab_size(self) -> int: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Iterable[int]) -> str: ...

    def heal(self, prefix: str) -> Healed: ...

    def tokens_starting_with(self, text: str) -> list[int]: ...


class TokenTable:
    """Lookups over the decoded text of every token, shared by both tokenizers; a subclass sets
    `self.tok` (a `tokenizers.Tokenizer`) and `token_texts`."""

    tok: Tokenizer

    @property
    def vocab_size(self) -> int:
        return self.tok.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch(texts, add_special_tokens=False)]

    def tokens_starting_with(self, text: str) -> list[int]:
        """Ids whose text starts with `text` (the allowed first tokens after healing), ascending.

        Two binary searches in the texts sorted once: every healed request asks, and a scan of
        the vocabulary cost about 1 ms each time."""
        texts, ids = self._by_text
        lo = bisect.bisect_left(texts, text)
        hi = bisect.bisect_left(texts, text + "\U0010ffff", lo)
        return sorted(ids[lo:hi])

    @cached_property
    def _by_text(self) -> tuple[list[str], list[int]]:
        """The non-empty token texts in sorted order, and their ids."""
        pairs = sorted((t, i) for i, t in enumerate(self.token_texts) if t)
        return [t for t, _ in pairs], [i for _, i in pairs]

    @cached_property
    def blank_ids(self) -> list[int]:
        """Ids of tokens that are only whitespace (newlines and indentation included)."""
        return [i for i, t in enumerate(self.token_texts) if t and t.isspace()]


class CodeTokenizer(TokenTable):
    """The bundled model's tokenizer: its own special tokens at ids 0..7, a `<|file|>` token first
    in every canvas, pad the only end of a hole and the newline token the only end of a line."""

    def __init__(self, path: Path):
        self.tok = Tokenizer.from_file(str(path))
        self.mask_id, self.pad_id, self.end_id, self.file_id = (self.tok.token_to_id(t) for t in SPECIAL_TOKENS[:4])
        self.snippet_id = self.tok.token_to_id(SNIPPET)
        self.edit_ids = tuple(self.tok.token_to_id(t) for t in (EDIT, BEFORE, AFTER))
        self.newline_id = self.tok.token_to_id(self._byte_level("\n"))
        assert self.mask_id == 0 and self.pad_id == 1, "special tokens must come first in the vocabulary"
        self.head_ids = [self.file_id]
        self.end_ids = [self.pad_id]
        self.line_end_ids = [self.newline_id]  # the pre-tokenizer keeps a newline a token of its own
        self.banned_ids = [i for i in (self.tok.token_to_id(t) for t in SPECIAL_TOKENS) if i != self.pad_id]
        self._line_ids: dict[str, list[int]] = {}  # a line's text -> its ids (`encode`), at most LINE_CACHE

    def encode(self, text: str) -> list[int]:
        """The ids of `text`, line by line: a newline is a piece of its own (`PIECE_PATTERN`), so no
        token spans one and a line tokenizes alike wherever it stands. Each line's ids are kept (at
        most LINE_CACHE lines', all forgotten when more would be), so that the next keystroke
        tokenizes the line it changed, not the whole context again."""
        lines = text.split("\n")
        known = self._line_ids
        missing = [line for line in dict.fromkeys(lines) if line and line not in known]
        if len(known) + len(missing) > LINE_CACHE:
            known.clear()
            missing = [line for line in dict.fromkeys(lines) if line]
        if missing:  # one call: split at the newlines put between them
            joined = self.tok.encode("\n".join(missing), add_special_tokens=False).ids
            starts = [0] + [i + 1 for i, token in enumerate(joined) if token == self.newline_id]
            ends = [start - 1 for start in starts[1:]] + [len(joined)]
            known.update(zip(missing, (joined[a:b] for a, b in zip(starts, ends))))
        ids: list[int] = []
        for i, line in enumerate(lines):
            if i:
                ids.append(self.newline_id)
            if line:
                ids += known[line]
        return ids

    @staticmethod
    def _byte_level(text: str) -> str:
        pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
        return "".join(t for t, _ in pre.pre_tokenize_str(text))

    def decode(self, ids: Iterable[int]) -> str:
        return self.tok.decode([i for i in ids if i >= len(SPECIAL_TOKENS)], skip_special_tokens=False)

    def heal(self, prefix: str) -> Healed:
        """Tokenize `prefix` with its last pre-tokenizer piece re-opened into the hole.

        A newline or an indentation run always ends a piece, so the model saw it end a token in
        training and it stays. Anything else (a word cut mid-way, a lone trailing space) may be the
        start of a longer token: it is removed, and the hole's first token must start with it. If
        no token starts with the whole piece, only the last token is re-opened.
        """
        if not prefix:
            return Healed([], "")
        line = prefix.rfind("\n") + 1  # a newline is a piece of its own: the last piece, or one before the last line's
        if line == len(prefix):
            return Healed(self.encode(prefix), "")
        pieces = self.tok.pre_tokenizer.pre_tokenize_str(prefix[line:])
        start, end = (line + offset for offset in pieces[-1][1])
        piece = prefix[start:end]
        if piece.isspace() and len(piece) >= 2:
            return Healed(self.encode(prefix), "")
        if self.tokens_starting_with(piece):
            return Healed(self.encode(prefix[:start]), piece)
        ids = self.encode(prefix)
        return Healed(ids[:-1], self.token_texts[ids[-1]])

    @cached_property
    def token_texts(self) -> list[str]:
        """The decoded text of every token id (specials decode to "")."""
        return [self.decode([i]) for i in range(self.vocab_size)]
