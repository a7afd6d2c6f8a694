"""A tiny retrieval (the R of RAG): paragraphs and a question as TF-IDF vectors over character n-grams, ranked by
cosine similarity.

Why character n-grams: Chinese has no spaces between words, and a word list would need a segmenter; substrings of 1
to 3 characters need none, match "embedding" with "embeddings" as well as 嵌入 with 词嵌入, and are the same rule for
both languages. TF-IDF (term frequency × log inverse document frequency, the smoothed form scikit-learn uses) lets an
n-gram count for more the fewer paragraphs hold it, so "的" or "the" decides little. Every vector is scaled to length
1, so a dot product is the cosine. The paragraphs are kept as an inverted index (n-gram -> the paragraphs that hold
it, with their weights): a question touches only the postings of its own n-grams.
"""
from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

N_MIN, N_MAX = 1, 3
MAX_QUERY = 300  # characters a question may have
MIN_PARAGRAPH = 20  # shorter blocks (headings, captions) are not paragraphs
SEEDS_ENV = "MLSIM_COURSE_TEXTS"  # a folder of the course texts (*.txt) elsewhere than ../shared/seeds


class QueryError(ValueError):
    """A question that cannot be searched: code "empty", "long" or "unknown" (no n-gram of it is in the corpus)."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


def normalise(text: str) -> str:
    """Lower case, every run of blanks one space, no space at the ends."""
    return re.sub(r"\s+", " ", text.lower()).strip()


def ngrams(text: str) -> Counter:
    """How often each substring of N_MIN..N_MAX characters occurs in the normalised text (blank ones left out)."""
    s = normalise(text)
    return Counter(s[i:i + n] for n in range(N_MIN, N_MAX + 1) for i in range(len(s) - n + 1) if s[i:i + n].strip())


@dataclass(frozen=True)
class Paragraph:
    source: str  # where it comes from (a file name, a catalogue key)
    number: int  # its place in that source, from 1
    text: str


@dataclass(frozen=True)
class Hit:
    paragraph: Paragraph
    score: float  # cosine similarity with the question


class Index:
    """TF-IDF vectors of the paragraphs, as an inverted index."""

    def __init__(self, paragraphs: list[Paragraph]):
        if not paragraphs:
            raise ValueError("no paragraphs")
        self.paragraphs = paragraphs
        counts = [ngrams(p.text) for p in paragraphs]
        df = Counter(g for c in counts for g in c)
        n = len(paragraphs)
        self.idf = {g: math.log((1 + n) / (1 + k)) + 1.0 for g, k in df.items()}
        postings: dict[str, list[tuple[int, float]]] = {}
        for d, c in enumerate(counts):
            w = {g: k * self.idf[g] for g, k in c.items()}
            norm = math.sqrt(sum(v * v for v in w.values())) or 1.0
            for g, v in w.items():
                postings.setdefault(g, []).append((d, v / norm))
        self.postings = {g: (np.array([d for d, _ in p]), np.array([v for _, v in p])) for g, p in postings.items()}

    def vector(self, text: str) -> dict[str, float]:
        """The question's TF-IDF vector, length 1, over the corpus's n-grams (others carry no weight)."""
        w = {g: k * self.idf[g] for g, k in ngrams(text).items() if g in self.idf}
        norm = math.sqrt(sum(v * v for v in w.values()))
        return {g: v / norm for g, v in w.items()} if norm else {}

    def scores(self, text: str) -> np.ndarray:
        """(paragraphs,) cosine similarity of the question with every paragraph."""
        q = self.vector(text)
        out = np.zeros(len(self.paragraphs))
        for g, v in q.items():
            docs, weights = self.postings[g]
            np.add.at(out, docs, v * weights)
        return out

    def search(self, question: str, k: int = 3) -> list[Hit]:
        """The k paragraphs most similar to the question, best first (ties: the earlier paragraph)."""
        if not normalise(question) or not ngrams(question):
            raise QueryError("empty")
        if len(question) > MAX_QUERY:
            raise QueryError("long")
        if not self.vector(question):
            raise QueryError("unknown")
        s = self.scores(question)
        return [Hit(self.paragraphs[i], float(s[i])) for i in np.argsort(-s, kind="stable")[:k]]


def split_paragraphs(text: str, source: str) -> list[Paragraph]:
    """The blocks of a text separated by blank lines, blanks inside joined, blocks under MIN_PARAGRAPH left out."""
    blocks = [normalise_space(b) for b in re.split(r"\n\s*\n", text)]
    return [Paragraph(source, i + 1, b) for i, b in enumerate(x for x in blocks if len(x) >= MIN_PARAGRAPH)]


def normalise_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def course_dir(root: Path) -> Path | None:
    """Where the course texts are: $MLSIM_COURSE_TEXTS, else ../shared/seeds beside the repository; None when
    neither holds a .txt (a clone without them)."""
    for d in (os.environ.get(SEEDS_ENV), root.parent / "shared" / "seeds"):
        if d and Path(d).is_dir() and any(Path(d).glob("*.txt")):
            return Path(d)
    return None


def course_paragraphs(folder: Path) -> list[Paragraph]:
    out = []
    for path in sorted(folder.glob("*.txt")):
        out += split_paragraphs(path.read_text(encoding="utf-8"), path.name)
    return out
