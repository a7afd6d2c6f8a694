"""Encoder against decoder: the same tiny transformer (sim.transformers) trained two ways on the same text.

- "bert" (encoder): no mask between positions (each sees the whole window); some positions' characters are replaced
  by a [MASK] symbol and the model predicts the original characters there, from both sides.
- "gpt" (decoder): the causal mask (each position sees itself and the positions before it); every position predicts
  the next character.

Both then face both tasks on the same held-out windows (`cross_losses`): "blank", the character at a middle position
with the rest of the window around it (the encoder reads both sides of the [MASK]; the decoder only what comes
before, the only thing its mask lets it see), and "next", the character after a prefix (the encoder reads the prefix
and a trailing [MASK]; the decoder its usual next-character prediction).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sim.core.history import bound, decimate
from sim.transformers.tasks import CORPORA
from sim.transformers.transformer import TinyTransformer, TransformerConfig

STYLES = ("bert", "gpt")  # the encoder, the decoder, in the order the lab shows them
MASK = "□"  # the [MASK] symbol: one more token after the text's characters
MASK_RATE = 0.15  # share of the encoder's positions masked in training (at least one per window)
BLANK = "_"  # what the user types where the blank is


@dataclass(frozen=True)
class TextTask:
    """Windows of `length` characters of a text (its characters the vocabulary, then MASK)."""

    text: str
    length: int = 16

    def __post_init__(self):
        if not 4 <= self.length < len(self.text):
            raise ValueError("invalid:length")

    @property
    def chars(self) -> str:
        return "".join(sorted(set(self.text)))

    @property
    def vocab(self) -> int:
        return len(self.chars) + 1

    @property
    def mask(self) -> int:
        return len(self.chars)

    def encode(self, s: str) -> list[int]:
        return [self.chars.index(c) for c in s]

    def decode(self, ids) -> str:
        return "".join(MASK if int(i) == self.mask else self.chars[int(i)] for i in ids)

    def unknown(self, s: str) -> str:
        """The characters of s not in the text (in order, once each)."""
        return "".join(dict.fromkeys(c for c in s if c not in self.chars))

    def windows(self, n: int, generator: torch.Generator, length: int | None = None) -> torch.Tensor:
        """(n, length) windows of the text (cyclic) at random starts."""
        L = self.length if length is None else length
        ids = torch.tensor(self.encode(self.text))
        starts = torch.randint(0, len(ids), (n,), generator=generator)
        return ids[(starts[:, None] + torch.arange(L)) % len(ids)]


def text_task(name: str, length: int = 16) -> TextTask:
    if name not in CORPORA:
        raise ValueError("invalid:text")
    return TextTask(CORPORA[name], length)


def masks(T: int) -> dict[str, np.ndarray]:
    """The attention masks of the two styles, (T, T) bool, True where query i reads key j."""
    return {"bert": np.ones((T, T), dtype=bool), "gpt": np.tri(T, dtype=bool)}


def bert_batch(task: TextTask, x: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(input with MASK_RATE of the positions (at least one per row) replaced by MASK, targets: the original
    characters there, -100 elsewhere)."""
    n, T = x.shape
    picked = torch.rand(n, T, generator=generator) < MASK_RATE
    picked[torch.arange(n), torch.randint(0, T, (n,), generator=generator)] = True
    return x.masked_fill(picked, task.mask), x.masked_fill(~picked, -100)


