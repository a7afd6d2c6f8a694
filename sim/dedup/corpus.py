"""A generated raw corpus whose problems are known: every line carries flags that say what was injected, so each
cleaning step's precision and recall can be measured against the truth.

Clean lines come from a small grammar of two clauses (about 16 words, so two distinct lines rarely share long
phrases). Injected: exact duplicates (some lines many times: what a model memorises), near-duplicates (one or two
word edits, or only case and punctuation changed), junk (symbols, too short, spam, navigation boilerplate), and
copies of lines of the test set (the benchmark leaks into the training data).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SUBJECTS = ("the cat", "a dog", "my friend", "the teacher", "our robot", "a small bird", "the old man", "her sister",
            "the baker", "a young fox", "his uncle", "the pilot", "a quiet girl", "the farmer", "my neighbour",
            "the doctor", "a tall boy", "the singer", "our captain", "the painter")
VERBS = ("sees", "likes", "finds", "paints", "carries", "follows", "reads", "builds", "watches", "cleans", "brings",
         "draws", "opens", "sells", "hides", "moves", "wants", "keeps", "lifts", "counts")
OBJECTS = ("a red ball", "the blue door", "an old book", "the big tree", "a warm cup of tea", "the green kite",
           "a wooden box", "the long letter", "a bright lamp", "the heavy bag", "a paper boat", "the silver key",
           "a round cake", "the broken chair", "a yellow hat", "the little map", "a clean shirt", "the black stone",
           "a fresh apple", "the tiny clock")
PLACES = ("in the garden", "near the river", "at the station", "after lunch", "before the rain", "on the hill",
          "by the window", "in the kitchen", "at the market", "under the bridge", "during the storm",
          "behind the school", "on the beach", "in the morning", "at night", "inside the shop", "next to the lake",
          "across the road", "in the forest", "after school")
EXTRA_WORDS = ("really", "often", "slowly", "quietly", "again", "today", "still", "always")
JUNK = ("x7#kq!! zz@@ 93k %%$ ##", "ok", "thanks!!", "hello there", "buy now buy now buy now buy now cheap",
        "home | about | login | cookie settings | © 2024", "<div class=nav> menu </div> <span>|</span>",
        "click here click here click here click here free", "$$$ 100% FREE $$$ >>> 12345 <<<", "lol",
        "==== ==== ==== ====", "page 3 of 17 | next >> | << prev", "aaaaaaa aaaaaaa aaaaaaa", "404 not found",
        "subscribe subscribe subscribe to our newsletter newsletter", "# # # # # # # #")
PROBLEMS = ("junk", "exact", "near", "test")  # the flags a line may carry (a test copy may also be a repeat)


@dataclass(frozen=True)
class CorpusSpec:
    """How much of each problem is injected (counts of lines)."""

    clean: int = 300  # distinct clean lines
    duplicated: int = 20  # clean lines that get exact copies ...
    copies: tuple[int, int] = (4, 16)  # ... each this many extra copies (least, most)
    near_origins: int = 60  # clean lines that get near-duplicates ...
    near_variants: tuple[int, int] = (1, 2)  # ... each this many
    junk: int = 60
    test: int = 40  # lines of the test set (never trained on when clean)
    heldout: int = 40  # clean held-out lines (never in the corpus)
    leaked: int = 20  # test lines copied into the training corpus ...
    leak_copies: tuple[int, int] = (8, 12)  # ... each this many times (verbatim, or case and punctuation changed)


@dataclass(frozen=True)
class Corpus:
    """The raw training lines in corpus order with their truth, the test set and the held-out lines."""

    lines: list[str]
    junk: np.ndarray  # (n,) bool: an injected junk line
    exact: np.ndarray  # (n,) bool: the same text as an earlier line
    near: np.ndarray  # (n,) bool: a variant of an earlier line's source that is not an exact repeat
    test: np.ndarray  # (n,) bool: a copy of a test line
    test_lines: list[str]
    heldout: list[str]
    leaked: tuple[int, ...] = ()  # the test lines copied into the corpus
    sources: tuple[str, ...] = ()  # each line's source ("c12": clean line 12, "t3": test line 3, "j5": junk 5)

    def near_pairs(self) -> list[tuple[int, int]]:
        """(the first line of its source, the line) for each near-duplicate."""
        first: dict[str, int] = {}
        out = []
        for i, source in enumerate(self.sources):
            first.setdefault(source, i)
            if self.near[i]:
                out.append((first[source], i))
        return out

    def problems(self, lines: Sequence[int] | None = None) -> dict[str, int]:
        """Of `lines` (default: every line): how many carry each problem's flag, how many carry any ("problems") and
        how many carry two ("both": a test copy that also repeats an earlier line, exactly or nearly)."""
        idx = np.arange(len(self)) if lines is None else np.asarray(lines, dtype=int)
        flags = np.stack([getattr(self, k)[idx] for k in PROBLEMS])  # (4, len(idx))
        per_line = flags.sum(axis=0)
        return {k: int(f.sum()) for k, f in zip(PROBLEMS, flags, strict=True)} | {
            "problems": int((per_line > 0).sum()), "both": int((per_line > 1).sum())}

    def __len__(self) -> int:
        return len(self.lines)


def sentence(rng: np.random.Generator) -> str:
    """One clean line: two clauses of the grammar, capitalised, with a full stop."""
    def clause() -> str:
        return " ".join(str(rng.choice(w)) for w in (SUBJECTS, VERBS, OBJECTS, PLACES))
    text = f"{clause()} and {clause()}."
    return text[0].upper() + text[1:]


def variant(line: str, rng: np.random.Generator) -> str:
    """A near-duplicate: one or two word edits (swap, drop, insert), or only case and punctuation changed."""
    how = rng.integers(4)
    if how == 0:
        return restyled(line, rng)
    words = line.rstrip(".").split(" ")
    for _ in range(1 + int(rng.random() < 0.3)):
        i = int(rng.integers(1, len(words)))
        if how == 1:
            pool = VERBS if words[i] in VERBS else EXTRA_WORDS
            words[i] = str(rng.choice([w for w in pool if w != words[i]]))
        elif how == 2 and len(words) > 8:
            del words[i]
        else:
            words.insert(i, str(rng.choice(EXTRA_WORDS)))
    return " ".join(words) + "."


def restyled(line: str, rng: np.random.Generator) -> str:
    """The same words with case and punctuation changed (normalised, the same text)."""
    return line.upper() if rng.random() < 0.3 else line.rstrip(".").lower() + "!"


def _distinct(n: int, rng: np.random.Generator, taken: set[str]) -> list[str]:
    out = []
    while len(out) < n:
        s = sentence(rng)
        if s not in taken:
            taken.add(s)
            out.append(s)
    return out


def make_corpus(seed: int = 0, spec: CorpusSpec = CorpusSpec()) -> Corpus:
    """The raw corpus of this seed: clean lines and every injected problem, shuffled; flags by corpus order."""
    rng = np.random.default_rng(seed)
    taken: set[str] = set()
    clean = _distinct(spec.clean, rng, taken)
    test_lines = _distinct(spec.test, rng, taken)
    heldout = _distinct(spec.heldout, rng, taken)
    items: list[tuple[str, str, str]] = [(s, f"c{i}", "clean") for i, s in enumerate(clean)]  # (text, source, kind)
    for i in rng.choice(spec.clean, spec.duplicated, replace=False):
        items += [(clean[i], f"c{i}", "clean")] * int(rng.integers(spec.copies[0], spec.copies[1] + 1))
    for i in rng.choice(spec.clean, spec.near_origins, replace=False):
        for _ in range(int(rng.integers(spec.near_variants[0], spec.near_variants[1] + 1))):
            items.append((variant(clean[i], rng), f"c{i}", "clean"))
    leaked = tuple(sorted(int(j) for j in rng.choice(spec.test, spec.leaked, replace=False)))
    for j in leaked:
        for _ in range(int(rng.integers(spec.leak_copies[0], spec.leak_copies[1] + 1))):
            text = test_lines[j] if rng.random() < 0.5 else restyled(test_lines[j], rng)
            items.append((text, f"t{j}", "test"))
    for k in range(spec.junk):
        items.append((JUNK[k % len(JUNK)] if k < len(JUNK) else _noise(rng), f"j{k}", "junk"))
    order = rng.permutation(len(items))
    items = [items[i] for i in order]
    seen_text, seen_source = set(), set()
    junk, exact, near, test = (np.zeros(len(items), bool) for _ in range(4))
    for n, (text, source, kind) in enumerate(items):
        junk[n], test[n] = kind == "junk", kind == "test"
        exact[n] = text in seen_text
        near[n] = not exact[n] and kind != "junk" and source in seen_source
        seen_text.add(text)
        seen_source.add(source)
    return Corpus([t for t, _, _ in items], junk, exact, near, test, test_lines, heldout, leaked,
                  tuple(source for _, source, _ in items))


def _noise(rng: np.random.Generator) -> str:
    """A junk line of symbols, digits and broken words."""
    chars = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789#@%$&*!?<>|/=+- "))
    return "".join(rng.choice(chars, int(rng.integers(8, 40)))).strip() or "#"
