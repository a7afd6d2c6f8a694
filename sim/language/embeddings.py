"""Word embeddings learnt live on the synthetic language (sim.language.grammar): skip-gram with negative sampling.

Why skip-gram with negative sampling (word2vec, Mikolov et al. 2013): each step reads a few (word, neighbour) pairs
from the text and, for each, k words drawn at random; it pulls the word's vector towards its neighbour's context
vector and pushes it from the drawn ones. No softmax over the vocabulary, so a step costs O(B·k·d), and words that
occur in the same contexts end with the same direction (Levy & Goldberg 2014: the vectors factorise the words'
shifted pointwise mutual information). The grammar gives every word a part of speech, the ground truth to score the
vectors by: the share of words whose nearest neighbour by cosine has their part of speech, against chance.

    loss(c, o, n_1..n_k) = −log σ(u_o · v_c) − Σ_j log σ(−u_{n_j} · v_c)     (v: word vectors, u: context vectors)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from sim.core.history import LossCurve
from sim.language.grammar import grammar

# part of speech of every word of the built-in languages (the grammar's states put them there)
POS_EN = {"det": (" the", " a"), "adj": (" small", " red", " old", " happy"),
          "noun": (" cat", " dog", " bird", " girl", " boy"), "verb": (" sees", " likes", " chases", " sleeps"),
          "link": (".", " and")}
POS_ZH = {"noun": ("小猫", "小狗", "老师", "学生", "妈妈", "一只鸟", "一条鱼", "苹果"), "time": ("今天",),
          "verb": ("喜欢", "看见", "追", "睡觉"), "link": ("。", "，然后")}
POS = {"en": POS_EN, "zh": POS_ZH}
POS_NAMES = ("det", "adj", "noun", "verb", "time", "link")
SENSIBLE = 0.9  # the vectors are "sensible" once this share of the words has a nearest neighbour of its kind
CORPUS_WORDS = 20_000
MAX_DIM = 32
MAX_ABS = 1e6  # a coordinate beyond this (or not finite) ends the run: the rate is too large
DIMS = (2, 4, 8, 16, 32)
RATES = (0.03, 0.1, 0.3, 1.0, 3.0)


@dataclass(frozen=True)
class EmbedConfig:
    lang: str = "en"  # which built-in language ("en", "zh")
    dim: int = 8  # d: the length of a word vector
    window: int = 2  # a neighbour is a word at most this far on either side
    negatives: int = 5  # k: words drawn per pair (from the unigram distribution to the power 3/4, as word2vec)
    batch: int = 32  # pairs a step
    lr: float = 1.0  # plain SGD on the batch's mean loss
    seed: int = 0  # the corpus is fixed per language; the seed draws the initial vectors, the pairs and negatives


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # = 1 / (1 + e^-x), without overflow


def sgns_loss_grads(W_in: np.ndarray, W_out: np.ndarray, centres: np.ndarray, contexts: np.ndarray,
                    negatives: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Mean loss over the batch and its gradients by hand. W_in, W_out: (V, d); centres, contexts: (B,); negatives:
    (B, k). Returns (loss, dL/dW_in (V, d), dL/dW_out (V, d))."""
    v = W_in[centres]  # (B, d)
    u_o = W_out[contexts]  # (B, d)
    u_n = W_out[negatives]  # (B, k, d)
    s_o = np.einsum("bd,bd->b", v, u_o)  # (B,)
    s_n = np.einsum("bkd,bd->bk", u_n, v)  # (B, k)
    B = len(centres)
    # −log σ(s) = log(1 + e^−s), written stably
    loss = float((np.logaddexp(0.0, -s_o).sum() + np.logaddexp(0.0, s_n).sum()) / B)
    g_o = (sigmoid(s_o) - 1.0) / B  # dL/ds_o (B,)
    g_n = sigmoid(s_n) / B  # dL/ds_n (B, k)
    g_v = g_o[:, None] * u_o + np.einsum("bk,bkd->bd", g_n, u_n)  # (B, d)
    G_in, G_out = np.zeros_like(W_in), np.zeros_like(W_out)
    np.add.at(G_in, centres, g_v)
    np.add.at(G_out, contexts, g_o[:, None] * v)
    np.add.at(G_out, negatives.reshape(-1), (g_n[:, :, None] * v[:, None, :]).reshape(-1, v.shape[1]))
    return loss, G_in, G_out


