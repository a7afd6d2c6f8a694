"""Attention maths: masks, scaled dot-product attention step by step, and a multi-head attention module."""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from sim.core.models import linear


def causal_mask(T: int) -> torch.Tensor:
    """(T, T) bool, True where query i may attend key j: itself and the positions before it."""
    return torch.ones(T, T, dtype=torch.bool).tril()


def sliding_window_mask(T: int, window: int, causal: bool = True) -> torch.Tensor:
    """(T, T) bool, True where |i - j| < window (and j <= i when causal): a causal window sees `window` keys."""
    if window < 1:
        raise ValueError("invalid:window")
    pos = torch.arange(T)
    offset = pos[:, None] - pos[None, :]  # (T, T) query position minus key position
    near = offset.abs() < window
    return near & (offset >= 0) if causal else near


@dataclass(frozen=True)
class AttentionSteps:
    """The intermediate tensors of one attention call, each of shape (..., T, T) or (..., T, d)."""

    scores: torch.Tensor  # q @ kᵀ * scale, before masking
    weights: torch.Tensor  # after the mask and the row-wise softmax; masked entries exactly 0
    output: torch.Tensor  # weights @ v


def scaled_dot_product(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
                       scale: float | None = None) -> AttentionSteps:
    """softmax(q kᵀ · scale, masked) v for q, k, v of shape (..., T, d); mask (bool, True = attend) broadcasts."""
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (..., T, T)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        # a row with every key masked is NaN after the softmax (0/0): it attends to nothing instead
        weights = weights.masked_fill(~mask, 0.0)
    return AttentionSteps(scores=scores, weights=weights, output=weights @ v)


class MultiHeadAttention(nn.Module):
    """nanoGPT-style self-attention with separate q/k/v/o projections; keeps its last attention weights."""

    def __init__(self, d_model: int, n_heads: int, causal: bool = True, generator: torch.Generator | None = None):
        super().__init__()
        if n_heads < 1 or d_model % n_heads:
            raise ValueError("invalid:heads")
        self.n_heads, self.d_head, self.causal = n_heads, d_model // n_heads, causal
        # initial weights drawn from `generator` (the global RNG when None), in the order q, k, v, o
        self.q_proj = linear(d_model, d_model, generator=generator)
        self.k_proj = linear(d_model, d_model, generator=generator)
        self.v_proj = linear(d_model, d_model, generator=generator)
        self.o_proj = linear(d_model, d_model, generator=generator)
        self.last_weights: torch.Tensor | None = None  # (B, H, T, T) of the last forward, detached

    def heads(self, x: torch.Tensor, proj: nn.Linear) -> torch.Tensor:
        """Project and split into heads: (B, T, C) -> (B, H, T, d_h)."""
        B, T, C = x.shape
        return proj(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)  # (B, H, T, d_h)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, C); `mask` (T, T) replaces the module's own (causal or none) when given."""
        B, T, C = x.shape
        q, k, v = self.heads(x, self.q_proj), self.heads(x, self.k_proj), self.heads(x, self.v_proj)  # (B, H, T, d_h)
        if mask is None and self.causal:
            mask = causal_mask(T).to(x.device)
        att = scaled_dot_product(q, k, v, mask=mask)  # scores, weights (B, H, T, T); output (B, H, T, d_h)
        self.last_weights = att.weights.detach()
        y = att.output.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C): the heads side by side
        return self.o_proj(y)  # (B, T, C)


# ---------- the attention lab's step-by-step pipeline ----------
def positional_encoding(T: int, d: int) -> torch.Tensor:
    """(T, d) sinusoidal position vectors of the original Transformer: sin on even columns, cos on odd."""
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float32) / d)  # (ceil(d/2),)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return pe


def embed_tokens(tokens: list[str], d_model: int, seed: int, positions: bool = True) -> torch.Tensor:
    """(T, d_model): a random vector per distinct token (the same token always gets the same row), plus its
    sinusoidal position vector unless `positions` is False."""
    rows = []
    for tok in tokens:  # seeded by the token's text, so "狗" has one vector wherever it appears
        g = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(tok.encode("utf-8")))
        rows.append(torch.randn(d_model, generator=g))
    x = torch.stack(rows)
    return x + positional_encoding(len(tokens), d_model) if positions else x


