"""The cleaning pipeline, one step at a time: quality filters, exact deduplication (hashing), near-duplicate removal
(MinHash + LSH) and the test-set contamination check (word n-gram overlap). Each step sees what the steps before it
kept; what it removes is scored against the corpus's injected truth. Also what the data section says of a cleaning,
as sayings ((i18n key, params) pairs chosen from the counts, filled in by the page)."""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from sim.dedup.corpus import PROBLEMS, Corpus
from sim.dedup.minhash import jaccard, jaccard_estimate, lsh_bands, lsh_candidates, minhash, normalise, shingles

STEPS = ("quality", "exact", "near", "contamination")


@dataclass(frozen=True)
class CleanConfig:
    """Which steps run, and their settings."""

    steps: tuple[str, ...] = STEPS
    min_words: int = 5  # quality: fewer words is junk
    min_letters: float = 0.8  # quality: least share of letters among the non-space characters
    max_repeat: float = 0.35  # quality: most share of the words that one word may take
    threshold: float = 0.55  # near duplicates: least (estimated) Jaccard similarity of the 5-character shingles
    num_perm: int = 128  # MinHash permutations
    shingle: int = 5  # characters per shingle
    ngram: int = 13  # contamination: words in an n-gram shared with the test set (GPT-3's check used 13)
    seed: int = 0  # MinHash's hash functions


@dataclass
class StepResult:
    """What one step did: the lines it removed (corpus indices), scored against its target."""

    name: str
    removed: list[int]
    seen: int  # lines that reached the step
    hits: int  # removed lines that are the step's target
    targets: int  # target lines that reached the step
    detail: dict = field(default_factory=dict)

    @property
    def precision(self) -> float | None:
        return self.hits / len(self.removed) if self.removed else None

    @property
    def recall(self) -> float | None:
        return self.hits / self.targets if self.targets else None


@dataclass
class Cleaned:
    """The corpus after the steps: the lines kept (indices), each step's result, and what is still wrong."""

    kept: list[int]
    steps: list[StepResult]
    total: int
    left: dict  # Corpus.problems() of the kept lines: each problem's lines still kept, any problem, two problems

    @property
    def share_kept(self) -> float:
        return len(self.kept) / self.total if self.total else 0.0


def targets(corpus: Corpus, step: str) -> np.ndarray:
    """(n,) bool: the lines a step should remove (near-duplicate removal also catches exact ones)."""
    return {"quality": corpus.junk, "exact": corpus.exact, "near": corpus.exact | corpus.near,
            "contamination": corpus.test}[step]


def quality_reasons(line: str, cfg: CleanConfig) -> list[str]:
    """Which quality rules a line breaks: "short", "symbols", "repeats" (none: it passes)."""
    words = line.split()
    reasons = []
    if len(words) < cfg.min_words:
        reasons.append("short")
    chars = [c for c in line if not c.isspace()]
    if not chars or sum(c.isalpha() for c in chars) / len(chars) < cfg.min_letters:
        reasons.append("symbols")
    top = Counter(w.lower() for w in words).most_common(1)[0][1] if words else 0
    if len(words) >= cfg.min_words and top / len(words) > cfg.max_repeat:
        reasons.append("repeats")
    return reasons


def line_hash(line: str) -> str:
    """The exact-duplicate key: SHA-1 of the line's UTF-8 bytes (the same bytes, the same key)."""
    return hashlib.sha1(line.encode("utf-8")).hexdigest()


def word_ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = normalise(text).split()
    return {tuple(words[i: i + n]) for i in range(len(words) - n + 1)}


def _quality(corpus: Corpus, keep: list[int], cfg: CleanConfig) -> tuple[list[int], dict]:
    why = Counter()
    removed = []
    for i in keep:
        reasons = quality_reasons(corpus.lines[i], cfg)
        if reasons:
            removed.append(i)
            why.update(reasons)
    return removed, {"reasons": dict(why)}


def _exact(corpus: Corpus, keep: list[int], cfg: CleanConfig) -> tuple[list[int], dict]:
    seen, removed = set(), []
    for i in keep:
        h = line_hash(corpus.lines[i])
        if h in seen:
            removed.append(i)
        seen.add(h)
    return removed, {}