class EncDecTrainer:
    """One style's tiny transformer learning the text with Adam; its loss curve."""

    def __init__(self, task: TextTask, style: str, layers: int, width: int, lr: float, seed: int,
                 batch_size: int = 32):
        if style not in STYLES:
            raise ValueError("invalid:style")
        self.task, self.style, self.batch_size = task, style, batch_size
        self.model = TinyTransformer(TransformerConfig(task.vocab, task.length + 1, layers, 2, width, 4 * width,
                                                       causal=style == "gpt"), torch.Generator().manual_seed(seed))
        self.generator = torch.Generator().manual_seed(seed + 1)  # the windows: equal for both styles of a seed
        self.masking = torch.Generator().manual_seed(seed + 2)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.steps = 0
        self.diverged = False
        self.history: list[dict] = []

    def loss(self, x: torch.Tensor) -> torch.Tensor:
        """The style's own training loss on windows x (n, length + 1)."""
        if self.style == "gpt":
            logits = self.model(x[:, :-1])
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        inp, target = bert_batch(self.task, x[:, :-1], self.masking)
        logits = self.model(inp)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100)

    def step(self, n: int = 1) -> None:
        self.model.train()
        for _ in range(n):
            if self.diverged:
                return
            loss = self.loss(self.task.windows(self.batch_size, self.generator, self.task.length + 1))
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.steps += 1
            value = loss.item()
            self.diverged = not math.isfinite(value)
            self.history.append({"step": self.steps, "loss": value})
            bound(self.history, "step", ("loss",))

    def curves(self, max_points: int = 300) -> tuple[list[int], list[float]]:
        pick = decimate(self.history, "step", ("loss",), max_points)
        return [h["step"] for h in pick], [h["loss"] for h in pick]

    def recent_loss(self, k: int = 20) -> float | None:
        tail = [h["loss"] for h in self.history[-k:]]
        return sum(tail) / len(tail) if tail else None

    @torch.no_grad()
    def blank_logits(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        """(n, vocab − 1) logits of the character between left (n, a) and right (n, b): the encoder reads
        left + MASK + right; the decoder reads left only (a ≥ 1) and predicts the character after it."""
        self.model.eval()
        if self.style == "gpt":
            return self.model(left)[:, -1, :-1]
        n = left.shape[0]
        x = torch.cat([left, torch.full((n, 1), self.task.mask), right], 1)
        return self.model(x)[:, left.shape[1], :-1]


def cross_losses(trainers: dict[str, EncDecTrainer], n: int = 64, seed: int = 11) -> dict[str, dict[str, float]]:
    """style -> {"blank": mean loss on the middle character of n held-out windows, "next": on the last one}."""
    task = next(iter(trainers.values())).task
    x = task.windows(n, torch.Generator().manual_seed(seed))
    T, mid = task.length, task.length // 2
    out = {}
    for style, tr in trainers.items():
        blank = F.cross_entropy(tr.blank_logits(x[:, :mid], x[:, mid + 1:]), x[:, mid])
        nxt = F.cross_entropy(tr.blank_logits(x[:, :T - 1], x[:, T:]), x[:, T - 1])
        out[style] = {"blank": float(blank), "next": float(nxt)}
    return out


def parse_blank(task: TextTask, s: str) -> tuple[str, str]:
    """The user's text with one BLANK: (left, right), each cut to what fits the window. ValueError("invalid:...")
    when there is not exactly one blank, nothing before it, or a character the text does not have."""
    if s.count(BLANK) != 1:
        raise ValueError("invalid:blank")
    left, right = s.split(BLANK)
    if task.unknown(left + right):
        raise ValueError("invalid:chars")
    if not left:
        raise ValueError("invalid:empty")
    room = task.length - 1
    left = left[-max(room - len(right), room // 2):]
    return left, right[:room - len(left)]


def fill_blank(tr: EncDecTrainer, left: str, right: str, k: int = 3) -> list[tuple[str, float]]:
    """The k likeliest characters for the blank between left and right, with their probabilities."""
    task = tr.task
    logits = tr.blank_logits(torch.tensor([task.encode(left)]), torch.tensor([task.encode(right)], dtype=torch.long))
    p = torch.softmax(logits[0], -1)
    top = torch.topk(p, k)
    return [(task.chars[int(i)], float(v)) for v, i in zip(top.values, top.indices, strict=True)]


def continue_text(tr: EncDecTrainer, prefix: str, n: int = 20) -> str:
    """n characters after prefix, each the likeliest one given the last length − 1 characters (greedy)."""
    task = tr.task
    if not prefix:
        raise ValueError("invalid:empty")
    if task.unknown(prefix):
        raise ValueError("invalid:chars")
    ids = task.encode(prefix)
    empty = torch.zeros((1, 0), dtype=torch.long)
    for _ in range(n):
        left = torch.tensor([ids[-(task.length - 1):]])
        ids.append(int(tr.blank_logits(left, empty)[0].argmax()))
    return task.decode(ids[len(prefix):])