def random_attention(d_model: int, n_heads: int, seed: int) -> MultiHeadAttention:
    """An untrained layer, weights N(0, 1/d_model) and no biases: q and k entries come out about unit size."""
    g = torch.Generator().manual_seed(seed)
    mha = MultiHeadAttention(d_model, n_heads, causal=False, generator=torch.Generator())  # overwritten below
    with torch.no_grad():
        for proj in (mha.q_proj, mha.k_proj, mha.v_proj, mha.o_proj):
            proj.weight.copy_(torch.randn(d_model, d_model, generator=g) / math.sqrt(d_model))
            proj.bias.zero_()
    return mha


SHARPNESS_HEAD_DIMS = (1, 2, 4, 8, 16, 32, 64, 128)  # the head widths of the lab's sharpness figure


def sharpness_by_head_dim(head_dims: list[int], T: int = 16, samples: int = 64,
                          seed: int = 0) -> dict[str, list[float]]:
    """Mean largest softmax weight per row, for random unit-variance q and k, with and without ÷√d_h."""
    g = torch.Generator().manual_seed(seed)
    out: dict[str, list[float]] = {"scaled": [], "unscaled": []}
    for d in head_dims:
        q, k = torch.randn(2, samples, T, d, generator=g)
        dots = q @ k.transpose(-2, -1)  # (samples, T, T), variance d
        out["scaled"].append(torch.softmax(dots / math.sqrt(d), -1).amax(-1).mean().item())
        out["unscaled"].append(torch.softmax(dots, -1).amax(-1).mean().item())
    return out


def dot_variance(head_dims: list[int], pairs: int = 4096, seed: int = 0) -> dict[str, list[float]]:
    """Measured variance of the dot product q·k of random pairs of width d, for two kinds of random vector:
    "unit", q and k of length 1 (uniform on the sphere; the variance is 1/d: the dot product is a cosine), and
    "entries", every component N(0, 1) (the variance is d: this is what ÷√d brings back to 1)."""
    g = torch.Generator().manual_seed(seed)
    out: dict[str, list[float]] = {"unit": [], "entries": []}
    for d in head_dims:
        q, k = torch.randn(2, pairs, d, generator=g, dtype=torch.float64)
        out["entries"].append((q * k).sum(-1).var().item())
        q, k = q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)
        out["unit"].append((q * k).sum(-1).var().item())
    return out


@dataclass(frozen=True)
class Pipeline:
    """Every stage of one multi-head attention pass over a single sequence (no batch dimension)."""

    x: torch.Tensor  # (T, C) input rows
    q: torch.Tensor  # (H, T, d_h)
    k: torch.Tensor  # (H, T, d_h)
    v: torch.Tensor  # (H, T, d_h)
    raw: torch.Tensor  # (H, T, T) q kᵀ
    scaled: torch.Tensor  # (H, T, T) q kᵀ · scale (÷√d_h if scaling is on, ÷ temperature)
    mask: torch.Tensor | None  # (T, T) True = may attend, None = no mask
    weights: torch.Tensor  # (H, T, T) row-wise softmax of the masked scores
    heads_out: torch.Tensor  # (H, T, d_h) weights @ v
    concat: torch.Tensor  # (T, C) the heads side by side
    output: torch.Tensor  # (T, C) concat @ W_O

    @property
    def d_head(self) -> int:
        return self.q.shape[-1]

    def arrays(self) -> dict[str, np.ndarray | None]:
        """Every stage (and "mask", None when there is none) as NumPy arrays, for the figure builders."""
        return {name: None if value is None else value.numpy() for name, value in vars(self).items()}


def make_mask(kind: str, T: int, window: int) -> torch.Tensor | None:
    """kind: "none", "causal", "window" (both sides) or "causal_window"."""
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(T)
    if kind in ("window", "causal_window"):
        return sliding_window_mask(T, window, causal=kind == "causal_window")
    raise ValueError(f"unknown mask {kind}")


