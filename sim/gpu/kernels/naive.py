"""Attention as three separate steps, each materialising its result: what the IO simulator's `naive` counts."""
import math

import torch


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q kᵀ / √d) v for q, k, v (B, H, N, d); the (B, H, N, N) scores and weights both in memory."""
    B, H, N, d = q.shape
    q3, k3 = q.reshape(B * H, N, d), k.reshape(B * H, N, d)
    # kernel 1: S = Q Kᵀ / √d, written out in full. The scale is the matrix product's alpha (beta 0: nothing is
    # read from the empty input), not a pass of its own over S, which would read and write the N×N matrix again
    s = torch.baddbmm(q3.new_empty(1, 1, 1).expand(B * H, N, N), q3, k3.transpose(1, 2), beta=0.0,
                      alpha=1.0 / math.sqrt(d)).view(B, H, N, N)
    if causal:  # a pass of its own over S (torch has no softmax that takes the mask): the IO model counts it
        s.masked_fill_(torch.ones(N, N, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    p = torch.softmax(s, dim=-1)  # (B, H, N, N) kernel 2: P = softmax(S), a second N×N matrix
    return p @ v  # (B, H, N, d) kernel 3: O = P V