def cosine_matrix(W: np.ndarray) -> np.ndarray:
    """(V, V) cosine similarity of every pair of rows; a zero row has cosine 0 with everything."""
    n = np.linalg.norm(W, axis=1, keepdims=True)
    U = np.divide(W, n, out=np.zeros_like(W), where=n > 0)
    return U @ U.T


def pca_2d(W: np.ndarray) -> np.ndarray:
    """(V, 2): the rows projected on the two directions of largest variance (eigenvectors of the covariance), each
    axis signed so that its largest coordinate is positive (a picture that does not flip from frame to frame)."""
    X = W - W.mean(axis=0)
    vals, vecs = np.linalg.eigh(X.T @ X)  # ascending
    axes = vecs[:, ::-1][:, :2]
    if axes.shape[1] < 2:  # d = 1
        axes = np.hstack([axes, np.zeros((len(axes), 2 - axes.shape[1]))])
    Y = X @ axes
    flip = np.where(Y[np.argmax(np.abs(Y), axis=0), [0, 1]] < 0, -1.0, 1.0)
    return Y * flip


def nearest(cos: np.ndarray, i: int, k: int) -> list[tuple[int, float]]:
    """The k words nearest word i by cosine (itself left out), with their cosines, nearest first (ties: lower id)."""
    order = [j for j in np.argsort(-cos[i], kind="stable") if j != i]
    return [(int(j), float(cos[i, j])) for j in order[:k]]


def scored(pos: np.ndarray) -> np.ndarray:
    """(V,) bool: the words whose part of speech has another word (only they can have a neighbour of their kind)."""
    return np.bincount(pos)[pos] > 1