@torch.no_grad()
def run_pipeline(mha: MultiHeadAttention, x: torch.Tensor, mask: torch.Tensor | None, scale_by_sqrt_d: bool = True,
                 temperature: float = 1.0) -> Pipeline:
    """The module's own forward, stage by stage, on x (T, C); the scale is (1/√d_h or 1) / temperature."""
    if temperature <= 0:
        raise ValueError("invalid:temperature")
    xb = x[None]  # (1, T, C)
    q, k, v = (mha.heads(xb, p)[0] for p in (mha.q_proj, mha.k_proj, mha.v_proj))  # (H, T, d_h)
    scale = (1.0 / math.sqrt(mha.d_head) if scale_by_sqrt_d else 1.0) / temperature
    att = scaled_dot_product(q, k, v, mask=mask, scale=scale)
    concat = att.output.transpose(0, 1).reshape(x.shape)  # (T, C)
    return Pipeline(x=x, q=q, k=k, v=v, raw=q @ k.transpose(-2, -1), scaled=att.scores, mask=mask,
                    weights=att.weights, heads_out=att.output, concat=concat, output=mha.o_proj(concat))


def lab_pipeline(tokens: list[str], d_model: int, n_heads: int, seed: int, mask: str, window: int,
                 scale_by_sqrt_d: bool = True, temperature: float = 1.0) -> Pipeline:
    """The lab's pass: an untrained layer (random_attention) over the tokens' embeddings, both drawn from `seed`;
    mask is a make_mask kind."""
    return run_pipeline(random_attention(d_model, n_heads, seed), embed_tokens(tokens, d_model, seed),
                        make_mask(mask, len(tokens), window), scale_by_sqrt_d=scale_by_sqrt_d, temperature=temperature)


# ---------- permutation: attention is equivariant, not invariant ----------
PERMUTATIONS = ("reverse", "rotate", "shuffle")
EQUIVARIANCE_TOL = 1e-4  # float32 rounding of a pass over unit-size numbers stays far below this


def permutation(kind: str, T: int, seed: int = 0) -> list[int]:
    """perm[i] = the original position of the token that the permuted sequence puts at position i.

    "reverse": last first; "rotate": the first token moved to the end; "shuffle": a random order drawn from `seed`.
    """
    if kind == "reverse":
        return list(range(T))[::-1]
    if kind == "rotate":
        return [(i + 1) % T for i in range(T)]
    if kind == "shuffle":
        return torch.randperm(T, generator=torch.Generator().manual_seed(seed)).tolist()
    raise ValueError("invalid:perm")


@dataclass(frozen=True)
class PermutationCheck:
    """The lab's pipeline (no mask) on the tokens and on the permuted tokens, with and without position encoding."""

    tokens: list[str]  # the input tokens
    perm: list[int]  # permutation(...)
    permuted_tokens: list[str]  # tokens[perm[i]] at position i
    output: torch.Tensor  # (T, C) f(X), no position encoding
    permuted_output: torch.Tensor  # (T, C) f(P X)
    equivariance_gap: float  # max |f(P X) − P f(X)|: ~0, the rows move with their tokens
    invariance_gap: float  # max |f(P X) − f(X)|: what would be ~0 if attention were invariant
    positions_gap: float  # max |g(P X) − P g(X)| with g adding the position encoding first: no longer ~0

    @property
    def same_sequence(self) -> bool:
        """The permutation leaves the token sequence as it was (e.g. one token, or a palindrome reversed)."""
        return self.permuted_tokens == self.tokens

    @property
    def equivariant(self) -> bool:
        return self.equivariance_gap <= EQUIVARIANCE_TOL


