"""A compact cl100k_base token counter: the same counts as tiktoken's encode_ordinary in ~3 MB instead of ~45.

tiktoken holds the 100k-entry rank table twice (a Python dict and the Rust encoder and decoder maps, plus the
sorted token list), ~36 MB once loaded, plus ~8 MB of imports. Counting needs neither decoding nor token ids:
only the pre-tokenising pattern and, for a piece that is not itself a token, the byte-pair merges. Here the
table is one bytes blob of every token in rank order, their offsets, and an open-addressing index keyed by
CRC-32 (each hit is confirmed by comparing the bytes, so a hash collision can never change a count); the
pattern is compiled with the standard `re`, with its Unicode classes written out. The table is built once from
the verified rank file and cached as a marshal file beside tiktoken's."""
from __future__ import annotations

import heapq
import marshal
import re
from pathlib import Path
from typing import Any
from zlib import crc32

__all__ = ["Cl100kCounter", "build_table", "FORMAT"]

FORMAT = 1
_EMPTY = 0xFFFFFFFF
_LONG_PIECE = 64  # bytes: longer pieces are merged with a heap (_merged_long)
_PIECES_HELD = 8192  # distinct pieces whose counts are remembered (~1 MB at most); then forgotten at once
# Unicode White_Space (what `\s` means in tiktoken's Rust pattern; Python's `\s` also takes U+001C..U+001F)
_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def _class(ranges: str, astral: bool) -> str:
    """The BMP (or the astral) part of a class given as comma-separated hex ranges, as a class body."""
    out = []
    for item in ranges.split(","):
        lo, _, hi = item.partition("-")
        a, b = int(lo, 16), int(hi or lo, 16)
        a, b = (max(a, 0x10000), b) if astral else (a, min(b, 0xFFFF))
        if a <= b:
            out.append(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}")
    return "".join(out)


_ASTRAL = "\\U00010000-\\U0010ffff"


def _pattern() -> re.Pattern[str]:
    """tiktoken's cl100k pattern for `re`, with \\p{L} and \\p{N} as tiktoken's Rust regex has them
    (engine/cl100k_classes.py) and `\\s` as Unicode White_Space. `re` looks a character up in a class in one
    step only when the class holds no astral code point, so each class is split in two and its astral half is
    tried only for an astral character (the pattern runs ~2x faster than with the classes whole)."""
    from a0nb.engine.cl100k_classes import LETTERS, NUMBERS
    lb, la, nb, na = (_class(LETTERS, False), _class(LETTERS, True), _class(NUMBERS, False), _class(NUMBERS, True))
    s, a = _SPACE, _ASTRAL
    letter = f"(?:[{lb}]|(?=[{a}])[{la}])"
    number = f"(?:[{nb}]|(?=[{a}])[{na}])"
    not_crlf_letter_number = f"(?:(?![{a}])[^\\r\\n{lb}{nb}]|(?![{la}{na}])[{a}])"
    other = f"(?:(?![{a}])[^{s}{lb}{nb}]|(?![{la}{na}])[{a}])"
    return re.compile(
        f"'(?i:[sdmt]|ll|ve|re)|{not_crlf_letter_number}?+{letter}++|{number}{{1,3}}+| ?{other}++[\\r\\n]*+"
        f"|[{s}]++\\Z|[{s}]*[\\r\\n]|[{s}]+(?![^{s}])|[{s}]")


# The same pattern for ASCII text (str.isascii() is O(1)), where the classes are exact in a few ranges: ~7x faster
_A_SPACE = "\t\n\x0b\x0c\r "
_ASCII_PATTERN = re.compile(
    rf"'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{{1,3}}+| ?[^{_A_SPACE}A-Za-z0-9]++[\r\n]*+"
    rf"|[{_A_SPACE}]++\Z|[{_A_SPACE}]*[\r\n]|[{_A_SPACE}]+(?![^{_A_SPACE}])|[{_A_SPACE}]")


def build_table(rank_file: bytes) -> dict[str, Any]:
    """The marshal-able table from tiktoken's cl100k_base rank file (base64 token, space, rank per line)."""
    import array
    import base64
    tokens: list[bytes] = []
    for line in rank_file.splitlines():
        if line:
            token, number = line.split()
            if int(number) != len(tokens):
                raise ValueError("cl100k ranks are not 0..n-1 in order")
            tokens.append(base64.b64decode(token))
    size = 1 << (len(tokens) * 2).bit_length()  # load factor below one half
    index = [_EMPTY] * size
    mask = size - 1
    for rank, data in enumerate(tokens):
        slot = crc32(data) & mask
        while index[slot] != _EMPTY:
            slot = (slot + 1) & mask
        index[slot] = rank
    offsets = [0]
    for token in tokens:
        offsets.append(offsets[-1] + len(token))
    return {"format": FORMAT, "blob": b"".join(tokens), "offsets": array.array("I", offsets).tobytes(),
            "index": array.array("I", index).tobytes()}