def _near(corpus: Corpus, keep: list[int], cfg: CleanConfig) -> tuple[list[int], dict]:
    """Keep-first: a line goes when an earlier kept line is an LSH candidate with estimated Jaccard ≥ threshold."""
    if not keep:
        return [], {"bands": 0, "rows": 0, "candidates": 0, "pairs": 0}
    sigs = np.stack([minhash(shingles(corpus.lines[i], cfg.shingle), cfg.num_perm, cfg.seed) for i in keep])
    bands, rows = lsh_bands(cfg.num_perm, cfg.threshold)
    pairs = lsh_candidates(sigs, bands, rows)
    close: dict[int, list[int]] = {}
    for a, b in pairs:
        if jaccard_estimate(sigs[a], sigs[b]) >= cfg.threshold:
            close.setdefault(b, []).append(a)
    gone: set[int] = set()
    for b in range(len(keep)):
        if any(a not in gone for a in close.get(b, ())):
            gone.add(b)
    # "pairs": every pair of the lines this step sees, what comparing all of them would cost
    return [keep[b] for b in sorted(gone)], {"bands": bands, "rows": rows, "candidates": len(pairs),
                                             "pairs": len(keep) * (len(keep) - 1) // 2}


def _contamination(corpus: Corpus, keep: list[int], cfg: CleanConfig) -> tuple[list[int], dict]:
    test = set().union(*(word_ngrams(s, cfg.ngram) for s in corpus.test_lines))
    removed = [i for i in keep if word_ngrams(corpus.lines[i], cfg.ngram) & test]
    return removed, {"test_ngrams": len(test)}


STEP_FUNCTIONS = {"quality": _quality, "exact": _exact, "near": _near, "contamination": _contamination}


def clean(corpus: Corpus, cfg: CleanConfig = CleanConfig()) -> Cleaned:
    """Run the chosen steps in the fixed order, each on what the ones before kept."""
    keep = list(range(len(corpus)))
    results = []
    for name in STEPS:
        if name not in cfg.steps:
            continue
        target = targets(corpus, name)
        removed, detail = STEP_FUNCTIONS[name](corpus, keep, cfg)
        gone = set(removed)
        results.append(StepResult(name, removed, len(keep), int(sum(target[i] for i in removed)),
                                  int(sum(target[i] for i in keep)), detail))
        keep = [i for i in keep if i not in gone]
    return Cleaned(keep, results, len(corpus), corpus.problems(keep))


def _problems(counts: dict[str, int]) -> dict[str, int]:
    """The counts a sentence lists: each problem's, any problem's, and the lines in two groups."""
    return {k: counts[k] for k in (*PROBLEMS, "problems", "both")}


def summary(corpus: Corpus, result: Cleaned) -> tuple[str, dict]:
    """The raw corpus's problems (the groups overlap where a line is in two: then the sentence says so) and what
    was kept."""
    c = corpus.problems()
    return ("asst.data.summary" if c["both"] else "asst.data.summary_apart",
            {"raw": len(corpus), **_problems(c), "kept": len(result.kept), "share": f"{result.share_kept:.0%}"})


def left(result: Cleaned) -> tuple[str, dict]:
    """The problems still in the kept lines, or that none is."""
    c = result.left
    key = "asst.data.left" if c["both"] else "asst.data.left_apart" if c["problems"] else "asst.data.left_none"
    return key, _problems(c)


def lsh(step: StepResult, num_perm: int) -> tuple[str, dict]:
    """How the near-duplicate step's LSH cut the signatures, and its candidates against every pair of the lines it
    saw."""
    d = step.detail
    return ("asst.data.mh.bands", {"perm": num_perm, "bands": d["bands"], "rows": d["rows"], "lines": f"{step.seen:,}",
                                   "cand": f"{d['candidates']:,}", "pairs": f"{d['pairs']:,}"})


def pair_estimates(corpus: Corpus, cfg: CleanConfig) -> tuple[np.ndarray, np.ndarray]:
    """For each injected near-duplicate pair: the exact Jaccard similarity of the two lines' shingles, and MinHash's
    estimate of it (cfg.num_perm permutations, cfg.seed)."""
    pairs = corpus.near_pairs()
    sets = {i: shingles(corpus.lines[i], cfg.shingle) for p in pairs for i in p}
    sig = {i: minhash(s, cfg.num_perm, cfg.seed) for i, s in sets.items()}
    return (np.array([jaccard(sets[a], sets[b]) for a, b in pairs]),
            np.array([jaccard_estimate(sig[a], sig[b]) for a, b in pairs]))


def estimate_error(exact: np.ndarray, estimate: np.ndarray, num_perm: int) -> tuple[str, dict]:
    """How close MinHash's estimates came: the share within ±0.1 of the exact value, the mean and largest error."""
    err = np.abs(estimate - exact)
    return ("asst.data.mh.error", {"n": len(err), "perm": num_perm, "within": f"{np.mean(err <= 0.1):.0%}",
                                   "mean": f"{err.mean():.3f}", "worst": f"{err.max():.3f}"})
