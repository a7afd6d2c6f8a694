"""Attention as three separate steps, each materialising its result: what the IO simulator's `naive` counts."""
import math

import torch


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q kᵀ / √d) v for q, k, v (B, H, N, d); the (B, H, N, N) scores and weights both in memory."""
    s = q @ k.transpose(-2, -1)  # (B, H, N, N) kernel 1: S = Q Kᵀ, written out in full
    s.mul_(1.0 / math.sqrt(q.size(-1)))  # in place: no second N×N buffer
    if causal:
        N = q.size(-2)
        s.masked_fill_(torch.ones(N, N, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    p = torch.softmax(s, dim=-1)  # (B, H, N, N) kernel 2: P = softmax(S), a second N×N matrix
    return p @ v  # (B, H, N, d) kernel 3: O = P V