def neighbour_hits(cos: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """(V,) bool: the word's nearest neighbour by cosine has its part of speech (argmax: the first of equal maxima,
    as nearest())."""
    others = cos.copy()
    np.fill_diagonal(others, -np.inf)
    return pos[np.argmax(others, axis=1)] == pos


def agreement(cos: np.ndarray, pos: np.ndarray) -> tuple[float, float]:
    """(share, chance): among the words whose part of speech has another word, the share whose nearest neighbour by
    cosine has their part of speech; chance: that share expected of a neighbour drawn at random, mean over the same
    words of (n_pos − 1)/(V − 1)."""
    V = len(pos)
    counts = np.bincount(pos)[pos]  # (V,) words of each word's part of speech
    mask = scored(pos)
    return float(neighbour_hits(cos, pos)[mask].mean()), float(((counts[mask] - 1) / (V - 1)).mean())


@dataclass(frozen=True)
class Settling:
    """Which words found a nearest neighbour of their part of speech first, and which have not (or the last)."""

    first: list[tuple[int, int]]  # (word, step since which it has held), earliest first
    pending: list[int]  # scored words whose nearest neighbour is not of their kind now
    last: tuple[int, int] | None  # once every scored word has one: the word that got it last, and since when


FIRST = 3  # words named as the first to settle


def settling(found_from: np.ndarray, pos: np.ndarray, first: int = FIRST) -> Settling:
    """From each word's step since which its nearest neighbour has had its part of speech (−1: not now), over the
    scored words: the `first` earliest (ties: lower id), those still without, and the last when none is."""
    mask = scored(pos)
    found = [int(i) for i in np.argsort(found_from, kind="stable") if mask[i] and found_from[i] >= 0]
    pending = [i for i in range(len(pos)) if mask[i] and found_from[i] < 0]
    last = (found[-1], int(found_from[found[-1]])) if found and not pending else None
    return Settling([(i, int(found_from[i])) for i in found[:first]], pending, last)


@dataclass(frozen=True)
class Corpus:
    """The language's words, their parts of speech, a sampled text as word ids and every (centre, context) pair."""

    words: tuple[str, ...]
    pos: np.ndarray  # (V,) index into POS_NAMES
    ids: np.ndarray  # (N,) the text
    pairs: np.ndarray  # (P, 2) centre, context
    noise: np.ndarray  # (V,) cumulative sampling distribution of the negatives (unigram^0.75)


def vocabulary(lang: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The language's words in the grammar's order, and each one's part of speech (an index into POS_NAMES)."""
    g = grammar(lang)
    words = tuple(dict.fromkeys(w for rules in g.rules.values() for w, _, _ in rules))
    tags = {w: POS_NAMES.index(p) for p, ws in POS[lang].items() for w in ws}
    return words, np.array([tags[w] for w in words])


@functools.cache
def corpus(lang: str, window: int, n_words: int = CORPUS_WORDS) -> Corpus:
    """The language's text (the same for every seed) and its pairs of words at most `window` apart."""
    words, pos = vocabulary(lang)
    index = {w: i for i, w in enumerate(words)}
    ids = np.array([index[w] for w, _ in grammar(lang).sample_words(n_words, seed=12345)], dtype=np.int64)
    pairs = np.concatenate([np.stack([ids[max(0, -o):len(ids) - max(0, o)], ids[max(0, o):len(ids) + min(0, o)]], 1)
                            for o in range(-window, window + 1) if o != 0])
    freq = np.bincount(ids, minlength=len(words)) ** 0.75
    return Corpus(words, pos, ids, pairs, np.cumsum(freq / freq.sum()))


class EmbedRun(LossCurve):
    """The live run (sim.core.live.LiveRun): a step is one SGD step on `batch` pairs."""

    def __init__(self, config: EmbedConfig):
        if config.lang not in POS or not 1 <= config.dim <= MAX_DIM or not config.lr > 0:
            raise ValueError("bad embedding settings")
        self.config = config
        self.data = corpus(config.lang, config.window)
        self.rng = np.random.default_rng(config.seed)
        V, d = len(self.data.words), config.dim
        self.W_in = (self.rng.random((V, d)) - 0.5) / d  # word2vec's initialisation
        self.W_out = np.zeros((V, d))
        self.history: list[dict] = []
        self.steps, self.diverged = 0, False
        self.sensible_from: int | None = None  # the agreement has been >= SENSIBLE at every step since this one
        self.found_from = np.full(V, -1)  # (V,) per word, the step since which its neighbour has been of its kind
        self._check()

    def shared(self) -> tuple:
        return (self.data,)

    @property
    def stopped(self) -> bool:
        return self.diverged

    def _check(self) -> None:
        cos, pos = cosine_matrix(self.W_in), self.data.pos
        hits = neighbour_hits(cos, pos)
        self.found_from = np.where(hits, np.where(self.found_from < 0, self.steps, self.found_from), -1)
        if agreement(cos, pos)[0] < SENSIBLE:
            self.sensible_from = None
        elif self.sensible_from is None:
            self.sensible_from = self.steps

    def advance(self, n: int) -> None:
        c, data = self.config, self.data
        for _ in range(n):
            if self.diverged:
                return
            pick = data.pairs[self.rng.integers(0, len(data.pairs), c.batch)]
            neg = np.searchsorted(data.noise, self.rng.random((c.batch, c.negatives)), side="right")
            neg = np.minimum(neg, len(data.words) - 1)
            with np.errstate(over="ignore", invalid="ignore"):
                loss, G_in, G_out = sgns_loss_grads(self.W_in, self.W_out, pick[:, 0], pick[:, 1], neg)
                W_in, W_out = self.W_in - c.lr * G_in, self.W_out - c.lr * G_out
            self.record(loss)  # the step counts, diverged or not
            if self.diverged or not (np.abs(W_in).max() < MAX_ABS and np.abs(W_out).max() < MAX_ABS):
                self.diverged = True  # the vectors stay as they were before this step
                return
            self.W_in, self.W_out = W_in, W_out
            self._check()

    def frame(self) -> dict:
        """The loss curve (decimated), the vectors' 2-D projection, their cosines, the agreement and its chance, and
        per word the step since which its nearest neighbour has been of its part of speech (−1: not now)."""
        steps, loss = self.curve()
        cos = cosine_matrix(self.W_in)
        share, chance = agreement(cos, self.data.pos)
        return {"steps": self.steps, "curve": np.asarray(steps, dtype=np.int32),
                "loss": np.asarray(loss, dtype=np.float32), "xy": pca_2d(self.W_in).astype(np.float32),
                "cos": cos.astype(np.float32), "agree": share, "chance": chance, "sensible_from": self.sensible_from,
                "found_from": self.found_from.astype(np.int32), "diverged": self.diverged}

