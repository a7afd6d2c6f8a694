"""The embedding lookup as a matrix operation: token ids pick rows of the (V, d) table, which is what multiplying
their one-hot vectors by the table gives (torch.nn.Embedding does the first, without building the one-hots)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

MAX_VOCAB, MAX_DIM, MAX_IDS = 64, 8, 8  # small enough to write every number of the table on screen


@dataclass(frozen=True)
class Lookup:
    table: np.ndarray  # (V, d) the embedding's weight
    ids: tuple[int, ...]  # (T,)
    one_hot: np.ndarray  # (T, V)
    rows: np.ndarray  # (T, d) torch.nn.Embedding(ids)
    product: np.ndarray  # (T, d) one_hot @ table
    equal: bool  # rows and product equal to the last bit


def onehot_cost(T: int, V: int, d: int) -> tuple[int, int]:
    """Multiplications of one-hot (T, V) @ table (V, d): all T·V·d of them, and the T·(V − 1)·d by a one-hot's zeros."""
    return T * V * d, T * (V - 1) * d


def lookup(ids: tuple[int, ...], vocab: int, dim: int, seed: int) -> Lookup:
    """Look `ids` up in a (vocab, dim) table drawn from N(0, 1) with `seed` and rounded to one decimal (so it can be
    read), by torch.nn.Embedding and by one-hot @ table. ValueError for an id outside the table or sizes too big."""
    if not (1 <= vocab <= MAX_VOCAB and 1 <= dim <= MAX_DIM and 1 <= len(ids) <= MAX_IDS):
        raise ValueError("sizes")
    if not all(0 <= i < vocab for i in ids):
        raise ValueError("id")
    weight = torch.round(torch.randn(vocab, dim, generator=torch.Generator().manual_seed(seed)), decimals=1)
    emb = torch.nn.Embedding.from_pretrained(weight)
    x = torch.tensor(ids)
    with torch.no_grad():
        rows = emb(x)  # (T, d)
        one_hot = F.one_hot(x, vocab).to(weight.dtype)  # (T, V)
        product = one_hot @ weight  # (T, V) @ (V, d) -> (T, d)
    return Lookup(weight.numpy(), tuple(ids), one_hot.numpy(), rows.numpy(), product.numpy(),
                  bool(torch.equal(rows, product)))