class Cl100kCounter:
    """`count(text)` == len(tiktoken cl100k_base encode_ordinary(text)), from a `build_table` table."""

    def __init__(self, table: dict[str, Any]) -> None:
        if table.get("format") != FORMAT:
            raise ValueError("not a cl100k counting table of this version")
        self._blob: bytes = table["blob"]
        self._offsets = memoryview(table["offsets"]).cast("I")
        self._index = memoryview(table["index"]).cast("I")
        self._mask = len(self._index) - 1
        if len(self._index) & self._mask or self._offsets[-1] != len(self._blob):
            raise ValueError("a damaged cl100k counting table")
        self._split = _pattern().findall
        self._split_ascii = _ASCII_PATTERN.findall
        self._pieces: dict[str, int] = {}  # piece -> its token count (most text repeats its words)

    @classmethod
    def load(cls, path: Path) -> "Cl100kCounter":
        return cls(marshal.loads(path.read_bytes()))

    def rank(self, piece: bytes) -> int | None:
        """The piece's token id if the piece is one token, else None."""
        index, offsets, blob, mask = self._index, self._offsets, self._blob, self._mask
        slot = crc32(piece) & mask
        while True:
            rank = index[slot]
            if rank == _EMPTY:
                return None
            if blob[offsets[rank]:offsets[rank + 1]] == piece:
                return rank
            slot = (slot + 1) & mask

    def _merged(self, piece: bytes) -> int:
        """How many tokens byte-pair merging leaves of a piece that is not one token."""
        if len(piece) > _LONG_PIECE:
            return self._merged_long(piece)
        rank = self.rank
        bounds = list(range(len(piece) + 1))
        big = 1 << 40
        pairs = [rank(piece[bounds[i]:bounds[i + 2]]) for i in range(len(bounds) - 2)]
        ranked = [big if r is None else r for r in pairs]
        while ranked:
            low = min(ranked)
            if low == big:
                break
            i = ranked.index(low)  # the leftmost pair of the lowest rank
            del bounds[i + 1]
            del ranked[i]
            if i < len(ranked):
                r = rank(piece[bounds[i]:bounds[i + 2]]) if i + 2 < len(bounds) else None
                ranked[i] = big if r is None else r
            if i > 0:
                r = rank(piece[bounds[i - 1]:bounds[i + 1]])
                ranked[i - 1] = big if r is None else r
        return len(bounds) - 1

    def _merged_long(self, piece: bytes) -> int:
        """`_merged` for a long piece in O(n log n): the same merges in the same order (lowest rank first, the
        leftmost of equal ranks), taken from a heap of (rank, start) instead of a scan of every pair per merge.
        A model reply of 200,000 repeated braces is one piece; the scan would take minutes."""
        rank, n = self.rank, len(piece)
        following = list(range(1, n + 1))  # start of a part -> start of the part after it (n: none)
        before = list(range(-1, n - 1))    # start of a part -> start of the part before it (-1: none)
        version = [0] * n                  # bumped when the pair starting at this part changes
        heap = [(r, i, 0) for i in range(n - 1) if (r := rank(piece[i:i + 2])) is not None]
        heapq.heapify(heap)
        parts = n
        while heap:
            _r, i, seen = heapq.heappop(heap)
            if seen != version[i]:
                continue  # this pair was changed by a merge since it was queued
            j = following[i]
            k = following[j]
            following[i] = k  # the part at i takes in the part at j
            version[j] = -1
            if k < n:
                before[k] = i
            parts -= 1
            version[i] += 1
            if k < n and (r := rank(piece[i:following[k]])) is not None:
                heapq.heappush(heap, (r, i, version[i]))
            h = before[i]
            if h >= 0:
                version[h] += 1
                if (r := rank(piece[h:k])) is not None:
                    heapq.heappush(heap, (r, h, version[h]))
        return parts

    def count(self, text: str) -> int:
        if text.isascii():  # (a flag the str keeps: no scan)
            found = self._split_ascii(text)
        else:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: counted as tiktoken does, each one a U+FFFD
                text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            found = self._split(text)
        pieces = self._pieces
        try:  # the usual text: every piece counted before, looked up and summed in C
            return sum(map(pieces.__getitem__, found))
        except KeyError:
            pass
        missing = set(found).difference(pieces)
        if len(pieces) + len(missing) > _PIECES_HELD:
            pieces.clear()
            missing = set(found)
        for piece in missing:
            data = piece.encode("utf-8")
            pieces[piece] = 1 if self.rank(data) is not None else self._merged(data)
        return sum(map(pieces.__getitem__, found))