def permutation_check(tokens: list[str], d_model: int, n_heads: int, seed: int, kind: str,
                      scale_by_sqrt_d: bool = True, temperature: float = 1.0) -> PermutationCheck:
    """Run the lab's untrained layer (random_attention, no mask) on the tokens and on their permutation `kind`
    (permutation, shuffled by `seed`), once without and once with the position encoding, and measure the gaps."""
    if not tokens:
        raise ValueError("invalid:no_tokens")
    perm = permutation(kind, len(tokens), seed)
    permuted = [tokens[j] for j in perm]
    mha = random_attention(d_model, n_heads, seed)

    def out(toks: list[str], positions: bool) -> torch.Tensor:
        return run_pipeline(mha, embed_tokens(toks, d_model, seed, positions), None, scale_by_sqrt_d,
                            temperature).output

    index = torch.tensor(perm)
    plain, plain_p = out(tokens, False), out(permuted, False)
    pos, pos_p = out(tokens, True), out(permuted, True)
    gap = lambda a, b: (a - b).abs().max().item()  # noqa: E731
    return PermutationCheck(tokens=list(tokens), perm=perm, permuted_tokens=permuted, output=plain,
                            permuted_output=plain_p, equivariance_gap=gap(plain_p, plain[index]),
                            invariance_gap=gap(plain_p, plain), positions_gap=gap(pos_p, pos[index]))


def permutation_stats(c: PermutationCheck) -> dict[str, str]:
    """The lab's figures of a PermutationCheck, written out: the three gaps in scientific notation (2 digits)."""
    return {"equivariance": f"{c.equivariance_gap:.1e}", "invariance": f"{c.invariance_gap:.1e}",
            "positions": f"{c.positions_gap:.1e}"}


def head_choices(n_heads: int) -> tuple[str, ...]:
    """The options of the lab's head picker: "all", then "1" … "H"."""
    return ("all", *(str(h) for h in range(1, n_heads + 1)))


def head_indices(choice: str, n_heads: int) -> list[int]:
    """The head indices a head_choices option shows."""
    return list(range(n_heads)) if choice == "all" else [int(choice) - 1]


def scale_text(d_head: int, scaled: bool) -> str:
    """What the scores are divided by (before the temperature), as the scaled stage's title writes it."""
    return f"√{d_head} = {d_head ** 0.5:.3g}" if scaled else "1"


def head_stats(p: Pipeline, heads: list[int]) -> dict[str, str]:
    """The lab's metrics of the chosen heads' weights, written out: weight_stats's max_weight, entropy and
    uniform_entropy to 3 decimals, and row_sums as "min … max" to 4."""
    s = weight_stats(p.weights[heads])
    return {"max_weight": f"{s['max_weight']:.3f}", "entropy": f"{s['entropy']:.3f}",
            "uniform_entropy": f"{s['uniform_entropy']:.3f}",
            "row_sums": f"{s['row_sum_min']:.4f} … {s['row_sum_max']:.4f}"}


