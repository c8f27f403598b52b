"""Where a run of code occurs again: the token index that completion drafts are looked up in.

Text is cut into tokens that ignore horizontal space: a run of word bytes (letters, digits, `_`,
any non-ASCII byte), or one other byte (punctuation, and the line break, so that a key keeps the
shape of its lines). Each token is a 32-bit hash of its bytes; each run of `WINDOW_TOKENS` tokens
a 32-bit hash of theirs. A `Segment` is texts so cut: their UTF-8 bytes, the windows' hashes
sorted with the token each ends at, 16 bits of each window's hash in the tokens' order, and where
every 16th token starts (about 10 bytes a token). Building one is a few numpy passes over the
bytes (no Python loop per token), so that a file is re-indexed as it is edited.

`DraftCorpus` holds other texts (open documents, workspace files) by name, bounded in files and
bytes (`put` answers False past a cap and keeps what it had): each text put lately in a segment of
its own, the others joined in a few segments of growing size (`join_small`), so that a lookup is a
few binary searches however many files there are. `occurrences` finds where the last window of a
key occurs and how many tokens before it agree with the key (the matched key's real length, in
whole windows). One thread writes while completions read: a segment never changes once built, and
`excluding` gives a snapshot without one name. Pure data: no I/O, no torch.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

WINDOW_TOKENS = 3  # tokens hashed together: the shortest key an index lookup can find
ANCHOR_TOKENS = 16  # tokens between two remembered token starts
MAX_KEY_TOKENS = 64  # a key is extended backwards at most this far
MAX_OCCURRENCES = 128  # occurrences of one window kept per segment: those with the longest keys
CORPUS_MAX_FILES = 5000
LOOSE_SEGMENTS = 32  # single-text segments (texts put lately) before they are joined
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


def aligned_windows(tokens: np.ndarray) -> np.ndarray:
    """`window_hashes` indexed by each window's last token (the first `WINDOW_TOKENS - 1`
    tokens end no window: 0)."""
    windows = np.zeros(len(tokens), dtype=np.uint32)
    windows[WINDOW_TOKENS - 1:] = window_hashes(tokens)
    return windows


@dataclass(frozen=True, slots=True, eq=False)
class Segment:
    """Texts cut into tokens, one after the other. `sorted_windows` are the windows' hashes in
    order and `order` the token each ends at; `checks` the low 16 bits of the hash of the window
    ending at each token (to extend a key backwards); `anchors` the byte where every
    `ANCHOR_TOKENS`-th token of each text starts (a token's end is found by cutting the bytes
    from there). Text number f holds the bytes from `starts[f]`, the tokens from
    `first_tokens[f]` and the anchors from `first_anchors[f]` on (each array has one more entry:
    the totals)."""

    data: bytes
    sorted_windows: np.ndarray  # uint32 per token
    order: np.ndarray  # int32 per token
    checks: np.ndarray  # uint16 per token
    anchors: np.ndarray  # int32 byte offsets
    names: tuple[str, ...]
    sources: tuple[str, ...]
    starts: np.ndarray  # int64 per text
    first_tokens: np.ndarray  # int64 per text
    first_anchors: np.ndarray  # int64 per text

    @classmethod
    def of(cls, text: str, name: str = "", source: str = "") -> Segment:
        """One text's segment."""
        data = text.encode("utf-8", "surrogatepass")
        token_starts, token_ends = token_bounds(data)
        windows = aligned_windows(token_hashes(data, token_starts, token_ends))
        order = np.argsort(windows, kind="stable").astype(np.int32)
        anchors = token_starts[::ANCHOR_TOKENS].astype(np.int32)
        return cls(data, windows[order], order, (windows & np.uint32(0xFFFF)).astype(np.uint16), anchors,
                   (name,), (source,), np.array([0, len(data)]), np.array([0, len(windows)]),
                   np.array([0, len(anchors)]))

    @classmethod
    def joined(cls, parts: Sequence[Segment], live: Callable[[Segment, int], bool]) -> Segment:
        """The texts of `parts` for which `live(part, index)` holds, in one segment: the arrays
        are filtered and concatenated and the sorted runs merged (no text is cut again)."""
        kept = [(p, np.array([live(p, i) for i in range(len(p.names))], dtype=bool)) for p in parts]
        pieces = [p.kept(flags) for p, flags in kept]
        byte_offsets = np.cumsum([0] + [len(p.data) for p in pieces])
        token_offsets = np.cumsum([0] + [len(p.checks) for p in pieces])
        anchor_offsets = np.cumsum([0] + [len(p.anchors) for p in pieces])
        sorted_windows = np.concatenate([p.sorted_windows for p in pieces])
        merge = np.argsort(sorted_windows, kind="stable")  # sorted runs: a merge
        order = np.concatenate([p.order.astype(np.int64) + t for p, t in zip(pieces, token_offsets)])[merge]
        return cls(b"".join(p.data for p in pieces), sorted_windows[merge], order.astype(np.int32),
                   np.concatenate([p.checks for p in pieces]),
                   np.concatenate([p.anchors.astype(np.int64) + b for p, b in zip(pieces, byte_offsets)]
                                  ).astype(np.int32),
                   tuple(n for p in pieces for n in p.names), tuple(s for p in pieces for s in p.sources),
                   _joined_offsets([p.starts for p in pieces], byte_offsets),
                   _joined_offsets([p.first_tokens for p in pieces], token_offsets),
                   _joined_offsets([p.first_anchors for p in pieces], anchor_offsets))

    def kept(self, flags: np.ndarray) -> Segment:
        """This segment with only the texts whose `flags` are set (itself when all are)."""
        if flags.all():
            return self
        counts = np.diff(self.first_tokens)
        token_kept = np.repeat(flags, counts)
        renumbered = np.cumsum(token_kept) - 1
        in_order = token_kept[self.order]
        anchor_kept = np.repeat(flags, np.diff(self.first_anchors))
        removed_before = np.cumsum(np.where(flags, 0, np.diff(self.starts))) - np.where(flags, 0, np.diff(self.starts))
        anchors = self.anchors.astype(np.int64) - np.repeat(removed_before, np.diff(self.first_anchors))
        indexes = np.flatnonzero(flags)
        sizes = np.diff(self.starts)[indexes]
        return Segment(b"".join(self.data[int(self.starts[i]):int(self.starts[i + 1])] for i in indexes),
                       self.sorted_windows[in_order], renumbered[self.order[in_order]].astype(np.int32),
                       self.checks[token_kept], anchors[anchor_kept].astype(np.int32),
                       tuple(self.names[i] for i in indexes), tuple(self.sources[i] for i in indexes),
                       np.concatenate([[0], np.cumsum(sizes)]), np.concatenate([[0], np.cumsum(counts[indexes])]),
                       np.concatenate([[0], np.cumsum(np.diff(self.first_anchors)[indexes])]))

    @property
    def nbytes(self) -> int:
        """Bytes held: the text and its arrays."""
        arrays = (self.sorted_windows, self.order, self.checks, self.anchors)
        return len(self.data) + sum(a.nbytes for a in arrays)

    def text_bytes(self, index: int) -> bytes:
        return self.data[int(self.starts[index]):int(self.starts[index + 1])]

    def token_end(self, token: int, text: int) -> int:
        """The byte after token number `token` of text number `text`, cut again from its anchor."""
        local = token - int(self.first_tokens[text])
        anchor = int(self.first_anchors[text]) + local // ANCHOR_TOKENS
        low, high = int(self.anchors[anchor]), int(self.starts[text + 1])
        if anchor + 1 < int(self.first_anchors[text + 1]):
            high = int(self.anchors[anchor + 1])
        _, ends = token_bounds(self.data[low:high])
        return low + int(ends[local % ANCHOR_TOKENS])

    def matches(self, key_checks: np.ndarray, wanted: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(last token index, text number, key tokens matched) of the places where the key's
        last window (hash `wanted`) occurs, the matched length counted back while the windows
        agree, within the text; those with the longest keys, at most `MAX_OCCURRENCES`."""
        value = np.uint32(wanted)  # a Python int would cast the whole array to int64 first
        low = int(self.sorted_windows.searchsorted(value))
        if low == len(self.order) or self.sorted_windows[low] != value:
            return _NONE, _NONE, _NONE
        high = int(self.sorted_windows.searchsorted(value, side="right"))
        places = self.order[low:high].astype(np.int64)
        texts = np.searchsorted(self.first_tokens, places, side="right") - 1
        lengths = matched_lengths(self.checks, places, self.first_tokens[texts], key_checks)
        keep = np.argsort(-lengths, kind="stable")[:MAX_OCCURRENCES]
        return places[keep], texts[keep], lengths[keep]


def _joined_offsets(parts: Sequence[np.ndarray], offsets: np.ndarray) -> np.ndarray:
    """Per-text offsets of joined segments (each part's without its total), and the total."""
    return np.concatenate([part[:-1] + offset for part, offset in zip(parts, offsets)] + [offsets[-1:]]
                          ).astype(np.int64)


def last_window(key: np.ndarray) -> int | None:
    """The hash of the key's last `WINDOW_TOKENS` tokens; None for a key shorter than that."""
    return int(window_hashes(key[-WINDOW_TOKENS:])[0]) if len(key) >= WINDOW_TOKENS else None


def matched_lengths(checks: np.ndarray, places: np.ndarray, firsts: np.ndarray, key_checks: np.ndarray) -> np.ndarray:
    """How many of the key's last tokens agree with those ending at each of `places`, counted by
    whole windows whose checks agree (a window past the text's first token, `firsts`, does not)."""
    matched = np.zeros(len(places), dtype=np.int64)
    alive = np.arange(len(places))  # the places whose windows agreed so far
    last = len(key_checks) - 1
    for back in range(min(last - WINDOW_TOKENS + 2, MAX_KEY_TOKENS)):
        at = places[alive] - back
        inside = at - (WINDOW_TOKENS - 1) >= firsts[alive]
        agree = inside & (checks[np.where(inside, at, 0)] == key_checks[last - back])
        alive = alive[agree]
        if not len(alive):
            break
        matched[alive] += 1
    return np.where(matched > 0, matched + WINDOW_TOKENS - 1, 0)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A place a key occurs in a named text: the byte offset right after the matched key."""

    name: str
    source: str  # what the text is: "open", "workspace", ...
    segment: Segment
    end: int
    key_tokens: int
    start: int  # the text's bytes in the segment
    stop: int

    def after(self, limit: int) -> bytes:
        """At most `limit` bytes of the text after the key."""
        return self.segment.data[self.end:min(self.stop, self.end + limit)]

    def before(self, limit: int) -> bytes:
        """At most `limit` bytes of the text before the key's end."""
        return self.segment.data[max(self.start, self.end - limit):self.end]


def segment_occurrences(segment: Segment, key: np.ndarray, wanted: int) -> Iterator[Occurrence]:
    """Where the key, whose last window's hash is `wanted`, occurs in `segment`'s texts."""
    key_checks = (aligned_windows(key) & np.uint32(0xFFFF)).astype(np.uint16)
    places, texts, lengths = segment.matches(key_checks, wanted)
    for place, text, length in zip(places.tolist(), texts.tolist(), lengths.tolist()):
        yield Occurrence(segment.names[text], segment.sources[text], segment, segment.token_end(place, text),
                         length, int(segment.starts[text]), int(segment.starts[text + 1]))


class DraftCorpus:
    """Named texts, bounded in files and bytes. Each text put is a segment of its own at first;
    once there are more than `LOOSE_SEGMENTS` of those they are joined into one, and a joined
    segment at least half as large as the one before it joins that one (texts since replaced or
    removed are left out), so that a lookup searches a few segments however many files there
    are, and each byte is joined a few times. `_owner` names the segment holding each text's
    current version: an occurrence elsewhere is an old version's, skipped. One thread writes;
    readers may read meanwhile (a text being replaced may be missed once)."""

    def __init__(self, max_files: int = CORPUS_MAX_FILES, max_bytes: int = CORPUS_MAX_BYTES) -> None:
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._segments: tuple[Segment, ...] = ()  # oldest first; replaced whole, never changed
        self._owner: dict[str, tuple[Segment, int]] = {}  # name -> (segment, text number)
        self._text_bytes = 0

    def __len__(self) -> int:
        return len(self._owner)

    def __contains__(self, name: str) -> bool:
        return name in self._owner

    @property
    def names(self) -> list[str]:
        return list(self._owner)

    @property
    def text_bytes(self) -> int:
        """Bytes of text held (the caps count these)."""
        return self._text_bytes

    @property
    def nbytes(self) -> int:
        """Bytes held by the segments: text and index arrays, old versions not yet left out too."""
        return sum(segment.nbytes for segment in self._segments)

    def held(self, name: str) -> tuple[str, str] | None:
        """(text, source) of `name` as indexed, or None."""
        owner = self._owner.get(name)
        if owner is None:
            return None
        segment, index = owner
        return segment.text_bytes(index).decode("utf-8", "surrogatepass"), segment.sources[index]

    def fits(self, name: str, size: int) -> bool:
        """Whether a text of `size` bytes named `name` stays within the caps."""
        old = self._owner.get(name)
        files = len(self._owner) + (old is None)
        old_size = 0 if old is None else len(old[0].text_bytes(old[1]))
        return files <= self.max_files and self._text_bytes - old_size + size <= self.max_bytes

    def put(self, name: str, text: str, source: str = "workspace") -> bool:
        """Index `text` as `name`'s (replacing what it had); False, changing nothing, past a cap."""
        segment = Segment.of(text, name, source)
        if not self.fits(name, len(segment.data)):
            return False
        self.remove(name)
        self._text_bytes += len(segment.data)
        self._segments = (*self._segments, segment)
        self._owner[name] = (segment, 0)
        self.join_small()
        return True

    def remove(self, name: str) -> None:
        old = self._owner.pop(name, None)
        if old is not None:
            self._text_bytes -= len(old[0].text_bytes(old[1]))

    def live(self, segment: Segment, index: int) -> bool:
        """Whether text number `index` of `segment` is its name's current version."""
        owner = self._owner.get(segment.names[index])
        return owner is not None and owner[0] is segment and owner[1] == index

    def join_small(self) -> None:
        """Join the single-text segments once they are many, then each joined segment at least
        half as large as the one before it into that one."""
        segments = list(self._segments)
        single = [s for s in segments if len(s.names) == 1]
        if len(single) <= LOOSE_SEGMENTS:
            return
        segments = [s for s in segments if len(s.names) > 1] + [self._joined(single)]
        while len(segments) > 1 and 2 * len(segments[-1].data) >= len(segments[-2].data):
            segments[-2:] = [self._joined(segments[-2:])]
        self._segments = tuple(segments)

    def join_all(self) -> None:
        """One segment of every current text."""
        self._segments = (self._joined(list(self._segments)),) if self._segments else ()

    def _joined(self, parts: Sequence[Segment]) -> Segment:
        """`parts`' current texts joined, their names now owned by the joined segment."""
        joined = Segment.joined(parts, self.live)
        for index, name in enumerate(joined.names):
            self._owner[name] = (joined, index)
        return joined

    def excluding(self, name: str) -> DraftCorpus:
        """A snapshot of this corpus without `name` (the text a completion reads itself)."""
        snapshot = DraftCorpus(self.max_files, self.max_bytes)
        snapshot._segments = self._segments
        snapshot._owner = self._owner.copy()
        snapshot._text_bytes = self._text_bytes
        snapshot.remove(name)
        return snapshot

    def occurrences(self, key: np.ndarray) -> Iterator[Occurrence]:
        """Where the key (token hashes, see `key_tokens`) occurs in every current text."""
        wanted = last_window(key)
        if wanted is None:
            return
        owner = self._owner
        for segment in self._segments:
            for occurrence in segment_occurrences(segment, key, wanted):
                held = owner.get(occurrence.name)
                if held is not None and held[0] is segment:
                    yield occurrence


def key_tokens(data: bytes) -> np.ndarray:
    """The token hashes of a key's bytes, as `Segment.matches` wants them."""
    starts, ends = token_bounds(data)
    return token_hashes(data, starts, ends)
