"""Attention in blocks with an online softmax (FlashAttention-2's forward) in plain torch: memory O(N), not O(N²).

The loops are the simulator's `tiled` schedule: one pass per row block of Q, inner loop over blocks of K and V.
Torch launches every small step as its own kernel, so this shows the algorithm, not the fused speed.
"""
import math

import torch


def tiled_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, block_m: int = 64,
                    block_n: int = 64) -> torch.Tensor:
    """softmax(q kᵀ / √d) v for q, k, v (B, H, N, d), holding at most one (B, H, block_m, block_n) score block."""
    N, d = q.shape[-2:]
    scale = 1.0 / math.sqrt(d)
    out = torch.empty_like(q)
    for m0 in range(0, N, block_m):
        qi = q[..., m0:m0 + block_m, :].float()  # (B, H, bm, d) load Q_i
        rows = torch.arange(m0, m0 + qi.size(-2), device=q.device)
        m_i = torch.full(qi.shape[:-1], float("-inf"), device=q.device)  # (B, H, bm) running row max
        l_i = torch.zeros_like(m_i)  # (B, H, bm) running sum of exp(s - m_i)
        acc = torch.zeros_like(qi)  # (B, H, bm, d) unnormalised output
        # causal: only blocks with a key at or before the block's last query
        hi = min(N, m0 + block_m) if causal else N
        for n0 in range(0, hi, block_n):
            kj = k[..., n0:n0 + block_n, :].float()  # (B, H, bn, d) load K_j
            vj = v[..., n0:n0 + block_n, :].float()  # (B, H, bn, d) load V_j
            s = qi @ kj.transpose(-2, -1) * scale  # (B, H, bm, bn) S_ij, on chip
            if causal:
                cols = torch.arange(n0, n0 + kj.size(-2), device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
            m_new = torch.maximum(m_i, s.amax(-1))  # (B, H, bm)
            p = torch.exp(s - m_new[..., None])  # (B, H, bm, bn)
            alpha = torch.exp(m_i - m_new)  # rescales what was summed under the old max
            l_i = l_i * alpha + p.sum(-1)
            acc = acc * alpha[..., None] + p @ vj
            m_i = m_new
        out[..., m0:m0 + block_m, :] = (acc / l_i[..., None]).to(q.dtype)  # store O_i
    return out
