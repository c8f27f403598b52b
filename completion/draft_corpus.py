"""Where a run of code occurs again: the token index that completion drafts are looked up in.

Text is cut into tokens that ignore horizontal space: a run of word bytes (letters, digits, `_`,
any non-ASCII byte), or one other byte (punctuation, and the line break, so that a key keeps the
shape of its lines). Each token is a 32-bit hash of its bytes; each run of `WINDOW_TOKENS`
tokens a 32-bit hash of theirs. A `Segment` is one text so cut: its UTF-8 bytes, its tokens'
hashes and ends, and its windows' hashes sorted for a binary search. Building one is a few numpy
passes over the bytes (no Python loop per token), so that a file is re-indexed as it is edited.

`DraftCorpus` holds the segments of other texts (open documents, workspace files) by name,
bounded in files and bytes (`put` answers False past a cap and keeps what it had). `occurrences`
finds where the last window of a key occurs and how many tokens before it agree with the key (the
matched key's real length). A corpus is read by a completion while a thread replaces segments:
a segment never changes once built, and `excluding` gives a snapshot without one name.
Pure data: no I/O, no torch.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

WINDOW_TOKENS = 3  # tokens hashed together: the shortest key an index lookup can find
MAX_KEY_TOKENS = 64  # a key is extended backwards at most this far
MAX_OCCURRENCES = 64  # occurrences of one window kept per segment: those with the longest keys
CORPUS_MAX_FILES = 5000
CORPUS_MAX_BYTES = 64 * 1024 * 1024

_P = np.uint64(0x100000001B3)  # odd, so invertible modulo 2**64
_P_INVERSE = np.uint64(pow(int(_P), -1, 2**64))
_Q = np.uint64(0x9E3779B97F4A7C15)
_NONE = np.zeros(0, dtype=np.int64)
_WORD = np.zeros(256, dtype=bool)
for _byte in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_":
    _WORD[_byte] = True
_WORD[128:] = True
_BLANK = np.zeros(256, dtype=bool)
for _byte in b" \t\r\f\v":
    _BLANK[_byte] = True


def token_bounds(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the tokens of `data`, byte offsets, int64 arrays of one length."""
    codes = np.frombuffer(data, dtype=np.uint8)
    word, blank = _WORD[codes], _BLANK[codes]
    joined_before = np.zeros(len(codes), dtype=bool)
    joined_before[1:] = word[1:] & word[:-1]
    joined_after = np.zeros(len(codes), dtype=bool)
    joined_after[:-1] = joined_before[1:]
    return np.flatnonzero(~blank & ~joined_before), np.flatnonzero(~blank & ~joined_after) + 1