def softmax_naive(x: torch.Tensor) -> torch.Tensor:
    """exp(x) / Σ exp(x) as written on paper: overflows to inf (then NaN) for large scores."""
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_stable(x: torch.Tensor) -> torch.Tensor:
    """The same after subtracting the row maximum: the largest exponent is e⁰ = 1, nothing overflows."""
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_steps(scores: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every number of both ways to compute softmax(scores) of a 1-D row, for showing them all."""
    shifted = scores - scores.max()
    return {"exp": torch.exp(scores), "exp_sum": torch.exp(scores).sum(), "naive": softmax_naive(scores),
            "shifted": shifted, "exp_shifted": torch.exp(shifted), "stable": softmax_stable(scores)}


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of each row of attention weights: 0 for one-hot, log T for uniform."""
    return -(weights * torch.log(weights.clamp_min(1e-30))).sum(dim=-1)


def weight_stats(weights: torch.Tensor) -> dict[str, float]:
    """How peaked rows of weights (..., T, T) are: mean largest weight, mean entropy (uniform: log T), row sums."""
    sums = weights.sum(dim=-1)
    return {"max_weight": weights.amax(dim=-1).mean().item(), "entropy": row_entropy(weights).mean().item(),
            "uniform_entropy": math.log(weights.size(-1)), "row_sum_min": sums.min().item(),
            "row_sum_max": sums.max().item()}


# the notes' worked example: one query's scores over three keys, and the three value vectors
NOTES_SCORES = (2.0, 0.0, -1.0)
NOTES_VALUES = ((1.0, 0.0), (0.0, 2.0), (2.0, 1.0))


def attend_row(scores: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One query by hand: weights = softmax(scores) (T,), output = Σ weights_j · v_j (d,)."""
    weights = softmax_stable(scores)
    return weights, weights @ values


# ---------- the lab's worked examples, written out ----------
def fmt(values, digits: int = 3) -> str:
    """[a, b, c] with a fixed number of decimals; a matrix (2-D tensor) as a list of its rows."""
    return "[" + ", ".join(fmt(v, digits) if getattr(v, "ndim", 0) else f"{float(v):.{digits}f}" for v in values) + "]"


def notes_bars(temperature: float = 1.0) -> tuple[list[str], list[float], list[float]]:
    """The notes' keys ("key0" …), their scores and their softmax weights at `temperature` (the notes': 1)."""
    scores = torch.tensor(NOTES_SCORES)
    weights, _ = attend_row(scores / temperature, torch.tensor(NOTES_VALUES))
    return [f"key{j}" for j in range(len(NOTES_SCORES))], scores.tolist(), weights.tolist()


def notes_softmax_table(key_header: str, temperature: float = 1.0) -> str:
    """The notes' softmax as a Markdown table: per key its score s, e^s (e^(s/τ) at another temperature) and the
    weight; the sums last."""
    scores, values = torch.tensor(NOTES_SCORES), torch.tensor(NOTES_VALUES)
    weights, _ = attend_row(scores / temperature, values)
    steps = softmax_steps(scores / temperature)
    power = "e^s" if temperature == 1 else f"e^(s/{temperature:g})"
    rows = [f"| {key_header} | s | {power} | {power} / Σ |", "|---|---:|---:|---:|"]
    rows += [f"| key{j} | {s:g} | {e:.4f} | **{w:.3f}** |" for j, (s, e, w) in
             enumerate(zip(scores.tolist(), steps["exp"].tolist(), weights.tolist(), strict=True))]
    rows.append(f"| Σ | | {steps['exp_sum'].item():.4f} | {steps['stable'].sum().item():.3f} |")
    return "\n".join(rows)


def notes_weighted_sum_text(temperature: float = 1.0) -> str:
    """The notes' output as the weighted sum of the value vectors, term by term (a code block), at `temperature`."""
    scores, values = torch.tensor(NOTES_SCORES), torch.tensor(NOTES_VALUES)
    weights, out = attend_row(scores / temperature, values)
    terms = " + ".join(f"{w:.3f}×{fmt(v_, 0)}" for w, v_ in zip(weights.tolist(), values.tolist(), strict=True))
    return (f"v0 = {fmt(values[0], 0)}   v1 = {fmt(values[1], 0)}   v2 = {fmt(values[2], 0)}\n"
            f"output = {terms}\n       = {fmt(out)}")


def weight_share(weights) -> str:
    """How the largest of a row of softmax weights stands to the rest: "all" (≥ 0.99: the others get almost
    nothing), "most" (over half, the others still count) or "spread" (half or less)."""
    top = max(weights)
    return "all" if top >= 0.99 else "most" if top > 0.5 else "spread"


def stable_softmax_table(big: float, naive: str, stable: str) -> tuple[str, bool]:
    """Softmax of [big, big − 1, big − 2] computed naively and stably, as a Markdown table (columns headed
    `naive` and `stable`); True when the naive one overflowed (NaN)."""
    x = torch.tensor([big, big - 1.0, big - 2.0])
    steps = softmax_steps(x)
    rows = [f"| | {naive} | {stable} |", "|---|---|---|",
            f"| s | {fmt(x, 0)} | s − max = {fmt(steps['shifted'], 0)} |",
            f"| e^… | {fmt(steps['exp'], 4)} | {fmt(steps['exp_shifted'], 4)} |",
            f"| softmax | {fmt(steps['naive'], 3)} | {fmt(steps['stable'], 3)} |"]
    return "\n".join(rows), bool(torch.isnan(steps["naive"]).any())
