"""Tokenizers of the language-model lab: a byte-level BPE trained as minbpe's BasicTokenizer, and characters.

BPE rules (Karpathy's minbpe): ids 0–255 are the raw UTF-8 bytes; each merge joins the most frequent adjacent
pair of the current sequence into a new id, numbered from 256 in the order made; on a tie the pair whose first
occurrence comes first wins (minbpe's `max` over a dict filled left to right). The counts are recomputed with
NumPy each merge (one vectorised pass), which keeps that tie rule exact and trains 512 tokens on 100 kB in about
a second (benchmarks/lm.py).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

N_BYTES = 256


def pair_codes(ids: np.ndarray) -> np.ndarray:
    """Each adjacent pair (a, b) as one int64 a * 2**32 + b."""
    return (ids[:-1].astype(np.int64) << 32) | ids[1:].astype(np.int64)


def most_frequent_pair(ids: np.ndarray) -> tuple[tuple[int, int], int] | None:
    """The most frequent adjacent pair and its count; ties go to the pair that occurs first. None: no pairs."""
    if len(ids) < 2:
        return None
    codes, first, counts = np.unique(pair_codes(ids), return_index=True, return_counts=True)
    top = counts.max()
    best = codes[counts == top][np.argmin(first[counts == top])]
    return (int(best >> 32), int(best & 0xFFFFFFFF)), int(top)


def merge(ids: np.ndarray, pair: tuple[int, int], new_id: int) -> np.ndarray:
    """Replace every occurrence of `pair`, left to right and without overlaps (as minbpe), by new_id."""
    a, b = pair
    if len(ids) < 2:
        return ids
    hits = np.flatnonzero((ids[:-1] == a) & (ids[1:] == b))
    if len(hits) == 0:
        return ids
    if a == b:  # in a run "a a a" only the first two merge: drop a hit that follows a kept one
        keep, last = [], -2
        for i in hits.tolist():
            if i != last + 1:
                keep.append(i)
                last = i
        hits = np.asarray(keep, dtype=np.int64)
    out = ids.copy()
    out[hits] = new_id
    drop = np.ones(len(ids), dtype=bool)
    drop[hits + 1] = False
    return out[drop]


@dataclass
class BPE:
    """A trained byte-level BPE: merges[(a, b)] = new id, in the order made; vocab[id] = its bytes."""

    merges: dict[tuple[int, int], int] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)  # how often each merge's pair occurred when it was made
    kind: str = "bpe"

    @classmethod
    def train(cls, text: str, vocab_size: int) -> BPE:
        """Learn vocab_size - 256 merges on text's UTF-8 bytes (fewer when the text runs out of pairs)."""
        if vocab_size < N_BYTES:
            raise ValueError("vocab_size must be at least 256")
        tok = cls()
        ids = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int64)
        for new_id in range(N_BYTES, vocab_size):
            found = most_frequent_pair(ids)
            if found is None:
                break
            pair, count = found
            ids = merge(ids, pair, new_id)
            tok.merges[pair] = new_id
            tok.counts.append(count)
        return tok

    @property
    def vocab(self) -> dict[int, bytes]:
        out = {i: bytes([i]) for i in range(N_BYTES)}
        for (a, b), i in self.merges.items():
            out[i] = out[a] + out[b]
        return out

    def __len__(self) -> int:
        return N_BYTES + len(self.merges)

    def stages(self, text: str) -> Iterator[np.ndarray]:
        """The ids of text as its bytes, then after each merge in the order learned (the last: encode(text))."""
        ids = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int64)
        yield ids
        for pair, new_id in self.merges.items():
            ids = merge(ids, pair, new_id)
            yield ids

    def encode(self, text: str) -> list[int]:
        """The ids of text: its bytes, then every merge applied in the order it was learned (the same as minbpe's
        lowest-rank-first loop: a merge only creates pairs of later rank)."""
        *_, ids = self.stages(text)
        return ids.tolist()

    def lengths(self, text: str) -> list[int]:
        """How many tokens text takes with the first k merges, for k = 0 (its UTF-8 bytes) … len(merges)."""
        return [len(ids) for ids in self.stages(text)]

    def decode(self, ids) -> str:
        """The text of ids; bytes that are not whole UTF-8 characters show as "�" (errors="replace")."""
        vocab = self.vocab
        return b"".join(vocab[int(i)] for i in ids).decode("utf-8", errors="replace")

    def token_bytes(self, i: int) -> bytes:
        return self.vocab[int(i)]

    def pieces(self, ids) -> list[str]:
        """Each token decoded on its own, as the coloured text shows it (a partial character: "�")."""
        vocab = self.vocab
        return [vocab[int(i)].decode("utf-8", errors="replace") for i in ids]


@dataclass
class CharTokenizer:
    """One token per character of the text it was built on (sorted); other characters cannot be encoded."""

    chars: str
    kind: str = "char"

    @classmethod
    def train(cls, text: str, vocab_size: int | None = None) -> CharTokenizer:
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    @property
    def merges(self) -> dict:
        return {}

    def encode(self, text: str) -> list[int]:
        """ValueError for a character the vocabulary does not hold (check with `known`)."""
        index = {c: i for i, c in enumerate(self.chars)}
        try:
            return [index[c] for c in text]
        except KeyError as e:
            raise ValueError(f"unknown character {e.args[0]!r}") from None

    def known(self, text: str) -> str:
        """text without the characters this tokenizer cannot encode."""
        have = set(self.chars)
        return "".join(c for c in text if c in have)

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    def pieces(self, ids) -> list[str]:
        return [self.chars[int(i)] for i in ids]


def tokens_per_char(tokenizer, text: str) -> float:
    """How many tokens a character costs on average in text (0 for an empty text)."""
    return len(tokenizer.encode(text)) / len(text) if text else 0.0


TRAIN_BYTES = 100_000  # BPE learns its merges from at most this much of a text (about a second)


def head_bytes(text: str, n: int) -> str:
    """The first n UTF-8 bytes of text, without a character cut in two."""
    return text.encode("utf-8")[:n].decode("utf-8", errors="ignore")


def make_tokenizer(kind: str, text: str, vocab_size: int):
    """The lab's tokenizer of `kind` ("bpe" or "char") trained on text (BPE: on its first TRAIN_BYTES)."""
    if kind == "bpe":
        return BPE.train(head_bytes(text, TRAIN_BYTES), vocab_size)
    if kind == "char":
        return CharTokenizer.train(text)
    raise ValueError(f"unknown tokenizer {kind}")


def byte_pieces(ch: str) -> list[str]:
    """The UTF-8 pitfall: the pieces a single character's bytes decode to one byte at a time (e.g. 3 "�" for a
    Chinese character), next to the character itself."""
    return [bytes([b]).decode("utf-8", errors="replace") for b in ch.encode("utf-8")]