def token_hashes(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A uint32 hash of each token's bytes (polynomial prefix hashes, wrapping modulo 2**64)."""
    codes = np.frombuffer(data, dtype=np.uint8).astype(np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        powers = np.ones(len(codes) + 1, dtype=np.uint64)
        powers[1:] = _P
        powers = np.cumprod(powers, dtype=np.uint64)
        inverse = np.ones(len(codes) + 1, dtype=np.uint64)
        inverse[1:] = _P_INVERSE
        inverse = np.cumprod(inverse, dtype=np.uint64)
        prefix = np.zeros(len(codes) + 1, dtype=np.uint64)
        np.cumsum(codes * powers[:-1], dtype=np.uint64, out=prefix[1:])
        full = (prefix[ends] - prefix[starts]) * inverse[starts]
        full = full * _Q + (ends - starts).astype(np.uint64)
    return (full >> np.uint64(32)).astype(np.uint32)


def window_hashes(tokens: np.ndarray) -> np.ndarray:
    """A uint32 hash of each run of `WINDOW_TOKENS` tokens, indexed by its last token minus
    `WINDOW_TOKENS - 1` (empty when there are fewer tokens)."""
    count = len(tokens) - WINDOW_TOKENS + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint32)
    wide = tokens.astype(np.uint64)
    combined = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(WINDOW_TOKENS):
            combined = combined * _Q + wide[offset:offset + count]
    return (combined >> np.uint64(16)).astype(np.uint32)


@dataclass(frozen=True, slots=True, eq=False)
class Segment:
    """One text's bytes and tokens; `window_order[i]` is the last token of the window whose hash
    is `sorted_windows[i]`."""

    data: bytes
    tokens: np.ndarray  # uint32 hash per token
    ends: np.ndarray  # int32 byte offset after each token
    sorted_windows: np.ndarray  # uint32
    window_order: np.ndarray  # int32 token index

    @classmethod
    def of(cls, text: str) -> Segment:
        data = text.encode("utf-8", "surrogatepass")
        starts, ends = token_bounds(data)
        tokens = token_hashes(data, starts, ends)
        windows = window_hashes(tokens)
        order = np.argsort(windows, kind="stable").astype(np.int32)
        return cls(data, tokens, ends.astype(np.int32), windows[order],
                   order + np.int32(WINDOW_TOKENS - 1))

    @property
    def nbytes(self) -> int:
        """Bytes held: the text and its arrays."""
        arrays = (self.tokens, self.ends, self.sorted_windows, self.window_order)
        return len(self.data) + sum(a.nbytes for a in arrays)

    def matches(self, key: np.ndarray, wanted: int) -> tuple[np.ndarray, np.ndarray]:
        """(last token index, key tokens matched) of each place the key's last window (whose
        hash is `wanted`, see `last_window`) occurs: the matched length counts back from the
        key's last token while the tokens agree. Those with the longest keys, at most
        `MAX_OCCURRENCES`."""
        windows = self.sorted_windows
        low = int(windows.searchsorted(wanted))
        if low == len(windows) or windows[low] != wanted:
            return _NONE, _NONE
        high = int(windows.searchsorted(wanted, side="right"))
        places = self.window_order[low:high].astype(np.int64)
        lengths = matched_lengths(self.tokens, places, key)
        if len(places) > MAX_OCCURRENCES:
            longest = np.argsort(-lengths, kind="stable")[:MAX_OCCURRENCES]
            places, lengths = places[longest], lengths[longest]
        return places, lengths


def last_window(key: np.ndarray) -> int | None:
    """The hash of the key's last `WINDOW_TOKENS` tokens; None for a key shorter than that."""
    return int(window_hashes(key[-WINDOW_TOKENS:])[0]) if len(key) >= WINDOW_TOKENS else None


def matched_lengths(tokens: np.ndarray, places: np.ndarray, key: np.ndarray) -> np.ndarray:
    """How many of `key`'s last tokens agree with those ending at each of `places`."""
    lengths = np.zeros(len(places), dtype=np.int64)
    alive = np.ones(len(places), dtype=bool)
    for back in range(min(len(key), MAX_KEY_TOKENS)):
        at = places - back
        agree = alive & (at >= 0)
        agree[agree] = tokens[at[agree]] == key[len(key) - 1 - back]
        lengths += agree
        alive = agree
        if not alive.any():
            break
    return lengths


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A place a key occurs in a named text: the byte offset right after the matched key."""

    name: str
    source: str  # what the text is: "open", "workspace", ...
    segment: Segment
    end: int
    key_tokens: int


class DraftCorpus:
    """Segments of named texts, bounded in files and bytes; safe to read while one thread writes."""

    def __init__(self, max_files: int = CORPUS_MAX_FILES, max_bytes: int = CORPUS_MAX_BYTES) -> None:
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._segments: dict[str, tuple[Segment, str]] = {}  # name -> (segment, source)
        self._text_bytes = 0

    def __len__(self) -> int:
        return len(self._segments)

    def __contains__(self, name: str) -> bool:
        return name in self._segments

    @property
    def text_bytes(self) -> int:
        """Bytes of text held (the caps count these)."""
        return self._text_bytes

    @property
    def nbytes(self) -> int:
        """Bytes held by the segments: text and index arrays."""
        return sum(segment.nbytes for segment, _ in list(self._segments.values()))

    def fits(self, name: str, size: int) -> bool:
        """Whether a text of `size` bytes named `name` stays within the caps."""
        old = self._segments.get(name)
        files = len(self._segments) + (old is None)
        total = self._text_bytes - (0 if old is None else len(old[0].data)) + size
        return files <= self.max_files and total <= self.max_bytes

    def put(self, name: str, text: str, source: str = "workspace") -> bool:
        """Index `text` as `name`'s (replacing what it had); False, changing nothing, past a cap."""
        segment = Segment.of(text)
        if not self.fits(name, len(segment.data)):
            return False
        old = self._segments.get(name)
        self._segments[name] = (segment, source)
        self._text_bytes += len(segment.data) - (0 if old is None else len(old[0].data))
        return True

    def remove(self, name: str) -> None:
        old = self._segments.pop(name, None)
        if old is not None:
            self._text_bytes -= len(old[0].data)

    def excluding(self, name: str) -> DraftCorpus:
        """A snapshot of this corpus without `name` (the text a completion reads itself)."""
        snapshot = DraftCorpus(self.max_files, self.max_bytes)
        snapshot._segments = self._segments.copy()
        snapshot._segments.pop(name, None)
        snapshot._text_bytes = sum(len(s.data) for s, _ in snapshot._segments.values())
        return snapshot

    def occurrences(self, key: np.ndarray) -> Iterator[Occurrence]:
        """Where the key (token hashes, see `key_tokens`) occurs in every segment."""
        wanted = last_window(key)
        if wanted is None:
            return
        for name, (segment, source) in list(self._segments.items()):
            yield from segment_occurrences(name, source, segment, key, wanted)


def segment_occurrences(name: str, source: str, segment: Segment, key: np.ndarray,
                        wanted: int) -> Iterator[Occurrence]:
    """Where the key, whose last window's hash is `wanted`, occurs in one segment."""
    places, lengths = segment.matches(key, wanted)
    for place, length in zip(places.tolist(), lengths.tolist()):
        yield Occurrence(name, source, segment, int(segment.ends[place]), length)


def key_tokens(data: bytes) -> np.ndarray:
    """The token hashes of a key's bytes, as `Segment.matches` wants them."""
    starts, ends = token_bounds(data)
    return token_hashes(data, starts, ends)
